"""Crash and resume: ``convoeval run`` killed with SIGKILL midway and started again finishes only what was not
finished; ``convoeval cleanup`` removes the rows of the killed run and never a row that no run seeded.

A real subprocess against a fake LLM server with latency, so the kill lands while conversations are in flight.
Runs on SQLite, and on Postgres when ``CONVOEVAL_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from store_support import PG_URL, require_postgres
from test_reliability_support import (
    SCENARIOS,
    assert_no_traceback,
    clean_env,
    cli,
    llm_responder,
    record_figures,
    run_args,
    run_files,
)

from convoeval import load_results
from convoeval.pipeline.batch import finished_keys
from convoeval.scenarios import load_scenarios
from convoeval.store import TABLES, cleanup_run, open_store, seed_run
from convoeval.testing import FakeOpenAIServer

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

SEEDS = "1,2,3,4"
JOBS = 6 * 4  # the six billing scenarios × four seeds
FOREIGN_TABLES = ("clinics", "patients", "conversations", "messages")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    require_postgres()
    return PG_URL


def snapshot(out: Path) -> dict[str, tuple[int, str]]:
    """``file name -> (mtime_ns, sha256)`` of every finished run."""
    return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in run_files(out)}


def wait_for_files(out: Path, proc: subprocess.Popen, count: int, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while len(run_files(out)) < count:
        assert proc.poll() is None, f"the run ended (rc={proc.returncode}) before it could be killed"
        assert time.monotonic() < deadline, f"fewer than {count} runs finished within {deadline_s} s"
        time.sleep(0.05)


def wait_for_a_run_in_flight(store_url: str, proc: subprocess.Popen, deadline_s: float) -> None:
    """Until the store holds a seeded run of ``proc`` (a run keeps its rows only while it talks, not while judged)."""
    deadline = time.monotonic() + deadline_s
    with open_store(store_url) as store:
        while not store.select("runs", {"owner_pid": proc.pid, "owner_host": socket.gethostname()}):
            assert proc.poll() is None, f"the run ended (rc={proc.returncode}) before it could be killed"
            assert time.monotonic() < deadline, f"no run of pid {proc.pid} was in flight within {deadline_s} s"
            time.sleep(0.01)


def rows_by_run(store, run_ids) -> dict[str, int]:
    return {rid: sum(len(store.select(t, {"run_id": rid})) for t in TABLES) for rid in run_ids}


def insert_foreign_rows(store) -> str:
    """Rows convoeval did not seed: a ``run_id`` with no ``runs`` row (as another tool's data would look)."""
    foreign = f"foreign-{uuid.uuid4().hex}"
    clinic, patient, conv = (uuid.uuid4().hex for _ in range(3))
    store.insert("clinics", {"id": clinic, "run_id": foreign, "name": "Not ours"})
    store.insert("patients", {"id": patient, "run_id": foreign, "clinic_id": clinic, "name": "Someone", "phone": "1"})
    store.insert("conversations", {"id": conv, "run_id": foreign, "clinic_id": clinic, "patient_id": patient,
                                   "agent": "billing", "started_at": "2026-01-01T00:00:00+00:00"})
    store.insert("messages", {"id": uuid.uuid4().hex, "run_id": foreign, "conversation_id": conv, "role": "patient",
                              "text": "hello", "turn": 1, "created_at": "2026-01-01T00:00:00+00:00"})
    return foreign


def test_a_killed_sweep_resumes_without_losing_or_redoing_runs_and_cleanup_is_exact(store_url, tmp_path):
    out = tmp_path / "out"
    args = run_args(out, "--seed", SEEDS, "--concurrency", "3", "--store", store_url)
    with FakeOpenAIServer(responder=llm_responder, latency=0.12) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url, CONVOEVAL_LLM_TIMEOUT="10")
        proc = subprocess.Popen([sys.executable, "-m", "convoeval.cli", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_files(out, proc, 4, deadline_s=90)
            wait_for_a_run_in_flight(store_url, proc, deadline_s=30)
        finally:
            proc.kill()  # SIGKILL: no finally block, no cleanup, no atexit
            proc.wait(timeout=30)  # reaped, so its pid is really gone
        assert proc.returncode == -9
        killed_pid = proc.pid
        before = snapshot(out)
        assert 4 <= len(before) < JOBS, len(before)
        for p in run_files(out):
            json.loads(p.read_text())  # whatever is on disk is whole
        # A torn write of a run that had not finished: must never count.
        unfinished = next(j for j in _job_keys() if f"{j}.json" not in before)
        (out / "runs" / f".{unfinished}.x1y2.tmp").write_text('{"runs": [{"run_id": "torn"')

        with open_store(store_url) as store:
            host = socket.gethostname()
            dead = [r["id"] for r in store.select("runs", {"owner_pid": killed_pid, "owner_host": host})]
            assert dead, "no conversation was in flight when the run was killed"
            assert all(n > 0 for n in rows_by_run(store, dead).values())
            foreign = insert_foreign_rows(store)
            foreign_before = {t: len(store.select(t, {"run_id": foreign})) for t in FOREIGN_TABLES}
            live = seed_run(store, load_scenarios(SCENARIOS, scenario="billing-conv-happy-payment")[0])
            live_before = rows_by_run(store, [live.run_id])[live.run_id]
            try:
                dry = cli("cleanup", "--store", store_url, "--dry-run", env=env, timeout=60)
                assert dry.returncode == 0 and all(rid in dry.stdout for rid in dead), dry.stdout + dry.stderr
                assert all(n > 0 for n in rows_by_run(store, dead).values())  # a dry run removes nothing
                cleaned = cli("cleanup", "--store", store_url, env=env, timeout=60)
                assert_no_traceback(cleaned)
                assert cleaned.returncode == 0, cleaned.stderr
                removed = set(re.findall(r"[0-9a-f]{32}", cleaned.stdout))
                assert set(dead) <= removed, cleaned.stdout
                assert live.run_id not in removed
                assert rows_by_run(store, dead) == dict.fromkeys(dead, 0)
                assert {t: len(store.select(t, {"run_id": foreign})) for t in FOREIGN_TABLES} == foreign_before
                assert rows_by_run(store, [live.run_id])[live.run_id] == live_before
            finally:
                cleanup_run(store, live.run_id)
                for table in reversed(FOREIGN_TABLES):
                    store.delete(table, {"run_id": foreign})

        started = time.perf_counter()
        again = cli(*args, env=env, timeout=180)
        resume_s = time.perf_counter() - started
    assert_no_traceback(again)
    assert again.returncode == 0, again.stderr[-2000:]
    after = snapshot(out)
    assert len(after) == JOBS and finished_keys(out) == set(_job_keys())
    assert {name: after[name] for name in before} == before  # finished runs neither redone nor rewritten
    meta = json.loads((out / "report.json").read_text())["meta"]
    assert (meta["runs_now"], meta["runs_resumed"]) == (JOBS - len(before), len(before))
    frames = load_results(out).frames
    assert len(frames.scores) == JOBS and frames.scores["run_id"].is_unique
    assert "torn" not in set(frames.runs["run_id"])
    with open_store(store_url) as store:  # the resumed run cleaned up after itself
        assert not store.select("runs", {"owner_pid": killed_pid, "owner_host": socket.gethostname()})
        assert sum(rows_by_run(store, frames.runs["run_id"].tolist()).values()) == 0
    record_figures("crash_resume", backend=store_url.split(":")[0], jobs=JOBS, finished_before_kill=len(before),
                   in_flight_at_kill=len(dead), rows_cleaned_runs=len(dead), resumed_runs=JOBS - len(before),
                   redone=0 if all(after[n] == before[n] for n in before) else "some", lost=JOBS - len(after),
                   resume_seconds=round(resume_s, 1))


def _job_keys() -> list[str]:
    from convoeval.pipeline import plan

    scenarios = load_scenarios(SCENARIOS, agent="billing")
    return [j.key for j in plan(scenarios, seeds=[int(s) for s in SEEDS.split(",")])]


def test_cleanup_never_touches_a_live_run_or_rows_no_run_seeded(store_url, tmp_path):
    """Even with ``--older-than 0``: a live owner's run and rows without a ``runs`` row stay."""
    env = clean_env(tmp_path)
    with open_store(store_url) as store:
        foreign = insert_foreign_rows(store)
        live = seed_run(store, load_scenarios(SCENARIOS, scenario="billing-conv-happy-payment")[0])
        try:
            before = {t: len(store.select(t, {"run_id": foreign})) for t in FOREIGN_TABLES}
            live_rows = rows_by_run(store, [live.run_id])[live.run_id]
            proc = cli("cleanup", "--store", store_url, "--older-than", "0", env=env, timeout=60)
            assert_no_traceback(proc)
            assert proc.returncode == 0, proc.stderr
            assert live.run_id not in proc.stdout and foreign not in proc.stdout
            assert {t: len(store.select(t, {"run_id": foreign})) for t in FOREIGN_TABLES} == before
            assert rows_by_run(store, [live.run_id])[live.run_id] == live_rows > 0
        finally:
            cleanup_run(store, live.run_id)
            for table in reversed(FOREIGN_TABLES):
                store.delete(table, {"run_id": foreign})

