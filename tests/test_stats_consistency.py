"""Flip rates and one judge's self-consistency across samples, against hand counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from agreement_support import holistic, rubric

from convoeval.stats import ALL, flip_rates, score_consistency, self_consistency

T, F = True, False


def _v(table: pd.DataFrame, **where) -> dict[str, float]:
    for column, value in where.items():
        table = table[table[column] == value]
    return dict(zip(table["statistic"], table["value"], strict=True))


def test_flip_rates_by_hand():
    # c1: r0 [T, T, F] flips (pair 2·2·1/6 = 1/3·2), r1 [T, T, T] does not; c2: r0 [F, F], r1 [T, F].
    frame = pd.DataFrame({
        "run_id": ["r0"] * 3 + ["r1"] * 3 + ["r0"] * 2 + ["r1"] * 2,
        "criterion": ["c1"] * 6 + ["c2"] * 4,
        "passed": [T, T, F, T, T, T, F, F, T, F],
    })
    out = flip_rates(frame, item=("run_id", "criterion"), by="criterion", n_boot=50)
    c1, c2, pooled = _v(out, criterion="c1"), _v(out, criterion="c2"), _v(out, criterion=ALL)
    assert (c1["flip_rate"], c1["pairwise_disagreement"], c1["pass_rate"]) == pytest.approx((0.5, 1 / 3, 5 / 6))
    assert (c2["flip_rate"], c2["pairwise_disagreement"], c2["pass_rate"]) == pytest.approx((0.5, 0.5, 0.25))
    assert pooled["flip_rate"] == pytest.approx(0.5)
    assert pooled["pairwise_disagreement"] == pytest.approx((2 / 3 + 0 + 0 + 1) / 4)
    assert set(out[out["criterion"] == ALL]["n_items"]) == {4}


def test_missing_verdicts_and_single_verdicts_do_not_count():
    frame = pd.DataFrame({"run_id": ["r0", "r0", "r0", "r1", "r1"], "criterion": "c",
                          "passed": pd.array([T, None, T, F, None], dtype="boolean")})
    out = flip_rates(frame, item=("run_id", "criterion"), n_boot=20)
    assert _v(out)["flip_rate"] == 0.0
    assert set(out["n_items"]) == {1}  # r1 has one verdict left


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="criterion"):
        flip_rates(pd.DataFrame({"run_id": ["r"], "passed": [T]}), item=("run_id", "criterion"))


def test_self_consistency_per_judge_never_pools_judges():
    steady = [T, T, T, F, F, F] * 6  # per run: c1 [T, T, T], c2 [F, F, F]
    shaky = [T, F, T, F, F, T] * 6  # per run: c1 [T, F, T], c2 [F, F, T]
    frame = pd.concat([rubric({"steady": steady}, criteria=("c1", "c2"), samples=3),
                       rubric({"shaky": shaky}, criteria=("c1", "c2"), samples=3)], ignore_index=True)
    out = self_consistency(frame, n_boot=50)
    assert set(out["rater"]) == {"steady", "shaky"}
    assert _v(out, rater="steady", criterion=ALL)["flip_rate"] == 0.0
    assert _v(out, rater="shaky", criterion="c1")["flip_rate"] == 1.0
    assert _v(out, rater="shaky", criterion="c1")["pairwise_disagreement"] == pytest.approx(2 / 3)
    assert "krippendorff_alpha" in _v(out, rater="shaky", criterion="c1")
    assert list(out.columns[:2]) == ["rater", "criterion"]


def test_score_consistency_by_hand():
    # r0 samples 7, 8, 9 (variance 1, range 2); r1 samples 5, 5, 5 (variance 0, range 0).
    frame = holistic({"j": [7, 8, 9, 5, 5, 5]}, samples=3)
    out = score_consistency(frame, dimensions=("goal_completion",), n_boot=50)
    v = _v(out)
    assert v["score_sd"] == pytest.approx(np.sqrt(0.5))
    assert v["mean_range"] == pytest.approx(1.0)
    assert out["ci_too_wide"].all()  # two conversations
