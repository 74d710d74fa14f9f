"""Reliability of `convoeval run` end to end: results folders never shared by two live runs, output folders
checked before the first call, settings checked before any model starts, errored conversations retried on resume,
and evaluation errors in the exit code.

Real ``convoeval`` subprocesses against a fake LLM server on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_reliability_support import SCENARIOS, assert_no_traceback, clean_env, cli, llm_responder, run_args

from convoeval.pipeline import EvalConfig
from convoeval.pipeline.execute import EXIT_SIMULATOR_FAILURES
from convoeval.pipeline.results import FolderInUseError, results_lock
from convoeval.testing import FakeOpenAIServer

pytestmark = pytest.mark.reliability


@pytest.fixture
def llm():
    with FakeOpenAIServer(responder=llm_responder) as server:
        yield server


def test_two_runs_started_together_without_out_get_folders_of_their_own(tmp_path, llm):
    """Both chose reports/run-billing-<second> and overwrote each other's results (3 files left for 6)."""
    env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}")
    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "scenarios").symlink_to(SCENARIOS)
    args = [sys.executable, "-m", "convoeval.cli", "run", "--agent", "billing", "--type", "scripted", "--no-progress"]
    procs = [subprocess.Popen(args, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=180) for p in procs]
    folders = [next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("results: "))
               for out, _ in outputs]
    assert folders[0] != folders[1], outputs
    for folder in folders:
        assert len(list((Path(folder) / "runs").glob("*.json"))) == 3  # every conversation of each run kept


def test_a_folder_in_use_by_a_live_run_is_refused(tmp_path):
    with results_lock(tmp_path), pytest.raises(FolderInUseError, match=r"in use by a live run \(pid \d+\)"):
        with results_lock(tmp_path):
            pass
    with results_lock(tmp_path):  # released when the holder ends: the folder can be resumed
        pass


def test_the_same_out_for_two_live_runs_refuses_the_second_with_one_line(tmp_path, llm):
    # The first run's LLM calls are held until the second run has answered, so the first is surely still live when
    # the second looks at the folder (a fixed latency raced the second's start-up, seconds on a loaded CI machine).
    second_answered = threading.Event()

    def hold_until_the_second_answered(request):
        second_answered.wait(90)
        return 0.0

    llm.latency = hold_until_the_second_answered
    env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}")
    out = tmp_path / "shared"
    first = subprocess.Popen([sys.executable, "-m", "convoeval.cli", *run_args(out, "--type", "conversational")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / ".lock").exists() or not (out / ".lock").read_text():
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    try:
        second = cli(*run_args(out, "--type", "conversational"), env=env)
    finally:
        second_answered.set()
    first.communicate(timeout=180)
    assert second.returncode == 2, second.stderr
    assert "in use by a live run" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    assert first.returncode == 0
    assert len(list((out / "runs").glob("*.json"))) == 3  # the first run kept every conversation


@pytest.mark.parametrize("where", ["file", "under-a-file"])
def test_an_unwritable_output_folder_fails_before_any_llm_call(tmp_path, llm, where):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" if where == "file" else tmp_path / "afile" / "sub"
    env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}")
    proc = cli(*run_args(out), env=env)
    assert proc.returncode == 2 and "cannot be written" in proc.stderr, proc.stderr
    assert_no_traceback(proc)
    assert llm.stats["requests"] == 0  # nothing spent
    store = tmp_path / "s.db"
    if store.exists():  # and nothing left in the store
        import sqlite3

        with sqlite3.connect(store) as db:
            assert db.execute("select count(*) from runs").fetchone()[0] == 0


def test_a_bad_store_is_refused_before_any_model_starts(tmp_path):
    """With no LLM configured, `run --store bogus://x` assembled the weights and left a llama server running."""
    env = clean_env(tmp_path, OPENAI_MODEL=None, CONVOEVAL_LOCAL_MODEL=str(tmp_path / "never-read.gguf"))
    proc = cli(*run_args(tmp_path / "out"), "--store", "bogus://x", env=env, timeout=60)
    assert proc.returncode == 2 and "bogus" in proc.stderr, proc.stderr
    assert_no_traceback(proc)
    state = tmp_path / "state"
    assert not (state / "llm").exists() or not any((state / "llm").iterdir())  # no server state, no weights


def test_a_rerun_retries_the_conversations_that_ended_in_error_and_keeps_the_others(tmp_path, llm):
    env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}")
    out = tmp_path / "out"
    args = run_args(out, "--type", "conversational", "--target", "distributed_support:respond", "--concurrency", "1")
    env["PYTHONPATH"] = f"{Path(__file__).parent}:{env['PYTHONPATH']}"
    llm.fail_next(*["500"] * 4)  # one at a time: the first conversation's first call fails all its 4 attempts
    first = cli(*args, env=env)
    before = {p.stem: json.loads(p.read_text())["scores"][0]["status"] for p in (out / "runs").glob("*.json")}
    assert list(before.values()).count("error") == 1 and first.returncode == 3, (before, first.stdout[-800:])
    kept = {k: (out / "runs" / f"{k}.json").stat().st_mtime_ns for k, s in before.items() if s != "error"}
    requests = llm.stats["requests"]
    second = cli(*args, env=env)
    after = {p.stem: json.loads(p.read_text())["scores"][0]["status"] for p in (out / "runs").glob("*.json")}
    # The echoing test agent never pays nor says it did, so the fake patient's [GOAL_COMPLETE] is premature: every
    # conversation ends simulator_failure (the gate's premature_goal), exit 4, and none in error any more.
    assert set(after.values()) == {"simulator_failure"}, after
    assert second.returncode == EXIT_SIMULATOR_FAILURES, second.stdout[-800:]
    assert llm.stats["requests"] > requests  # the errored ones really ran again
    assert all((out / "runs" / f"{k}.json").stat().st_mtime_ns == t for k, t in kept.items())  # the others did not


def test_evaluation_errors_make_the_exit_code_3_unless_allowed(tmp_path):
    env = clean_env(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1", CONVOEVAL_LLM_ATTEMPTS="1",
                    CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}")
    failing = cli(*run_args(tmp_path / "a", "--type", "conversational"), env=env)
    assert failing.returncode == 3, failing.stdout[-500:]
    assert "3 error" in failing.stdout
    allowed = cli(*run_args(tmp_path / "b", "--type", "conversational", "--allow-errors"), env=env)
    assert allowed.returncode == 0


def test_default_folders_include_a_random_part():
    assert EvalConfig().output_path() != EvalConfig().output_path()
