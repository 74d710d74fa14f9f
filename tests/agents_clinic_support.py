"""Shared helpers of the clinic tools and reference agent tests: a store per test, seeded runs, a scripted chat.

The same tests run on SQLite (always) and on Postgres when ``CONVOEVAL_TEST_POSTGRES_URL`` is set
(``eval "$(scripts/ci-postgres.sh)"``); every test works inside its own seeded run and removes it afterwards.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from convoeval.agents.base import Agent, AgentReply, AgentSession
from convoeval.channel import parts_as_dicts
from convoeval.pathcheck import check_whatsapp_limits
from convoeval.scenarios import Scenario, load_scenario_file, parse_scenario
from convoeval.store import Store, check_assertions, cleanup_run, open_store, record_message, seed_run
from convoeval.store.fixtures import SeededRun

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "evals" / "scenarios"
PG_URL = os.environ.get("CONVOEVAL_TEST_POSTGRES_URL")
URL_RE = re.compile(r"https?://\S+")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    # One store per module: tests are isolated by their own seeded runs, as concurrent real runs are.
    if request.param == "postgres" and not PG_URL:
        pytest.skip('set CONVOEVAL_TEST_POSTGRES_URL (eval "$(scripts/ci-postgres.sh)") to run on Postgres')
    url = PG_URL if request.param == "postgres" else f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
    s = open_store(url)
    yield s
    s.close()


def load(relative: str) -> Scenario:
    """A scenario file under ``evals/scenarios``."""
    return load_scenario_file(SCENARIOS / relative)


def scenario(agent: str = "billing", locale: str = "pt-BR", **fixtures: Any) -> Scenario:
    """A minimal conversational scenario for ``agent`` with the given fixtures."""
    return parse_scenario(
        {
            "type": "conversational",
            "id": f"test-{agent}-{locale.lower()}",
            "agent": agent,
            "locale": locale,
            "description": "test",
            "persona": {"name": "Ana Souza", "phone": "11987650099", "cpf": "12345678901"},
            "goal": "test",
            "rubric": ["test"],
            "fixtures": {"clinic": {"name": "Clínica Sorriso"}, **fixtures},
        }
    )


def session_for(store: Store, seeded: SeededRun, sc: Scenario) -> AgentSession:
    return AgentSession(
        run_id=seeded.run_id,
        clinic_id=seeded.clinic_id,
        patient_id=seeded.patient_id,
        patient_phone=sc.persona.phone,
        patient_name=sc.persona.name,
        locale=sc.locale,
        agent=sc.agent,
        store=store,
    )


@dataclass
class Chat:
    """One seeded run and one conversation with an agent, logged like the runner logs it."""

    store: Store
    agent: Agent
    scenario: Scenario
    seeded: SeededRun
    session: AgentSession
    replies: list[AgentReply] = field(default_factory=list)

    async def say(self, text: str) -> AgentReply:
        turn = len(self.replies)
        reply = await self.agent.respond(text, self.session)
        self.session.conversation_id = reply.conversation_id
        record_message(self.store, self.seeded, reply.conversation_id, "patient", text, turn=turn)
        record_message(self.store, self.seeded, reply.conversation_id, "agent", reply.text, reply.tool_names, turn)
        self.replies.append(reply)
        return reply

    async def script(self, *lines: str) -> list[AgentReply]:
        return [await self.say(line) for line in lines]

    def results(self, assertions: Any = None) -> list[Any]:
        """The scenario's (or the given) assertions checked as the runner checks them: the database's, then
        WhatsApp's limits on the replies' messages."""
        declared = assertions if assertions is not None else self.scenario.assertions
        limits = declared.get("whatsapp_limits") if isinstance(declared, dict) else declared.checks().get("whatsapp_limits")
        rows = [{"turn": n, "role": "agent", "parts": parts_as_dicts(r.parts)} for n, r in enumerate(self.replies, 1)]
        return check_assertions(self.store, declared, self.seeded) + check_whatsapp_limits(rows, limits)

    def check(self, assertions: Any = None) -> dict[str, bool]:
        """``{assertion key: passed}`` for the scenario's assertions (or the ones given)."""
        return {r.key: r.passed for r in self.results(assertions)}

    def details(self, assertions: Any = None) -> list[str]:
        return [r.detail for r in self.results(assertions) if not r.passed]

    @property
    def transcript(self) -> str:
        return "\n".join(r.text for r in self.replies)

    @property
    def tools(self) -> list[str]:
        return [name for r in self.replies for name in r.tool_names]

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.store.select(table, {"run_id": self.seeded.run_id})


@pytest.fixture
def chats(store: Store) -> Iterator[Any]:
    """``chats(agent, scenario) -> Chat``; every run it seeds is cleaned up after the test."""
    runs: list[str] = []

    def start(agent: Agent, sc: Scenario) -> Chat:
        seeded = seed_run(store, sc)
        runs.append(seeded.run_id)
        return Chat(store, agent, sc, seeded, session_for(store, seeded, sc))

    yield start
    for run_id in runs:
        cleanup_run(store, run_id)


async def run_scripted(chat: Chat) -> list[str]:
    """Play a scripted scenario's turns; every failed expectation (as the engine checks them), as ``turn N: …``."""
    from convoeval.judges.turn import check_turn

    failures = []
    for n, turn in enumerate(chat.scenario.turns, start=1):  # type: ignore[union-attr]
        reply = await chat.say(turn.user)
        failures += [f"turn {n} ({turn.user!r}): {p} in {reply.text!r}" for p in check_turn(turn.expect, reply)]
    return failures
