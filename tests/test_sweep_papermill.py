"""A real sweep: papermill runs notebooks/run.ipynb per agent × seed against the fake server (kernels; slow)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from convoeval.sweep import DONE_MARKER, run_sweep

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.notebook


def test_two_agents_by_two_seeds_make_four_reports_and_an_index_and_a_rerun_replays(tmp_path, fake_llm):
    server = fake_llm
    first = run_sweep(["support", "nps"], [1, 2], out=tmp_path / "a", parameters={"type": "scripted"},
                      progress=False)
    calls = server.stats["requests"]
    # the same sweep into a new folder: every LLM call is replayed from the cache
    second = run_sweep(["support", "nps"], [1, 2], out=tmp_path / "b", parameters={"type": "scripted"},
                       progress=False)
    assert server.stats["requests"] == calls > 0
    for result in (first, second):
        assert not result.failed and [c.status for c in result.combinations] == ["done"] * 4
    for name in ("support-s1", "support-s2", "nps-s1", "nps-s2"):
        folder = tmp_path / "a" / name
        assert (folder / DONE_MARKER).exists() and (folder / "run.ipynb").exists()
        assert "Transcripts" in (folder / "report.html").read_text(encoding="utf-8")
    index = (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    assert index.count("/report.html\">report</a>") == 4
    scores = pd.read_csv(tmp_path / "a" / "data" / "scores.csv")
    assert sorted(scores["combination"].unique()) == ["nps-s1", "nps-s2", "support-s1", "support-s2"]
    replayed = pd.read_csv(tmp_path / "b" / "data" / "scores.csv")
    assert sorted(replayed["score"].fillna(-1)) == sorted(scores["score"].fillna(-1))
