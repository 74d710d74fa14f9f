"""Check a conversation's path assertions and checkpoints: one ``AssertionResult`` per assertion, like the
database assertions, so they land in the same ``assertions`` rows, report tables and database-truth tables."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from convoeval.pathcheck.checks import check_args, check_confirmed, check_count, check_order
from convoeval.pathcheck.context import PathContext, result
from convoeval.pathcheck.evidence import check_claims
from convoeval.pathcheck.log import PathLog
from convoeval.scenarios.path_models import (
    ArgsCheck,
    Checkpoint,
    ClaimsCheck,
    ConfirmedCheck,
    CountCheck,
    OrderCheck,
    checkpoint_key,
    path_key,
)
from convoeval.store.assertions import AssertionResult
from convoeval.store.base import Store
from convoeval.store.fixtures import SeededRun

__all__ = ["PATH_CHECKERS", "check_checkpoints", "check_path", "fired_at"]

#: Path assertion model -> the function checking it.
PATH_CHECKERS: dict[type, Callable[[Any, PathContext], AssertionResult]] = {
    OrderCheck: check_order,
    CountCheck: check_count,
    ArgsCheck: check_args,
    ConfirmedCheck: check_confirmed,
    ClaimsCheck: check_claims,
}


def _context(rows: Iterable[Mapping[str, Any]] | PathLog, locale: str | None, store: Store | None,
             seeded: SeededRun | None) -> PathContext:
    log = rows if isinstance(rows, PathLog) else PathLog.from_rows(rows)
    return PathContext(log, locale, store, seeded)


def check_path(rows: Iterable[Mapping[str, Any]] | PathLog, path: Sequence[Any] | None, *, locale: str | None = None,
               store: Store | None = None, seeded: SeededRun | None = None) -> list[AssertionResult]:
    """Check path assertions against a conversation's recorded turns.

    Args:
        rows: the conversation's transcript rows (``turn``, ``role``, ``text``, ``tool_calls``), or a ``PathLog``.
        path: the scenario's ``assertions.path`` (None or empty: nothing to check).
        locale: the scenario's locale (the claims are read in every locale; it is checked).
        store: the run's store, while its rows exist (payment URLs and amounts are looked up there too).
        seeded: the run's ids (``{fixture: …}`` arguments need them).

    Returns:
        One ``AssertionResult`` per path assertion, keyed ``path:<id>`` or by what it checks, in order.

    Example:
        >>> from convoeval.scenarios import Assertions
        >>> rows = [{"turn": 1, "role": "patient", "text": "oi"},
        ...         {"turn": 1, "role": "agent", "text": "Aqui está o seu link", "tool_calls": []}]
        >>> path = Assertions.model_validate({"path": [{"claims_backed": ["payment_link"]}]}).path
        >>> [r.detail for r in check_path(rows, path)]  # doctest: +NORMALIZE_WHITESPACE
        ["path:claims_backed(payment_link): turn 1: payment_link 'Aqui está o seu link': no successful
          create_payment_link call before it"]
    """
    ctx = _context(rows, locale, store, seeded)
    return [PATH_CHECKERS[type(check)](check, ctx) for check in path or ()]


def fired_at(checkpoint: Checkpoint, log: PathLog) -> int | None:
    """The turn at which ``checkpoint`` fires on this path, or None when it never does."""
    if checkpoint.when.turn is not None:
        return checkpoint.when.turn if any(t.turn == checkpoint.when.turn and t.agent is not None
                                           for t in log.turns) else None
    call = log.first_call(str(checkpoint.when.tool))
    return None if call is None else call.turn


def check_checkpoints(rows: Iterable[Mapping[str, Any]] | PathLog, checkpoints: Sequence[Checkpoint] | None, *,
                      locale: str | None = None, store: Store | None = None,
                      seeded: SeededRun | None = None) -> list[AssertionResult]:
    """Check each checkpoint's path assertions on the conversation up to the turn it fires at.

    Returns:
        Per fired checkpoint, one row per path assertion (``checkpoint:<id>:<what>``). A required checkpoint that
        never fires is one failed row ``checkpoint:<id>``; an optional one gives no row.
    """
    ctx = _context(rows, locale, store, seeded)
    out: list[AssertionResult] = []
    for cp in checkpoints or ():
        turn = fired_at(cp, ctx.log)
        if turn is None:
            if cp.required:
                when = f"{cp.when.tool} was never called" if cp.when.tool else f"turn {cp.when.turn} never came"
                out.append(result(f"checkpoint:{cp.id}", "reached", "not reached", False, f"never fired: {when}"))
            continue
        at = ctx.at(turn)
        for check in cp.path:
            found = PATH_CHECKERS[type(check)](check, at)
            key = checkpoint_key(cp, check)
            out.append(AssertionResult(key=key, expected=found.expected, actual=found.actual, passed=found.passed,
                                       detail=f"{key} (at turn {turn}): "
                                              f"{found.detail.removeprefix(path_key(check) + ': ')}"))
    return out
