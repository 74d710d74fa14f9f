"""Faults survived: sweeps where LLM and agent calls fail end every conversation finished or ``error`` with its
reason — none lost, none silently passed — and permanent failures give a clear error and a non-zero exit.

The LLM side is ``convoeval.testing.FakeOpenAIServer`` (429 with Retry-After, 500, timeouts, dropped
connections, malformed or truncated JSON, empty replies, refusals), the agent side ``FaultyAgent`` (a webhook on
127.0.0.1). Figures of each sweep are printed and, with ``$CONVOEVAL_RELIABILITY_FIGURES`` set, appended there.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import time
from collections import Counter

import pandas as pd
import pytest
from test_reliability_support import (
    RETRYABLE,
    SCENARIOS,
    FaultyAgent,
    assert_no_traceback,
    clean_env,
    cli,
    fake_responder,
    llm_responder,
    read_runs,
    record_figures,
    run_args,
    run_files,
)

from convoeval import llm, load_results
from convoeval.llm import retries
from convoeval.pipeline import EvalConfig, plan, run_eval
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.pipeline.execute import select_scenarios
from convoeval.scenarios import parse_scenario
from convoeval.store import TABLES, open_store
from convoeval.testing import FakeChatModel, FakeOpenAIServer

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

#: About one call in five fails, in every way a flaky OpenAI-compatible server does.
TRANSIENT_MIX = {"429": 0.06, "500": 0.04, "timeout": 0.03, "drop": 0.04, "malformed": 0.03, "truncated": 0.03,
                 "empty": 0.01, "refusal": 0.01}
STATUSES = {"pass", "warn", "fail", "error"}
#: What an errored run's reason must say: which layer failed (never a bare KeyError or TypeError).
KNOWN_REASON = ("LLM error", "judge", "simulator", "agent error")


def closed_port() -> int:
    """A local port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def fast_retries(monkeypatch):
    """Real retry semantics with millisecond waits, so a faulty sweep takes seconds, not minutes."""
    policy = llm.RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.05, retry_after_cap=0.2)
    monkeypatch.setattr(retries, "_default_policy", lambda: policy)  # where acall_model reads it
    return policy


@pytest.fixture
def llm_env(monkeypatch, tmp_path):
    """Point get_model at a local fake server (set OPENAI_BASE_URL yourself) with no key, cache or shared state."""
    for name in ("OPENAI_API_KEY", "CONVOEVAL_STORE_URL", "CONVOEVAL_SIMULATOR_MODEL", "CONVOEVAL_JUDGE_MODEL",
                 "CONVOEVAL_SIMULATOR_BASE_URL", "CONVOEVAL_JUDGE_BASE_URL", "CONVOEVAL_LOCAL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    monkeypatch.setenv("CONVOEVAL_LLM_TIMEOUT", "0.5")
    return monkeypatch


def assert_nothing_silently_passed(frames: dict[str, pd.DataFrame]) -> None:
    """Every run not in error was judged completely: each criterion has a verdict, each dimension a score."""
    scores = frames.scores.set_index("run_id")
    runs = frames.runs.set_index("run_id")
    for run_id, score in scores.iterrows():
        if score["status"] == "error":
            assert isinstance(score["error"], str) and score["error"], run_id
            assert math.isnan(score["score"]), (run_id, score["score"])
            continue
        assert pd.isna(score["error"]), (run_id, score["error"])
        if runs.loc[run_id, "type"] == "conversational":
            rubric = frames.rubric[frames.rubric["run_id"] == run_id]
            assert len(rubric) == score["rubric_total"] > 0 and rubric["passed"].notna().all(), run_id
            assert rubric["error"].isna().all(), run_id
            holistic = frames.holistic[frames.holistic["run_id"] == run_id]
            assert len(holistic) == 1 and holistic["error"].isna().all(), run_id
        else:
            turns = frames.turns[frames.turns["run_id"] == run_id]
            assert len(turns) > 0 and turns["error"].isna().all(), run_id


async def test_llm_fault_sweep_loses_nothing_and_passes_nothing_silently(llm_env, fast_retries, tmp_path):
    """A billing sweep (conversational and scripted, 3 seeds) with ~20% of LLM calls failing transiently."""
    with FakeOpenAIServer(responder=llm_responder, fault_rate=TRANSIENT_MIX, seed=2, retry_after=0.02,
                          hang_s=3) as server:
        llm_env.setenv("OPENAI_BASE_URL", server.base_url)
        out = tmp_path / "out"
        config = EvalConfig(agent="billing", seed=[1, 2, 3], scenarios_dir=str(SCENARIOS), concurrency=6,
                            output_dir=str(out))
        started = time.perf_counter()
        outcome = await asyncio.wait_for(asyncio.to_thread(
            run_eval, config, store_url=f"sqlite:///{tmp_path / 'store.db'}", progress=False), timeout=120)
        elapsed = time.perf_counter() - started
        stats = {"requests": server.stats["requests"], "faults": dict(server.stats["faults"])}

    jobs = plan(select_scenarios(config), seeds=config.seeds)
    frames = outcome.frames
    # None lost: one file, one run row and one score row per job, each key exactly once.
    assert {p.stem for p in run_files(out)} == {j.key for j in jobs}
    assert len(frames.runs) == len(frames.scores) == len(jobs)
    assert frames.scores["run_id"].is_unique
    assert set(frames.scores["status"]) <= STATUSES
    assert_nothing_silently_passed(frames)
    errored = frames.scores[frames.scores["status"] == "error"]
    for reason in errored["error"]:
        assert any(label in reason for label in KNOWN_REASON), reason
    # A call that failed for good (after its retries) always shows in its run's status.
    calls = frames.calls
    failed_calls = calls[calls["error"].notna()] if "error" in calls else calls.iloc[0:0]
    runs_by_scenario = frames.scores.set_index(["scenario", "seed", "trial"])["status"]
    for _, call in failed_calls.iterrows():
        assert runs_by_scenario.loc[(call["scenario"], call["seed"], call["trial"])] == "error", call.to_dict()
    # The faults really happened, at about the intended rate.
    injected = sum(stats["faults"].values())
    assert 0.1 <= injected / stats["requests"] <= 0.3, stats
    assert len(stats["faults"]) >= 5, stats  # most kinds of fault, not just one
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:  # every run cleaned up after itself, errors included
        assert sum(len(store.select(t)) for t in TABLES) == 0
    record_figures(
        "llm_fault_sweep", jobs=len(jobs), llm_requests=stats["requests"], calls_injected_to_fail=injected,
        faults_by_kind=stats["faults"], calls_failed_after_retries=len(failed_calls),
        finished=int((frames.scores["status"] != "error").sum()), errored=len(errored),
        lost=len(jobs) - len(run_files(out)), statuses=dict(Counter(frames.scores["status"])),
        error_reasons=dict(Counter(" ".join(r.split()[:6]) for r in errored["error"])), seconds=round(elapsed, 1),
    )


# ── The agent side: a webhook that misbehaves ──

#: What the reason of a conversation ended by each agent fault says.
AGENT_REASON = {
    "429": "answered HTTP 429", "503": "answered HTTP 503", "500": "answered HTTP 500", "401": "answered HTTP 401",
    "timeout": "did not answer within", "drip": "did not answer within", "drop": "HTTP failure",
    "truncated": "HTTP failure", "malformed": "invalid JSON", "empty": "invalid JSON", "html": "invalid JSON",
    "missing_fields": "broke the reply protocol", "wrong_types": "broke the reply protocol",
    "not_utf8": "not UTF-8", "huge": "over the limit", "huge_chunked": "over the limit",
}
AGENT_PLANS = (
    [{}] * 14
    + [{1: ["429"]}, {2: ["429"]}, {3: ["503"]}, {1: ["429", "503"]}, {2: ["503", "429"]}]  # retried, recovered
    + [{2: ["429", "429", "429"]}]  # more than the adapter's two retries: the 429 stands
    + [{2: ["500"]}, {1: ["timeout"]}, {2: ["drop"]}, {3: ["truncated"]}, {1: ["malformed"]}, {2: ["empty"]},
       {3: ["missing_fields"]}, {1: ["wrong_types"]}, {2: ["not_utf8"]}, {3: ["html"]}, {1: ["huge"]},
       {2: ["huge_chunked"]}, {1: ["drip"]}, {2: ["401"]}, {1: ["429"], 3: ["500"]}]
)


def webhook_scenario():
    return parse_scenario({
        "type": "conversational", "id": "reliability-webhook-faults", "agent": "billing", "locale": "pt-BR",
        "description": "a patient pays; the agent is a webhook that sometimes misbehaves",
        "persona": {"name": "Lucia Ferreira", "phone": "11987650020"},
        "goal": "pay the pending invoice", "max_turns": 6,
        "rubric": ["The agent answered every message", "The agent was polite"],
    })


def expected_outcome(plan_: dict[int, list[str]]) -> tuple[bool, str | None]:
    """(errors, the fault that ends it): the first turn whose faults the adapter cannot retry past."""
    for turn in sorted(plan_):
        faults = plan_[turn]
        final = next((f for f in faults if f not in RETRYABLE), None)
        if final is not None:
            return True, final
        if len(faults) > 2:  # the adapter retries a 429/503 twice
            return True, faults[2]
    return False, None


async def test_agent_fault_sweep_ends_each_broken_conversation_as_error_with_its_reason(
        monkeypatch, tmp_path):
    # 5 s: a healthy answer from the agent in this process must beat it even on a loaded 2-core CI machine (at 2 s,
    # a reply could be reported late); the hung requests (timeout, drip) are held 15 s, so only the deadline ends them.
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "5")
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    sc = webhook_scenario()
    jobs = plan([sc], seeds=list(range(len(AGENT_PLANS))))
    out = tmp_path / "out"
    with FaultyAgent(AGENT_PLANS, retry_after=0.02, hang_s=15) as agent, \
            open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        options = RunOptions(target=agent.url, simulator_model=FakeChatModel(responder=fake_responder),
                             judge_model=FakeChatModel(responder=fake_responder), store=store)
        started = time.perf_counter()
        batch = await asyncio.wait_for(arun_batch(jobs, options=options, out_dir=out, concurrency=12,
                                                  progress=False), timeout=120)
        elapsed = time.perf_counter() - started
        leftover = sum(len(store.select(t)) for t in TABLES)
    assert batch.ran == len(jobs)
    frames = load_results(out).frames
    assert {p.stem for p in run_files(out)} == {j.key for j in jobs}  # none lost
    assert set(agent.plan_of) == set(frames.scores["run_id"])  # every conversation reached the agent
    assert_nothing_silently_passed(frames)
    scores = frames.scores.set_index("run_id")
    for run_id, plan_ in agent.plan_of.items():
        errors, fault = expected_outcome(plan_)
        status, reason = scores.loc[run_id, "status"], scores.loc[run_id, "error"]
        if errors:
            assert status == "error", (plan_, status)
            assert "agent error" in reason and AGENT_REASON[fault] in reason, (plan_, reason)
        else:
            assert status != "error", (plan_, reason)
        transcript = frames.transcripts[frames.transcripts["run_id"] == run_id]
        agent_lines = transcript[transcript["role"] == "agent"]["text"].tolist()
        assert agent_lines == agent.replies[run_id]  # what the agent said, and only that, was recorded
    assert leftover == 0
    assert elapsed < 60  # bounded: the hung conversations ran side by side (their reasons above show the deadline)
    injected = agent.faults_served()
    record_figures(
        "agent_fault_sweep", jobs=len(jobs), agent_requests=len(agent.served), calls_injected_to_fail=injected,
        faults_by_kind=dict(Counter(o for *_, o in agent.served if o != "ok")),
        finished=int((frames.scores["status"] != "error").sum()),
        errored=int((frames.scores["status"] == "error").sum()), lost=len(jobs) - len(run_files(out)),
        seconds=round(elapsed, 1),
    )


# ── Through the command line ──


def test_cli_sweep_with_transient_faults_finishes_every_run_without_a_traceback(tmp_path):
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=llm_responder, fault_rate=TRANSIENT_MIX, seed=3, retry_after=0.05,
                          hang_s=3) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url, CONVOEVAL_LLM_TIMEOUT="0.5")
        proc = cli(*run_args(out, "--type", "conversational", "--seed", "1,2", "--concurrency", "6"), env=env,
                   timeout=120)
        injected = sum(server.stats["faults"].values())
    assert_no_traceback(proc)
    report_path = out / "report.json"
    errored = [s for s in json.loads(report_path.read_text())["scores"] if s["status"] == "error"]
    assert proc.returncode == (3 if errored else 0), proc.stderr[-2000:]  # 3: some conversation ended in error
    jobs = 3 * 2  # three conversational billing scenarios × two seeds
    runs = read_runs(out)
    assert len(runs) == jobs
    assert f"{jobs} run(s):" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert len(report["scores"]) == jobs
    for score in report["scores"]:
        assert score["status"] in STATUSES
        assert (score["status"] == "error") == bool(score["error"]), score
    assert injected > 0


def _judge_garbage(request):
    return "I think it went fine, 10/10!" if request.get("tools") else llm_responder(request)


PERMANENT = {
    # name: (what breaks, text the summary and report must show)
    "llm-401": ("llm", "401"),
    "llm-down": ("llm-down", "connection error"),
    "judge-garbage": ("judge", "judge"),
    "agent-500": ("agent", "answered HTTP 500"),
    "agent-down": ("agent-down", "unreachable"),
}


@pytest.mark.parametrize("case", list(PERMANENT))
def test_a_permanent_failure_is_a_clear_error_and_a_non_zero_exit(case, tmp_path):
    kind, shown = PERMANENT[case]
    out = tmp_path / "out"
    extra: list[str] = ["--seed", "1", "--fail-threshold", "5"]
    responder = _judge_garbage if kind == "judge" else llm_responder
    faults = {"401": 1.0} if kind == "llm" else None
    with FakeOpenAIServer(responder=responder, fault_rate=faults) as server, FaultyAgent(always="500") as agent:
        base_url = f"http://127.0.0.1:{closed_port()}/v1" if kind == "llm-down" else server.base_url
        if kind == "agent":
            extra += ["--target", agent.url]
        if kind == "agent-down":
            extra += ["--target", f"http://127.0.0.1:{closed_port()}/hook"]
        env = clean_env(tmp_path, OPENAI_BASE_URL=base_url, CONVOEVAL_LLM_ATTEMPTS="2")
        proc = cli(*run_args(out, *extra), env=env, timeout=120)
    assert_no_traceback(proc)
    # Every conversation ended in error: the evaluation's own failure (3), which a threshold gate (1) does not mask.
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads((out / "report.json").read_text())
    jobs = 6  # the six billing scenarios, one seed
    assert len(report["scores"]) == jobs
    for score in report["scores"]:
        assert score["status"] == "error" and shown in score["error"], score
    rows = [line for line in proc.stdout.splitlines() if "billing-" in line]
    assert len(rows) == jobs and all("ERR" in row and shown in row for row in rows), proc.stdout
    assert f"{jobs} error" in proc.stdout


def _fail_before_seeding(tmp_path, seeds):
    """Runs that fail before their fixtures are seeded: a target that cannot be imported, given to the batch directly
    (``convoeval run`` refuses it up front since runs.build_agents, so only a library caller can still get here)."""
    from convoeval.scenarios import load_scenarios

    scenarios = load_scenarios(SCENARIOS, agent="billing", type="conversational")
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        options = RunOptions(target="no_such_module_xyz:respond", simulator_model=FakeChatModel(),
                             judge_model=FakeChatModel(), store=store)
        batch = asyncio.run(arun_batch(plan(scenarios, seeds=seeds), options=options, out_dir=tmp_path / "out",
                                       progress=False))
    finally:
        store.close()
    return batch.frames()


def test_an_error_before_seeding_shows_its_reason_in_the_summary(tmp_path):
    from convoeval.pipeline.summary import summary_lines

    frames = _fail_before_seeding(tmp_path, seeds=[1])
    assert frames.runs["run_id"].notna().all() and frames.runs["run_id"].nunique() == 3
    rows = [line for line in summary_lines(frames) if "billing-" in line]
    assert len(rows) == 3
    assert all("no_such_module_xyz" in row for row in rows), rows


def test_report_json_keeps_one_entry_per_run_when_runs_fail_before_seeding(tmp_path):
    from convoeval.pipeline.summary import save_json_report

    frames = _fail_before_seeding(tmp_path, seeds=[1, 2])
    report = json.loads(save_json_report(frames, tmp_path / "report.json", meta={}).read_text())
    assert len(report["scores"]) == 6
    assert len(report["runs"]) == 6, [r.get("run", {}).get("run_id") for r in report["runs"]]
