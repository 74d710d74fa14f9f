"""The reference NPS agent: after a visit, asks for a 0-10 score ("how likely are you to recommend us?") and an
optional comment, records them with ``record_nps`` and thanks the patient; after a low score (0-6) it apologises and
offers a person from the clinic (``handoff_to_human``) for a complaint. It never asks for a higher score.

States: ``start`` → ``ask_score`` → ``ask_comment`` → (``offer_handoff``) → ``done``; a request for a person goes to
``handed_off`` from anywhere (see ``ClinicAgent``), recording a score already given first. ``reconsider`` exists
only for the ``pressures_for_higher_score`` fault. Scores are read by ``_nps_nlu.parse_score`` (digits or number
words, "8/10", "nota dez", "a nine", "un siete").
"""

from __future__ import annotations

from typing import Any

from convoeval.agents.clinic import _nps_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._handoff_nlu import asks_for_person
from convoeval.agents.clinic._nps_nlu import comment_of, content_words, parse_score
from convoeval.agents.clinic._registry import register_clinic_agent

LOW = 6  # 0-6: a detractor, in NPS terms
HIGH = 9  # 9-10: a promoter

# Exact rubric texts of evals/scenarios/nps/*.yaml (a test checks they exist there).
_RECORDED = ("Agent recorded the score the patient gave (8)", "Agent recorded the score the patient gave (3)")
_OFFERED = "Agent offered to put the patient in touch with someone from the clinic"
_HANDED = "Agent passed the patient to a person at the clinic to hear the complaint"

FAULTS = [
    Fault(
        "records_wrong_score",
        "nps",
        "Records a score one point above the one given (a 10 as 9) with record_nps, while telling the patient "
        "the score they gave; only the database shows it.",
        breaks_criteria=_RECORDED,
        breaks_assertions=("nps_score",),
    ),
    Fault(
        "never_records",
        "nps",
        "Says the score and comment were recorded but never calls record_nps (hand-offs still happen).",
        breaks_criteria=_RECORDED,
        breaks_assertions=("nps_score_recorded", "nps_score", "tools_called"),
    ),
    Fault(
        "pressures_for_higher_score",
        "nps",
        "On a score below 9, before anything is recorded, says most patients give 9 or 10, that lower scores hurt "
        "the clinic, and asks the patient to reconsider and raise it (once); records whatever score follows.",
        breaks_criteria=("Agent did not pressure the patient to change the score",),
    ),
    Fault(
        "ignores_complaint",
        "nps",
        "Never calls handoff_to_human: after a low score it apologises but offers no one, and a complaint or a "
        "request for a person gets 'thanks, your feedback was noted'.",
        breaks_criteria=(_OFFERED, _HANDED),
        breaks_assertions=("escalated_to_human", "tools_called"),
    ),
    Fault(
        "rude_tone",
        "nps",
        "Curt, impatient and dismissive wording in every message (same steps and records as the healthy agent).",
        breaks_criteria=("Agent was polite and friendly", "Agent remained polite and empathetic"),
    ),
]


@register_clinic_agent("nps", faults=FAULTS)
class NpsAgent(ClinicAgent):
    """The after-visit NPS survey over WhatsApp, in pt-BR, en and es."""

    # ── Hand-off ──

    def escalates(self, turn: Turn) -> bool:
        # "The receptionist was lovely" is feedback, not a request for a person.
        return asks_for_person(turn.said) and not turn.faulty("ignores_complaint")

    def hand_off(self, turn: Turn, reason: str) -> None:
        # A score given before the request is still the patient's answer.
        if "score" in turn.data:
            self._record(turn, None)
        super().hand_off(turn, reason)

    def handoff_reason(self, turn: Turn) -> str:
        score = turn.data.get("score")
        about = f"NPS score {score}" if score is not None else "NPS survey"
        return f"{about}: patient wants to talk to a person: {turn.said.text[:200]}"

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        visits = turn.tool("list_appointments", status="completed")
        turn.data["visit"] = visits[-1] if visits else None  # soonest first: the last one is the latest visit
        turn.say("intro", clinic=self.clinic_name(turn))
        said = turn.said
        if parse_score(said.text, turn.locale).score is not None or said.has("complain", "decline"):
            self.on_ask_score(turn)  # the patient answered the survey message itself
            return
        visit = turn.data["visit"]
        if visit:
            who = visit.get("professional")
            date = turn.date(visit["starts_at"])
            turn.say("visit_with" if who else "visit_plain", professional=who or "", date=date)
        turn.say("ask_score")
        turn.goto("ask_score")

    def on_ask_score(self, turn: Turn) -> None:
        said = turn.said
        reading = parse_score(said.text, turn.locale)
        if self._complains(turn):
            if reading.score is not None:
                turn.data["score"] = reading.score
                self._finish(turn, said.text.strip(), complaint=True)
            else:
                self._complaint(turn)
        elif reading.score is not None:
            self._take_score(turn, reading.score)
        elif said.has("confused"):
            turn.say("score_help")
        elif reading.problem == "out_of_range":
            turn.say("score_range")
        elif reading.problem == "ambiguous":
            turn.say("score_which")
        elif said.has("decline", "bye") and not said.has("yes"):
            turn.say("declined")  # "não recomendaria" is not a refusal to answer: it gets asked for a number
            turn.goto("done")
        else:
            turn.say("score_repeat")
        if turn.conversation.state == "start":
            turn.goto("ask_score")

    def on_reconsider(self, turn: Turn) -> None:
        # Only the pressures_for_higher_score fault asks for a higher score.
        said, stored = turn.said, turn.data.pop("comment", None)
        reading = parse_score(said.text, turn.locale)
        if not self._complains(turn) and reading.score is not None and comment_of(said.text) is None:
            turn.data["score"] = reading.score  # a new score, or the same one again
            if stored:
                self._finish(turn, stored)
            else:
                self._ask_comment(turn)
        elif stored and not self._complains(turn):
            self._finish(turn, stored)
        else:
            self.on_ask_comment(turn)  # the patient kept the score and went on to say why

    def on_ask_comment(self, turn: Turn) -> None:
        said = turn.said
        said_something = bool(content_words(said.text))
        correction = parse_score(said.text, turn.locale).score if not said_something else None
        if self._complains(turn):
            self._finish(turn, said.text.strip() if said_something else None, complaint=True)
        elif correction is not None and correction != turn.data["score"]:
            turn.data["score"] = correction  # "8" where a comment was expected: the patient corrects the score
            turn.say("score_corrected", score=correction)
            self._ask_comment(turn)
        elif said.has("yes") and not said_something:
            turn.say("comment_go_ahead")  # "yes" to "would you like to tell us?": the comment comes next
        else:
            self._finish(turn, said.text.strip() if said_something else None)

    def on_offer_handoff(self, turn: Turn) -> None:
        said = turn.said
        if said.has("yes", "complain") and not said.has("no"):
            self.hand_off(turn, self.handoff_reason(turn))
        elif said.has("no", "thanks", "bye"):
            turn.say("no_handoff")
            turn.goto("done")
        else:
            turn.say("offer_again")

    def on_done(self, turn: Turn) -> None:
        said = turn.said
        reading = parse_score(said.text, turn.locale)
        if self._complains(turn):
            self._complaint(turn)
        elif said.has("thanks", "bye") or (said.has("no") and not said.has("yes")):
            turn.say("goodbye")
        elif reading.score is not None and "score" not in turn.data:
            self._take_score(turn, reading.score)  # declined first, answered after all
        elif reading.score is not None:
            turn.say("already_recorded")
        else:
            turn.say("done_help")

    # ── Steps ──

    def _complains(self, turn: Turn) -> bool:
        """A complaint, or a request for a person that reached a state (only when the agent does not escalate)."""
        return turn.said.has("complain") or asks_for_person(turn.said)

    def _complaint(self, turn: Turn) -> None:
        if turn.faulty("ignores_complaint"):
            turn.say("noted")
            turn.goto("done")
        else:
            turn.say("complaint_sorry")
            self.hand_off(turn, self.handoff_reason(turn))

    def _take_score(self, turn: Turn, score: int) -> None:
        turn.data["score"] = score
        comment = comment_of(turn.said.text)
        if turn.faulty("pressures_for_higher_score") and score < HIGH and not turn.data.get("pressured"):
            turn.data["pressured"] = True
            turn.data["comment"] = comment
            turn.say("pressure", score=score)
            turn.goto("reconsider")
        elif comment:
            self._finish(turn, comment)
        else:
            self._ask_comment(turn)

    def _ask_comment(self, turn: Turn) -> None:
        score = turn.data["score"]
        if score <= LOW:
            turn.data["apologised"] = True
        turn.say("ask_comment_low" if score <= LOW else "ask_comment_high" if score >= HIGH else "ask_comment_mid")
        turn.goto("ask_comment")

    def _finish(self, turn: Turn, comment: str | None, *, complaint: bool = False) -> None:
        """Record the answer, thank the patient, and after a low score or a complaint, offer (or give) a person."""
        self._record(turn, comment)
        score = turn.data["score"]
        turn.say("recorded_comment" if comment else "recorded", score=score)
        if not (complaint or score <= LOW):
            turn.say("thanks_high" if score >= HIGH else "thanks_mid")
            turn.goto("done")
            return
        if not turn.data.get("apologised"):
            turn.say("sorry")
        if turn.faulty("ignores_complaint"):
            turn.say("noted")
            turn.goto("done")
        elif complaint:
            self.hand_off(turn, self.handoff_reason(turn))
        else:
            turn.say("offer_handoff")
            turn.goto("offer_handoff")

    def _record(self, turn: Turn, comment: str | None) -> None:
        if turn.data.get("recorded"):
            return
        turn.data["recorded"] = True
        if turn.faulty("never_records"):
            return
        score = turn.data["score"]
        if turn.faulty("records_wrong_score"):
            score = score + 1 if score < 10 else 9
        arguments: dict[str, Any] = {"score": score}
        if comment:
            arguments["comment"] = comment
        if turn.data.get("visit"):
            arguments["appointment_id"] = turn.data["visit"]["id"]
        turn.tool("record_nps", **arguments)

    # ── What it understands beyond the shared lexicon, and what it says (_nps_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS
