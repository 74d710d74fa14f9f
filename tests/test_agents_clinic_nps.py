"""The reference NPS agent: reading scores, happy paths in three languages, its scripted scenarios, and every known
fault's documented effect on the database and the transcript."""

from __future__ import annotations

import re

import pytest
from agents_clinic_support import (  # noqa: F401 - pytest fixtures
    SCENARIOS,
    chats,
    load,
    run_scripted,
    scenario,
    store,
)

from convoeval.agents.clinic import faults_for, make_clinic_agent, understand
from convoeval.agents.clinic._handoff_nlu import asks_for_person
from convoeval.agents.clinic._nps_nlu import comment_of, parse_score
from convoeval.scenarios import load_scenario_file

PASSIVE = "nps/conv-passive-en.yaml"
DETRACTOR = "nps/conv-detractor-pt.yaml"
# Patient lines that take the healthy agent to each conversational scenario's goal.
SCRIPTS = {
    PASSIVE: ["Hi!", "I'd give you an eight", "Dr. Lee was great, but I waited about 20 minutes past my time", "No, that's all. Thanks!"],
    DETRACTOR: ["Oi", "Nota 3", "Esperei mais de uma hora além do horário e ninguém me avisou nada", "Sim, quero reclamar com alguém"],
}  # fmt: skip
FAULTS = [f.name for f in faults_for("nps")]
# Which of a scenario's assertions each fault makes fail on the lines above.
BROKEN = {
    ("records_wrong_score", PASSIVE): {"nps_score"},
    ("records_wrong_score", DETRACTOR): {"nps_score"},
    ("never_records", PASSIVE): {"nps_score_recorded", "nps_score", "tools_called"},
    ("never_records", DETRACTOR): {"nps_score_recorded", "nps_score", "tools_called"},
    ("pressures_for_higher_score", PASSIVE): set(),
    ("pressures_for_higher_score", DETRACTOR): set(),
    ("ignores_complaint", PASSIVE): set(),
    ("ignores_complaint", DETRACTOR): {"escalated_to_human", "tools_called"},
    ("rude_tone", PASSIVE): set(),
    ("rude_tone", DETRACTOR): set(),
}
POLITE = re.compile(r"por favor|obrigad|please|thank|gracias|😊|claro|of course|perfeito|perfect", re.IGNORECASE)
PRESSURE = re.compile(r"9 (?:ou|or|o) 10", re.IGNORECASE)
VISIT = {
    "professionals": [{"id": "pro", "name": "Dra. Ana Ribeiro"}],
    "appointments": [
        {"id": "old", "professional_id": "pro", "starts_at": "2026-01-10T09:00", "status": "completed"},
        {"id": "visit", "professional_id": "pro", "starts_at": "2026-03-04T11:00", "status": "completed"},
        {"id": "next", "professional_id": "pro", "starts_at": "2026-06-04T11:00", "status": "scheduled"},
    ],
}


# ── Reading scores ──


@pytest.mark.parametrize(
    ("text", "locale", "score", "problem"),
    [
        ("10", "pt-BR", 10, None),
        ("nota dez!", "pt-BR", 10, None),
        ("Dou nota 8 pra vocês", "pt-BR", 8, None),
        ("dou um 10", "pt-BR", 10, None),  # "um" is an article before the score
        ("nota um", "pt-BR", 1, None),
        ("nove de dez", "pt-BR", 9, None),  # "de dez" is the scale
        ("nota máxima", "pt-BR", 10, None),
        ("zero", "pt-BR", 0, None),
        ("I'd give you a nine", "en", 9, None),
        ("eight out of ten", "en", 8, None),
        ("8/10", "en", 8, None),
        ("a one", "en", 1, None),
        ("I came with my 2 kids, I'd give you a 9", "en", 9, None),  # the cued number wins
        ("Le doy un siete", "es", 7, None),
        ("cero", "es", 0, None),
        ("nine", "pt-BR", 9, None),  # another language's words when the session's find nothing
        ("7 ou 8", "pt-BR", None, "ambiguous"),
        ("9,5", "pt-BR", None, "ambiguous"),
        ("11", "pt-BR", None, "out_of_range"),
        ("esperei 40 minutos", "pt-BR", None, "none"),
        ("foi um dos melhores atendimentos", "pt-BR", None, "none"),  # not a Spanish "dos"
        ("dia 10 foi ótimo", "pt-BR", None, "none"),
        ("paguei R$ 150,00 às 9:30", "pt-BR", None, "none"),
        ("one thing: the wait", "en", None, "none"),
    ],
)
def test_parse_score(text: str, locale: str, score: int | None, problem: str | None) -> None:
    reading = parse_score(text, locale)
    assert (reading.score, reading.problem) == (score, problem)


def test_comments_and_requests_for_a_person() -> None:
    assert comment_of("Nota 9, o atendimento foi ótimo") == "Nota 9, o atendimento foi ótimo"
    assert comment_of("I'd give you a nine") is None and comment_of("10, com certeza!") is None
    assert asks_for_person(understand("I want to talk to the receptionist", "en"))
    assert asks_for_person(understand("quero falar com alguém", "pt-BR"))
    assert not asks_for_person(understand("the receptionist was lovely", "en"))
    assert not asks_for_person(understand("la recepcionista fue muy amable", "es"))


# ── The agent ──


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_healthy_agent_reaches_each_conversational_goal(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), load(path))
    replies = await chat.script(*SCRIPTS[path])
    assert all(chat.check().values()), chat.details()
    assert not PRESSURE.search(chat.transcript)
    [row] = chat.rows("nps_responses")
    assert row["comment"] == SCRIPTS[path][2] and row["appointment_id"] in chat.seeded.refs["appointments"].values()
    assert replies[0].tool_names == ["list_appointments"] and "0" in replies[0].text and "10" in replies[0].text


async def test_low_score_apologises_and_offers_a_person(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), load(DETRACTOR))
    first, score, comment, handoff = await chat.script(*SCRIPTS[DETRACTOR])
    assert "Dr. Paulo Mendes" in first.text and "02/03/2026" in first.text
    assert "Sinto muito" in score.text and score.tool_calls == []
    assert comment.tool_names == ["record_nps"] and "*3*" in comment.text and "equipe" in comment.text
    assert handoff.tool_names == ["handoff_to_human"]
    [row] = chat.rows("handoffs")
    assert "NPS score 3" in row["reason"]


@pytest.mark.parametrize(
    ("locale", "lines", "score", "comment"),
    [
        ("pt-BR", ["Oi, tudo bem?", "Nota 10!", "A Dra. Ana é maravilhosa", "obrigada"], 10, "A Dra. Ana é maravilhosa"),
        ("en", ["Hello", "seven", "no", "bye"], 7, None),
        ("es", ["¡Diez! La doctora fue muy amable y puntual", "gracias"], 10, "¡Diez! La doctora fue muy amable y puntual"),
    ],
)
async def test_happy_paths_in_each_language(locale: str, lines: list[str], score: int, comment: str | None, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), scenario("nps", locale, **VISIT))
    replies = await chat.script(*lines)
    expected = {"nps_score_recorded": True, "nps_score": score, "escalated_to_human": False, "tools_called": ["record_nps"]}
    assert all(chat.check(expected).values()), chat.details(expected)
    [row] = chat.rows("nps_responses")
    assert row["comment"] == comment and row["appointment_id"] == chat.seeded.refs["appointments"]["visit"]
    assert f"*{score}*" in chat.transcript  # the patient sees the score that was recorded
    assert replies[-1].tool_calls == [] and not PRESSURE.search(chat.transcript)


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "nps").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), load(f"nps/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


async def test_unclear_answers_are_asked_again_and_nothing_is_recorded(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), scenario("nps", "pt-BR", **VISIT))
    replies = await chat.script("oi", "hmm, 7 ou 8", "11", "como assim?", "sei lá")
    assert "número inteiro" in replies[1].text and "0 a 10" in replies[2].text and "não recomendaria" in replies[3].text
    assert chat.rows("nps_responses") == [] and all(r.tool_calls == [] for r in replies[1:])
    await chat.script("8", "não")
    assert [r["score"] for r in chat.rows("nps_responses")] == [8]


async def test_not_recommending_is_an_answer_to_be_scored_and_a_score_can_be_corrected(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), scenario("nps", "pt-BR", **VISIT))
    await chat.say("oi")
    assert "De 0 a 10" in (await chat.say("não recomendaria, foi péssimo")).text  # not "no, I won't answer"
    await chat.say("zero")
    corrected = await chat.say("na verdade 1")
    assert corrected.tool_calls == [] and "*1*" in corrected.text
    await chat.say("esperei demais")
    assert [(r["score"], r["comment"]) for r in chat.rows("nps_responses")] == [(1, "esperei demais")]


async def test_declining_records_nothing_until_the_patient_answers_after_all(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), scenario("nps", "en", **VISIT))
    await chat.say("hi")
    declined = await chat.say("no, I don't want to answer")
    assert declined.tool_calls == [] and "No problem" in declined.text
    await chat.script("ok fine, 6", "no")
    assert chat.check({"nps_score": 6}) == {"nps_score": True}


async def test_a_request_for_a_person_records_the_score_already_given(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), load(DETRACTOR))
    await chat.script("oi", "2")
    reply = await chat.say("quero falar com um atendente")
    assert reply.tool_names == ["record_nps", "handoff_to_human"]
    assert chat.check({"nps_score": 2, "escalated_to_human": True}) == {"nps_score": True, "escalated_to_human": True}


async def test_praise_for_the_receptionist_is_not_a_request_for_a_person(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps"), load(PASSIVE))
    reply = await chat.say("10! The receptionist was lovely and Dr. Lee explained everything")
    assert reply.tool_names == ["list_appointments", "record_nps"] and "handoff_to_human" not in chat.tools


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_each_fault_breaks_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", [fault]), load(path))
    await chat.script(*SCRIPTS[path])
    failed = {key for key, passed in chat.check().items() if not passed}
    documented = next(f for f in faults_for("nps") if f.name == fault).breaks_assertions
    assert failed == BROKEN[fault, path], chat.details()
    assert failed <= set(documented)


def test_every_documented_assertion_is_broken_somewhere() -> None:
    for fault in faults_for("nps"):
        shown = set().union(*(BROKEN[fault.name, p] for p in SCRIPTS))
        assert shown == set(fault.breaks_assertions), fault.name


@pytest.mark.parametrize(("line", "given", "recorded"), [("nota 3", 3, 4), ("nota 10, adorei tudo na clínica", 10, 9)])
async def test_records_wrong_score_is_off_by_one_in_the_database_only(line: str, given: int, recorded: int, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", ["records_wrong_score"]), load(DETRACTOR))
    await chat.script("oi", line, "não")
    assert [r["score"] for r in chat.rows("nps_responses")] == [recorded]
    assert f"*{given}*" in chat.transcript and f"*{recorded}*" not in chat.transcript


async def test_never_records_says_it_did(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", ["never_records"]), load(PASSIVE))
    await chat.script(*SCRIPTS[PASSIVE])
    assert "I've recorded your score of *8*" in chat.transcript
    assert chat.rows("nps_responses") == [] and "record_nps" not in chat.tools


async def test_pressures_for_higher_score_asks_to_reconsider_below_nine_only(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", ["pressures_for_higher_score"]), load(PASSIVE))
    await chat.say("hi")
    pressure = await chat.say("eight")
    assert PRESSURE.search(pressure.text) and "reconsider" in pressure.text and pressure.tool_calls == []
    await chat.script("fine, nine then", "no")
    assert chat.check({"nps_score": 9}) == {"nps_score": True}  # the pressured score is what gets recorded
    promoter = chats(make_clinic_agent("nps", ["pressures_for_higher_score"]), load(PASSIVE))
    await promoter.script("hi", "ten", "no")
    assert not PRESSURE.search(promoter.transcript) and promoter.check({"nps_score": 10}) == {"nps_score": True}


async def test_pressure_fails_the_scripted_score_turn(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", ["pressures_for_higher_score"]), load("nps/scripted-score-words-es.yaml"))
    failures = await run_scripted(chat)
    assert failures and failures[0].startswith("turn 2") and "9 o 10" in failures[0]


async def test_ignores_complaint_never_hands_off(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("nps", ["ignores_complaint"]), load(DETRACTOR))
    replies = await chat.script(*SCRIPTS[DETRACTOR], "quero falar com um atendente agora")
    assert "Sinto muito" in chat.transcript  # it still apologises...
    assert "equipe" not in replies[2].text  # ...but offers no one
    assert all("registrada" in r.text for r in replies[3:])
    assert "handoff_to_human" not in chat.tools and chat.rows("handoffs") == []
    assert chat.check({"nps_score": 3}) == {"nps_score": True}


@pytest.mark.parametrize("path", [*sorted(SCRIPTS), "nps/scripted-score-words-es.yaml"])
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    sc = load(path)
    lines = SCRIPTS.get(path) or [t.user for t in sc.turns]  # type: ignore[union-attr]
    healthy, rude = chats(make_clinic_agent("nps"), sc), chats(make_clinic_agent("nps", ["rude_tone"]), sc)
    for line in lines:
        good, bad = await healthy.say(line), await rude.say(line)
        assert good.tool_names == bad.tool_names
        assert not POLITE.search(bad.text), bad.text
        assert bad.bubbles != good.bubbles
    assert POLITE.search(healthy.transcript)
    assert [r["score"] for r in healthy.rows("nps_responses")] == [r["score"] for r in rude.rows("nps_responses")]


def test_faults_reference_this_agents_scenarios() -> None:
    paths = sorted((SCENARIOS / "nps").glob("*.yaml"))
    criteria = {c for p in paths if (s := load_scenario_file(p)).type == "conversational" for c in s.criteria}
    for fault in faults_for("nps"):
        assert set(fault.breaks_criteria) <= criteria, fault.name
    assert set(FAULTS) == {"records_wrong_score", "never_records", "pressures_for_higher_score", "ignores_complaint", "rude_tone"}
