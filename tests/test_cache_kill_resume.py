"""The response cache's promise after a kill: ``convoeval run`` killed with SIGKILL loses at most the calls in flight,
and resumed it ends with the results of a run that was never killed.

The cache commits replies in groups (``ResponseCache.aput``); a reply is handed back only once its group is
committed. So whatever a killed run saved (a conversation's results file) has every one of its calls in the cache,
and the replies the cache lacks can only be those of calls still in flight at the kill. Counted at a real fake
server: a reference run makes ``N`` requests; the killed run makes ``Q`` and leaves ``R`` replies in its cache, with
``Q - R`` no more than the calls in flight; its resumed run makes exactly ``N - R`` requests (every saved reply is
replayed, nothing is asked twice) and its scores equal the reference run's.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_reliability_support import assert_no_traceback, clean_env, cli, llm_responder, run_args, run_files

from convoeval.testing import FakeOpenAIServer

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

SEEDS = "1,2,3"
JOBS = 6 * 3  # the six billing scenarios × three seeds
#: Columns that differ between two runs of the same seeds by design: fresh ids, clocks, latencies, cache hits.
VOLATILE = ("run_id", "duration", "latency", "created", "_at", "cache_hit", "attempts", "cost")
#: Ids minted fresh by every run (seeded rows, payment links): masked, as the cache key masks them.
MINTED = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def cached_replies(path: Path) -> int:
    """Replies committed to the cache file at ``path`` (read by another connection, as a new process would)."""
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def stable(value: Any) -> Any:
    """``value`` without the fields and ids that differ between two runs of the same seeds."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if not any(part in k for part in VOLATILE)}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return MINTED.sub("<id>", value) if isinstance(value, str) else value


def results(out: Path) -> dict[str, Any]:
    """``job key -> `` every row of its results file but the calls, without the volatile fields."""
    found = {}
    for path in run_files(out):
        payload = json.loads(path.read_text(encoding="utf-8"))
        found[path.stem] = stable({k: v for k, v in payload.items() if k != "calls"})
    return found


def run_env(tmp_path: Path, name: str, server: FakeOpenAIServer) -> dict[str, str]:
    return clean_env(tmp_path / name, OPENAI_BASE_URL=server.base_url, CONVOEVAL_LLM_TIMEOUT="10",
                     CONVOEVAL_CACHE="rw", CONVOEVAL_CACHE_PATH=str(tmp_path / name / "cache.sqlite"),
                     CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / name / 'store.db'}")


def test_a_run_killed_midway_loses_at_most_the_calls_in_flight_and_resumes_to_the_same_results(tmp_path):
    with FakeOpenAIServer(responder=llm_responder, latency=0.05) as server:
        reference = cli(*run_args(tmp_path / "reference" / "out", "--seed", SEEDS, "--concurrency", "3"),
                        env=run_env(tmp_path, "reference", server), timeout=300)
        assert_no_traceback(reference)
        assert reference.returncode == 0, reference.stderr[-2000:]
        calls = server.stats["requests"]
    assert calls > 4 * JOBS  # a patient's turns and both judges per conversation
    assert cached_replies(tmp_path / "reference" / "cache.sqlite") == calls  # every call once, every reply kept

    out = tmp_path / "killed" / "out"
    args = run_args(out, "--seed", SEEDS, "--concurrency", "3")
    # One server for the killed run and its resumption: its URL is part of every cache key.
    with FakeOpenAIServer(responder=llm_responder, latency=0.05) as server:
        env = run_env(tmp_path, "killed", server)
        proc = subprocess.Popen([sys.executable, "-m", "convoeval.cli", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while len(run_files(out)) < 4:
                assert proc.poll() is None, f"the run ended (rc={proc.returncode}) before it could be killed"
                assert time.monotonic() < deadline, "fewer than 4 conversations were saved within 120 s"
                time.sleep(0.02)
        finally:
            proc.kill()  # SIGKILL: no finally block, no atexit, no last commit
            proc.wait(timeout=30)
        assert proc.returncode == -9
        # The server's handlers of the killed run's last requests finish counting: a request is counted once its
        # handler thread has read it, which a loaded machine can delay past any fixed sleep (0.2 s was one), so wait
        # until the count has been still for 2 s.
        asked, still_since = server.stats["requests"], time.monotonic()
        while time.monotonic() - still_since < 2:
            time.sleep(0.1)
            if server.stats["requests"] != asked:
                asked, still_since = server.stats["requests"], time.monotonic()
        in_flight = server.stats["max_in_flight"]
        saved = len(run_files(out))
        assert 4 <= saved < JOBS, saved
        kept = cached_replies(tmp_path / "killed" / "cache.sqlite")
        assert 0 <= asked - kept <= in_flight, (asked, kept, in_flight)

        resumed = cli(*args, env=env, timeout=300)
        assert_no_traceback(resumed)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        asked_again = server.stats["requests"] - asked
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))["meta"]
    assert (meta["runs_now"], meta["runs_resumed"]) == (JOBS - saved, saved)
    # Every reply the killed run kept is replayed, and only the missing ones are asked: had a saved conversation's
    # reply not been committed, the resumed run could not replay it and the counts would not add up to `calls`.
    assert kept + asked_again == calls, (kept, asked_again, calls)
    assert cached_replies(tmp_path / "killed" / "cache.sqlite") == calls
    assert results(out) == results(tmp_path / "reference" / "out")
    assert len(results(out)) == JOBS

