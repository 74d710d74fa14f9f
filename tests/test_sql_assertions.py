"""``sql:`` assertions: refused at load when they could write or name what the schema lacks; checked read-only on
SQLite and Postgres (when configured); refused by the Supabase REST store with its reason; reported like any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import respx
from store_support import clinic_scenario, run_ids, store, store_url  # noqa: F401 - fixtures

from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import Assertions, ScenarioError, load_scenario_file, load_scenarios, parse_scenario
from convoeval.stats.truth import truth_ratings
from convoeval.store import Store, StoreError, check_assertions, open_store, seed_run
from convoeval.store.sql_assertions import require_sql
from convoeval.store.supabase import SupabaseStore
from convoeval.testing import FakeChatModel

PICK = "WHERE run_id = :run_id"


def _sql(**checks: dict[str, Any]) -> dict[str, Any]:
    return {"sql": checks}


def _file(tmp_path: Path, query: str, **expectation: Any) -> Path:
    expectation = expectation or {"expect": 1}
    lines = [f"      {k}: {v!r}" if isinstance(v, str) else f"      {k}: {v}" for k, v in expectation.items()]
    path = tmp_path / "shop.yaml"
    path.write_text("\n".join([
        "id: sql-load", "agent: billing", "description: d", "persona: {name: Ana, phone: '11987650099'}",
        "turns: [{user: oi}]", "assertions:", "  sql:", "    the_check:", f"      query: {query!r}", *lines, ""]),
        encoding="utf-8")
    return path


# ── refused when the scenario loads ──

REFUSED = [
    ("DELETE FROM payment_links WHERE run_id = :run_id", "must only read, but it is DELETE"),
    ("UPDATE invoices SET status = 'paid' WHERE run_id = :run_id", "must only read, but it is UPDATE"),
    ("INSERT INTO handoffs (run_id) VALUES (:run_id)", "must only read, but it is INSERT"),
    ("DROP TABLE runs", "must only read"),
    ("WITH d AS (DELETE FROM runs WHERE run_id = :run_id RETURNING id) SELECT count(*) FROM d", "holds DELETE"),
    ("SELECT * INTO copy FROM runs WHERE run_id = :run_id", "SELECT … INTO"),
    ("SELECT id FROM invoices WHERE run_id = :run_id FOR UPDATE", "row lock"),
    ("SELECT 1 FROM runs WHERE run_id = :run_id; DELETE FROM runs", "expected one query, found 2 statements"),
    ("PRAGMA query_only = OFF", "must only read"),
    ("SELECT pg_sleep(10) FROM runs WHERE run_id = :run_id", "function pg_sleep() is refused"),
    ("SELECT set_config('x', 'y', false) FROM runs WHERE run_id = :run_id", "function set_config() is refused"),
    ("SELECT count(*) FROM orders WHERE run_id = :run_id", "unknown table 'orders'"),
    ("SELECT count(*) FROM pg_catalog.pg_user WHERE usename = :run_id", "unknown table 'pg_catalog.pg_user'"),
    ("SELECT count(*) FROM invoices WHERE run_id = :run_id AND total > 0", "column 'total' could not be resolved"),
    ("SELECT amount FROM payment_links WHERE run_id = :run_id", "column 'amount' could not be resolved"),
    ("SELECT count(*) FROM invoices", "binds none of :run_id, :clinic_id, :patient_id"),
    ("SELECT count(*) FROM invoices WHERE run_id = :scenario", "unknown parameter :scenario"),
    ("SELECT count(*) FROM invoices WHERE run_id = ?", "positional parameters (?)"),
    ("SELECT count(*) FROM invoices WHERE run_id = $1", "positional parameters ($1)"),
    ("SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM runs WHERE run_id = :run_id", "nested too deeply to check"),
    ("SELEKT 1", "cannot be parsed: Invalid expression / Unexpected token. Line 1, Col: 8. SELEKT 1"),
]


@pytest.mark.parametrize(("query", "reason"), REFUSED, ids=[q[:40] for q, _ in REFUSED])
def test_a_query_that_writes_or_names_the_unknown_is_refused_at_load_in_one_line(tmp_path, query, reason):
    path = _file(tmp_path, query)
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    line = caught.value.one_line()
    assert line.startswith(f"{path}: assertions.sql.the_check.query: "), line
    assert reason in line and "\n" not in line


@pytest.mark.parametrize(("expectation", "reason"), [
    ({"expect": 1, "rows": 0}, "set exactly one of expect"),
    ({"op": "=="}, "got neither"),
    ({"expect": True, "op": "<"}, "op '<' compares numbers or text"),
    ({"rows": -1}, "greater than or equal to 0"),
    ({"expect": 1, "op": "~="}, "Input should be '=='"),
])
def test_an_expectation_must_be_one_of_expect_or_rows(tmp_path, expectation, reason):
    path = _file(tmp_path, f"SELECT count(*) FROM invoices {PICK}", **expectation)
    with pytest.raises(ScenarioError, match="assertions.sql.the_check") as caught:
        load_scenario_file(path)
    assert reason in caught.value.one_line()


def test_a_good_query_loads_and_keeps_its_text(tmp_path):
    query = "SELECT count(*) FROM invoices i JOIN patients p ON p.id = i.patient_id WHERE i.run_id = :run_id"
    sc = load_scenario_file(_file(tmp_path, query, rows=1, op=">="))
    check = sc.assertions.checks()["sql"]["the_check"]
    assert (check.query, check.rows, check.op, check.expected()) == (query, 1, ">=", "rows >= 1")
    assert sc.assertions.active() == {"sql": {"the_check": {"query": query, "rows": 1, "op": ">="}}}


# ── checked against the store (SQLite, and Postgres when configured) ──


def _link(store: Store, seeded, method: str) -> None:
    store.insert("payment_links", {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id,
                                   "patient_id": seeded.patient_id, "invoice_id": seeded.refs["invoices"]["inv-early"],
                                   "method": method, "amount_cents": 15000, "url": "https://pay.example/x",
                                   "created_at": "2026-03-01T10:00:00+00:00"})


CHECKS = _sql(
    one_pix_link={"query": f"SELECT count(*) FROM payment_links {PICK} AND method = 'pix'", "expect": 1},
    no_boleto={"query": f"SELECT id FROM payment_links {PICK} AND method = 'boleto'", "rows": 0},
    early_paid={"query": "SELECT status FROM invoices WHERE patient_id = :patient_id AND fixture_ref = 'inv-early'",
                "expect": "paid"},
    total_at_least={"query": "SELECT sum(amount_cents) FROM payment_links WHERE clinic_id = :clinic_id",
                    "expect": 15000, "op": ">="},
)


def test_sql_assertions_fail_then_pass_on_the_run_they_belong_to(store: Store, run_ids: list[str]) -> None:
    mine, other = seed_run(store, clinic_scenario()), seed_run(store, clinic_scenario())
    run_ids.extend([mine.run_id, other.run_id])
    _link(store, other, "pix")  # another run's row: never counted for mine
    before = check_assertions(store, CHECKS, mine)
    assert [(r.key, r.passed) for r in before] == [
        ("sql.one_pix_link", False), ("sql.no_boleto", True), ("sql.early_paid", False), ("sql.total_at_least", False)]
    assert before[0].detail == "sql.one_pix_link: expected == 1, got 0"
    assert before[1].detail == "sql.no_boleto: 0 rows as expected (rows == 0)"
    assert before[2].detail == "sql.early_paid: expected == paid, got pending"
    assert before[3].detail == "sql.total_at_least: expected >= 15000, got nothing (no row), which cannot be compared"
    assert (before[3].expected, before[3].actual) == (">= 15000", None)

    _link(store, mine, "pix")
    store.update("invoices", {"id": mine.refs["invoices"]["inv-early"]}, {"status": "paid"})
    after = check_assertions(store, Assertions.model_validate(CHECKS), mine)
    assert [r.passed for r in after] == [True, True, True, True], [r.detail for r in after]
    assert [r.actual for r in after] == [1, 0, "paid", 15000]
    assert type(after[3].actual) is int  # Postgres sums to Decimal; the frames get a plain number

    _link(store, mine, "boleto")
    [_, no_boleto, *_] = check_assertions(store, CHECKS, mine)
    assert (no_boleto.passed, no_boleto.actual, no_boleto.detail) == (
        False, 1, "sql.no_boleto: expected rows == 0, got 1 row")


def test_a_value_query_returning_several_rows_fails_saying_so(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    [result] = check_assertions(store, _sql(status={"query": f"SELECT status FROM invoices {PICK}",
                                                    "expect": "paid"}), seeded)
    assert result.passed is False
    assert result.detail == "sql.status: expected one value (== paid), but the query returned 2 row(s) of 1 column(s)"


def test_clinic_keys_and_sql_report_together_in_key_order(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    results = check_assertions(store, {**_sql(none={"query": f"SELECT id FROM handoffs {PICK}", "rows": 0}),
                                       "payment_link_created": False, "invoice_status": "pending"}, seeded)
    assert [(r.key, r.passed) for r in results] == [
        ("payment_link_created", True), ("invoice_status", True), ("sql.none", True)]


def test_the_database_refuses_a_write_the_parser_would_have_refused(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    with pytest.raises(StoreError, match="run a sql: assertion's query failed"):
        store.query("DELETE FROM handoffs WHERE run_id = :run_id", {"run_id": seeded.run_id})
    # The guard is lifted afterwards: the store writes as before.
    store.insert("handoffs", {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id,
                              "patient_id": seeded.patient_id, "reason": "r", "created_at": "2026-03-01T10:00:00Z"})
    assert store.query("SELECT count(*) FROM handoffs WHERE run_id = :run_id", {"run_id": seeded.run_id}) == [(1,)]


# ── Supabase: no SQL through PostgREST, refused before the conversation ──


def test_the_supabase_rest_store_refuses_sql_assertions_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPABASE_URL", "https://proj.supabase.co")
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", "sb_secret_" + "x")
    with respx.mock(assert_all_called=False) as api:  # no request may leave: the refusal needs none
        store = SupabaseStore("supabase://")
        assertions = Assertions.model_validate(_sql(n={"query": f"SELECT id FROM handoffs {PICK}", "rows": 0}))
        with pytest.raises(StoreError, match=r"Supabase REST API \(PostgREST\) does not run.*postgresql://"):
            require_sql(store, assertions)
        require_sql(store, Assertions(payment_link_created=True))  # the clinic keys still run through PostgREST
        with pytest.raises(StoreError, match="does not run"):
            store.query("SELECT 1", {})
        assert api.calls.call_count == 0


async def test_a_run_on_a_store_without_sql_is_an_error_before_the_agent_speaks(store_url, monkeypatch) -> None:
    if not store_url.startswith("sqlite"):
        pytest.skip("one backend is enough: the refusal happens before the store is used")
    sc = load_scenarios(scenario="billing-conv-happy-payment")[0]
    raw = sc.model_dump(exclude_none=True, exclude={"assertions"})
    raw["assertions"] = _sql(n={"query": f"SELECT id FROM handoffs {PICK}", "rows": 0})
    sc = parse_scenario(raw)
    with open_store(store_url) as sqlite:
        monkeypatch.setattr(type(sqlite), "sql_refusal", "this store cannot run SQL (test)")
        simulator = FakeChatModel(replies=["Oi"])
        result = await arun_any(Job(sc, 1), RunOptions(simulator_model=simulator, judge_model=simulator,
                                                       store=sqlite))
    assert result.status == "error" and "this store cannot run SQL (test)" in result.error
    assert simulator.calls == []  # refused before the first patient turn


# ── end to end: the results reach the assertion rows like any other assertion ──


async def test_sql_results_reach_the_assertions_frame(store_url) -> None:
    if not store_url.startswith("sqlite"):
        pytest.skip("the pipeline is backend-independent; the store tests above cover Postgres")
    sc = load_scenarios(scenario="billing-conv-happy-payment")[0]
    raw = sc.model_dump(exclude_none=True, exclude={"assertions"})
    raw["assertions"] = {"payment_link_created": True, **_sql(
        pix_link={"query": f"SELECT method FROM payment_links {PICK}", "expect": "pix"},
        no_handoff={"query": "SELECT id FROM handoffs WHERE patient_id = :patient_id", "rows": 0},
        two_links={"query": f"SELECT count(*) FROM payment_links {PICK}", "expect": 2})}
    sc = parse_scenario(raw)
    simulator = FakeChatModel(replies=["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"])
    verdicts = {"verdicts": [{"index": i + 1, "evidence": "t", "reasoning": "r", "passed": True}
                             for i in range(len(sc.criteria))]}
    holistic = {"issues": [], "suggestion": "ok", "scores": {k: 9 for k in (
        "correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion")}}
    with open_store(store_url) as sqlite:
        result = await arun_any(Job(sc, 42), RunOptions(
            simulator_model=simulator, judge_model=FakeChatModel(replies=[verdicts, holistic]), store=sqlite))
    rows = result.assertions[["assertion", "expected", "actual", "passed", "message"]].to_dict("records")
    assert [(r["assertion"], r["passed"]) for r in rows] == [
        ("payment_link_created", True), ("sql.pix_link", True), ("sql.no_handoff", True), ("sql.two_links", False)]
    assert rows[3]["message"] == "sql.two_links: expected == 2, got 1"
    score = result.score.iloc[0]
    assert (score["status"], score["assertion_failures"]) == ("fail", 1)


# ── judge agreement: a rubric criterion may name a sql: assertion as its database truth ──


def _conversational(rubric: list, sql: dict) -> dict[str, Any]:
    return {"type": "conversational", "id": "sql-truth", "agent": "billing", "description": "d",
            "persona": {"name": "Ana", "phone": "11987650099"}, "goal": "pay", "rubric": rubric,
            "assertions": {"sql": sql}}


def test_a_criterion_names_a_sql_assertion_of_its_own_scenario():
    sql = {"one_pix_link": {"query": f"SELECT count(*) FROM payment_links {PICK}", "expect": 1}}
    sc = parse_scenario(_conversational([{"text": "One Pix link", "assertion": "sql.one_pix_link"}], sql))
    assert sc.rubric[0].assertion == "sql.one_pix_link"
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(_conversational(["ok", {"text": "Two links", "assertion": "sql.two_links"}], sql), "f.yaml")
    assert caught.value.one_line() == ("f.yaml: rubric[1].assertion: no sql: assertion named 'two_links' in this "
                                       "scenario's assertions; it has one_pix_link")


def test_sql_results_are_database_truth_for_the_criteria_that_name_them():
    rubric = pd.DataFrame([{"run_id": "r1", "scenario": "s", "seed": 1, "trial": 1, "criterion": "One Pix link",
                            "assertion": "sql.one_pix_link", "passed": True}])
    assertions = pd.DataFrame([{"run_id": "r1", "scenario": "s", "assertion": "sql.one_pix_link", "passed": False},
                               {"run_id": "r1", "scenario": "s", "assertion": "payment_link_created", "passed": True}])
    [truth] = truth_ratings(rubric, assertions).to_dict("records")
    assert (truth["criterion"], truth["rater"], bool(truth["passed"])) == ("One Pix link", "database", False)


def test_a_snapshot_sees_one_state_and_on_postgres_refuses_writes(store: Store, run_ids: list[str]) -> None:
    seeded = seed_run(store, clinic_scenario())
    run_ids.append(seeded.run_id)
    row = {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id,
           "reason": "r", "created_at": "2026-03-01T10:00:00Z"}
    count = f"SELECT count(*) FROM handoffs {PICK}"
    with store.snapshot():
        assert store.query(count, {"run_id": seeded.run_id}) == [(0,)]
        if store.backend == "postgres":
            with pytest.raises(StoreError, match="read-only transaction"):
                store.insert("handoffs", row)
    store.insert("handoffs", row)  # after the snapshot, writes work again
    assert store.query(count, {"run_id": seeded.run_id}) == [(1,)]
