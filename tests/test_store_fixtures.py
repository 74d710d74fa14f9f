"""Seeding, isolation, cleanup and stale-run cleanup (SQLite always, Postgres when configured)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from store_support import (  # noqa: F401 - pytest fixtures
    billing_scenario,
    clinic_scenario,
    rows_of_run,
    run_ids,
    store,
    store_url,
)

from convoeval.store import (
    TABLES,
    FixtureError,
    SeededRun,
    Store,
    StoreError,
    cleanup_run,
    cleanup_stale_runs,
    ensure_conversation,
    finish_run,
    new_run_id,
    record_message,
    seed_run,
)


def test_seed_the_billing_scenario_and_read_it_back(store: Store, run_ids: list[str]) -> None:
    scenario = billing_scenario()
    seeded = seed_run(store, scenario)
    run_ids.append(seeded.run_id)

    [run] = store.select("runs", {"id": seeded.run_id})
    assert (run["run_id"], run["scenario_id"], run["owner_pid"], run["owner_host"]) == (
        seeded.run_id, "billing-conv-happy-payment", os.getpid(), socket.gethostname(),
    )
    assert datetime.fromisoformat(run["started_at"]).tzinfo is not None and run["finished_at"] is None
    [clinic] = store.select("clinics", {"run_id": seeded.run_id})
    assert (clinic["id"], clinic["locale"]) == (seeded.clinic_id, "pt-BR")
    [patient] = store.select("patients", {"clinic_id": seeded.clinic_id})
    assert (patient["id"], patient["name"], patient["phone"], patient["cpf"]) == (
        seeded.patient_id, "Lucia Ferreira", "11987650020", "11122233344",
    )
    [invoice] = store.select("invoices", {"clinic_id": seeded.clinic_id})
    assert invoice["id"] == seeded.refs["invoices"]["eval-inv-10"]
    assert (invoice["fixture_ref"], invoice["patient_id"], invoice["amount_cents"], invoice["due_date"], invoice["status"]) == (
        "eval-inv-10", seeded.patient_id, 15000, "2026-02-20", "pending",
    )
    assert rows_of_run(store, seeded.run_id) == {"runs": 1, "clinics": 1, "patients": 1, "invoices": 1}


def test_seed_resolves_references_between_fixtures(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    refs = seeded.refs
    slots = {s["fixture_ref"]: s for s in store.select("slots", {"run_id": seeded.run_id})}
    assert slots["s1"]["professional_id"] == refs["professionals"]["dr-a"]
    assert slots["s1"]["service_id"] == refs["services"]["consult"]
    assert (slots["s2"]["professional_id"], slots["s2"]["service_id"], slots["s2"]["available"]) == (
        refs["professionals"]["dr-b"], None, False,
    )
    [appt] = store.select("appointments", {"run_id": seeded.run_id})
    assert (appt["id"], appt["patient_id"], appt["professional_id"], appt["created_by"], appt["status"]) == (
        refs["appointments"]["ap1"], seeded.patient_id, refs["professionals"]["dr-a"], "fixture", "scheduled",
    )
    [service] = store.select("services", {"run_id": seeded.run_id})
    assert (service["duration_min"], service["price_cents"]) == (45, 20000)
    [clinic] = store.select("clinics", {"id": seeded.clinic_id})
    assert (clinic["name"], clinic["locale"]) == ("Clinica Teste", "en")
    assert rows_of_run(store, seeded.run_id) == {
        "runs": 1, "clinics": 1, "patients": 1, "professionals": 2, "services": 1, "slots": 2,
        "appointments": 1, "invoices": 2,
    }


def test_concurrent_seedings_of_one_scenario_are_isolated_and_cleaned_up(store: Store, run_ids: list[str]) -> None:
    scenario = clinic_scenario()  # both runs use the same persona phone
    n = 6
    barrier = threading.Barrier(n)
    seeded: list[SeededRun] = []
    errors: list[BaseException] = []

    def seed() -> None:
        try:
            barrier.wait()
            seeded.append(seed_run(store, scenario))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=seed) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run_ids.extend(s.run_id for s in seeded)
    assert errors == [] and len(seeded) == n
    assert len({s.clinic_id for s in seeded}) == n and len({s.patient_id for s in seeded}) == n

    for s in seeded:
        # Each run sees exactly its own rows through its clinic, with the shared phone.
        [patient] = store.select("patients", {"clinic_id": s.clinic_id, "phone": "11987650099"})
        assert patient["id"] == s.patient_id and patient["run_id"] == s.run_id
        for table in ("professionals", "slots", "appointments", "invoices"):
            assert {r["run_id"] for r in store.select(table, {"clinic_id": s.clinic_id})} == {s.run_id}
        assert {r["id"] for r in store.select("slots", {"run_id": s.run_id})} == set(s.refs["slots"].values())

    for s in seeded:
        counts = cleanup_run(store, s.run_id)
        assert counts["runs"] == 1 and counts["invoices"] == 2
    for s in seeded:
        assert rows_of_run(store, s.run_id) == {}


def test_cleanup_is_idempotent_and_deletes_children_first(store: Store) -> None:
    seeded = seed_run(store, clinic_scenario())
    conversation_id = ensure_conversation(store, seeded, "scheduling")
    record_message(store, seeded, conversation_id, "agent", "oi", ["list_slots"], 0)
    counts = cleanup_run(store, seeded.run_id)
    assert list(counts) == list(reversed(TABLES))
    assert counts == {
        "patient_details": 0, "messages": 1, "conversations": 1, "handoffs": 0, "nps_responses": 0, "payment_links": 0, "invoices": 2,
        "appointments": 1, "slots": 2, "services": 1, "professionals": 2, "patients": 1, "clinics": 1, "runs": 1,
    }
    assert set(cleanup_run(store, seeded.run_id).values()) == {0}
    with pytest.raises(ValueError, match="needs a run id"):
        cleanup_run(store, "")


def test_unknown_fixture_reference_names_scenario_and_fixture_and_rolls_back(store: Store) -> None:
    raw = clinic_scenario().model_dump()
    raw["fixtures"]["slots"][1]["professional_id"] = "dr-nobody"
    scenario = type(clinic_scenario()).model_validate(raw)
    run_id = new_run_id()
    with pytest.raises(FixtureError) as info:
        seed_run(store, scenario, run_id=run_id)
    message = str(info.value)
    assert "scenario 'store-test-clinic'" in message and "slots/s2" in message and "'dr-nobody'" in message
    assert "known: dr-a, dr-b" in message
    # Clinic, patient and professionals were inserted before the bad slot; all are gone.
    assert rows_of_run(store, run_id) == {}


class _FailingStore(Store):
    """Delegates to a real store but fails inserts into one table."""

    def __init__(self, inner: Store, fail_on: str):
        self.inner, self.fail_on, self.backend = inner, fail_on, inner.backend

    @property
    def url(self) -> str:
        return self.inner.url

    def migrate(self) -> None:
        self.inner.migrate()

    def insert(self, table, rows):
        if table == self.fail_on:
            raise StoreError(f"{self.backend} store: injected failure on {table}")
        return self.inner.insert(table, rows)

    def select(self, table, where=None, *, order_by=None):
        return self.inner.select(table, where, order_by=order_by)

    def update(self, table, where, values):
        return self.inner.update(table, where, values)

    def delete(self, table, where):
        return self.inner.delete(table, where)


def test_store_failure_midway_removes_the_rows_already_seeded(store: Store) -> None:
    run_id = new_run_id()
    with pytest.raises(StoreError, match="injected failure on invoices"):
        seed_run(_FailingStore(store, "invoices"), clinic_scenario(), run_id=run_id)
    assert rows_of_run(store, run_id) == {}


def test_a_run_id_in_use_is_refused_and_the_other_run_is_untouched(store: Store, run_ids: list[str]) -> None:
    first = seed_run(store, billing_scenario())
    run_ids.append(first.run_id)
    with pytest.raises(StoreError):
        seed_run(store, clinic_scenario(), run_id=first.run_id)
    assert rows_of_run(store, first.run_id) == {"runs": 1, "clinics": 1, "patients": 1, "invoices": 1}


def test_finish_run_sets_finished_at(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, billing_scenario())
    run_ids.append(seeded.run_id)
    finish_run(store, seeded.run_id)
    [run] = store.select("runs", {"id": seeded.run_id})
    assert datetime.fromisoformat(run["finished_at"]) >= datetime.fromisoformat(run["started_at"])


def test_conversations_and_messages(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, billing_scenario())
    run_ids.append(seeded.run_id)
    conversation_id = ensure_conversation(store, seeded, "billing")
    assert ensure_conversation(store, seeded, "billing", conversation_id) == conversation_id
    external = f"wa-{uuid.uuid4().hex}"
    assert ensure_conversation(store, seeded, "billing", external) == external
    record_message(store, seeded, conversation_id, "patient", "quero pagar", [], 0)
    row = record_message(store, seeded, conversation_id, "agent", "Aqui está", ["list_invoices", "create_payment_link"], 0)
    assert json.loads(row["tools"]) == ["list_invoices", "create_payment_link"]
    conversations = store.select("conversations", {"run_id": seeded.run_id})
    assert {c["id"] for c in conversations} == {conversation_id, external}
    assert {(c["clinic_id"], c["patient_id"], c["agent"]) for c in conversations} == {
        (seeded.clinic_id, seeded.patient_id, "billing")
    }
    messages = store.select("messages", {"conversation_id": conversation_id}, order_by="created_at")
    assert [(m["role"], m["turn"], m["run_id"]) for m in messages] == [("patient", 0, seeded.run_id), ("agent", 0, seeded.run_id)]
    with pytest.raises(ValueError, match="role must be one of patient, agent"):
        record_message(store, seeded, conversation_id, "system", "x")

    other = seed_run(store, billing_scenario())
    run_ids.append(other.run_id)
    with pytest.raises(StoreError, match="belongs to another run"):
        ensure_conversation(store, other, "billing", conversation_id)


# ── stale runs ──


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid no longer names a process
    return proc.pid


def test_cleanup_stale_runs(store: Store, run_ids: list[str]) -> None:
    live = seed_run(store, billing_scenario())
    dead = seed_run(store, billing_scenario())
    remote_old = seed_run(store, billing_scenario())
    remote_new = seed_run(store, billing_scenario())
    run_ids.extend(s.run_id for s in (live, dead, remote_old, remote_new))
    store.update("runs", {"id": dead.run_id}, {"owner_pid": _dead_pid()})
    long_ago = (datetime.now(UTC) - timedelta(hours=3)).isoformat()
    store.update("runs", {"id": remote_old.run_id}, {"owner_host": "elsewhere.invalid", "started_at": long_ago})
    store.update("runs", {"id": remote_new.run_id}, {"owner_host": "elsewhere.invalid"})
    # Rows convoeval did not seed: a run_id with no runs row. They must survive any cleanup.
    foreign = f"not-a-run-{uuid.uuid4().hex}"
    run_ids.append(foreign)
    store.insert("clinics", {"run_id": foreign, "name": "someone else's clinic"})

    would = cleanup_stale_runs(store, older_than_s=3600, dry_run=True)
    assert dead.run_id in would and remote_old.run_id in would
    assert rows_of_run(store, dead.run_id) == {"runs": 1, "clinics": 1, "patients": 1, "invoices": 1}

    removed = cleanup_stale_runs(store, older_than_s=3600)
    assert dead.run_id in removed and remote_old.run_id in removed
    assert live.run_id not in removed and remote_new.run_id not in removed
    assert rows_of_run(store, dead.run_id) == {} and rows_of_run(store, remote_old.run_id) == {}
    assert rows_of_run(store, live.run_id) == {"runs": 1, "clinics": 1, "patients": 1, "invoices": 1}
    assert rows_of_run(store, remote_new.run_id) == {"runs": 1, "clinics": 1, "patients": 1, "invoices": 1}
    assert rows_of_run(store, foreign) == {"clinics": 1}
