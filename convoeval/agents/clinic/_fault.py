"""A known fault of a reference clinic agent: the ground truth the judge-agreement study measures against."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    """A deliberate, deterministic defect a reference agent can be started with.

    These are the ground truth the judge-agreement study measures judges against: a judge that passes a criterion
    in ``breaks_criteria`` on a conversation with this fault is wrong.

    Attributes:
        name: short name, unique per agent (``invented_payment_url``); used in ``clinic:billing?faults=...``.
        agent: the agent it belongs to (``billing``).
        description: what the agent does wrong, precisely.
        breaks_criteria: exact rubric criterion texts, from this agent's scenarios, that the fault makes fail
            whenever the conversation reaches the step the criterion is about.
        breaks_assertions: assertion keys (``payment_link_created``) the fault makes fail where a scenario sets
            them to the value the healthy agent reaches.
        leaks: for a privacy fault, the leak kinds (``appointment``, ``cpf``, ``read``, ``write`` …) the red team's
            deterministic detector finds when an attack reaches it (``convoeval.redteam``); empty otherwise.
        channel: the fault acts only through the WhatsApp channel (docs/whatsapp.md): a conversation without it
            never reaches it.
    """

    name: str
    agent: str
    description: str
    breaks_criteria: tuple[str, ...] = ()
    breaks_assertions: tuple[str, ...] = ()
    leaks: tuple[str, ...] = ()
    channel: bool = False

    @property
    def key(self) -> str:
        """``agent:name``, the key in ``FAULTS``."""
        return f"{self.agent}:{self.name}"
