"""The reference confirmation agent: happy paths in three languages, its scripted scenarios, and every known fault's
documented effect on the database and the transcript."""

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

CONFIRMS = "confirmation/conv-confirms-pt.yaml"
RESCHEDULES = "confirmation/conv-reschedule-es.yaml"
CANCELS = "confirmation/scripted-cancel-en.yaml"
# Patient lines that take the healthy agent to each conversational scenario's goal.
SCRIPTS = {
    CONFIRMS: ["oi, recebi a mensagem", "sim, confirmo", "obrigada"],
    RESCHEDULES: ["Hola, recibí el mensaje", "No voy a poder ir ese día, ¿podemos cambiar la cita?", "el viernes a las 10", "gracias"],
}  # fmt: skip
FAULTS = [f.name for f in faults_for("confirmation") if not f.leaks]  # privacy faults: tests/test_redteam.py
# Which of a scenario's assertions each fault makes fail on the lines above (a fault breaks only what its
# trigger reaches: confirming without asking shows in a scenario that forbids confirm_appointment, and so on).
BROKEN = {
    ("confirms_without_asking", CONFIRMS): set(),
    ("confirms_without_asking", RESCHEDULES): {"tools_not_called"},
    ("cancels_instead_of_rescheduling", CONFIRMS): set(),
    ("cancels_instead_of_rescheduling", RESCHEDULES): {"appointment_rescheduled", "appointment_cancelled", "tools_called"},
    ("wrong_appointment_time", CONFIRMS): set(),
    ("wrong_appointment_time", RESCHEDULES): set(),
    ("rude_tone", CONFIRMS): set(),
    ("rude_tone", RESCHEDULES): set(),
    ("never_finishes", CONFIRMS): {"appointment_confirmed", "tools_called"},
    ("never_finishes", RESCHEDULES): {"appointment_rescheduled", "tools_called"},
}  # fmt: skip
POLITE = re.compile(r"por favor|obrigad|please|thank|gracias|😊|claro|of course|perfeito|perfect", re.IGNORECASE)
CLINIC = {
    "professionals": [{"id": "pro", "name": "Dra. Marina Costa"}],
    "services": [{"id": "svc", "name": "limpeza dental"}],
    "appointments": [{"id": "appt", "professional_id": "pro", "service_id": "svc", "starts_at": "2026-03-10T09:00"}],
    "slots": [
        {"id": "s1", "professional_id": "pro", "service_id": "svc", "starts_at": "2026-03-12T14:00"},
        {"id": "s2", "professional_id": "pro", "service_id": "svc", "starts_at": "2026-03-13T09:00"},
        {"id": "s3", "professional_id": "pro", "service_id": "svc", "starts_at": "2026-03-13T15:00"},
        {"id": "s4", "professional_id": "pro", "service_id": "svc", "starts_at": "2026-03-16T10:00"},
    ],
}


def _appointments(chat) -> dict[str, str]:
    """``{fixture id or 'new': status}`` of the run's appointments."""
    refs = {v: k for k, v in chat.seeded.refs.get("appointments", {}).items()}
    return {refs.get(a["id"], "new"): a["status"] for a in chat.rows("appointments")}


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_healthy_agent_reaches_each_conversational_goal(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), load(path))
    replies = await chat.script(*SCRIPTS[path])
    assert all(chat.check().values()), chat.details()
    assert replies[0].tool_names == ["list_appointments"]  # it looks the appointment up, and asks before acting
    assert replies[-1].tool_calls == []


async def test_confirms_only_after_stating_and_asking(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), load(CONFIRMS))
    first, second, last = await chat.script(*SCRIPTS[CONFIRMS])
    assert "terça-feira, 10/03 às 09:00" in first.text and "Dra. Marina Costa" in first.text
    assert "limpeza dental" in first.text and "(sim/não)" in first.text and "Fernanda" in first.text
    assert second.tool_names == ["confirm_appointment"] and "confirmada" in second.text
    assert _appointments(chat) == {"eval-appt-51": "confirmed"}
    assert "agradeço" in last.text
    see_you = await chat.say("até terça!")  # names the appointment's own day: not a wish to move it
    assert see_you.tool_calls == [] and _appointments(chat) == {"eval-appt-51": "confirmed"}
    other_day = await chat.say("e na sexta, teria horário?")
    assert other_day.tool_names == ["check_availability"] and "sexta-feira, 13/03 às 09:00" in other_day.text


@pytest.mark.parametrize(
    ("locale", "lines", "stated", "status"),
    [
        ("pt-BR", ["Bom dia!", "vou sim"], "terça-feira, 10/03 às 09:00", "confirmed"),
        ("en", ["Hello", "Yes, I'll be there"], "Tuesday, Mar 10 at 9:00 AM", "confirmed"),
        ("es", ["Hola", "sí, ahí estaré"], "martes 10/03 a las 09:00", "confirmed"),
        ("en", ["hi", "I can't make it", "reschedule please", "2"], "Tuesday, Mar 10 at 9:00 AM", "rescheduled"),
        ("pt-BR", ["oi", "não vou poder ir", "quero cancelar", "sim"], "terça-feira, 10/03 às 09:00", "cancelled"),
        ("es", ["hola", "no puedo, ¿la podemos mover al viernes?", "por la tarde"], "martes 10/03 a las 09:00", "rescheduled"),
    ],
)
async def test_happy_paths_in_each_language(locale: str, lines: list[str], stated: str, status: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), scenario("confirmation", locale, **CLINIC))
    replies = await chat.script(*lines)
    assert stated in replies[0].text
    assert _appointments(chat)["appt"] == status
    expected = {"appointment_confirmed": status == "confirmed", "appointment_cancelled": status == "cancelled",
                "appointment_rescheduled": status == "rescheduled", "escalated_to_human": False}  # fmt: skip
    assert all(chat.check(expected).values()), chat.details(expected)
    if status == "rescheduled":
        [new] = [a for a in chat.rows("appointments") if a["status"] == "scheduled"]
        chosen = {"en": "2026-03-13T09:00", "es": "2026-03-13T15:00"}[locale]  # option 2; Friday afternoon
        assert new["starts_at"] == chosen and new["created_by"] == "agent"
        assert chat.check({"tools_called": ["check_availability", "reschedule_appointment"]}) == {"tools_called": True}


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "confirmation").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), load(f"confirmation/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_each_fault_breaks_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", [fault]), load(path))
    await chat.script(*SCRIPTS[path])
    failed = {key for key, passed in chat.check().items() if not passed}
    documented = next(f for f in faults_for("confirmation") if f.name == fault).breaks_assertions
    assert failed == BROKEN[fault, path], chat.details()
    assert failed <= set(documented)


def test_every_documented_assertion_is_broken_somewhere() -> None:
    for fault in (f for f in faults_for("confirmation") if not f.leaks):
        shown = set().union(*(BROKEN[fault.name, p] for p in SCRIPTS))
        assert shown == set(fault.breaks_assertions), fault.name


async def test_confirms_without_asking_confirms_whatever_the_patient_says(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", ["confirms_without_asking"]), load(RESCHEDULES))
    first = await chat.say("no voy a poder ir")
    assert first.tool_names == ["list_appointments", "confirm_appointment"]
    assert "confirmada" in first.text and "(sí/no)" not in first.text
    assert _appointments(chat) == {"eval-appt-52": "confirmed"}


@pytest.mark.parametrize(("fault", "turn"), [("confirms_without_asking", 1), ("never_finishes", 4)])
async def test_faults_fail_the_scripted_cancel_turns(fault: str, turn: int, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", [fault]), load(CANCELS))
    failures = await run_scripted(chat)
    assert failures and failures[0].startswith(f"turn {turn}")


async def test_cancels_instead_of_rescheduling_never_looks_for_slots(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", ["cancels_instead_of_rescheduling"]), load(RESCHEDULES))
    await chat.say("hola")
    reply = await chat.say("quiero cambiar la cita a otro día")
    assert reply.tool_names == ["cancel_appointment"] and "otro día" in reply.text
    assert "check_availability" not in chat.tools and _appointments(chat) == {"eval-appt-52": "cancelled"}
    # A plain cancellation is still asked about first.
    asked = chats(make_clinic_agent("confirmation", ["cancels_instead_of_rescheduling"]), load(RESCHEDULES))
    await asked.say("hola")
    assert (await asked.say("quiero cancelar")).tool_calls == []


@pytest.mark.parametrize(("path", "right", "wrong"), [(CONFIRMS, "às 09:00", "às 10:00"), (RESCHEDULES, "a las 15:30", "a las 16:30")])
async def test_wrong_appointment_time_states_an_hour_late_but_acts_on_the_right_one(path, right, wrong, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", ["wrong_appointment_time"]), load(path))
    await chat.script(*SCRIPTS[path])
    stated = chat.replies[0].text
    assert wrong in stated and right not in chat.transcript
    assert all(chat.check().values()), chat.details()  # the database is right: only the words are wrong


async def test_wrong_appointment_time_shows_offered_slots_at_their_real_times(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", ["wrong_appointment_time"]), load(RESCHEDULES))
    replies = await chat.script(*SCRIPTS[RESCHEDULES][:2])
    assert "viernes 13/03 a las 10:00" in replies[1].text and "viernes 13/03 a las 16:00" in replies[1].text


@pytest.mark.parametrize("path", [*sorted(SCRIPTS), CANCELS])
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    sc = load(path)
    lines = SCRIPTS.get(path) or [t.user for t in sc.turns]  # type: ignore[union-attr]
    healthy, rude = chats(make_clinic_agent("confirmation"), sc), chats(make_clinic_agent("confirmation", ["rude_tone"]), sc)
    for line in lines:
        good, bad = await healthy.say(line), await rude.say(line)
        assert good.tool_names == bad.tool_names
        assert not POLITE.search(bad.text), bad.text
        assert bad.bubbles != good.bubbles
    assert POLITE.search(healthy.transcript)


async def test_never_finishes_keeps_asking_and_changes_nothing(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation", ["never_finishes"]), load(CONFIRMS))
    await chat.say("oi")
    replies = await chat.script("sim", "sim", "SIM, já disse", "confirmo!")
    assert all("10/03" in r.text and r.tool_calls == [] for r in replies)
    assert len({r.text for r in replies}) == 2  # alternating wording
    assert _appointments(chat) == {"eval-appt-51": "scheduled"}
    # The same for a chosen new time and for an agreed cancellation.
    moving = chats(make_clinic_agent("confirmation", ["never_finishes"]), load(RESCHEDULES))
    await moving.script(*SCRIPTS[RESCHEDULES][:3])
    assert all(r.tool_calls == [] for r in await moving.script("sí", "sí"))
    cancelling = chats(make_clinic_agent("confirmation", ["never_finishes"]), load(CANCELS))
    await cancelling.script("hi", "please cancel it")
    assert all(r.tool_calls == [] for r in await cancelling.script("yes", "yes"))
    assert "reschedule_appointment" not in moving.tools and "cancel_appointment" not in cancelling.tools


async def test_cancellation_is_asked_and_can_be_withdrawn(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), load(CANCELS))
    await chat.say("hi")
    asked = await chat.say("cancel my appointment")
    assert asked.tool_calls == [] and "sure" in asked.text
    kept = await chat.say("no, actually keep it")
    assert kept.tool_calls == [] and "didn't cancel" in kept.text and "(yes/no)" in kept.text
    assert (await chat.say("yes")).tool_names == ["confirm_appointment"]
    assert _appointments(chat) == {"eval-appt-53": "confirmed"}


async def test_rescheduling_by_day_then_time_and_after_confirming(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), scenario("confirmation", "pt-BR", **CLINIC))
    await chat.script("oi", "sim")
    assert _appointments(chat) == {"appt": "confirmed"}
    offered = await chat.say("na verdade preciso remarcar pra sexta")  # a confirmed appointment can still move
    assert offered.tool_names == ["check_availability"]
    assert "sexta-feira, 13/03 às 09:00" in offered.text and "12/03" not in offered.text
    unknown = await chat.say("às 11h")
    assert unknown.tool_calls == [] and "Não tenho horário livre em 11:00" in unknown.text
    done = await chat.say("então às 15h")
    assert done.tool_names == ["reschedule_appointment"] and "sexta-feira, 13/03 às 15:00" in done.text
    assert sorted(_appointments(chat).values()) == ["rescheduled", "scheduled"]


@pytest.mark.parametrize(
    ("locale", "line", "booked"),
    [
        ("es", "no puedo ir el martes, ¿la podemos pasar al viernes por la mañana?", "2026-03-13T09:00"),
        ("en", "I can't come on Tuesday. Could we do Friday at 3?", "2026-03-13T15:00"),
    ],
)
async def test_cant_with_a_new_day_in_the_same_message_books_it(locale: str, line: str, booked: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), scenario("confirmation", locale, **CLINIC))
    await chat.say("hi")
    reply = await chat.say(line)  # the day they are leaving is not the day they ask for
    assert reply.tool_names == ["check_availability", "reschedule_appointment"]
    assert [a["starts_at"] for a in chat.rows("appointments") if a["status"] == "scheduled"] == [booked]


async def test_a_day_with_one_free_slot_is_offered_before_booking(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), scenario("confirmation", "pt-BR", **CLINIC))
    await chat.say("oi")
    offered = await chat.say("não posso na terça, pode ser na quinta?")
    assert offered.tool_names == ["check_availability"] and "quinta-feira, 12/03 às 14:00" in offered.text
    assert "(sim/não)" in offered.text and _appointments(chat) == {"appt": "scheduled"}
    assert (await chat.say("sim")).tool_names == ["reschedule_appointment"]
    assert chat.check({"appointment_rescheduled": True}) == {"appointment_rescheduled": True}


async def test_no_appointment_and_already_confirmed(chats) -> None:  # noqa: F811
    none = chats(make_clinic_agent("confirmation"), scenario("confirmation", "en"))
    reply = await none.say("hi, I got a message")
    assert reply.tool_names == ["list_appointments"] and "couldn't find" in reply.text
    confirmed = {**CLINIC, "appointments": [{**CLINIC["appointments"][0], "status": "confirmed"}]}
    already = chats(make_clinic_agent("confirmation"), scenario("confirmation", "es", **confirmed))
    reply = await already.say("hola")
    assert "ya está confirmada" in reply.text and reply.tool_names == ["list_appointments"]


async def test_hand_off_when_asked_but_not_for_a_mention_of_staff(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("confirmation"), load(CONFIRMS))
    await chat.say("oi")
    mention = await chat.say("sim, a recepcionista já tinha me avisado")
    assert mention.tool_names == ["confirm_appointment"]
    handoff = await chat.say("quero falar com a recepcionista")
    assert handoff.tool_names == ["handoff_to_human"] and "equipe" in handoff.text
    assert chat.check({"escalated_to_human": True}) == {"escalated_to_human": True}


def test_faults_reference_this_agents_scenarios() -> None:
    paths = sorted((SCENARIOS / "confirmation").glob("*.yaml"))
    criteria = {c for p in paths if (s := load_scenario_file(p)).type == "conversational" for c in s.criteria}
    for fault in faults_for("confirmation"):
        assert set(fault.breaks_criteria) <= criteria, fault.name
    assert set(FAULTS) == {
        "confirms_without_asking", "cancels_instead_of_rescheduling", "wrong_appointment_time", "rude_tone",
        "never_finishes",
    }  # fmt: skip
