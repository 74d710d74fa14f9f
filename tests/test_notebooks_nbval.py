"""nbval over notebooks/run.ipynb and notebooks/agreement.ipynb, replaying their committed caches (scripts/nbval.sh).

A kernel per test, slow. Each notebook is replayed once per module; what it computed (the run's score table, the
agreement study's tables) must equal tests/data/nbval-expected/ (tests/nbval_expected.py says how to update it).

Until convoeval/llm/models.py stops starting the embedded server for replay-only runs, these tests need the local model
installed (``make setup``): the server is started but never asked anything.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from nbval_expected import agreement_tables, differences, report, run_tables

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "tests" / "data" / "nbval-cache.sqlite"
AGREEMENT_CACHE = ROOT / "tests" / "data" / "nbval-agreement-cache.sqlite"

pytestmark = pytest.mark.notebook


def _nbval(env_extra: dict[str, str] | None = None, *args: str) -> subprocess.CompletedProcess:
    import os

    # The tests' own interpreter unless PYTHON says otherwise (a worktree has no .venv of its own).
    env = {"PYTHON": sys.executable, **os.environ, **(env_extra or {})}
    return subprocess.run(["bash", "scripts/nbval.sh", *args], check=False, cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def replayed_run():
    """nbval over the run notebook, and the tables it computed (read at once: a later test reuses its folder)."""
    proc = _nbval()
    return proc, (run_tables() if proc.returncode == 0 else None)


@pytest.fixture(scope="module")
def replayed_agreement():
    from convoeval.agreement.study import load_study

    proc = _nbval(None, "agreement")
    if proc.returncode:
        return proc, None, None
    return proc, load_study(ROOT / "build" / "nbval-agreement" / "out"), agreement_tables()


def test_committed_cache_is_small():
    assert CACHE.exists(), "record it with: bash scripts/record-nbval-cache.sh"
    with sqlite3.connect(f"file:{CACHE}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert 0 < rows <= 60 and CACHE.stat().st_size < 512 * 1024


def test_nbval_passes_offline_from_the_committed_cache(replayed_run):
    proc, _ = replayed_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_the_replayed_run_computes_the_expected_score_table(replayed_run):
    proc, tables = replayed_run
    assert tables is not None, "nbval failed: see test_nbval_passes_offline_from_the_committed_cache"
    problems = differences(tables, prefix="run-")
    assert not problems, report(problems, "The replayed run notebook's score table")


def test_nbval_fails_on_a_call_missing_from_the_cache_and_says_how_to_re_record(tmp_path):
    # What a changed prompt does: its calls have new keys, so they are not in the cache. Emptying it does the same.
    stale = tmp_path / "stale.sqlite"
    shutil.copyfile(CACHE, stale)
    with sqlite3.connect(stale) as conn:
        conn.execute("DELETE FROM responses")
    proc = _nbval({"NBVAL_CACHE": str(stale)})
    assert proc.returncode != 0
    assert "ReplayMissError" in proc.stdout and "bash scripts/record-nbval-cache.sh" in proc.stdout


def test_committed_agreement_cache_is_bounded():
    assert AGREEMENT_CACHE.exists(), "record it with: bash scripts/record-nbval-cache.sh agreement"
    with sqlite3.connect(f"file:{AGREEMENT_CACHE}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert 0 < rows <= 400 and AGREEMENT_CACHE.stat().st_size < 4 * 1024 * 1024


def test_nbval_agreement_notebook_passes_offline_and_its_tables_are_the_library_s(replayed_agreement):
    from convoeval.agreement.study import compute_tables

    proc, study, _ = replayed_agreement
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    assert study.meta["local_demo"] and set(study.judged["rubric"]["judge"]) == {"greedy", "sampled"}
    assert len(study.frames.runs) == 4  # the healthy support agent and three known faults
    recomputed = compute_tables(study, n_boot=study.meta["params"]["n_boot"])
    assert set(recomputed) == set(study.tables)
    for name, saved in study.tables.items():
        numeric = [c for c in ("value", "ci_low", "ci_high", "n", "effect", "count") if c in saved]
        assert len(recomputed[name]) == len(saved), name
        if len(saved) and numeric:
            assert (recomputed[name][numeric].astype(float).round(9).fillna(-99).to_numpy()
                    == saved[numeric].astype(float).round(9).fillna(-99).to_numpy()).all(), name


def test_the_replayed_agreement_study_computes_the_expected_tables(replayed_agreement):
    _, _, tables = replayed_agreement
    assert tables is not None, "nbval failed: see test_nbval_agreement_notebook_passes_offline_and_its_tables_..."
    problems = differences(tables, prefix="agreement-")
    assert not problems, report(problems, "The replayed agreement study's summary")


def test_nbval_agreement_fails_on_a_missing_recording_and_says_how_to_re_record(tmp_path):
    stale = tmp_path / "stale.sqlite"
    shutil.copyfile(AGREEMENT_CACHE, stale)
    with sqlite3.connect(stale) as conn:
        conn.execute("DELETE FROM responses")
    proc = _nbval({"NBVAL_CACHE": str(stale)}, "agreement")
    assert proc.returncode != 0
    assert "ReplayMissError" in proc.stdout and "bash scripts/record-nbval-cache.sh agreement" in proc.stdout


def test_the_production_notebook_passes_nbval_on_its_shipped_samples():
    """Import and scrub of the shipped samples, no judge (tests/data/nbval-production-params.yaml says why)."""
    proc = _nbval(None, "production")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
