"""Dialogue acts: what an agent message does (``AgentActs``) and what the patient does next (``PatientAct``).

The agent's side is a closed set (``AGENT_ACTS``), generic to any task-oriented assistant: it asks for a fact, offers
options, asks to confirm something, informs an outcome, hands over to a person, closes, or something else. The
patient's side is what the policy picks; the voice then says it (``convoeval.simulator.agenda.voice``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["AGENT_ACTS", "PATIENT_ACTS", "AgentAct", "AgentActs", "PatientAct", "PatientActKind"]

AgentAct = Literal["request", "offer", "confirm", "inform", "handover", "close", "other"]
#: Every act an agent message can carry, the closed set the model classifier chooses from.
AGENT_ACTS: tuple[AgentAct, ...] = ("request", "offer", "confirm", "inform", "handover", "close", "other")

PatientActKind = Literal["intent", "ask", "give_fact", "no_fact", "choose", "ask_other_options", "accept",
                         "decline", "insist", "clarify", "thank_done", "give_up"]
#: Every act the patient's policy can pick.
PATIENT_ACTS: tuple[PatientActKind, ...] = ("intent", "ask", "give_fact", "no_fact", "choose", "ask_other_options",
                                            "accept", "decline", "insist", "clarify", "thank_done", "give_up")


@dataclass(frozen=True)
class AgentActs:
    """What one agent message does, as the rules (or the classifier) read it.

    Attributes:
        acts: the acts found, most specific first (``offer`` before ``confirm`` before ``request``).
        requested: the sentence that asks the patient for a fact (``request``), as written.
        options: the options offered, each as written (``offer``).
        proposal: the sentence that asks the patient to confirm something (``confirm``).
        outcomes: the outcome kinds stated (``convoeval.fidelity.claims`` kinds: ``payment_link``, ``booked``...).
        answers: the kinds of answer the message holds (``amount``, ``date``, ``time``, ``url``, ``place``,
            ``yes_no``, ``any``).
        source: ``"rules"`` or ``"model"`` (the classifier decided).
    """

    acts: tuple[AgentAct, ...]
    requested: str = ""
    options: tuple[str, ...] = ()
    proposal: str = ""
    outcomes: frozenset[str] = frozenset()
    answers: frozenset[str] = frozenset()
    source: str = "rules"

    def has(self, act: AgentAct) -> bool:
        """Whether the message carries ``act``."""
        return act in self.acts


@dataclass(frozen=True)
class PatientAct:
    """The patient's next act, with what it must say.

    Attributes:
        kind: one of ``PATIENT_ACTS``.
        content: the values the message must carry, in the scenario's words: the intent, a fact's value, the option
            chosen, the question asked.
        slot: the fact's name (``give_fact``, ``no_fact``), for the record.
        signal: ``GOAL_COMPLETE`` or ``STUCK`` when this act ends the conversation.
    """

    kind: PatientActKind
    content: tuple[str, ...] = field(default=())
    slot: str = ""
    signal: str | None = None

    @property
    def label(self) -> str:
        """``kind`` with the slot, for the transcript's ``act`` column (``give_fact:cpf``)."""
        return f"{self.kind}:{self.slot}" if self.slot else self.kind
