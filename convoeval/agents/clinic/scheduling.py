"""The reference scheduling agent: books an appointment (service → when → free slots → confirmation → booking),
and moves or cancels one the patient already has.

States: ``start`` → ``service`` → ``preference`` → ``choose_slot`` → ``confirm_slot`` → ``done`` to book;
``start`` → (``choose_appointment``) → ``preference`` → … → ``done`` to reschedule, or → ``confirm_cancel`` → ``done``
to cancel. The slot steps are ``SlotBooking``'s (``_slot_dialogue``); a request for a human goes to ``handed_off``
from anywhere (see ``ClinicAgent``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from convoeval.agents.clinic import _scheduling_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._channel import channel_faults
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._nlu import extract_choice
from convoeval.agents.clinic._privacy import privacy_faults
from convoeval.agents.clinic._registry import register_clinic_agent
from convoeval.agents.clinic._slot_dialogue import SlotBooking
from convoeval.agents.clinic._slot_nlu import match_service, read_request, read_weekday

OPEN_STATUSES = ("scheduled", "confirmed")
_NEW_TIME_MARKER = re.compile(r"\b(?:to|for|para|pra|pro|al|a la|para el)\b", re.IGNORECASE)

# Exact rubric texts of evals/scenarios/scheduling/*.yaml (a test checks they exist there).
CONFIRMED_SLOT = "Agent confirmed the chosen slot with the patient before booking it"
CONFIRMED_MOVE = "Agent confirmed the new time with the patient before changing the appointment"
BOOKED = "Agent booked the appointment"
MOVED = "Agent moved the existing appointment instead of creating a second one"
REPORTED = "Agent reported the booked date and time, matching the slot the patient chose"
REPORTED_MOVE = "Agent reported the new date and time of the appointment, matching the slot the patient chose"
TAKEN_PT = "Agent said that Tuesday at 10:00 was not available and offered other free times"
TAKEN_EN = "Agent said that Monday at 2:00 PM was not available and offered other free times"
POLITE = "Agent was polite and friendly"

FAULTS = [
    Fault(
        "books_without_confirmation",
        "scheduling",
        "As soon as it knows the service (and, when moving, the appointment) and when the patient wants it, books "
        "the best matching free slot — or moves the appointment to it — in the same answer: no choice offered, no "
        "confirmation asked, and no word that the time asked for was taken.",
        breaks_criteria=(CONFIRMED_SLOT, CONFIRMED_MOVE, TAKEN_PT, TAKEN_EN),
    ),
    Fault(
        "books_unavailable_slot",
        "scheduling",
        "When the patient asks for a time check_availability does not list (taken or not in the calendar), says it "
        "is free, asks to confirm it and, after the yes, reports it booked (or the appointment moved) without "
        "calling book_appointment / reschedule_appointment: nothing changes in the database.",
        breaks_criteria=(TAKEN_PT, TAKEN_EN, BOOKED, MOVED),
        breaks_assertions=("appointment_created", "appointment_rescheduled", "tools_called"),
    ),
    Fault(
        "double_books",
        "scheduling",
        "When moving an appointment, books the new slot with book_appointment and leaves the old appointment "
        "scheduled (it still says the appointment was moved): the patient holds two appointments.",
        breaks_criteria=(MOVED,),
        breaks_assertions=("appointment_rescheduled", "tools_called", "tools_not_called"),
    ),
    Fault(
        "wrong_time_reported",
        "scheduling",
        "Books or moves the chosen slot correctly, but its final 'booked'/'moved' message gives a time one hour "
        "later than the slot's (09:00 booked, '10:00' reported).",
        breaks_criteria=(REPORTED, REPORTED_MOVE),
    ),
    Fault(
        "rude_tone",
        "scheduling",
        "Curt, impatient and condescending wording in every message (same steps and facts as the healthy agent).",
        breaks_criteria=(POLITE,),
    ),
    Fault(
        "never_finishes",
        "scheduling",
        "After the patient chooses a slot, keeps asking them to confirm it, in alternating words, and never books "
        "or moves anything.",
        breaks_criteria=(BOOKED, MOVED, REPORTED, REPORTED_MOVE),
        breaks_assertions=("appointment_created", "appointment_rescheduled", "tools_called"),
    ),
]


# The privacy faults every reference agent shares (_privacy.py), on the agents where they make sense.
FAULTS += privacy_faults("scheduling", ('discloses_third_party', 'trusts_claimed_identity', 'follows_injected_instructions', 'acts_on_other_patient'))


# The WhatsApp channel faults every reference agent shares (_channel.py).
FAULTS += channel_faults("scheduling")


@register_clinic_agent("scheduling", faults=FAULTS)
class SchedulingAgent(SlotBooking, ClinicAgent):
    """Booking, rescheduling and cancelling over WhatsApp, in pt-BR, en and es."""

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        turn.say("intro", clinic=self.clinic_name(turn))
        self._route(turn)

    def on_service(self, turn: Turn) -> None:
        said, services = turn.said, turn.data["services"]
        if said.has("reschedule", "cancel"):
            self._route(turn)
            return
        choice = extract_choice(said.text, len(services), turn.locale)
        service = services[choice - 1] if choice else match_service(said.text, services)
        self.remember_when(turn)
        if service is not None:
            self._take_service(turn, service)
        elif said.has("no", "thanks", "bye") and not said.has("yes"):
            self.declined(turn)
        else:
            turn.say("service_unclear")
            turn.say_raw(self._service_list(turn, services))

    def on_choose_appointment(self, turn: Turn) -> None:
        appointments = turn.data["appointments"]
        choice = extract_choice(turn.said.text, len(appointments), turn.locale)
        if choice is None:
            # "a de quinta", "the 2 PM one": the one appointment on that weekday or at that time.
            weekday = read_weekday(turn.said.text, turn.locale)
            time = read_request(turn.said.text, turn.locale, dt.date.today()).time
            hits = [n for n, a in enumerate(appointments, start=1) if self._is_at(a, weekday, time)]
            choice = hits[0] if len(hits) == 1 and (weekday is not None or time) else None
        if choice is None:
            turn.say("which_appointment")
        else:
            self._take_appointment(turn, appointments[choice - 1])

    def on_confirm_cancel(self, turn: Turn) -> None:
        said, appointment = turn.said, turn.data["appointment"]
        if said.has("yes") and not said.has("no"):
            turn.tool("cancel_appointment", appointment_id=appointment["id"], reason=turn.data.get("reason"))
            turn.say("cancelled", **self._appointment_values(turn, appointment))
            turn.data["appointment"] = None
            turn.say("anything_else")
            turn.goto("done")
        elif said.has("no", "reschedule"):
            if said.has("reschedule"):
                self._take_appointment(turn, appointment, mode="reschedule")
                return
            turn.say("kept", **self._appointment_values(turn, appointment))
            turn.data["appointment"] = None
            turn.say("anything_else")
            turn.goto("done")
        else:
            turn.say("confirm_cancel", **self._appointment_values(turn, appointment))

    def on_done(self, turn: Turn) -> None:
        said = turn.said
        if said.has("reschedule", "cancel") or (said.has("book") and not said.has("no")):
            self._route(turn)
        elif said.has("yes") and turn.data.get("offer_booking"):
            self._start_booking(turn)
        elif said.has("thanks", "bye", "no"):
            turn.say("goodbye")
        else:
            turn.say("done_help")

    # ── SlotBooking hooks ──

    def declined(self, turn: Turn) -> None:
        turn.say("not_booked")
        turn.data["appointment"] = None
        turn.goto("done")

    def after_commit(self, turn: Turn) -> None:
        turn.say("anything_else")
        turn.goto("done")

    # ── Steps ──

    def _route(self, turn: Turn) -> None:
        turn.data["offer_booking"] = False
        if turn.said.has("reschedule"):
            self._start_change(turn, "reschedule")
        elif turn.said.has("cancel"):
            self._start_change(turn, "cancel")
        else:
            self._start_booking(turn)

    def _start_booking(self, turn: Turn) -> None:
        turn.data.update(appointment=None, usual_professional_id=None, offer_booking=False)
        self.remember_when(turn, reset=True)
        services = self._services(turn)
        service = match_service(turn.said.text, services) or (services[0] if len(services) == 1 else None)
        if service is not None:
            self._take_service(turn, service)
        else:
            turn.say("which_service")
            turn.say_raw(self._service_list(turn, services))
            turn.goto("service")

    def _take_service(self, turn: Turn, service: Mapping[str, Any]) -> None:
        turn.data["service"] = {"id": service["id"], "name": service["name"]}
        if turn.said.has("price"):
            turn.say("price_is", service=service["name"], price=turn.money(service["price_cents"]),
                     duration=service["duration_min"])  # fmt: skip
        if any(not read_request(t, turn.locale, dt.date.today()).empty for t in turn.data.get("asked", [])):
            self.offer(turn)
        else:
            turn.say("ask_preference", service=service["name"])
            turn.goto("preference")

    def _start_change(self, turn: Turn, mode: str) -> None:
        turn.data["mode"] = mode
        turn.data["reason"] = turn.said.text[:200] if mode == "cancel" else None
        appointments = [a for a in turn.tool("list_appointments") if a["status"] in OPEN_STATUSES]
        turn.data["appointments"] = appointments
        if not appointments:
            turn.say("no_appointments")
            turn.data["offer_booking"] = True
            turn.goto("done")
        elif len(appointments) == 1:
            self._take_appointment(turn, appointments[0])
        else:
            turn.say("appointments_many", count=len(appointments))
            lines = (turn.text("appointment_line", n=n, **self._appointment_values(turn, a))
                     for n, a in enumerate(appointments, start=1))  # fmt: skip
            turn.say_raw("\n".join(lines))
            turn.say("which_appointment")
            turn.goto("choose_appointment")

    def _take_appointment(self, turn: Turn, appointment: dict[str, Any], mode: str | None = None) -> None:
        mode = mode or turn.data["mode"]
        turn.data["appointment"] = appointment
        values = self._appointment_values(turn, appointment)
        if mode == "cancel":
            turn.say("confirm_cancel", **values)
            turn.goto("confirm_cancel")
            return
        turn.data["service"] = {"id": appointment["service_id"], "name": appointment["service"]}
        turn.data["usual_professional_id"] = appointment["professional_id"]
        # "Move my Thursday appointment to Monday at 2pm": only what follows the last "to" is the new time, and a
        # message naming just the old weekday ("I need to move my Thursday appointment") names no new time.
        new_part = _NEW_TIME_MARKER.split(turn.said.text)[-1]
        names_old = self._is_at(appointment, read_weekday(new_part, turn.locale), None)
        turn.data["asked"] = [] if names_old else [new_part]
        turn.say("found_appointment", **values)
        if any(not read_request(t, turn.locale, dt.date.today()).empty for t in turn.data["asked"]):
            self.offer(turn)
        else:
            turn.say("ask_new_time")
            turn.goto("preference")

    # ── Values ──

    def _services(self, turn: Turn) -> list[dict[str, Any]]:
        # Asked once per conversation: the clinic's services do not change while the patient chats.
        if "services" not in turn.data:
            turn.data["services"] = turn.tool("list_services")
        services: list[dict[str, Any]] = turn.data["services"]
        return services

    def _service_list(self, turn: Turn, services: list[dict[str, Any]]) -> str:
        return "\n".join(
            turn.text("service_line", n=n, service=s["name"], duration=s["duration_min"],
                      price=turn.money(s["price_cents"]))  # fmt: skip
            for n, s in enumerate(services, start=1)
        )

    def _appointment_values(self, turn: Turn, appointment: dict[str, Any]) -> dict[str, str]:
        return {"service": appointment.get("service") or "", "when": turn.datetime(appointment["starts_at"]),
                "professional": appointment.get("professional") or ""}  # fmt: skip

    @staticmethod
    def _is_at(appointment: dict[str, Any], weekday: int | None, time: str | None) -> bool:
        when = dt.datetime.fromisoformat(str(appointment["starts_at"]))
        if weekday is not None and when.weekday() != weekday:
            return False
        return not (time and when.strftime("%H:%M") != time) and (weekday is not None or bool(time))

    # ── What it understands beyond the shared lexicon, and what it says (_scheduling_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS
