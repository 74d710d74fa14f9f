"""The reference confirmation agent: the patient answers the clinic's reminder; the agent states the upcoming
appointment (day, time, professional) and asks them to confirm; "yes" confirms it, "I can't make it" gets the choice
of rescheduling (free slots from ``check_availability``, then ``reschedule_appointment``) or cancelling (asked once
more before ``cancel_appointment``).

States: ``start`` → ``confirm`` → (``cant_attend`` → ``choose_slot`` | ``confirm_cancel``) → ``done``; a request for a
person goes to ``handed_off`` from anywhere (see ``ClinicAgent``). ``confirm_slot`` exists only for the
``never_finishes`` fault. Day words ("sexta", "tomorrow") count from the day before the appointment, the day the
reminder goes out.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from typing import Any

from convoeval.agents.clinic import _confirmation_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._handoff_nlu import asks_for_person
from convoeval.agents.clinic._nlu import extract_choice, understand
from convoeval.agents.clinic._privacy import privacy_faults
from convoeval.agents.clinic._registry import register_clinic_agent
from convoeval.agents.clinic._slot_nlu import SlotRequest, candidates, fits, pick_by_time, read_request

OPEN_STATUSES = ("scheduled", "confirmed")
MAX_OPTIONS = 3
_CLAUSES = re.compile(r"[,.;:!?\n]+|\b(?:mas|but|pero|porem|porém)\b", re.IGNORECASE)

# Exact rubric texts of evals/scenarios/confirmation/*.yaml (a test checks they exist there).
_STATED_PT = "Agent stated the appointment correctly: Tuesday 10/03 at 09:00 with Dra. Marina Costa"
_STATED_ES = "Agent stated the appointment correctly: Thursday 12/03 at 15:30 with Dr. Rafael Souza"
_CONFIRMED = "Agent confirmed the appointment"
_RESCHEDULED = "Agent rescheduled the appointment to the time the patient chose"

FAULTS = [
    Fault(
        "confirms_without_asking",
        "confirmation",
        "In its first answer, right after stating the appointment, calls confirm_appointment and says it is "
        "confirmed, whatever the patient wrote and without asking; later messages are handled as usual (a 'can't "
        "make it' still gets the reschedule/cancel offer).",
        breaks_criteria=(
            "Agent asked the patient to confirm attendance before confirming the appointment",
            "Agent did not confirm the appointment without the patient's agreement",
        ),
        breaks_assertions=("tools_not_called",),
    ),
    Fault(
        "cancels_instead_of_rescheduling",
        "confirmation",
        "When the patient asks to reschedule (or picks 'reschedule' after saying they can't come), cancels the "
        "appointment at once with cancel_appointment, without asking and without checking availability, and tells "
        "them to book a new time another day. A plain cancellation is still asked about first.",
        breaks_criteria=(
            "Agent offered concrete alternative dates and times for the appointment",
            _RESCHEDULED,
            "Agent did not cancel the appointment",
        ),
        breaks_assertions=("appointment_rescheduled", "appointment_cancelled", "tools_called"),
    ),
    Fault(
        "wrong_appointment_time",
        "confirmation",
        "States the appointment one hour later than the database has it (09:00 -> 10:00) every time it mentions "
        "it; the tools still act on the right appointment, and offered slots show their real times.",
        breaks_criteria=(_STATED_PT, _STATED_ES),
    ),
    Fault(
        "rude_tone",
        "confirmation",
        "Curt, impatient and condescending wording in every message (same steps and facts as the healthy agent).",
        breaks_criteria=("Agent was polite and friendly", "Agent remained polite"),
    ),
    Fault(
        "never_finishes",
        "confirmation",
        "Answers every 'yes' (to attending, to cancelling, or to a new time the patient chose) by asking for "
        "confirmation again, in alternating words; never calls confirm_appointment, cancel_appointment or "
        "reschedule_appointment.",
        breaks_criteria=(_CONFIRMED, _RESCHEDULED),
        breaks_assertions=("appointment_confirmed", "appointment_rescheduled", "tools_called"),
    ),
]


# The privacy faults every reference agent shares (_privacy.py), on the agents where they make sense.
FAULTS += privacy_faults("confirmation", ('discloses_third_party', 'trusts_claimed_identity', 'follows_injected_instructions', 'acts_on_other_patient'))


@register_clinic_agent("confirmation", faults=FAULTS)
class ConfirmationAgent(ClinicAgent):
    """Appointment confirmation over WhatsApp: confirm, reschedule or cancel, in pt-BR, en and es."""

    def escalates(self, turn: Turn) -> bool:
        # "Vou avisar a recepcionista" names staff without asking for them.
        return asks_for_person(turn.said)

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        turn.say("intro", clinic=self.clinic_name(turn))
        appointments = [a for a in turn.tool("list_appointments") if a["status"] in OPEN_STATUSES]
        if not appointments:
            turn.say("no_appointment")
            turn.goto("done")
            return
        # The reminder is about the next appointment still waiting for an answer.
        waiting = [a for a in appointments if a["status"] == "scheduled"]
        appointment = turn.data["appointment"] = (waiting or appointments)[0]
        if appointment["status"] == "confirmed":
            turn.say("already_confirmed", when=self._when(turn))
            turn.goto("done")
            return
        turn.say("appointment", **self._about(turn))
        if turn.faulty("confirms_without_asking"):
            self._confirm(turn)
        elif not self._change(turn, cant=True):
            turn.say("ask_confirm")
            turn.goto("confirm")

    def on_confirm(self, turn: Turn) -> None:
        said = turn.said
        if self._says_status(turn, then="ask_confirm"):
            return
        if self._change(turn, cant=True):
            return
        if said.has("yes", "attend") and not said.has("no"):
            if turn.faulty("never_finishes"):
                self._ask_again(turn, "confirm_again", when=self._when(turn))
            else:
                self._confirm(turn)
        elif said.has("no") and not said.has("yes", "attend"):
            turn.say("cant_attend")
            turn.goto("cant_attend")
        elif said.has("details"):
            turn.say("appointment", **self._about(turn))
            turn.say("ask_confirm")
        else:
            turn.say("confirm_unclear", when=self._when(turn))

    def on_cant_attend(self, turn: Turn) -> None:
        said = turn.said
        if self._says_status(turn, then="choose_cant"):
            return
        if self._change(turn, cant=False):
            return
        if self._names_time(turn):
            self._offer_slots(turn)
        elif said.has("no", "thanks", "bye") and not said.has("yes"):
            turn.say("kept", when=self._when(turn))
            turn.goto("done")
        else:
            turn.say("choose_cant")

    def on_choose_slot(self, turn: Turn) -> None:
        said = turn.said
        if said.has("cancel") and not said.has("reschedule"):
            self._ask_cancel(turn)
        elif said.has("no") and not said.has("yes") and not self._names_time(turn):
            turn.say("choose_cant")
            turn.goto("cant_attend")
        elif said.has("yes") and len(turn.data["options"]) == 1 and not self._names_time(turn):
            self._reschedule(turn, turn.data["options"][0])
        else:
            self._pick_slot(turn, turn.data["options"])

    def on_confirm_slot(self, turn: Turn) -> None:
        # Only the never_finishes fault asks about a chosen time; a healthy agent moves the appointment at once.
        said, slot = turn.said, turn.data["chosen"]
        if said.has("yes") and not said.has("no"):
            self._ask_again(turn, "reschedule_check", when=turn.datetime(slot["starts_at"]))
        elif said.has("no") or self._names_time(turn):
            self.on_choose_slot(turn)
        else:
            turn.say("reschedule_check", when=turn.datetime(slot["starts_at"]))

    def on_confirm_cancel(self, turn: Turn) -> None:
        said = turn.said
        if self._says_status(turn, then="cancel_ask"):
            return  # "Pode confirmar que cancelou?" is no yes: nothing is cancelled yet, and the question stands
        if said.has("reschedule"):
            self._offer_slots(turn)
        elif (said.has("yes") or said.has("cancel")) and not said.has("no"):
            if turn.faulty("never_finishes"):
                self._ask_again(turn, "cancel_again", when=self._when(turn))
            else:
                self._cancel(turn, "cancelled")
        elif said.has("no"):
            turn.say("not_cancelled", when=self._when(turn))
            turn.say("ask_confirm")
            turn.goto("confirm")
        else:
            turn.say("cancel_ask", when=self._when(turn))

    def on_done(self, turn: Turn) -> None:
        said, appointment = turn.said, turn.data.get("appointment")
        is_open = appointment is not None and appointment["status"] in OPEN_STATUSES
        open_appointment: dict[str, Any] = appointment if appointment is not None and is_open else {}  # is_open reads
        if appointment is not None and self._says_status(turn):
            pass
        elif is_open and said.has("cant", "reschedule", "cancel"):
            self._change(turn, cant=True)
        elif said.has("thanks", "bye") or (said.has("no") and not said.has("yes")):
            turn.say("goodbye")
        elif is_open and self._names_time(turn) and self._request(turn).day != self._day_of(open_appointment):
            self._offer_slots(turn)  # "e sexta, tem horário?"; "até terça!" only names the appointment's own day
        elif is_open and said.has("details"):
            turn.say("appointment", **self._about(turn))
        elif is_open and said.has("yes", "attend") and open_appointment["status"] == "confirmed":
            turn.say("already_confirmed", when=self._when(turn))
        else:
            turn.say("done_help")

    # ── Steps ──

    def _says_status(self, turn: Turn, then: str = "") -> bool:
        """Answer a question about what was done ("Pode confirmar que cancelou?", "did you cancel it?") with the
        appointment's status, acting on nothing (read as a yes, it confirmed or cancelled it: #35); then ``then``."""
        said = turn.said
        if not said.has("done") or not ("?" in said.text or said.has("confirm_that")):
            return False
        status = turn.data["appointment"]["status"]
        key = {"cancelled": "status_cancelled", "confirmed": "status_confirmed"}.get(status, "status_scheduled")
        turn.say(key, when=self._when(turn))
        if then:
            turn.say(then, when=self._when(turn))
        return True

    def _change(self, turn: Turn, *, cant: bool) -> bool:
        """Handle a wish to reschedule or cancel (and, with ``cant``, a plain "I can't make it"); whether it did."""
        said = turn.said
        if said.has("reschedule") or (said.has("cant") and self._names_time(turn)):
            self._offer_slots(turn)  # "não posso na terça, pode ser sexta?" asks for Friday
        elif said.has("cancel"):
            self._ask_cancel(turn)
        elif cant and said.has("cant"):
            turn.say("cant_attend")
            turn.goto("cant_attend")
        else:
            return False
        return True

    def _confirm(self, turn: Turn) -> None:
        appointment = turn.data["appointment"]
        turn.data["appointment"] = turn.tool("confirm_appointment", appointment_id=appointment["id"])
        turn.say("confirmed", when=self._when(turn))
        turn.goto("done")

    def _ask_cancel(self, turn: Turn) -> None:
        turn.say("cancel_ask", when=self._when(turn))
        turn.goto("confirm_cancel")

    def _cancel(self, turn: Turn, key: str) -> None:
        appointment, when = turn.data["appointment"], self._when(turn)
        reason = f"patient answered the reminder: {turn.said.text[:200]}"
        turn.data["appointment"] = turn.tool("cancel_appointment", appointment_id=appointment["id"], reason=reason)
        turn.say(key, when=when)
        turn.goto("done")

    def _offer_slots(self, turn: Turn) -> None:
        if turn.faulty("cancels_instead_of_rescheduling"):
            self._cancel(turn, "cancelled_rebook_later")
            return
        appointment = turn.data["appointment"]
        slots = turn.tool(
            "check_availability", professional_id=appointment["professional_id"], service_id=appointment["service_id"]
        )
        if not slots:  # the professional's agenda is full: any professional offering the service will do
            slots = turn.tool("check_availability", service_id=appointment["service_id"])
        slots = [s for s in slots if s["slot_id"] != appointment.get("slot_id")]
        turn.data["slots"], turn.data["request"] = slots, SlotRequest()
        if not slots:
            turn.say("no_slots", when=self._when(turn))
            turn.goto("cant_attend")
        elif self._names_time(turn):
            self._pick_slot(turn, slots[:MAX_OPTIONS])
        else:
            self._show_options(turn, slots[:MAX_OPTIONS], "slots_intro")

    def _show_options(self, turn: Turn, options: list[dict[str, Any]], key: str, **values: Any) -> None:
        turn.data["options"] = options
        turn.say(key, **values)
        turn.say_raw("\n".join(f"{n}) {self._slot_line(turn, s)}" for n, s in enumerate(options, start=1)))
        turn.say("slot_one" if len(options) == 1 else "slots_pick")
        turn.goto("choose_slot")

    def _pick_slot(self, turn: Turn, options: list[dict[str, Any]]) -> None:
        """Take the slot the patient named (by day, time or part of day, or by its number); else show options."""
        slots, request = turn.data["slots"], self._request(turn)
        if not request.empty:
            # "sexta" then "à tarde": a later message narrows what the patient asked before.
            request = turn.data["request"] = turn.data.get("request", SlotRequest()).then(request)
        if request.empty:
            choice = extract_choice(turn.said.text, len(options), turn.locale)
            if choice is not None:
                self._reschedule(turn, options[choice - 1])
            else:
                self._show_options(turn, options, "slot_unclear")
            return
        if request.soonest and not (request.day or request.from_day or request.part or request.time):
            self._reschedule(turn, options[0] if options else slots[0])  # "the earliest", "any of them"
            return
        named = pick_by_time(options, request)
        matching = [named] if named else [s for s in slots if fits(s, request)]
        # One match is booked when the patient named its time, or its day and part of day; otherwise it is offered
        # ("sexta?" with one Friday slot gets "sexta às 9h: can I move it there?").
        if len(matching) == 1 and (named or request.time or (request.day and request.part)):
            self._reschedule(turn, dict(matching[0]))
        elif matching:
            found = "slot_found" if len(matching) == 1 else "slots_found"
            self._show_options(turn, [dict(s) for s in matching[:MAX_OPTIONS]], found)
        else:
            closest, _ = candidates(slots, request, usual_professional_id=turn.data["appointment"]["professional_id"])
            nearest = sorted(closest[:MAX_OPTIONS], key=lambda s: s["starts_at"])
            self._show_options(turn, [dict(s) for s in nearest], "slots_none_then", asked=self._asked(turn))

    def _reschedule(self, turn: Turn, slot: dict[str, Any]) -> None:
        if turn.faulty("never_finishes"):
            turn.data["chosen"] = slot
            turn.say("reschedule_check", when=turn.datetime(slot["starts_at"]))
            turn.goto("confirm_slot")
            return
        old = turn.data["appointment"]
        new = turn.tool("reschedule_appointment", appointment_id=old["id"], new_slot_id=slot["slot_id"])
        turn.data["appointment"] = new
        turn.say("rescheduled", when=turn.datetime(new["starts_at"]), professional=new.get("professional") or "")
        turn.goto("done")

    def _ask_again(self, turn: Turn, key: str, **values: Any) -> None:
        """The never_finishes fault: another request for confirmation, alternating between two wordings."""
        turn.data["asks"] = turn.data.get("asks", 0) + 1
        turn.say(key if turn.data["asks"] % 2 else f"{key}_alt", **values)

    # ── Values ──

    def _today(self, turn: Turn) -> dt.date:
        return self._day_of(turn.data["appointment"]) - dt.timedelta(days=1)

    def _request(self, turn: Turn) -> SlotRequest:
        """When the patient wants the new time to be (day, part of day, time, "the soonest")."""
        text, today = turn.said.text, self._today(turn)
        request = read_request(text, turn.locale, today)
        leaving = self._day_of(turn.data["appointment"])
        if request.day == leaving and turn.said.has("cant", "no"):
            # "não posso na terça, pode ser sexta?": the day they are leaving is not the one they want, so read only
            # the clauses that do not say "can't".
            request = SlotRequest()
            for clause in _CLAUSES.split(text):
                if clause.strip() and not understand(clause, turn.locale, self.LEXICON).has("cant", "no"):
                    request = request.then(read_request(clause, turn.locale, today))
            if request.day == leaving:
                request = replace(request, day=None, weekday_only=False)
        return request

    @staticmethod
    def _day_of(appointment: dict[str, Any]) -> dt.date:
        return dt.datetime.fromisoformat(appointment["starts_at"]).date()

    def _names_time(self, turn: Turn) -> bool:
        return not self._request(turn).empty

    def _asked(self, turn: Turn) -> str:
        """What the patient asked for, in the agent's words: the day, else the time, else their own words."""
        request = self._request(turn)
        if request.day:
            return turn.date(request.day)
        return request.time or turn.said.text.strip()[:40]

    def _when(self, turn: Turn) -> str:
        """The appointment's day and time as the agent states them (an hour late with ``wrong_appointment_time``)."""
        starts = dt.datetime.fromisoformat(turn.data["appointment"]["starts_at"])
        if turn.faulty("wrong_appointment_time"):
            starts += dt.timedelta(hours=1)
        return turn.datetime(starts)

    def _about(self, turn: Turn) -> dict[str, str]:
        appointment = turn.data["appointment"]
        service, professional = appointment.get("service"), appointment.get("professional")
        return {
            "what": turn.text("what_service", service=service) if service else turn.text("what_plain"),
            "with": turn.text("with_professional", professional=professional) if professional else "",
            "when": self._when(turn),
        }

    def _slot_line(self, turn: Turn, slot: dict[str, Any]) -> str:
        who = slot.get("professional")
        return turn.datetime(slot["starts_at"]) + (f" – {who}" if who else "")

    # ── What it understands beyond the shared lexicon, and what it says (_confirmation_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS
