"""Concurrency: many conversations of the same scenario at once against one store.

No cross-talk (each transcript, each simulator prompt and each judge prompt holds its own run's messages only), no
fixture collisions (each run sees exactly its own seeded rows, though every run seeds the same persona phone and
fixture ids), and every run's cleanup exact (zero rows left with its run id, rows no run seeded untouched).
On SQLite, and on Postgres when ``CONVOEVAL_TEST_POSTGRES_URL`` is set (the database may be shared with other test
runs, so every check is scoped to this test's run ids).
"""

from __future__ import annotations

import asyncio
import random
import re
import time
import uuid
from collections import Counter
from typing import Any

import pytest
from store_support import PG_URL, require_postgres
from test_reliability_support import SCENARIOS, fake_responder, record_figures

from convoeval import load_results
from convoeval.agents.base import AgentReply, AgentSession, ToolCall
from convoeval.pipeline import plan
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.scenarios import load_scenarios
from convoeval.store import TABLES, open_store
from convoeval.testing import FakeChatModel

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

SCENARIO = "billing-conv-happy-payment"
RUN_ID = re.compile(r"\b[0-9a-f]{32}\b")
SEEDS, TRIALS = 12, 2  # 24 conversations of one scenario, all in flight at once


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    if request.param == "postgres":
        require_postgres()
    url = PG_URL if request.param == "postgres" else f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as s:
        yield s


def rows_of(store, run_ids) -> int:
    return sum(len(store.select(t, {"run_id": rid})) for t in TABLES for rid in run_ids)


def foreign_rows(store) -> str:
    """Rows with a run id no ``runs`` row knows (another tool's data): cleanup must never touch them."""
    foreign = f"foreign-{uuid.uuid4().hex}"
    clinic = uuid.uuid4().hex
    store.insert("clinics", {"id": clinic, "run_id": foreign, "name": "Someone else's clinic"})
    store.insert("patients", {"id": uuid.uuid4().hex, "run_id": foreign, "clinic_id": clinic, "name": "Lucia Ferreira",
                              "phone": "11987650020"})  # the very persona the runs seed
    return foreign


class EchoAgent:
    """An agent that echoes its session's run id and checks, at every turn, that it sees only its own rows."""

    name = "echo-agent"

    def __init__(self, invoices: int) -> None:
        self.invoices = invoices
        self.problems: list[str] = []
        self.clinics: dict[str, str] = {}
        self.turns: Counter[str] = Counter()

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        await asyncio.sleep(random.uniform(0, 0.02))  # let the other conversations interleave
        await asyncio.to_thread(self._check_and_write, session)
        return AgentReply(bubbles=[f"[{session.run_id}] got {message!r}"],
                          tool_calls=[ToolCall(name="request_handoff", arguments={"turn": self.turns[session.run_id]})],
                          conversation_id=f"conv-{session.run_id}")

    def _check_and_write(self, s: AgentSession) -> None:
        store, rid = s.store, s.run_id
        self.turns[rid] += 1
        if self.clinics.setdefault(rid, s.clinic_id) != s.clinic_id:
            self.problems.append(f"{rid}: clinic changed mid-conversation")
        patients = store.select("patients", {"clinic_id": s.clinic_id})
        if [(p["id"], p["run_id"]) for p in patients] != [(s.patient_id, rid)]:
            self.problems.append(f"{rid}: patients of its clinic are {patients}")
        same_phone = [p for p in store.select("patients", {"phone": s.patient_phone}) if p["run_id"] == rid]
        if len(same_phone) != 1:
            self.problems.append(f"{rid}: {len(same_phone)} patients with its phone and run id")
        invoices = store.select("invoices", {"clinic_id": s.clinic_id})
        if len(invoices) != self.invoices or {i["run_id"] for i in invoices} != {rid}:
            self.problems.append(f"{rid}: invoices of its clinic are {invoices}")
        handoffs = store.select("handoffs", {"clinic_id": s.clinic_id})
        if len(handoffs) != self.turns[rid] - 1 or any(h["run_id"] != rid for h in handoffs):
            self.problems.append(f"{rid}: handoffs of its clinic are {handoffs}")
        messages = store.select("messages", {"run_id": rid})
        if any(rid not in m["text"] for m in messages if m["role"] == "agent"):
            self.problems.append(f"{rid}: a message of another run is recorded under its id")
        store.insert("handoffs", {"id": uuid.uuid4().hex, "run_id": rid, "clinic_id": s.clinic_id,
                                  "patient_id": s.patient_id, "conversation_id": s.conversation_id,
                                  "reason": f"echo {rid}", "created_at": "2026-01-01T00:00:00+00:00"})


class PromptWatcher:
    """Wraps a responder; records the run ids each prompt mentions (a prompt mixing two runs is cross-talk)."""

    def __init__(self, answer_with=fake_responder) -> None:
        self.answer_with = answer_with
        self.seen: list[set[str]] = []

    def __call__(self, messages: list[Any], kwargs: dict[str, Any]) -> Any:
        text = "\n".join(str(m.content) for m in messages)
        self.seen.append(set(RUN_ID.findall(text)))
        return self.answer_with(messages, kwargs)


def echoing_patient(messages: list[Any], kwargs: dict[str, Any]) -> str:
    """The patient repeats the run id the agent told it, then ends after three messages."""
    agent_lines = [str(m.content) for m in messages if m.type == "human"]
    said = sum(1 for m in messages if m.type == "ai")
    if said >= 3:
        return "Obrigada! [GOAL_COMPLETE]"
    ids = RUN_ID.findall(agent_lines[-1]) if said else []
    return f"ack {ids[0]} #{said}" if ids else "Oi, quero pagar minha fatura"


async def test_concurrent_runs_of_one_scenario_never_cross_talk_and_clean_up_exactly(store, tmp_path):
    scenario = load_scenarios(SCENARIOS, scenario=SCENARIO)[0]
    agent = EchoAgent(invoices=len(scenario.fixtures.invoices))
    simulator, judge = PromptWatcher(echoing_patient), PromptWatcher()
    foreign = foreign_rows(store)
    jobs = plan([scenario], seeds=list(range(SEEDS)), trials=TRIALS)
    # The patient is mechanical on purpose ("ack <run id> #n"): the simulator-failure gate would rightly call it a
    # loop now and then. This test is about isolation between runs, so the gate is off.
    options = RunOptions(target="echo", agents={"echo": agent}, simulator_model=FakeChatModel(responder=simulator),
                         judge_model=FakeChatModel(responder=judge), store=store, gate=None)
    try:
        started = time.perf_counter()
        await asyncio.wait_for(arun_batch(jobs, options=options, out_dir=tmp_path / "out", concurrency=len(jobs),
                                          progress=False), timeout=120)
        elapsed = time.perf_counter() - started
        frames = load_results(tmp_path / "out").frames
        run_ids = set(frames.runs["run_id"])
        assert len(run_ids) == len(jobs) and set(frames.runs["status"]) == {"completed"}
        assert agent.problems == []
        assert len(set(agent.clinics.values())) == len(jobs)  # one clinic per run, none shared
        for run_id, transcript in frames.transcripts.groupby("run_id"):
            mentioned = set(RUN_ID.findall(" ".join(transcript["text"])))
            assert mentioned == {run_id}, (run_id, mentioned)
            assert list(transcript["role"]) == ["patient", "agent"] * 3 + ["patient"]
        assert all(len(ids) <= 1 for ids in simulator.seen), [ids for ids in simulator.seen if len(ids) > 1]
        judged = [ids for ids in judge.seen]
        assert len(judged) == 2 * len(jobs) and all(len(ids) == 1 for ids in judged)
        assert Counter(i for ids in judged for i in ids) == dict.fromkeys(run_ids, 2)  # rubric + holistic each
        assert rows_of(store, run_ids) == 0  # every run's cleanup exact
        assert len(store.select("patients", {"run_id": foreign})) == 1  # and nothing else touched
    finally:
        for table in ("patients", "clinics"):
            store.delete(table, {"run_id": foreign})
    record_figures("concurrency_echo", backend=store.backend, conversations=len(jobs), in_flight=len(jobs),
                   cross_talk=0, rows_left=0, seconds=round(elapsed, 1))


async def test_concurrent_runs_of_the_reference_agent_each_pay_their_own_invoice(store, tmp_path):
    """The clinic billing agent, 16 runs at once: each run's database assertion sees its own payment link only."""
    scenario = load_scenarios(SCENARIOS, scenario=SCENARIO)[0]
    jobs = plan([scenario], seeds=list(range(16)))
    options = RunOptions(simulator_model=FakeChatModel(responder=fake_responder),
                         judge_model=FakeChatModel(responder=fake_responder), store=store)
    await asyncio.wait_for(arun_batch(jobs, options=options, out_dir=tmp_path / "out", concurrency=len(jobs),
                                      progress=False), timeout=120)
    frames = load_results(tmp_path / "out").frames
    assert set(frames.scores["status"]) == {"pass"}, frames.scores[["status", "error"]]
    asserted = frames.assertions
    assert len(asserted) == 5 * len(jobs) and asserted["passed"].all()  # payment_link_created and 4 path rows
    links = [t for t in frames.transcripts["text"] if "https://pay.clinic.example/" in t]
    urls = [re.search(r"https://pay\.clinic\.example/\S+", t).group(0) for t in links]
    assert len(set(urls)) == len(jobs)  # one distinct link per run: no run answered with another's
    assert rows_of(store, set(frames.runs["run_id"])) == 0
