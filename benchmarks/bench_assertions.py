"""Checking a conversation's assertions on SQLite: milliseconds per conversation (issue #25's target: under 5 ms).

Each conversation is seeded in a file SQLite store (WAL, as ``convoeval run`` uses it) that also holds the rows of
``--others`` other runs (a sweep shares the database), then gets what an agent leaves behind: 14 messages with
their tools, a payment link, an appointment, an NPS answer. ``check_assertions`` is then timed (wall and CPU), and
the run cleaned up. Assertion sets:

* ``shipped``: every shipped scenario with its own assertions and fixtures (the max over scenarios is reported);
* ``12 clinic keys``: every clinic key at once;
* ``5 sql:``: five ``sql:`` queries (counts, a value, a join, rows: 0);
* ``12 clinic keys + 5 sql:``: both, the heaviest realistic set.

The first check of a process (schema reflection, statement compilation) is reported apart as ``cold``. The load
cost of a ``sql:`` assertion (sqlglot parses and checks it once, when the scenario loads) is printed below.

Usage:
    .venv/bin/python benchmarks/bench_assertions.py [--conversations 200] [--others 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine, markdown_table, save, temp_folder
from convoeval.scenarios import CLINIC_KEYS, Assertions, Scenario, load_scenarios, parse_scenario
from convoeval.scenarios.sql_check import check_query
from convoeval.store import (
    Store,
    check_assertions,
    cleanup_run,
    ensure_conversation,
    open_store,
    record_message,
    seed_run,
)

SQL = {
    "one_pix_link": {"query": "SELECT count(*) FROM payment_links WHERE run_id = :run_id AND method = 'pix'",
                     "expect": 1},
    "no_handoff": {"query": "SELECT id FROM handoffs WHERE run_id = :run_id", "rows": 0},
    "early_status": {"query": "SELECT status FROM invoices WHERE patient_id = :patient_id AND fixture_ref = 'inv-1'",
                     "expect": "pending"},
    "link_matches_invoice": {"query": "SELECT count(*) FROM payment_links l JOIN invoices i ON i.id = l.invoice_id "
                                      "WHERE l.run_id = :run_id AND l.amount_cents = i.amount_cents", "expect": 1},
    "agent_booked_once": {"query": "SELECT count(*) FROM appointments WHERE clinic_id = :clinic_id "
                                   "AND created_by = 'agent'", "expect": 1, "op": "<="},
}
CLINIC = {"payment_link_created": True, "payment_method": "pix", "invoice_status": "pending",
          "appointment_created": True, "appointment_confirmed": False, "appointment_cancelled": False,
          "appointment_rescheduled": False, "nps_score_recorded": True, "nps_score": 9, "escalated_to_human": False,
          "tools_called": ["create_payment_link"], "tools_not_called": ["handoff_to_human"]}


def bench_scenario(assertions: dict[str, Any]) -> Scenario:
    """A conversational scenario with an invoice, a professional and ``assertions``."""
    return parse_scenario({
        "type": "conversational", "id": "bench-assertions", "agent": "billing", "locale": "en",
        "description": "benchmark", "persona": {"name": "Ana Souza", "phone": "11987650099"}, "goal": "pay",
        "rubric": ["pays"], "assertions": assertions,
        "fixtures": {"professionals": [{"id": "dr-a", "name": "Dr A"}],
                     "invoices": [{"id": "inv-1", "amount_cents": 15000, "due_date": "2026-02-20"}]}})


def act(store: Store, scenario: Scenario, seeded: Any) -> None:
    """What an agent leaves behind in a 14-message conversation."""
    ids = {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}
    at = "2026-03-01T10:00:00+00:00"
    with store.transaction():
        conversation = ensure_conversation(store, seeded, scenario.agent)
        for turn in range(7):
            record_message(store, seeded, conversation, "patient", "quero pagar", [], turn)
            record_message(store, seeded, conversation, "agent", "ok",
                           ["list_invoices", "create_payment_link"] if turn == 3 else [], turn)
        invoice = next(iter(seeded.refs.get("invoices", {}).values()), None)
        if invoice is not None:  # a link needs an invoice (some shipped scenarios seed none)
            store.insert("payment_links", {**ids, "invoice_id": invoice, "method": "pix", "amount_cents": 15000,
                                           "url": "https://pay.example/x", "created_at": at})
        store.insert("appointments", {**ids, "starts_at": "2026-03-20T10:00", "created_by": "agent", "created_at": at})
        store.insert("nps_responses", {**ids, "score": 9, "created_at": at})


def time_checks(store: Store, scenario: Scenario, n: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU milliseconds of ``check_assertions`` over ``n`` fresh conversations, and the results per check."""
    walls, cpus, count = [], [], 0
    for _ in range(n):
        seeded = seed_run(store, scenario)
        try:
            act(store, scenario, seeded)
            wall, cpu = time.perf_counter(), time.process_time()
            results = check_assertions(store, scenario.assertions, seeded)
            walls.append((time.perf_counter() - wall) * 1e3)
            cpus.append((time.process_time() - cpu) * 1e3)
            count = len(results)
        finally:
            cleanup_run(store, seeded.run_id)
    return walls, cpus, count


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else max(values)


def row(label: str, checks: int, walls: list[float], cpus: list[float]) -> dict[str, Any]:
    return {"assertions": label, "results per conversation": checks,
            "wall ms median": round(statistics.median(walls), 3), "wall ms p95": round(p95(walls), 3),
            "wall ms max": round(max(walls), 3), "CPU ms median": round(statistics.median(cpus), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200, help="conversations per assertion set")
    parser.add_argument("--others", type=int, default=50, help="other runs whose rows stay in the store")
    parser.add_argument("--save", default="assertions", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args()

    rows, cold = [], {}
    with temp_folder("assertions") as folder, open_store(f"sqlite:///{folder / 'store.db'}") as store:
        heavy = bench_scenario({**CLINIC, "sql": SQL})
        for _ in range(args.others):  # a sweep's other runs, never cleaned: every query must filter them out
            act(store, heavy, seed_run(store, heavy))
        walls, cpus, checks = time_checks(store, heavy, 1)
        cold = {"wall_ms": round(walls[0], 3), "cpu_ms": round(cpus[0], 3), "results": checks}

        shipped = [s for s in load_scenarios() if s.assertions.active()]
        per_scenario = []
        for scenario in shipped:
            walls, cpus, checks = time_checks(store, scenario, max(10, args.conversations // len(shipped)))
            # Ranked by CPU: on a shared machine a wall median can be one preemption (several ms) away.
            per_scenario.append((statistics.median(cpus), scenario.id, checks, walls, cpus))
        worst = max(per_scenario)
        rows.append(row(f"shipped: slowest of {len(shipped)} scenarios ({worst[1]})", worst[2], worst[3], worst[4]))
        everyone = [w for *_, ws, _ in per_scenario for w in ws]
        rows.append(row(f"shipped: all {len(shipped)} scenarios pooled", round(statistics.mean(
            c for _, _, c, _, _ in per_scenario), 1), everyone, [c for *_, cs in per_scenario for c in cs]))
        for label, assertions in ((f"{len(CLINIC_KEYS)} clinic keys", CLINIC), (f"{len(SQL)} sql:", {"sql": SQL}),
                                  (f"{len(CLINIC_KEYS)} clinic keys + {len(SQL)} sql:", {**CLINIC, "sql": SQL})):
            walls, cpus, checks = time_checks(store, bench_scenario(assertions), args.conversations)
            rows.append(row(label, checks, walls, cpus))

    started = time.perf_counter()
    for _ in range(20):
        for check in SQL.values():
            check_query(check["query"])
    parse_ms = (time.perf_counter() - started) * 1e3 / (20 * len(SQL))
    started = time.perf_counter()
    for _ in range(20):
        Assertions.model_validate({**CLINIC, "sql": SQL})
    load_ms = (time.perf_counter() - started) * 1e3 / 20

    where = machine()
    print(f"{args.conversations} conversations per set, {args.others} other runs in the store (SQLite file, WAL)")
    print(markdown_table(rows))
    print(f"cold (first check of the process, 12 clinic keys + 5 sql:): {cold['wall_ms']} ms wall, "
          f"{cold['cpu_ms']} ms CPU")
    print(f"at load: {parse_ms:.2f} ms to parse and check one sql: query; {load_ms:.2f} ms to validate the "
          "12 clinic keys + 5 sql: of a scenario")
    print(f"commit {where['commit']}, load {where['loadavg']}, {where['nproc']} cores, Python {where['python']}")
    save(args.save, {"settings": vars(args), "rows": rows, "cold": cold, "sql_parse_ms": round(parse_ms, 3),
                     "assertions_load_ms": round(load_ms, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
