"""Assertions are database queries run after the conversation, scoped to the run's clinic and patient.

Every key a scenario may set is an ``AssertionKind`` (``convoeval.scenarios.assertion_kinds``). How it is checked:

* the clinic keys: a reader registered here in ``CHECKERS`` (``@checker(key)``) returns the *actual* value from the
  store; ``check_assertions`` compares it with the expected one (``JUDGES`` holds the comparisons other than
  equality, e.g. ``tools_called``);
* ``sql``: each named query runs read-only and yields its own result ``sql.<name>`` (``convoeval.store.sql_assertions``);
* a plugin's key: its kind's ``read(store, seeded, expected)`` and ``judge(expected, actual)``.

Semantics worth knowing:

* ``payment_method`` is the method of the latest payment link (None when there is none).
* ``invoice_status`` is the status of the patient's invoice seeded by the fixtures; with several, the one due
  first (ties: the first listed in the scenario). Invoices the agent created do not count.
* ``appointment_created`` means an appointment with ``created_by='agent'``; confirmed / cancelled mean any of the
  patient's appointments has that status; rescheduled means status ``rescheduled`` with ``rescheduled_to`` set.
* ``nps_score`` is the latest recorded score.
* ``tools_called`` passes when every listed tool appears among the tools of the agent's messages;
  ``tools_not_called`` when none does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from convoeval.scenarios import Assertions, assertion_kind
from convoeval.store.base import Row, Store
from convoeval.store.conversations import agent_tools
from convoeval.store.fixtures import SeededRun
from convoeval.store.read_once import ReadOnce
from convoeval.store.sql_assertions import check_sql


@dataclass
class AssertionResult:
    """One assertion's outcome. ``detail`` is a sentence such as "invoice_status: expected paid, got pending"."""

    key: str
    expected: Any
    actual: Any
    passed: bool
    detail: str


Checker = Callable[[Store, SeededRun], Any]
Judge = Callable[[str, Any, Any], tuple[bool, str]]

#: Assertion key -> function reading the actual value from the store.
CHECKERS: dict[str, Checker] = {}
#: Assertion key -> ``judge(key, expected, actual) -> (passed, detail)`` where equality is not the test.
JUDGES: dict[str, Judge] = {}


def checker(key: str) -> Callable[[Checker], Checker]:
    """Register the function that reads the actual value of assertion ``key``."""

    def register(fn: Checker) -> Checker:
        CHECKERS[key] = fn
        return fn

    return register


def _rows(store: Store, seeded: SeededRun, table: str, **where: Any) -> list[Row]:
    """The run's patient's rows of ``table`` matching ``where``."""
    return store.select(table, {"clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id, **where})


def _latest(store: Store, seeded: SeededRun, table: str) -> Row | None:
    rows = store.select(
        table, {"clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}, order_by="-created_at"
    )
    return rows[0] if rows else None


@checker("payment_link_created")
def _payment_link_created(store: Store, seeded: SeededRun) -> bool:
    return bool(_rows(store, seeded, "payment_links"))


@checker("payment_method")
def _payment_method(store: Store, seeded: SeededRun) -> str | None:
    link = _latest(store, seeded, "payment_links")
    return link["method"] if link else None


@checker("invoice_status")
def _invoice_status(store: Store, seeded: SeededRun) -> str | None:
    order = list(seeded.refs.get("invoices", {}).values())
    seeded_invoices = [i for i in _rows(store, seeded, "invoices") if i["id"] in order]
    if not seeded_invoices:
        return None
    first = min(seeded_invoices, key=lambda i: (i["due_date"], order.index(i["id"])))
    status: str = first["status"]
    return status


def _any_appointment(store: Store, seeded: SeededRun, **where: Any) -> bool:
    # Filtered here, not in SQL: four keys read the same rows, which ReadOnce then fetches once.
    return any(all(a[k] == v for k, v in where.items()) for a in _rows(store, seeded, "appointments"))


@checker("appointment_created")
def _appointment_created(store: Store, seeded: SeededRun) -> bool:
    return _any_appointment(store, seeded, created_by="agent")


@checker("appointment_confirmed")
def _appointment_confirmed(store: Store, seeded: SeededRun) -> bool:
    return _any_appointment(store, seeded, status="confirmed")


@checker("appointment_cancelled")
def _appointment_cancelled(store: Store, seeded: SeededRun) -> bool:
    return _any_appointment(store, seeded, status="cancelled")


@checker("appointment_rescheduled")
def _appointment_rescheduled(store: Store, seeded: SeededRun) -> bool:
    return any(a["status"] == "rescheduled" and a["rescheduled_to"] for a in _rows(store, seeded, "appointments"))


@checker("nps_score_recorded")
def _nps_score_recorded(store: Store, seeded: SeededRun) -> bool:
    return bool(_rows(store, seeded, "nps_responses"))


@checker("nps_score")
def _nps_score(store: Store, seeded: SeededRun) -> int | None:
    latest = _latest(store, seeded, "nps_responses")
    return latest["score"] if latest else None


@checker("escalated_to_human")
def _escalated_to_human(store: Store, seeded: SeededRun) -> bool:
    return bool(_rows(store, seeded, "handoffs"))


@checker("tools_called")
def _tools_called(store: Store, seeded: SeededRun) -> list[str]:
    return sorted(agent_tools(store, seeded))


@checker("tools_not_called")
def _tools_not_called(store: Store, seeded: SeededRun) -> list[str]:
    return sorted(agent_tools(store, seeded))


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "nothing"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]" if value else "no tools"
    return str(value)


def _all_called(key: str, expected: Any, actual: Any) -> tuple[bool, str]:
    missing = [t for t in expected if t not in actual]
    if missing:
        return False, f"{key}: expected {_show(missing)} to be called, got {_show(actual)}"
    return True, f"{key}: {_show(expected)} called as expected"


def _none_called(key: str, expected: Any, actual: Any) -> tuple[bool, str]:
    forbidden = [t for t in expected if t in actual]
    if forbidden:
        return False, f"{key}: expected {_show(forbidden)} not to be called, but the agent called them"
    return True, f"{key}: none of {_show(expected)} called, as expected"


JUDGES.update(tools_called=_all_called, tools_not_called=_none_called)


def _equal(key: str, expected: Any, actual: Any) -> tuple[bool, str]:
    if actual == expected:
        return True, f"{key}: {_show(expected)} as expected"
    return False, f"{key}: expected {_show(expected)}, got {_show(actual)}"


#: Assertion key -> function giving all of that key's results (a key that holds several named checks).
RUNNERS: dict[str, Callable[[Store, SeededRun, Any], list[AssertionResult]]] = {
    "sql": lambda store, seeded, checks: check_sql(store, seeded, checks, AssertionResult),
    # Path assertions read the run's tool log, which the store does not hold: the runner checks them right after
    # (convoeval.pathcheck, called by convoeval.pipeline.talk).
    "path": lambda store, seeded, checks: [],
    # The same for WhatsApp's limits: they read the recorded messages (convoeval.pathcheck.limits).
    "whatsapp_limits": lambda store, seeded, expected: [],
    # And the channel's keys (convoeval.pathcheck.channel).
    **{key: lambda store, seeded, expected: [] for key in (
        "one_reply_per_burst", "fragments_covered", "no_duplicate_effects", "whatsapp_window")},
}


def _check(store: Store, reads: Any, seeded: SeededRun, key: str, expected: Any, plain: Any) -> list[AssertionResult]:
    """The result(s) of one key: ``expected`` is the validated value, ``plain`` the same as YAML data; the clinic
    readers read through ``reads`` (the store, its reads memoised for this check)."""
    if key in RUNNERS:
        return RUNNERS[key](store, seeded, expected)
    kind = assertion_kind(key)
    if key in CHECKERS:
        actual = CHECKERS[key](reads, seeded)
        passed, detail = JUDGES.get(key, _equal)(key, plain, actual)
    elif kind is not None and kind.read is not None:
        actual = kind.read(store, seeded, expected)
        verdict = kind.judge(expected, actual) if kind.judge else _equal(key, plain, actual)
        # A plugin's judge that returns anything else is an error, never read as a pass.
        if not (isinstance(verdict, tuple) and len(verdict) == 2 and isinstance(verdict[0], bool)
                and isinstance(verdict[1], str)):
            raise TypeError(f"assertion {key!r}: judge must return (passed: bool, detail: str), got {verdict!r:.80}")
        passed, detail = verdict
    else:
        raise LookupError(f"assertion {key!r} is registered but has no checker: give its AssertionKind a read "
                          "function (or register one with convoeval.store.assertions.checker)")
    return [AssertionResult(key=key, expected=plain, actual=actual, passed=passed, detail=detail)]


def check_assertions(
    store: Store, assertions: Assertions | Mapping[str, Any], seeded: SeededRun
) -> list[AssertionResult]:
    """Check the scenario's assertions against the store after a run.

    Args:
        store: the run's store.
        assertions: the scenario's ``Assertions`` (a plain mapping is validated into one first, so an unknown
            key is a validation error).
        seeded: the run, as returned by ``seed_run``.

    Returns:
        One ``AssertionResult`` per assertion the scenario sets, in registration order (the clinic keys first);
        ``sql`` gives one per named query (key ``sql.<name>``), in file order.

    Raises:
        StoreError: the store failed, or cannot run the ``sql:`` queries (the Supabase REST backend).
        LookupError: a registered key without a checker.

    Example:
        >>> from convoeval.scenarios import load_scenario_file
        >>> from convoeval.store import open_store
        >>> from convoeval.store.fixtures import seed_run
        >>> store = open_store("sqlite:///:memory:")
        >>> store.migrate()
        >>> seeded = seed_run(store, load_scenario_file("evals/scenarios/billing/conv-happy-payment.yaml"))
        >>> [r.detail for r in check_assertions(store, {"invoice_status": "paid"}, seeded)]  # before any payment
        ['invoice_status: expected paid, got pending']
    """
    if not isinstance(assertions, Assertions):
        assertions = Assertions.model_validate(assertions)
    plain = assertions.active()
    results = []
    # One consistent view for every check, and one BEGIN for the twenty or so reads instead of one each.
    with store.snapshot():
        reads = ReadOnce(store)
        for key, expected in assertions.checks().items():
            results.extend(_check(store, reads, seeded, key, expected, plain[key]))
    return results
