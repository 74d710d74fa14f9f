"""The structured goal of a conversational scenario (``agenda:``): what the agenda-based patient wants, asks and accepts.

The free-text ``goal`` tells a strong LLM patient what to do; a rule-driven patient needs it in parts
(Schatzmann et al., 2007: constraints and requests). Every field is in the scenario's own words and language, and
nothing here is about clinics: a shop, a bank or an airline scenario fills the same fields.

Example (YAML)::

    agenda:
      intent: "quero pagar a minha fatura que está pendente"   # the opening request, in the patient's words
      prefers: ["Pix"]                                         # options, best first
      done_when: [payment_link]                                # what the agent must state for [GOAL_COMPLETE]
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

__all__ = ["AgendaAsk", "AnswerKind", "OutcomeKind", "PatientAgenda"]

#: What kind of agent message answers one of the patient's questions (``AgendaAsk.answer``).
AnswerKind = Literal["amount", "date", "time", "url", "place", "yes_no", "any"]

#: What the agent must have stated for the goal to be reached: the claim kinds of ``convoeval.fidelity.claims`` (a
#: test holds the two lists together), ``answered`` (every question of the agenda answered) and ``closed`` (the agent
#: acknowledged the patient's decision or said goodbye).
OutcomeKind = Literal["payment_link", "url", "paid", "amount", "booked", "moved", "cancelled", "confirmed",
                      "recorded", "handoff", "answered", "closed"]

_Text = Annotated[str, Field(min_length=1)]


class AgendaAsk(BaseModel):
    """A question the patient asks after the opening, once the previous one is answered.

    Attributes:
        say: what the patient asks, in the scenario's language ("se a clínica abre no sábado").
        answer: the kind of agent message that answers it (``amount``, ``date``, ``time``, ``url``, ``place``,
            ``yes_no``, or ``any`` informative reply).
    """

    model_config = ConfigDict(extra="forbid")

    say: _Text
    answer: AnswerKind = "any"


class PatientAgenda(BaseModel):
    """The scenario's goal in parts, for the agenda-based patient (``simulator: agenda``; docs/simulator.md).

    Attributes:
        intent: the opening request in the patient's own words and the scenario's language.
        intent_answer: when the intent is itself a question, the kind of agent message that answers it (``None``:
            the intent asks for something done, reached through ``done_when``).
        asks: further questions, asked in order, each once the previous one is answered.
        prefers: the options the patient wants, best first: picked from the agent's offers and checked in its
            confirmation questions ("Pix", "terça às 10h", "terça de manhã").
        refuses: what the patient says no to when the agent offers it or asks to confirm it.
        done_when: the outcomes the agent must state before the patient says ``[GOAL_COMPLETE]``; empty: every ask
            answered.
        patience: agent messages in a row that do not move the goal before the patient gives up (``[STUCK]``).
    """

    model_config = ConfigDict(extra="forbid")

    intent: _Text
    intent_answer: AnswerKind | None = None
    asks: list[AgendaAsk] = Field(default_factory=list)
    prefers: list[_Text] = Field(default_factory=list)
    refuses: list[_Text] = Field(default_factory=list)
    done_when: list[OutcomeKind] = Field(default_factory=list)
    patience: Annotated[StrictInt, Field(ge=1, le=20)] = 3
