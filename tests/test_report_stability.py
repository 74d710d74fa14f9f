"""The spread of scores across seeds and trials (pass^k and flip rates are tested with convoeval.agreement)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from convoeval.report.stability import score_spread


def test_score_spread_across_seeds_leaves_errors_out_of_the_statistics():
    scores = pd.DataFrame({"agent": "a", "scenario": "s", "status": ["pass", "fail", "error"],
                           "score": [9.0, 3.0, float("nan")]})
    got = score_spread(scores).iloc[0]
    assert (got["conversations"], got["errors"], got["mean"], got["range"]) == (3, 1, 6.0, 6.0)
    assert got["std"] == pytest.approx(math.sqrt(18))


def test_score_spread_per_group_and_empty():
    scores = pd.DataFrame({"agent": ["a", "a", "b"], "scenario": ["s", "t", "s"], "status": "pass",
                           "score": [9.0, 7.0, 5.0]})
    assert score_spread(scores, by=["agent"]).set_index("agent")["mean"].to_dict() == {"a": 8.0, "b": 5.0}
    assert list(score_spread(scores.iloc[0:0]).columns)[-1] == "range"
