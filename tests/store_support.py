"""Shared fixtures of the store tests: the same test functions run on SQLite and, when configured, on Postgres.

Postgres tests need ``CONVOEVAL_TEST_POSTGRES_URL``; ``eval "$(scripts/ci-postgres.sh)"`` starts the local
cluster and prints it. The Postgres database may be shared with other test runs, so every test scopes what it
checks to its own run ids and cleans them up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from convoeval.scenarios import Scenario, load_scenario_file, parse_scenario
from convoeval.store import TABLES, Store, cleanup_run, open_store

PG_URL = os.environ.get("CONVOEVAL_TEST_POSTGRES_URL")
PG_SKIP = 'set CONVOEVAL_TEST_POSTGRES_URL to run the Postgres tests (eval "$(scripts/ci-postgres.sh)" sets it)'
ROOT = Path(__file__).resolve().parents[1]
BILLING_HAPPY = ROOT / "evals/scenarios/billing/conv-happy-payment.yaml"

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module", params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
    if not PG_URL:
        require_postgres()
    return PG_URL


def require_postgres() -> None:
    """Skip a Postgres test when no server is configured; fail instead under CONVOEVAL_REQUIRE_POSTGRES (CI)."""
    if PG_URL:
        return
    if os.environ.get("CONVOEVAL_REQUIRE_POSTGRES"):
        pytest.fail("CONVOEVAL_REQUIRE_POSTGRES is set but CONVOEVAL_TEST_POSTGRES_URL is not")
    pytest.skip(PG_SKIP)


@pytest.fixture(scope="module")
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()


@pytest.fixture
def run_ids(store: Store) -> Iterator[list[str]]:
    """Run ids a test registers here are cleaned up after it, whatever happens."""
    ids: list[str] = []
    yield ids
    for run_id in ids:
        cleanup_run(store, run_id)


def billing_scenario() -> Scenario:
    return load_scenario_file(BILLING_HAPPY)


def clinic_scenario(**overrides: object) -> Scenario:
    """A scenario using every fixture table, with references between them."""
    raw = {
        "type": "conversational",
        "id": "store-test-clinic",
        "agent": "scheduling",
        "locale": "en",
        "description": "store test",
        "persona": {"name": "Ana Souza", "phone": "11987650099", "cpf": "12345678901"},
        "goal": "book",
        "rubric": ["books"],
        "fixtures": {
            "clinic": {"name": "Clinica Teste"},
            "professionals": [{"id": "dr-a", "name": "Dr A", "specialty": "derm"}, {"id": "dr-b", "name": "Dr B"}],
            "services": [{"id": "consult", "name": "Consulta", "duration_min": 45, "price_cents": 20000}],
            "slots": [
                {"id": "s1", "professional_id": "dr-a", "service_id": "consult", "starts_at": "2026-03-10T09:00"},
                {"id": "s2", "professional_id": "dr-b", "starts_at": "2026-03-10T10:00", "available": False},
            ],
            "appointments": [
                {"id": "ap1", "professional_id": "dr-a", "service_id": "consult", "starts_at": "2026-03-12T14:00"}
            ],
            "invoices": [
                {"id": "inv-late", "amount_cents": 9000, "due_date": "2026-03-01", "status": "paid"},
                {"id": "inv-early", "amount_cents": 15000, "due_date": "2026-02-20"},
            ],
        },
    }
    raw.update(overrides)
    return parse_scenario(raw)


def rows_of_run(store: Store, run_id: str) -> dict[str, int]:
    """How many rows each table holds for ``run_id`` (tables with none are left out)."""
    counts = {t: len(store.select(t, {"run_id": run_id})) for t in TABLES}
    return {t: n for t, n in counts.items() if n}
