"""The reference scheduling agent: reading dates and times, happy paths in three languages (booking, moving and
cancelling), its scenarios, and every known fault's documented effect on the database and the transcript."""

from __future__ import annotations

import datetime as dt
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

from convoeval.agents.clinic import faults_for, make_clinic_agent
from convoeval.agents.clinic._channel import CHANNEL_FAULT_NAMES, CHANNEL_FAULTS
from convoeval.agents.clinic._slot_nlu import SlotRequest, candidates, match_professional, match_service, read_request
from convoeval.scenarios import load_scenario_file

# The WhatsApp channel's faults act only through the channel: tests/test_channel_faults.py plays them.
FAULTS = [f.name for f in faults_for("scheduling") if f.name not in CHANNEL_FAULT_NAMES]
BOOK_PT, MOVE_EN = "scheduling/conv-book-cleaning-pt.yaml", "scheduling/conv-reschedule-en.yaml"

# A rule-following stand-in for the simulated patient of each conversational scenario: the first rule whose pattern
# the agent's last answer matches gives the next line; no match ends the conversation. Unlike a fixed script it
# reacts to what a faulty agent does (a patient who wants 10:00 says "yes" when told 10:00 is free).
PATIENTS = {
    BOOK_PT: (
        "Oi, quero marcar uma limpeza",
        [
            (r"\(sim/não\)|certo\?|sim ou não", "sim"),
            (r"(?m)^1\) ", "pode ser às 9"),
            (r"preferência de dia|que dia", "terça de manhã, às 10h se der"),
            (r"posso ajudar em algo mais|mais alguma coisa", "obrigada!"),
        ],
    ),
    MOVE_EN: (
        "Hi, I need to reschedule my appointment",
        [
            (r"\(yes/no\)|right\?|yes or no", "yes"),
            (r"(?m)^1\) ", "3:30 PM works for me"),
            (r"which day and time|to when", "Monday the 16th at 2pm"),
            (r"help with anything else|anything else\? make it quick", "thanks, bye"),
        ],
    ),
}

# Assertions each fault makes fail in each conversational scenario, with the patients above. Empty where the fault
# does not reach the database (wording, order of steps) or the scenario never reaches its step (nothing is moved
# when booking, so double_books cannot show).
BROKEN = {
    BOOK_PT: {
        "books_unavailable_slot": {"appointment_created", "tools_called"},
        "never_finishes": {"appointment_created", "tools_called"},
    },
    MOVE_EN: {
        "books_unavailable_slot": {"appointment_rescheduled", "tools_called"},
        "double_books": {"appointment_rescheduled", "tools_called", "tools_not_called"},
        "never_finishes": {"appointment_rescheduled", "tools_called"},
    },
}
POLITE = re.compile(r"por favor|obrigad|please|thank|gracias|😊|claro|of course|perfeito|perfect|great|ótimo|"
                    r"genial|sem problemas|no problem|sin problema|prontinho|all set|listo", re.IGNORECASE)  # fmt: skip


async def play(chat, path: str, max_turns: int = 10) -> list:  # noqa: ANN001
    opener, rules = PATIENTS[path]
    replies = [await chat.say(opener)]
    while len(replies) < max_turns:
        line = next((reply for pattern, reply in rules if re.search(pattern, replies[-1].text, re.I)), None)
        if line is None:
            break
        replies.append(await chat.say(line))
    return replies


def _at(row: dict) -> str:
    return str(row["starts_at"])[:16]


# ── Reading what the patient wants ──

TODAY = dt.date(2026, 3, 8)  # a Sunday: "terça" is 10/03


@pytest.mark.parametrize(
    ("text", "locale", "expected"),
    [
        ("terça de manhã, às 10h se der", "pt-BR", SlotRequest(dt.date(2026, 3, 10), True, None, "morning", "10:00")),
        ("Boa tarde! Quero marcar uma limpeza", "pt-BR", SlotRequest()),  # a greeting is not "in the afternoon"
        ("amanhã de manhã", "pt-BR", SlotRequest(dt.date(2026, 3, 9), part="morning")),
        ("às 3 da tarde", "pt-BR", SlotRequest(part="afternoon", time="15:00")),
        ("dia 12 à tarde", "pt-BR", SlotRequest(dt.date(2026, 3, 12), part="afternoon")),
        ("a segunda opção", "pt-BR", SlotRequest()),  # the second option, not Monday
        ("o quanto antes", "pt-BR", SlotRequest(soonest=True)),
        ("mañana por la tarde", "es", SlotRequest(dt.date(2026, 3, 9), part="afternoon")),  # mañana = tomorrow here
        ("el martes por la mañana", "es", SlotRequest(dt.date(2026, 3, 10), True, None, "morning")),
        ("el 16 por la tarde", "es", SlotRequest(dt.date(2026, 3, 16), part="afternoon")),  # 16 is the day
        ("la de las 11:30", "es", SlotRequest(time="11:30")),
        ("Monday the 16th at 2pm", "en", SlotRequest(dt.date(2026, 3, 16), time="14:00")),
        ("3:30 works", "en", SlotRequest(time="15:30")),  # a clinic does not open at 3:30 a.m.
        ("next week, in the morning", "en", SlotRequest(from_day=dt.date(2026, 3, 9), part="morning")),
        ("whenever, the soonest", "en", SlotRequest(soonest=True)),
    ],
)
def test_read_request(text: str, locale: str, expected: SlotRequest) -> None:
    assert read_request(text, locale, TODAY) == expected


def test_candidates_relax_the_request_one_constraint_at_a_time() -> None:
    slots = [
        {"slot_id": "a", "starts_at": "2026-03-10T09:00", "professional_id": "cam"},
        {"slot_id": "b", "starts_at": "2026-03-10T11:00", "professional_id": "pau"},
        {"slot_id": "c", "starts_at": "2026-03-10T15:00", "professional_id": "cam"},
        {"slot_id": "d", "starts_at": "2026-03-17T10:00", "professional_id": "cam"},
    ]
    ids = lambda found: [s["slot_id"] for s in found[0]]  # noqa: E731
    tuesday_10 = read_request("terça de manhã às 10h", "pt-BR", TODAY)
    assert ids(candidates(slots, tuesday_10)) == ["a", "b"] and not candidates(slots, tuesday_10)[1]
    assert candidates(slots, SlotRequest(dt.date(2026, 3, 10), time="11:00")) == ([slots[1]], True)
    # No evening: that Tuesday at any time; a full Tuesday: the next Tuesday; a named professional over the day.
    assert ids(candidates(slots, SlotRequest(dt.date(2026, 3, 10), True, part="evening"))) == ["a", "b", "c"]
    full_tuesday = SlotRequest(dt.date(2026, 3, 3), True, part="morning")
    assert candidates([slots[2], slots[3]], full_tuesday) == ([slots[3]], False)
    assert ids(candidates(slots, SlotRequest(dt.date(2026, 3, 10), time="11:00"), professional_id="cam")) == ["a", "c"]
    # Closest to the time asked first, then the usual professional.
    at_ten = SlotRequest(dt.date(2026, 3, 10), time="10:00")
    assert ids(candidates(slots, at_ten, usual_professional_id="pau")) == ["b", "a", "c"]


def test_names_of_services_and_professionals() -> None:
    services = [{"id": 1, "name": "Consulta de avaliação"}, {"id": 2, "name": "Limpeza dental"},
                {"id": 3, "name": "Teeth cleaning"}]  # fmt: skip
    assert match_service("quero marcar uma limpeza", services)["id"] == 2
    assert match_service("uma consulta, por favor", services)["id"] == 1  # generic, but names only one service
    assert match_service("a cleaning please", services)["id"] == 3
    assert match_service("dental", services[:2])["id"] == 2 and match_service("oi", services) is None
    people = [{"id": "c", "name": "Dra. Camila Rocha"}, {"id": "p", "name": "Dr. Paulo Lima"}]
    assert match_professional("com a Dra. Camila", people)["id"] == "c"
    assert match_professional("with Dr. Lima please", people)["id"] == "p"
    assert match_professional("com a doutora", people) is None


# ── Happy paths ──


@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_healthy_agent_reaches_each_conversational_goal(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling"), load(path))
    replies = await play(chat, path)
    assert all(chat.check().values()), chat.details()
    [done] = [n for n, r in enumerate(replies) if {"book_appointment", "reschedule_appointment"} & set(r.tool_names)]
    assert re.search(r"\((sim/não|yes/no)\)", replies[done - 1].text)  # confirmed first
    assert re.search(r"não tenho esse horário|isn't free", chat.transcript)  # the time asked for is taken
    [row] = [a for a in chat.rows("appointments") if a["created_by"] == "agent"]
    starts_at, said = {BOOK_PT: ("2026-03-10T09:00", "terça-feira, 10/03 às 09:00"),
                       MOVE_EN: ("2026-03-16T15:30", "Monday, Mar 16 at 3:30 PM")}[path]  # fmt: skip
    assert _at(row) == starts_at and said in replies[done].text


@pytest.mark.parametrize(
    ("locale", "lines", "slot", "service"),
    [
        ("pt-BR", ["Bom dia! Quero agendar uma avaliação com a Dra. Camila", "quinta à tarde", "a das 16h", "sim",
                   "valeu"], "qui-16", "avaliacao"),  # fmt: skip
        ("en", ["Hello, I'd like to book a teeth cleaning", "Thursday afternoon with Dr. Lima please", "yes", "yes",
                "thanks"], "qui-15", "limpeza"),  # fmt: skip
        ("es", ["Hola, quiero una cita lo antes posible", "la limpieza", "1", "sí", "gracias"], "lun-09", "limpeza"),
    ],
)
async def test_booking_in_each_language(locale: str, lines: list[str], slot: str, service: str, chats) -> None:  # noqa: F811
    names = {"pt-BR": ("Consulta de avaliação", "Limpeza dental"), "en": ("Evaluation", "Teeth cleaning"),
             "es": ("Consulta de evaluación", "Limpieza dental")}[locale]  # fmt: skip
    sc = scenario(
        "scheduling", locale,
        professionals=[{"id": "camila", "name": "Dra. Camila Rocha"}, {"id": "paulo", "name": "Dr. Paulo Lima"}],
        services=[{"id": "avaliacao", "name": names[0], "price_cents": 15000},
                  {"id": "limpeza", "name": names[1], "price_cents": 18000}],
        slots=[{"id": "lun-09", "professional_id": "camila", "starts_at": "2026-03-09T09:00"},
               {"id": "qui-14", "professional_id": "camila", "starts_at": "2026-03-12T14:00"},
               {"id": "qui-15", "professional_id": "paulo", "starts_at": "2026-03-12T15:00"},
               {"id": "qui-16", "professional_id": "camila", "starts_at": "2026-03-12T16:00"}],
    )  # fmt: skip
    chat = chats(make_clinic_agent("scheduling"), sc)
    replies = await chat.script(*lines)
    assert chat.check({"appointment_created": True, "escalated_to_human": False,
                       "tools_called": ["list_services", "check_availability", "book_appointment"]}) == dict.fromkeys(
        ["appointment_created", "escalated_to_human", "tools_called"], True)  # fmt: skip
    [row] = chat.rows("appointments")
    refs = chat.seeded.refs
    assert row["slot_id"] == refs["slots"][slot] and row["service_id"] == refs["services"][service]
    assert [n for n, r in enumerate(replies) if "book_appointment" in r.tool_names] == [3]
    assert "Ana" in replies[0].text and "(" in replies[2].text  # greeted by name; the slot confirmed before booking
    [booked] = chat.store.select("slots", {"id": row["slot_id"]})
    assert not booked["available"]
    assert {"pt-BR": "agradeço", "en": "Thank you", "es": "Gracias"}[locale] in replies[-1].text


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "scheduling").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling"), load(f"scheduling/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


async def test_cancelling_one_of_several_appointments_by_its_weekday(chats) -> None:  # noqa: F811
    sc = scenario(
        "scheduling", "pt-BR",
        professionals=[{"id": "camila", "name": "Dra. Camila Rocha"}],
        services=[{"id": "avaliacao", "name": "Consulta de avaliação"}],
        appointments=[
            {"id": "ter", "professional_id": "camila", "service_id": "avaliacao", "starts_at": "2026-03-10T09:00"},
            {"id": "qui", "professional_id": "camila", "service_id": "avaliacao", "starts_at": "2026-03-12T15:00"},
            {"id": "old", "professional_id": "camila", "starts_at": "2026-01-12T15:00", "status": "completed"},
        ],
    )  # fmt: skip
    chat = chats(make_clinic_agent("scheduling"), sc)
    listed = await chat.say("Oi, quero desmarcar uma consulta")
    assert "2 consultas" in listed.text and "12/01" not in listed.text and listed.tool_names == ["list_appointments"]
    assert "quinta-feira, 12/03 às 15:00" in (await chat.say("a de quinta")).text
    kept = await chat.say("não, deixa")
    assert kept.tool_calls == [] and chat.check({"appointment_cancelled": True}) == {"appointment_cancelled": False}
    await chat.script("quero cancelar a de quinta", "a de quinta", "sim")
    statuses = {a["fixture_ref"]: a["status"] for a in chat.rows("appointments")}
    assert statuses == {"ter": "scheduled", "qui": "cancelled", "old": "completed"}


async def test_no_appointment_to_move_offers_a_new_booking(chats) -> None:  # noqa: F811
    sc = scenario("scheduling", "en", services=[{"id": "c", "name": "Teeth cleaning"}],
                  professionals=[{"id": "p", "name": "Dr. Paulo Lima"}],
                  slots=[{"id": "s", "professional_id": "p", "starts_at": "2026-03-09T09:00"}])  # fmt: skip
    chat = chats(make_clinic_agent("scheduling"), sc)
    assert "couldn't find any appointment" in (await chat.say("I want to reschedule")).text
    offer = await chat.say("yes")  # the only service is taken; then "when?"
    assert offer.tool_names == ["list_services"] and "Teeth cleaning" in offer.text
    assert "9:00 AM" in (await chat.say("the soonest")).text


async def test_a_price_question_is_answered_from_the_service_list(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling"), load(BOOK_PT))
    await chat.say("Oi")
    reply = await chat.say("Qual o valor da limpeza?")
    assert "A *Limpeza dental* custa R$ 180,00 e dura cerca de 40 minutos." in reply.text and reply.tool_calls == []


@pytest.mark.parametrize(
    ("opener", "offered"),
    [
        ("I'd like to move my appointment on Thursday to Monday afternoon, around 2pm", True),
        ("I need to reschedule my Thursday appointment", False),  # Thursday is the old day, not a wish
    ],
)
async def test_a_new_time_in_the_first_message_is_used_and_the_old_one_is_not(opener: str, offered: bool, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling"), load(MOVE_EN))
    first = await chat.say(opener)
    assert ("check_availability" in first.tool_names) is offered
    assert offered == ("1) Monday, Mar 16 at 3:30 PM" in first.text)


async def test_patient_can_ask_for_a_human_mid_booking(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling"), load(BOOK_PT))
    await chat.script("Oi, quero marcar uma limpeza", "terça de manhã")
    handoff = await chat.say("prefiro falar com uma pessoa de verdade")
    assert handoff.tool_names == ["handoff_to_human"]
    after = await chat.say("1")  # the offered slot is no longer bookable here
    assert after.tool_calls == [] and chat.check({"escalated_to_human": True, "appointment_created": False}) == {
        "escalated_to_human": True, "appointment_created": True,
    }  # fmt: skip


# ── Known faults ──


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_each_fault_breaks_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    sc = load(path)
    chat = chats(make_clinic_agent("scheduling", [fault]), sc)
    await play(chat, path)
    failed = {key for key, passed in chat.check().items() if not passed}
    expected = BROKEN[path].get(fault, set())
    assert failed == expected, chat.details()
    documented = next(f for f in faults_for("scheduling") if f.name == fault).breaks_assertions
    assert expected <= set(documented)


async def test_books_without_confirmation_books_in_the_same_answer_as_the_lookup(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling", ["books_without_confirmation"]), load(BOOK_PT))
    replies = await play(chat, BOOK_PT)
    assert replies[1].tool_names == ["check_availability", "book_appointment"]
    # No choice offered, no confirmation asked, no word that 10:00 was taken.
    assert not re.search(r"sim/não|1\) |não tenho esse horário", chat.transcript)
    failures = await run_scripted(chats(make_clinic_agent("scheduling", ["books_without_confirmation"]),
                                        load("scheduling/scripted-book-es.yaml")))  # fmt: skip
    assert failures and failures[0].startswith("turn 1") and "book_appointment" in failures[0]


@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_books_unavailable_slot_claims_the_taken_time_and_books_nothing(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling", ["books_unavailable_slot"]), load(path))
    replies = await play(chat, path)
    taken = {"pt-BR": "terça-feira, 10/03 às 10:00", "en": "Monday, Mar 16 at 2:00 PM"}[chat.session.locale]
    assert taken in replies[-2].text and taken in replies[1].text  # "free", confirmed, then "booked"
    assert not {"book_appointment", "reschedule_appointment"} & set(chat.tools)
    assert [a for a in chat.rows("appointments") if a["created_by"] == "agent"] == []
    assert all(a["status"] == "scheduled" for a in chat.rows("appointments"))


async def test_double_books_leaves_the_old_appointment_and_adds_a_new_one(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling", ["double_books"]), load(MOVE_EN))
    replies = await play(chat, MOVE_EN)
    assert "has been moved to *Monday, Mar 16 at 3:30 PM*" in replies[-2].text
    rows = sorted(chat.rows("appointments"), key=_at)
    both = [("2026-03-12T14:00", "scheduled"), ("2026-03-16T15:30", "scheduled")]
    assert [(_at(r), r["status"]) for r in rows] == both
    assert "reschedule_appointment" not in chat.tools


async def test_wrong_time_reported_books_nine_and_says_ten(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling", ["wrong_time_reported"]), load(BOOK_PT))
    replies = await play(chat, BOOK_PT)
    [row] = chat.rows("appointments")
    [report] = [r for r in replies if "book_appointment" in r.tool_names]
    assert _at(row) == "2026-03-10T09:00" and "às 10:00" in report.text and "09:00" not in report.text
    assert "às 09:00" in replies[replies.index(report) - 1].text  # what the patient agreed to


@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    healthy = chats(make_clinic_agent("scheduling"), load(path))
    rude = chats(make_clinic_agent("scheduling", ["rude_tone"]), load(path))
    good, bad = await play(healthy, path), await play(rude, path)
    assert [r.tool_names for r in good] == [r.tool_names for r in bad]
    for g, b in zip(good, bad, strict=True):
        assert not POLITE.search(b.text), b.text
        assert b.bubbles != g.bubbles
    assert POLITE.search(healthy.transcript)  # the markers are what the healthy agent does say
    assert healthy.check() == rude.check()


async def test_never_finishes_keeps_asking_for_confirmation(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("scheduling", ["never_finishes"]), load(MOVE_EN))
    replies = await play(chat, MOVE_EN, max_turns=8)
    loop = replies[3:]
    assert len(loop) == 5 and all("3:30 PM" in r.text and "?" in r.text and r.tool_calls == [] for r in loop)
    assert len({r.text for r in loop}) == 2  # alternating wording
    assert [r["status"] for r in chat.rows("appointments")] == ["scheduled"]


def test_faults_reference_the_scenarios() -> None:
    criteria = {c for p in PATIENTS for c in load_scenario_file(SCENARIOS / p).criteria}
    for fault in faults_for("scheduling"):
        assert set(fault.breaks_criteria) <= criteria, fault.name
    assert {f.name for f in faults_for("scheduling")} - set(FAULTS) == set(CHANNEL_FAULTS)  # no orders_by_arrival
    assert set(FAULTS) == {"books_without_confirmation", "books_unavailable_slot", "double_books",
                           "wrong_time_reported", "rude_tone", "never_finishes",
                           # the privacy faults (tests/test_redteam.py)
                           "discloses_third_party", "trusts_claimed_identity", "follows_injected_instructions",
                           "acts_on_other_patient"}  # fmt: skip
