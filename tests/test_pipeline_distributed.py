"""Several worker processes and a Dask cluster give the same results as one process, lose nothing, share budgets.

Every test talks to a fake OpenAI-compatible server on 127.0.0.1 in this process; Dask workers are separate
processes that reach it over HTTP and inherit this environment (no key, no secret in any task).
"""

from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distributed_support import _RANDOM_TOKENS, KILL_MARKER_ENV, varied_responder

from convoeval.pipeline import ConfigError, EvalConfig, run_eval
from convoeval.pipeline.distributed import chunk_size
from convoeval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DASK = Path(sys.executable).with_name("dask")
COMPARED = ["scenario", "seed", "trial", "status", "score", "rubric_passed", "rubric_total", "holistic_overall",
            "assertion_failures", "goal_completed"]

pytestmark = pytest.mark.distributed


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A fake LLM for every role, a test-only state folder, and worker processes able to import the test helpers."""
    with FakeOpenAIServer(responder=varied_responder) as server:
        for name in [n for n in os.environ if n.startswith(("OPENAI_", "CONVOEVAL_"))]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
        monkeypatch.setenv("CONVOEVAL_CACHE", "off")  # every run really talks: no run replays another
        # A call the test server never answers (seen once: a worker's request stuck half-sent on a loaded machine) is
        # retried after 20 s instead of the default 300 s, so a test can never hang for many minutes.
        monkeypatch.setenv("CONVOEVAL_LLM_TIMEOUT", "20")
        monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
        monkeypatch.chdir(ROOT)
        yield server


def _scores(result):
    frame = result.frames.scores[COMPARED].sort_values(["scenario", "seed", "trial"], ignore_index=True)
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _config(tmp_path, name, **more):
    return EvalConfig(**{"agent": "billing", "seed": [1, 2], "concurrency": 6, "output_dir": str(tmp_path / name), **more})


def test_two_worker_processes_give_the_same_results_as_one_process(env, tmp_path):
    one = run_eval(_config(tmp_path, "one"), progress=False, allow_errors=True)
    two = run_eval(_config(tmp_path, "two", workers=2), progress=False, allow_errors=True)
    assert len(one.scores) == 12 and not (one.scores["status"] == "error").any()
    assert _scores(two) == _scores(one)
    assert len({s["score"] for s in _scores(one)}) > 1  # the scores differ between conversations: a real comparison
    # The same messages, but for the payment links' random tokens.
    texts = lambda r: sorted(_RANDOM_TOKENS.sub("…", t) for t in r.frames.transcripts["text"])  # noqa: E731
    assert texts(two) == texts(one)
    assert two.meta["workers"] == 2 and one.meta["workers"] == 1
    # Many in flight: several conversations per Dask task (chunk_size), the same results, each conversation once.
    chunked = run_eval(_config(tmp_path, "chunked", workers=2, concurrency=16), progress=False, allow_errors=True)
    assert chunk_size(16, 2) == 2
    assert _scores(chunked) == _scores(one)
    assert len(list((tmp_path / "chunked" / "runs").glob("*.json"))) == 12


def test_a_killed_worker_loses_no_conversation_and_duplicates_none(env, tmp_path, monkeypatch):
    marker = tmp_path / "killed"
    # Set after the earlier tests' clusters: the workers must see this run's environment (their fork server is
    # started per run; a server kept from an earlier run would fork workers without this variable).
    monkeypatch.setenv(KILL_MARKER_ENV, str(marker))
    config = EvalConfig(agent="billing", type="conversational", seed=[1, 2, 3], concurrency=4, workers=2,
                        target="distributed_support:respond", output_dir=str(tmp_path / "out"))
    result = run_eval(config, progress=False, allow_errors=True)
    assert marker.exists()  # a worker really died mid-conversation
    files = sorted(p.stem for p in (tmp_path / "out" / "runs").glob("*.json"))
    assert len(files) == 9 == len(set(files))  # 3 scenarios × 3 seeds, each exactly once
    assert result.scores["run_id"].is_unique and len(result.scores) == 9
    assert not (result.scores["status"] == "error").any(), result.scores[["scenario", "error"]]


def test_the_call_budget_is_global_across_workers(env, tmp_path, monkeypatch):
    env.latency = 0.15  # calls overlap, so the budget is what bounds them
    monkeypatch.setenv("CONVOEVAL_MAX_CONCURRENCY", "2")
    run_eval(_config(tmp_path, "budget", workers=2, concurrency=8), progress=False, allow_errors=True)
    assert env.stats["max_in_flight"] <= 2  # 2 workers × a budget of 2 each would reach 4
    with pytest.raises(ConfigError, match="allows 2 call.* fewer than the 3 workers"):
        run_eval(_config(tmp_path, "budget3", workers=3), progress=False)


def test_secrets_are_never_put_into_tasks(env, tmp_path):
    with pytest.raises(ConfigError, match="cannot be sent to workers"):
        run_eval(_config(tmp_path, "s", workers=2, target="https://bot:s3cret@127.0.0.1:9/hook"), progress=False)
    with pytest.raises(ConfigError, match="cannot be sent to workers"):
        run_eval(_config(tmp_path, "s2", workers=2, judge_model={"base_url": "http://u:pw@127.0.0.1:9/v1"}),
                progress=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster(env, tmp_path):
    """``dask scheduler`` and two ``dask worker`` as separate processes on 127.0.0.1, killed afterwards."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler", "w"))]
    try:
        for i in range(2):
            procs.append(subprocess.Popen([str(DASK), "worker", address, "--nthreads", "4", "--no-dashboard",
                                           "--name", f"w{i}"], stdout=subprocess.DEVNULL,
                                          stderr=open(logs / f"worker{i}", "w")))
        from distributed import Client

        deadline = time.monotonic() + 60
        with Client(address, timeout="30s") as client:
            while len(client.scheduler_info()["workers"]) < 2:
                assert time.monotonic() < deadline, (logs / "scheduler").read_text()[-2000:]
                time.sleep(0.2)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_a_real_dask_cluster_gives_the_same_scores_as_one_process(dask_cluster, tmp_path):
    one = run_eval(_config(tmp_path, "one"), progress=False, allow_errors=True)
    on_cluster = run_eval(_config(tmp_path, "cluster", cluster=dask_cluster), progress=False, allow_errors=True)
    assert _scores(on_cluster) == _scores(one)
    report = json.loads((tmp_path / "cluster" / "report.json").read_text())
    assert report["meta"]["workers"] == 2


def test_the_scheduler_can_come_from_the_environment(dask_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_DASK_SCHEDULER", dask_cluster)
    config = EvalConfig(agent="billing", scenario="billing-scripted-pix-en", output_dir=str(tmp_path / "env"))
    assert config.distributed and config.scheduler == dask_cluster
    result = run_eval(config, progress=False, allow_errors=True)
    assert len(result.scores) == 1 and result.meta["workers"] == 2


def test_an_unreachable_scheduler_is_one_line(env, tmp_path):
    with pytest.raises(ConfigError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:\d+"):
        run_eval(_config(tmp_path, "x", cluster=f"tcp://127.0.0.1:{_free_port()}"), progress=False)
    assert not (tmp_path / "x").exists()  # refused once the folder existed: the folder it made went again (#22)


def test_workers_run_the_gate_the_run_asked_for(tmp_path, monkeypatch):
    """The simulator-failure gate's settings travel with the tasks (they hold no secret)."""
    from convoeval.pipeline.distributed import WorkerSettings, _worker_options
    from convoeval.simulator.gate import GateSettings

    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "m")
    off = _worker_options(WorkerSettings(EvalConfig(simulator_gate=False, resimulate=2), budget_share=1))
    assert off.gate is None and off.resimulate == 2
    strict = _worker_options(WorkerSettings(EvalConfig(simulator_gate={"parrot_turns": 3}), budget_share=1))
    assert strict.gate == GateSettings(parrot_turns=3) and strict.resimulate == 0


def test_a_worker_is_sent_the_jobs_whole_and_the_run_settings_without_a_secret(tmp_path, monkeypatch):
    """What crosses to a worker is each conversation's ``Job`` (replay, own target, observer factory and all) and the
    run's ``WorkerSettings``, pickled: the environment's key, password and store URL are never in it."""
    import pickle

    from convoeval.pipeline import Job, plan
    from convoeval.pipeline.distributed import WorkerSettings, run_tasks
    from convoeval.pipeline.replay import PatientReplay
    from convoeval.scenarios import load_scenarios

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shipped")
    monkeypatch.setenv("CONVOEVAL_STORE_URL", "postgresql://u:pw-never-shipped@db/x")
    config = EvalConfig(agent="billing", seed=[1], target="clinic:billing", judge_model={"base_url": "http://h/v1"})
    jobs = [*plan(load_scenarios(agent="billing", type="scripted")[:1], seeds=config.seeds),
            Job(load_scenarios(scenario="billing-conv-happy-payment")[0], 7, 2, replay=PatientReplay((("Oi", None),)),
                target="clinic:billing?faults=wrong_amount")]
    blob = pickle.dumps((jobs, WorkerSettings(config, budget_share=2)))
    assert b"never-shipped" not in blob
    back, settings = pickle.loads(blob)
    assert back == jobs and settings.config == config and settings.budget_share == 2
    assert list(inspect.signature(run_tasks).parameters) == ["jobs", "settings"]
