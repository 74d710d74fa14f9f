"""The τ² sessions open in this process, by run id: how an assertion finds its conversation's database and calls."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from convoeval.tau2.worker import Tau2Error

__all__ = ["OpenSession", "forget_session", "keep_session", "session_of"]


class OpenSession(Protocol):
    """What the τ² assertions read of a conversation's session (``convoeval.tau2.domain.Tau2Session``)."""

    @property
    def task_criteria(self) -> Mapping[str, Any]: ...

    @property
    def calls(self) -> Sequence[Any]: ...

    def db_match(self) -> dict[str, Any]: ...


_OPEN: dict[str, OpenSession] = {}
_LOCK = threading.Lock()


def keep_session(run_id: str, session: OpenSession) -> None:
    """Remember ``session`` as run ``run_id``'s until ``forget_session``."""
    with _LOCK:
        _OPEN[run_id] = session


def forget_session(run_id: str) -> None:
    """Forget run ``run_id``'s session (it closed)."""
    with _LOCK:
        _OPEN.pop(run_id, None)


def session_of(run_id: str) -> OpenSession:
    """Run ``run_id``'s open τ² session.

    Raises:
        Tau2Error: no τ² session is open for that run (a τ² assertion on a scenario of another domain).
    """
    with _LOCK:
        session = _OPEN.get(run_id)
    if session is None:
        raise Tau2Error(f"run {run_id} has no τ² session: the tau2_* assertions need a scenario of a tau2: domain")
    return session
