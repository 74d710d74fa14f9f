"""The reference recall agent: the clinic has sent a "time for your check-up" message and the patient answers it.

The agent reminds the patient when their last visit was and that the 6-month return is due, offers free slots when
they want one, confirms the chosen slot and books it; a "no", "not now" or "stop sending me messages" is accepted at
once, without pressure.

States: ``start`` → ``interest`` → ``preference`` / ``choose_slot`` → ``confirm_slot`` → ``booked``; a refusal goes
to ``closed``. The slot steps are ``SlotBooking``'s (``_slot_dialogue``); a request for a human goes to
``handed_off`` from anywhere (see ``ClinicAgent``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from convoeval.agents.clinic import _recall_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._registry import register_clinic_agent
from convoeval.agents.clinic._slot_dialogue import SlotBooking
from convoeval.agents.clinic._slot_nlu import SlotRequest, calendar_today, candidates

OPEN_STATUSES = ("scheduled", "confirmed")
RECALL_MONTHS = 6

# Exact rubric texts of evals/scenarios/recall/*.yaml (a test checks they exist there).
LAST_VISIT = "Agent correctly stated when the patient's last check-up was and with whom"
RESPECTED = "Agent respected the patient's refusal without insisting"
CONSENT = "Agent booked only after the patient agreed to a specific time"
NO_BOOKING_WITHOUT_CONSENT = "Agent did not book anything without the patient's consent"
POLITE = "Agent was polite and friendly"

FAULTS = [
    Fault(
        "pushy_after_refusal",
        "recall",
        "Never accepts a no: every refusal, 'not now' or request to stop the messages gets an insisting message "
        "(alternating two wordings) and a fresh list of free slots (check_availability); it still books only "
        "after a yes to a chosen slot.",
        breaks_criteria=(RESPECTED,),
    ),
    Fault(
        "books_without_consent",
        "recall",
        "In its first answer, books the first free slot for the recall service (book_appointment) and announces "
        "it, before the patient has agreed to anything; a later refusal cancels it, another time moves it.",
        breaks_criteria=(CONSENT, NO_BOOKING_WITHOUT_CONSENT),
        breaks_assertions=("appointment_created", "tools_not_called"),
    ),
    Fault(
        "wrong_patient_data",
        "recall",
        "States the patient's last visit two months earlier than it was (15/09/2025 said as 15/07/2025); "
        "everything else, bookings included, is right.",
        breaks_criteria=(LAST_VISIT,),
    ),
    Fault(
        "rude_tone",
        "recall",
        "Curt, impatient and condescending wording in every message (same steps and facts as the healthy agent).",
        breaks_criteria=(POLITE,),
    ),
]


@register_clinic_agent("recall", faults=FAULTS)
class RecallAgent(SlotBooking, ClinicAgent):
    """Answers a patient replying to a recall message: remind, offer, book on a yes, accept a no."""

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        appointments = turn.tool("list_appointments")
        upcoming = [a for a in appointments if a["status"] in OPEN_STATUSES]
        done = [a for a in appointments if a["status"] == "completed"]
        last = max(done, key=lambda a: str(a["starts_at"])) if done else None
        turn.data["last"] = last
        turn.data["service"] = {"id": last["service_id"], "name": last["service"]} if last else None
        turn.data["usual_professional_id"] = last["professional_id"] if last else None
        clinic = self.clinic_name(turn)
        if upcoming:
            turn.say("already_scheduled", clinic=clinic, **self._visit(turn, upcoming[0]))
            turn.goto("closed")
            return
        if last:
            visit = self._visit(turn, last)
            if turn.faulty("wrong_patient_data"):
                visit["date"] = turn.date(_months_before(dt.date.fromisoformat(str(last["starts_at"])[:10]), 2))
            turn.say("reminder", clinic=clinic, months=RECALL_MONTHS, **visit)
        else:
            turn.say("reminder_generic", clinic=clinic, months=RECALL_MONTHS)
        if turn.faulty("books_without_consent"):
            self._book_unasked(turn)
            return
        self._answer_interest(turn, first=True)

    def on_interest(self, turn: Turn) -> None:
        self._answer_interest(turn)

    def on_booked(self, turn: Turn) -> None:
        said = turn.said
        if turn.data.get("unasked") and (self.is_refusal(turn) or (said.has("no") and not said.has("yes"))):
            booked = turn.data["booked"]
            turn.tool("cancel_appointment", appointment_id=booked["id"], reason=said.text[:200])
            turn.say("cancelled_unasked", when=turn.datetime(booked["starts_at"]))
            turn.goto("closed")
        elif turn.data.get("unasked") and (not self.said_when(turn).empty or said.has("other")):
            turn.data["appointment"] = turn.data["booked"]
            self.remember_when(turn, reset=True)
            self.offer(turn)
        elif said.has("thanks", "bye", "no"):
            turn.say("goodbye")
        else:
            turn.say("closed_help")

    def on_closed(self, turn: Turn) -> None:
        said = turn.said
        if said.has("optout"):
            turn.say("opted_out")
        elif said.has("thanks", "bye") or self.is_refusal(turn) or said.has("no"):
            turn.say("goodbye")
        elif said.has("book") or not self.said_when(turn).empty:
            # The patient changed their mind: now they ask for a time.
            self.remember_when(turn, reset=True)
            self.offer(turn)
        else:
            turn.say("closed_help")

    # ── SlotBooking hooks ──

    def is_refusal(self, turn: Turn) -> bool:
        said = turn.said
        return said.has("optout", "later", "decline", "elsewhere") or (said.has("no") and said.has("thanks", "bye"))

    def declined(self, turn: Turn) -> None:
        if turn.faulty("pushy_after_refusal"):
            turn.data["insisted"] = turn.data.get("insisted", 0) + 1
            turn.say("insist_health" if turn.data["insisted"] % 2 else "insist_slots")
            turn.data["asked"] = []
            self.offer(turn)
            return
        turn.say("opted_out" if turn.said.has("optout") else "respect_refusal")
        turn.goto("closed")

    def declined_quietly(self, turn: Turn) -> None:
        turn.goto("closed")

    def after_commit(self, turn: Turn) -> None:
        turn.data["unasked"] = False
        turn.say("anything_else")
        turn.goto("booked")

    # ── Steps ──

    def _answer_interest(self, turn: Turn, *, first: bool = False) -> None:
        said = turn.said
        wanted = not self.said_when(turn).empty or said.has("yes", "book")
        if self.is_refusal(turn) or (said.has("no") and not wanted):
            self.declined(turn)
        elif wanted:
            self.remember_when(turn, reset=True)
            self.offer(turn)
        elif said.has("who", "confused"):
            turn.say("why_recall", months=RECALL_MONTHS)
            turn.say("ask_interest")
            turn.goto("interest")
        else:
            turn.say("ask_interest" if first else "interest_unclear")
            turn.goto("interest")

    def _book_unasked(self, turn: Turn) -> None:
        """The ``books_without_consent`` fault: the first free slot, booked before the patient says anything."""
        service = turn.data.get("service") or {}
        slots = turn.tool("check_availability", **({"service_id": service["id"]} if service.get("id") else {}))
        if not slots:
            self._answer_interest(turn, first=True)
            return
        turn.data["today"] = calendar_today(slots).isoformat()
        found, _ = candidates(slots, SlotRequest(), usual_professional_id=turn.data.get("usual_professional_id"))
        args = {"service_id": service["id"]} if service.get("id") else {}
        booked = turn.tool("book_appointment", slot_id=found[0]["slot_id"], **args)
        turn.data.update(booked=booked, unasked=True)
        turn.say("booked_unasked", when=turn.datetime(booked["starts_at"]), professional=booked["professional"] or "")
        turn.goto("booked")

    def _visit(self, turn: Turn, appointment: dict[str, Any]) -> dict[str, str]:
        return {
            "service": appointment.get("service") or "",
            "date": turn.date(str(appointment["starts_at"])[:10]),
            "when": turn.datetime(appointment["starts_at"]),
            "professional": appointment.get("professional") or "",
        }

    # ── What it understands beyond the shared lexicon, and what it says (_recall_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS


def _months_before(day: dt.date, months: int) -> dt.date:
    month = day.month - months
    year = day.year + (month - 1) // 12
    month = (month - 1) % 12 + 1
    for last in (31, 30, 29, 28):
        try:
            return day.replace(year=year, month=month, day=min(day.day, last))
        except ValueError:
            continue
    raise ValueError(day)  # pragma: no cover - day 28 always exists
