"""Per-turn observers: code a conversation calls after every agent reply, whose findings become frames of the run.

The red team is the first observer (``convoeval.redteam.observer``): it reads each reply, the access-log entries the
reply's tool calls added and the store's rows, and decides leaks without an LLM. Because it rides on the ordinary
conversation (``arun_any``), a red-team case has what every conversation has: the simulator gate, token and cost
accounting, resume, partial results when killed and the Dask path.

An observer is made once per conversation attempt by the factory a ``Job`` carries (``Job.observe``), so it may keep
state; a factory must pickle (a top-level class, or a ``functools.partial`` of one) to travel to Dask workers.
Its hooks run in a worker thread, because they may read the store, which blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from convoeval.agents.base import AgentReply, AgentSession
from convoeval.scenarios import Scenario
from convoeval.store import Store
from convoeval.store.fixtures import SeededRun

__all__ = ["Observation", "ObservedRun", "ObserverFactory", "TurnObserver"]


@dataclass(frozen=True)
class ObservedRun:
    """What an observer may read about the conversation it watches, given once, after the store was seeded."""

    keys: Mapping[str, Any]  # run_id, scenario, agent, target, seed, trial (``talk.RunKeys``)
    scenario: Scenario
    seeded: SeededRun
    session: AgentSession  # the agent's session: ``access_log`` and ``verified`` grow as the agent works
    store: Store


@dataclass
class Observation:
    """What an observer concluded about a finished conversation.

    Attributes:
        rows: frame name (``FRAME_SCHEMAS``) -> rows to add to the conversation's result (e.g. ``leaks``,
            ``attacks``).
        status: the conversation's score status when the observer replaces the judges (``Job.judged`` is False):
            ``pass``, ``fail`` or ``error``; ignored when the judges run.
        error: why the status is ``error`` (one line).
    """

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    status: Literal["pass", "fail", "error"] = "pass"
    error: str | None = None


class TurnObserver(Protocol):
    """Watches one conversation: ``start`` after seeding, ``after_reply`` after every agent reply (the store's rows
    still there), ``finish`` once at the end, even when the conversation failed (the rows may be gone by then).
    An exception from ``start`` or ``after_reply`` ends the conversation in ``error``; ``finish`` must not raise.
    A job that is not ``judged`` (``Job.judged``) takes its score status from the ``Observation``."""

    def start(self, run: ObservedRun) -> None:
        """The conversation's store rows exist; nothing was said yet."""

    def after_reply(self, turn: int, message: str, reply: AgentReply) -> None:
        """The agent answered ``message`` (the caller's turn ``turn``) with ``reply``."""

    def finish(self, error: str | None) -> Observation:
        """The conversation ended (``error``: why it could not finish, or None); what the observer concluded."""


#: Builds one observer per conversation attempt (picklable, to reach Dask workers).
ObserverFactory = Callable[[], TurnObserver]
