"""nbval over notebooks/run.ipynb, replaying the committed cache (scripts/nbval.sh); a kernel per test, slow.

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

pytestmark = pytest.mark.notebook


def _nbval(env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(["bash", "scripts/nbval.sh"], check=False, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


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
