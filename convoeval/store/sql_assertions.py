"""Checking ``sql:`` assertions: each named query runs read-only with the run's ids bound, and is compared.

The query was parsed and refused at load if it writes or names an unknown table or column
(``convoeval.scenarios.sql_query``); the store runs it read-only (``Store.query``). The Supabase REST backend cannot
run SQL at all: ``require_sql`` refuses such a run before its conversation, naming the reason.
"""

from __future__ import annotations

import datetime as dt
import decimal
import operator
from collections.abc import Callable, Mapping
from typing import Any

from convoeval.scenarios import Assertions
from convoeval.scenarios.sql_query import SqlCheck
from convoeval.store.base import Store, StoreError
from convoeval.store.fixtures import SeededRun

__all__ = ["bound_parameters", "check_sql", "require_sql"]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def bound_parameters(seeded: SeededRun) -> dict[str, str]:
    """The values of ``:run_id``, ``:clinic_id`` and ``:patient_id`` for ``seeded``'s run."""
    return {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}


def require_sql(store: Store, assertions: Assertions | None) -> None:
    """Refuse, before a conversation starts, a scenario with ``sql:`` assertions on a store that cannot run SQL.

    Raises:
        StoreError: the store's ``sql_refusal`` (e.g. the Supabase REST backend), naming what to use instead.
    """
    if assertions is not None and "sql" in assertions.checks() and store.sql_refusal:
        raise StoreError(store.sql_refusal)


def check_sql(store: Store, seeded: SeededRun, checks: Mapping[str, SqlCheck], result: Callable[..., Any]) -> list[Any]:
    """One result per named query, in file order, built by ``result(key=, expected=, actual=, passed=, detail=)``.

    Raises:
        StoreError: the store cannot run SQL, or a query failed in the database.
    """
    params = bound_parameters(seeded)
    out = []
    for name, check in checks.items():
        key = f"sql.{name}"
        rows = store.query(check.query, params)
        if check.rows is not None:
            actual: Any = len(rows)
            passed = _OPS[check.op](actual, check.rows)
            got = f"{actual} row{'' if actual == 1 else 's'}"
            detail = f"{key}: {got} as expected ({check.expected()})" if passed else \
                f"{key}: expected {check.expected()}, got {got}"
        elif len(rows) > 1 or (rows and len(rows[0]) != 1):
            actual = [list(map(_plain, r)) for r in rows[:5]]
            passed = False
            detail = (f"{key}: expected one value ({check.expected()}), but the query returned {len(rows)} row(s) of "
                      f"{len(rows[0])} column(s)")
        else:
            actual = _plain(rows[0][0]) if rows else None
            passed, detail = _compare(key, check, actual)
        out.append(result(key=key, expected=check.expected(), actual=actual, passed=passed, detail=detail))
    return out


def _compare(key: str, check: SqlCheck, actual: Any) -> tuple[bool, str]:
    try:
        passed = bool(_OPS[check.op](actual, check.expect))
    except TypeError:  # e.g. None < 3, or text against a number: the check fails, saying why
        return False, f"{key}: expected {check.expected()}, got {_shown(actual)}, which cannot be compared"
    if passed:
        return True, f"{key}: {_shown(actual)} as expected ({check.expected()})"
    return False, f"{key}: expected {check.expected()}, got {_shown(actual)}"


def _plain(value: Any) -> Any:
    """A value the result frames can store: Postgres gives Decimal for sums and datetimes for timestamps."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    return value


def _shown(value: Any) -> str:
    return "nothing (no row)" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
