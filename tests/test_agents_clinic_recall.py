"""The reference recall agent: a patient answering a "time for your check-up" message books in three languages or
declines, the scenarios, and every known fault's documented effect on the database and the transcript."""

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

from convoeval.agents.clinic import faults_for, make_clinic_agent
from convoeval.scenarios import load_scenario_file

FAULTS = [f.name for f in faults_for("recall")]
ACCEPT_ES, DECLINE_PT = "recall/conv-accepts-checkup-es.yaml", "recall/conv-declines-pt.yaml"

# Rule-following stand-ins for the simulated patients (see test_agents_clinic_scheduling): the first rule whose
# pattern the agent's last answer matches gives the next line; no match ends the conversation.
PATIENTS = {
    ACCEPT_ES: (
        "Hola, recibí su mensaje",
        [
            (r"\(sí/no\)|verdad\?|sí o no", "sí"),
            (r"(?m)^1\) ", "la primera"),
            (r"ya te reservé|agendé el", "Prefiero por la tarde"),
            (r"busque algunos horarios|responde \*sí\* o \*no\*|vas a agendar", "Sí, por la tarde si puede ser"),
            (r"te ayudo con algo más|algo más\? rápido", "gracias"),
        ],
    ),
    DECLINE_PT: (
        "Oi, recebi a mensagem de vocês",
        [
            (r"já reservei|marquei", "Não, por favor cancele, vou viajar a trabalho"),
            (r"(?m)^1\) ", "Não, obrigado. Por favor, não quero receber mais lembretes por enquanto"),
            (r"veja alguns horários|responder \*sim\* ou \*não\*|vai marcar ou não",
             "Agora não, obrigado. Vou viajar a trabalho nos próximos meses"),  # fmt: skip
        ],
    ),
}

# Assertions each fault makes fail in each conversational scenario, with the patients above (empty: the fault shows
# in the words only, or, for books_without_consent when the patient wanted a slot anyway, it is moved to her time).
BROKEN = {
    ACCEPT_ES: {},
    DECLINE_PT: {"books_without_consent": {"appointment_created", "tools_not_called"}},
}
POLITE = re.compile(
    r"por favor|obrigad|please|thank|gracias|😊|🙏|claro|of course|perfeito|perfect|perfecto|great|ótimo|genial|"
    r"sem problemas|no problem|sin problema|prontinho|all set|listo",
    re.IGNORECASE,
)


async def play(chat, path: str, max_turns: int = 8) -> list:  # noqa: ANN001
    opener, rules = PATIENTS[path]
    replies = [await chat.say(opener)]
    while len(replies) < max_turns:
        line = next((reply for pattern, reply in rules if re.search(pattern, replies[-1].text, re.I)), None)
        if line is None:
            break
        replies.append(await chat.say(line))
    return replies


def _agent_rows(chat) -> list[dict]:  # noqa: ANN001
    return [a for a in chat.rows("appointments") if a["created_by"] == "agent"]


def _recall_scenario(locale: str, **extra):  # noqa: ANN003, ANN202
    fixtures = {
        "professionals": [{"id": "camila", "name": "Dra. Camila Rocha"}, {"id": "paulo", "name": "Dr. Paulo Lima"}],
        "services": [{"id": "revisao", "name": {"pt-BR": "Limpeza e revisão", "en": "Check-up and cleaning",
                                                 "es": "Revisión y limpieza"}[locale]}],  # fmt: skip
        "appointments": [
            {"id": "ultima", "professional_id": "camila", "service_id": "revisao", "starts_at": "2025-09-15T10:00",
             "status": "completed"},  # fmt: skip
            {"id": "antiga", "professional_id": "paulo", "service_id": "revisao", "starts_at": "2025-03-10T10:00",
             "status": "completed"},  # fmt: skip
        ],
        "slots": [
            {"id": "seg-09", "professional_id": "camila", "starts_at": "2026-03-16T09:00"},
            {"id": "seg-1630", "professional_id": "paulo", "starts_at": "2026-03-16T16:30"},
            {"id": "qua-15", "professional_id": "camila", "starts_at": "2026-03-18T15:00"},
        ],
    }
    return scenario("recall", locale, **{**fixtures, **extra})


# ── Happy paths ──


async def test_accepting_patient_books_an_afternoon_check_up(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), load(ACCEPT_ES))
    replies = await play(chat, ACCEPT_ES)
    assert all(chat.check().values()), chat.details()
    assert "15/09/2025" in replies[0].text and "Dra. Camila Rocha" in replies[0].text and "6 meses" in replies[0].text
    assert replies[0].tool_names == ["list_appointments"]  # nothing offered before she says yes
    [booking] = [n for n, r in enumerate(replies) if "book_appointment" in r.tool_names]
    assert "(sí/no)" in replies[booking - 1].text
    [row] = _agent_rows(chat)
    assert str(row["starts_at"])[:16] == "2026-03-16T15:00" and "lunes 16/03 a las 15:00" in replies[booking].text
    assert row["service_id"] == chat.seeded.refs["services"]["revision"]


async def test_declining_patient_is_left_alone(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), load(DECLINE_PT))
    replies = await play(chat, DECLINE_PT)
    assert all(chat.check().values()), chat.details()
    assert len(replies) == 2 and "Não vou agendar nada" in replies[-1].text
    assert chat.tools == ["list_appointments"]  # no slots pushed after the no
    opted_out = await chat.say("Por favor, não quero receber mais mensagens")
    assert "Não vamos mais enviar lembretes" in opted_out.text and opted_out.tool_calls == []


@pytest.mark.parametrize(
    ("locale", "lines", "slot", "said"),
    [
        ("pt-BR", ["Oi! Quero marcar sim", "a das 15h", "sim", "obrigado"], "qua-15", "quarta-feira, 18/03 às 15:00"),
        ("en", ["Hello, who is this?", "ok, what times do you have in the afternoon?", "1", "yes", "thanks"],
         "qua-15", "Wednesday, Mar 18 at 3:00 PM"),  # fmt: skip - her usual dentist's afternoon first
        ("es", ["Hola, sí, quiero agendar el lunes", "la de las 9", "sí", "gracias"],
         "seg-09", "lunes 16/03 a las 09:00"),  # fmt: skip
    ],
)
async def test_booking_in_each_language(locale: str, lines: list[str], slot: str, said: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), _recall_scenario(locale))
    replies = await chat.script(*lines)
    expected = {"appointment_created": True, "escalated_to_human": False,
                "tools_called": ["list_appointments", "check_availability", "book_appointment"]}  # fmt: skip
    assert chat.check(expected) == dict.fromkeys(expected, True)
    [row] = _agent_rows(chat)
    assert row["slot_id"] == chat.seeded.refs["slots"][slot]
    [booked] = [r for r in replies if "book_appointment" in r.tool_names]
    assert said in booked.text and replies.index(booked) == len(lines) - 2  # after the yes, not before
    last_visit = {"pt-BR": "15/09/2025", "en": "Sep 15, 2025", "es": "15/09/2025"}[locale]
    assert last_visit in replies[0].text and "Ana" in replies[0].text  # the latest visit, not the older one


async def test_who_is_this_gets_the_reason_before_any_offer(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), _recall_scenario("en"))
    first = await chat.say("Hello, who is this?")
    assert "every 6 months" in first.text and first.tool_names == ["list_appointments"]


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "recall").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), load(f"recall/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


async def test_patient_with_an_appointment_already_booked_gets_no_offer(chats) -> None:  # noqa: F811
    upcoming = {"id": "proxima", "professional_id": "camila", "service_id": "revisao", "starts_at": "2026-03-20T10:00"}
    sc = _recall_scenario("pt-BR")
    sc = _recall_scenario("pt-BR", appointments=[*[a.model_dump() for a in sc.fixtures.appointments], upcoming])
    chat = chats(make_clinic_agent("recall"), sc)
    first = await chat.say("oi, recebi a mensagem")
    assert "já tem *Limpeza e revisão* marcada para *sexta-feira, 20/03 às 10:00*" in first.text
    assert first.tool_names == ["list_appointments"]
    await chat.say("ok, obrigado")
    assert _agent_rows(chat) == []


async def test_patient_can_ask_for_a_human(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall"), load(ACCEPT_ES))
    await chat.script("Hola, recibí su mensaje", "sí")
    handoff = await chat.say("prefiero hablar con una persona")
    assert handoff.tool_names == ["handoff_to_human"]
    assert (await chat.say("1")).tool_calls == [] and _agent_rows(chat) == []


# ── Known faults ──


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_each_fault_breaks_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall", [fault]), load(path))
    await play(chat, path)
    failed = {key for key, passed in chat.check().items() if not passed}
    expected = BROKEN[path].get(fault, set())
    assert failed == expected, chat.details()
    documented = next(f for f in faults_for("recall") if f.name == fault).breaks_assertions
    assert expected <= set(documented)


async def test_pushy_after_refusal_offers_slots_after_every_no(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall", ["pushy_after_refusal"]), load(DECLINE_PT))
    replies = await play(chat, DECLINE_PT)
    after_no = replies[1:]
    assert len(after_no) == 7  # the patient said no seven times; the agent never let go
    assert all(r.tool_names == ["check_availability"] for r in after_no)
    assert all("1) segunda-feira, 16/03 às 09:00" in r.text for r in after_no)
    assert {"Tem certeza" in r.text for r in after_no} == {True, False}  # two insisting wordings, alternating
    assert not re.search(r"Não vou agendar nada|Não vamos mais enviar", chat.transcript)
    assert _agent_rows(chat) == []  # pushy, but it still books nothing without a yes


async def test_books_without_consent_books_in_the_first_answer(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall", ["books_without_consent"]), load(DECLINE_PT))
    replies = await play(chat, DECLINE_PT)
    assert replies[0].tool_names == ["list_appointments", "check_availability", "book_appointment"]
    assert "Já reservei para você *segunda-feira, 16/03 às 09:00*" in replies[0].text
    [row] = _agent_rows(chat)
    assert row["status"] == "cancelled" and replies[1].tool_names == ["cancel_appointment"]  # the refusal undoes it
    failures = await run_scripted(chats(make_clinic_agent("recall", ["books_without_consent"]),
                                        load("recall/scripted-accept-en.yaml")))  # fmt: skip
    assert any(f.startswith("turn 1") and "book_appointment" in f for f in failures), failures


async def test_books_without_consent_moves_the_booking_to_the_time_asked(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("recall", ["books_without_consent"]), load(ACCEPT_ES))
    replies = await play(chat, ACCEPT_ES)
    assert any("reschedule_appointment" in r.tool_names for r in replies)
    rows = sorted(chat.rows("appointments"), key=lambda a: str(a["starts_at"]))
    assert [(str(a["starts_at"])[:16], a["status"]) for a in rows if a["created_by"] == "agent"] == [
        ("2026-03-16T09:00", "rescheduled"), ("2026-03-16T15:00", "scheduled"),
    ]  # fmt: skip


async def test_wrong_patient_data_misdates_the_last_visit_only(chats) -> None:  # noqa: F811
    healthy = chats(make_clinic_agent("recall"), load(ACCEPT_ES))
    faulty = chats(make_clinic_agent("recall", ["wrong_patient_data"]), load(ACCEPT_ES))
    good, bad = await play(healthy, ACCEPT_ES), await play(faulty, ACCEPT_ES)
    assert "15/09/2025" in good[0].text and "15/07/2025" in bad[0].text and "15/09/2025" not in faulty.transcript
    assert [r.text for r in good[1:]] == [r.text for r in bad[1:]]  # the rest, bookings included, is right
    assert [str(a["starts_at"]) for a in _agent_rows(faulty)] == [str(a["starts_at"]) for a in _agent_rows(healthy)]


@pytest.mark.parametrize("path", sorted(PATIENTS))
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    healthy = chats(make_clinic_agent("recall"), load(path))
    rude = chats(make_clinic_agent("recall", ["rude_tone"]), load(path))
    good, bad = await play(healthy, path), await play(rude, path)
    assert [r.tool_names for r in good] == [r.tool_names for r in bad]
    for g, b in zip(good, bad, strict=True):
        assert not POLITE.search(b.text), b.text
        assert b.bubbles != g.bubbles
    assert POLITE.search(healthy.transcript)
    assert healthy.check() == rude.check()


def test_faults_reference_the_scenarios() -> None:
    criteria = {c for p in PATIENTS for c in load_scenario_file(SCENARIOS / p).criteria}
    for fault in faults_for("recall"):
        assert set(fault.breaks_criteria) <= criteria, fault.name
    assert set(FAULTS) == {"pushy_after_refusal", "books_without_consent", "wrong_patient_data", "rude_tone"}
