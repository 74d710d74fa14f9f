"""Every assertion key passes and fails on the database state it describes (SQLite always, Postgres when set)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic
import pytest
from store_support import billing_scenario, clinic_scenario, run_ids, store, store_url  # noqa: F401 - fixtures

from convoeval.scenarios import CLINIC_KEYS, Assertions, assertion_keys, assertion_kind
from convoeval.store import SeededRun, Store, check_assertions, ensure_conversation, record_message, seed_run
from convoeval.store.assertions import CHECKERS


def test_one_checker_per_clinic_key() -> None:
    assert set(CHECKERS) == set(CLINIC_KEYS)
    # Every key convoeval registers has a checker: the clinic keys' readers, sql's runner, and the recorded
    # messages' checks (path assertions, WhatsApp's limits and channel: convoeval.pathcheck).
    channel = {"one_reply_per_burst", "fragments_covered", "no_duplicate_effects", "whatsapp_window"}
    tau2 = {"tau2_actions", "tau2_state", "tau2_communicate"}  # read on a τ² conversation's session: convoeval.tau2.checks
    assert set(assertion_keys(plugins=False)) == set(CLINIC_KEYS) | {"sql", "path", "whatsapp_limits"} | channel | tau2


def _scoped(seeded: SeededRun, **row: Any) -> dict[str, Any]:
    return {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id, **row}


def _link(store: Store, seeded: SeededRun, method: str, at: str) -> None:
    invoice = seeded.refs["invoices"]["inv-early"]
    store.insert("payment_links", _scoped(seeded, invoice_id=invoice, method=method, amount_cents=15000,
                                          url="https://pay.example/x", created_at=at))


def _appointment_status(status: str) -> Callable[[Store, SeededRun], None]:
    def act(store: Store, seeded: SeededRun) -> None:
        store.update("appointments", {"id": seeded.refs["appointments"]["ap1"]}, {"status": status})
    return act


def _book(store: Store, seeded: SeededRun) -> None:
    store.insert("appointments", _scoped(seeded, starts_at="2026-03-20T10:00", created_by="agent", created_at="2026-03-01T10:00:00+00:00"))


def _reschedule(store: Store, seeded: SeededRun) -> None:
    [new] = store.insert("appointments", _scoped(seeded, starts_at="2026-03-21T10:00", created_by="agent", created_at="2026-03-01T10:00:00+00:00"))
    store.update("appointments", {"id": seeded.refs["appointments"]["ap1"]}, {"status": "rescheduled", "rescheduled_to": new["id"]})


def _nps(*scores: int) -> Callable[[Store, SeededRun], None]:
    def act(store: Store, seeded: SeededRun) -> None:
        for minute, score in enumerate(scores):
            store.insert("nps_responses", _scoped(seeded, score=score, created_at=f"2026-03-01T10:{minute:02d}:00+00:00"))
    return act


def _handoff(store: Store, seeded: SeededRun) -> None:
    store.insert("handoffs", _scoped(seeded, reason="patient asked for a human", created_at="2026-03-01T10:00:00+00:00"))


def _tools(store: Store, seeded: SeededRun) -> None:
    conversation = ensure_conversation(store, seeded, "billing")
    record_message(store, seeded, conversation, "patient", "quero pagar", [], 0)
    record_message(store, seeded, conversation, "agent", "Suas faturas", ["list_invoices"], 0)
    record_message(store, seeded, conversation, "agent", "Link", ["create_payment_link"], 1)


@dataclass
class Case:
    key: str
    expected: Any
    act: Callable[[Store, SeededRun], None]
    before: Any  # the actual value on the freshly seeded run
    after: Any  # the actual value once act() ran


CASES = [
    Case("payment_link_created", True, lambda s, r: _link(s, r, "pix", "2026-03-01T10:00:00+00:00"), False, True),
    Case("payment_method", "boleto", lambda s, r: (_link(s, r, "pix", "2026-03-01T10:00:00+00:00"),
                                                   _link(s, r, "boleto", "2026-03-01T10:05:00+00:00")), None, "boleto"),
    # The invoice due first is inv-early (pending); inv-late is already paid.
    Case("invoice_status", "paid", lambda s, r: s.update("invoices", {"id": r.refs["invoices"]["inv-early"]}, {"status": "paid"}), "pending", "paid"),
    Case("appointment_created", True, _book, False, True),
    Case("appointment_confirmed", True, _appointment_status("confirmed"), False, True),
    Case("appointment_cancelled", True, _appointment_status("cancelled"), False, True),
    Case("appointment_rescheduled", True, _reschedule, False, True),
    Case("nps_score_recorded", True, _nps(9), False, True),
    Case("nps_score", 7, _nps(9, 7), None, 7),
    Case("escalated_to_human", True, _handoff, False, True),
    Case("tools_called", ["create_payment_link"], _tools, [], ["create_payment_link", "list_invoices"]),
]


def test_cases_cover_every_assertion_key() -> None:
    assert {c.key for c in CASES} | {"tools_not_called"} == set(CLINIC_KEYS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_assertion_fails_then_passes(store: Store, run_ids: list[str], case: Case) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    [before] = check_assertions(store, {case.key: case.expected}, seeded)
    assert (before.key, before.expected, before.actual, before.passed) == (case.key, case.expected, case.before, False)
    assert before.detail.startswith(f"{case.key}: expected ")
    case.act(store, seeded)
    [after] = check_assertions(store, Assertions(**{case.key: case.expected}), seeded)
    assert (after.actual, after.passed) == (case.after, True)


def test_tools_not_called_passes_then_fails(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    forbidden = {"tools_not_called": ["create_payment_link", "handoff_to_human"]}
    [before] = check_assertions(store, forbidden, seeded)
    assert before.passed is True
    _tools(store, seeded)
    [after] = check_assertions(store, forbidden, seeded)
    assert after.passed is False
    assert after.detail == "tools_not_called: expected [create_payment_link] not to be called, but the agent called them"


def test_false_expectations_pass_on_a_quiet_run(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    quiet = {k: False for k in CLINIC_KEYS if assertion_kind(k).value is bool}
    assert len(quiet) == 7
    results = check_assertions(store, quiet, seeded)
    assert [r.key for r in results] == list(quiet) and all(r.passed for r in results)


def test_detail_reads_like_the_seed(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, billing_scenario())
    run_ids.append(seeded.run_id)
    [result] = check_assertions(store, {"invoice_status": "paid"}, seeded)
    assert result.detail == "invoice_status: expected paid, got pending"
    [result] = check_assertions(store, billing_scenario().assertions, seeded)
    assert result.detail == "payment_link_created: expected true, got false"


def test_assertions_only_see_their_own_run(store: Store, run_ids: list[str]) -> None:
    mine, other = seed_run(store, clinic_scenario()), seed_run(store, clinic_scenario())
    run_ids.extend([mine.run_id, other.run_id])
    _link(store, other, "pix", "2026-03-01T10:00:00+00:00")
    _tools(store, other)
    results = check_assertions(store, {"payment_link_created": True, "tools_called": ["list_invoices"]}, mine)
    assert [r.passed for r in results] == [False, False]
    assert all(r.passed for r in check_assertions(store, {"payment_link_created": True, "tools_called": ["list_invoices"]}, other))


def test_unknown_assertion_key_is_a_validation_error(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, billing_scenario())
    run_ids.append(seeded.run_id)
    with pytest.raises(pydantic.ValidationError, match="payment_link_creatd"):
        check_assertions(store, {"payment_link_creatd": True}, seeded)


def test_invoice_status_without_seeded_invoices_is_none(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario(fixtures={}))
    run_ids.append(seeded.run_id)
    [result] = check_assertions(store, {"invoice_status": "pending"}, seeded)
    assert (result.actual, result.passed, result.detail) == (None, False, "invoice_status: expected pending, got nothing")


def test_every_clinic_key_in_one_snapshot_sends_each_distinct_read_once(store: Store, run_ids: list[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    _tools(store, seeded)
    sent: list[tuple[str, tuple, str | None]] = []
    original = type(store).select

    def spy(self, table, where=None, *, order_by=None):
        sent.append((table, tuple(sorted((where or {}).items())), order_by))
        return original(self, table, where, order_by=order_by)

    monkeypatch.setattr(type(store), "select", spy)
    every = {c.key: c.expected for c in CASES} | {"tools_not_called": ["handoff_to_human"]}
    results = check_assertions(store, every, seeded)
    assert len(results) == 12
    assert len(sent) == len(set(sent)), sent  # the four appointment keys and both tool keys share their reads
    assert sorted({table for table, *_ in sent}) == ["appointments", "conversations", "handoffs", "invoices",
                                                     "messages", "nps_responses", "payment_links"]
