"""nbval over notebooks/run.ipynb and notebooks/agreement.ipynb, replaying their committed caches (scripts/nbval.sh).

A kernel per test, slow.

Until convoeval/models.py stops starting the embedded server for replay-only runs, these tests need the local model
installed (``make setup``): the server is started but never asked anything.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "tests" / "data" / "nbval-cache.sqlite"
AGREEMENT_CACHE = ROOT / "tests" / "data" / "nbval-agreement-cache.sqlite"

pytestmark = pytest.mark.notebook


def _nbval(env_extra: dict[str, str] | None = None, *args: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(["bash", "scripts/nbval.sh", *args], check=False, cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


def test_committed_cache_is_small():
    assert CACHE.exists(), "record it with: bash scripts/record-nbval-cache.sh"
    with sqlite3.connect(f"file:{CACHE}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert 0 < rows <= 60 and CACHE.stat().st_size < 512 * 1024


def test_nbval_passes_offline_from_the_committed_cache():
    proc = _nbval()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


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


def test_nbval_agreement_notebook_passes_offline_and_its_tables_are_the_library_s():
    from convoeval.agreement.study import compute_tables, load_study

    proc = _nbval(None, "agreement")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    study = load_study(ROOT / "build" / "nbval-agreement" / "out")
    assert study.meta["local_demo"] and set(study.judged["rubric"]["judge"]) == {"greedy", "sampled"}
    assert len(study.frames["runs"]) == 4  # the healthy support agent and three known faults
    recomputed = compute_tables(study, n_boot=study.meta["params"]["n_boot"])
    assert set(recomputed) == set(study.tables)
    for name, saved in study.tables.items():
        numeric = [c for c in ("value", "ci_low", "ci_high", "n", "effect", "count") if c in saved]
        assert len(recomputed[name]) == len(saved), name
        if len(saved) and numeric:
            assert (recomputed[name][numeric].astype(float).round(9).fillna(-99).to_numpy()
                    == saved[numeric].astype(float).round(9).fillna(-99).to_numpy()).all(), name


def test_nbval_agreement_fails_on_a_missing_recording_and_says_how_to_re_record(tmp_path):
    stale = tmp_path / "stale.sqlite"
    shutil.copyfile(AGREEMENT_CACHE, stale)
    with sqlite3.connect(stale) as conn:
        conn.execute("DELETE FROM responses")
    proc = _nbval({"NBVAL_CACHE": str(stale)}, "agreement")
    assert proc.returncode != 0
    assert "ReplayMissError" in proc.stdout and "bash scripts/record-nbval-cache.sh agreement" in proc.stdout
