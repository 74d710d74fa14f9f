"""0–10 scores: Shrout & Fleiss' ICC table, the libraries, hand-computed Bland–Altman, weighted bootstrap forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from agreement_support import holistic
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from convoeval.stats import holistic_ratings, icc, score_agreement
from convoeval.stats.scores import _weighted

# Shrout & Fleiss (1979), Table 2: 6 targets × 4 judges. Table 4: ICC(2,1) = .29, ICC(3,1) = .71.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def _table(a, b, **kw) -> pd.DataFrame:
    frame = pd.concat([holistic({"a": a}), holistic({"b": b})], ignore_index=True)
    return score_agreement(holistic_ratings(frame, dimensions=("goal_completion",)), pairs=[("a", "b")], **kw)


def test_icc_matches_shrout_and_fleiss():
    got = icc(SHROUT_FLEISS)
    assert round(got["icc_a1"], 2) == 0.29 and round(got["icc_c1"], 2) == 0.71
    # The unrounded ANOVA values: MSR 11.24, MSC 32.49, MSE 1.02 (Shrout & Fleiss, Table 3).
    msr, msc, mse, n, k = 11.241666, 32.486111, 1.019444, 6, 4
    assert got["icc_a1"] == pytest.approx((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n), rel=1e-5)
    assert got["icc_c1"] == pytest.approx((msr - mse) / (msr + (k - 1) * mse), rel=1e-5)


def test_icc_with_bootstrap_weights_equals_icc_of_duplicated_rows():
    counts = np.array([2, 0, 1, 3, 1, 1])
    weighted = icc(SHROUT_FLEISS, counts[None])
    duplicated = icc(np.repeat(np.array(SHROUT_FLEISS), counts, axis=0))
    assert weighted["icc_a1"][0] == pytest.approx(duplicated["icc_a1"])
    assert weighted["icc_c1"][0] == pytest.approx(duplicated["icc_c1"])


def test_hand_computed_bias_mae_and_limits_of_agreement():
    v = _table([8, 7, 9, 5], [7, 7, 10, 3], n_boot=20).set_index("statistic")["value"]
    sd = np.sqrt(5 / 3)  # differences 1, 0, -1, 2: mean .5, squared deviations sum to 5
    assert v["mean_bias"] == pytest.approx(0.5)
    assert v["mae"] == pytest.approx(1.0)
    assert v["within_1"] == pytest.approx(0.75)
    assert (v["loa_low"], v["loa_high"]) == pytest.approx((0.5 - 1.96 * sd, 0.5 + 1.96 * sd))


def test_point_estimates_are_the_libraries():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 11, 30).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 30), 0, 10)
    v = _table(list(a), list(b), n_boot=20).set_index("statistic")["value"]
    assert v["spearman"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert v["kendall_tau_b"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert v["weighted_kappa"] == pytest.approx(
        cohen_kappa_score(a.astype(int), b.astype(int), labels=list(range(11)), weights="quadratic"))


def test_weighted_forms_used_by_the_bootstrap_equal_the_libraries_on_duplicated_rows():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 11, 15).astype(float)
    b = np.clip(a + rng.integers(-3, 4, 15), 0, 10).astype(float)
    counts = rng.integers(0, 3, 15)
    got = {k: v[0] for k, v in _weighted(a, b, counts[None].astype(float)).items()}
    da, db = np.repeat(a, counts), np.repeat(b, counts)
    assert got["spearman"] == pytest.approx(stats.spearmanr(da, db).statistic)
    assert got["kendall_tau_b"] == pytest.approx(stats.kendalltau(da, db).statistic)
    assert got["weighted_kappa"] == pytest.approx(
        cohen_kappa_score(da.astype(int), db.astype(int), labels=list(range(11)), weights="quadratic"))
    assert got["mean_bias"] == pytest.approx(np.mean(da - db))
    assert got["loa_high"] == pytest.approx(np.mean(da - db) + 1.96 * np.std(da - db, ddof=1))


def test_identical_raters():
    scores = [float(x % 11) for x in range(12)]
    v = _table(scores, scores, n_boot=50).set_index("statistic")
    assert v.loc["icc_a1", "value"] == pytest.approx(1.0)
    assert v.loc["mean_bias", "value"] == 0.0 and v.loc["loa_low", "value"] == 0.0
    assert v.loc["weighted_kappa", "value"] == pytest.approx(1.0)
    assert not v.loc["mae", "ci_too_wide"]


def test_constant_scores_give_nan_not_a_crash():
    v = _table([7.0] * 10, [7.0] * 10, n_boot=20).set_index("statistic")["value"]
    for stat in ("icc_a1", "icc_c1", "spearman", "kendall_tau_b"):
        assert np.isnan(v[stat])
    assert v["mae"] == 0.0 and v["within_1"] == 1.0


def test_a_constant_offset_hurts_absolute_agreement_not_consistency():
    a = [float(x) for x in range(0, 9)] * 2
    v = _table(a, [x + 2 for x in a], n_boot=20).set_index("statistic")["value"]
    assert v["icc_c1"] == pytest.approx(1.0)
    assert v["icc_a1"] < 0.9
    assert v["mean_bias"] == pytest.approx(-2.0)


def test_score_points_use_a_one_and_a_half_point_limit():
    rng = np.random.default_rng(10)
    a = rng.integers(2, 9, 60).astype(float)
    b = np.clip(a + rng.normal(0, 1.5, 60).round(), 0, 10)
    out = _table(list(a), list(b), n_boot=300).set_index("statistic")
    half = (out.loc["mean_bias", "ci_high"] - out.loc["mean_bias", "ci_low"]) / 2
    assert 0.15 < half < 1.5  # too wide on a 0–1 scale, fine in points
    assert not out.loc["mean_bias", "ci_too_wide"]


def test_samples_mean_and_missing_scores():
    frame = holistic({"a": [6, 8, np.nan, 5]}, samples=2)
    ratings = holistic_ratings(frame, dimensions=("goal_completion",))
    assert ratings.sort_values("run_id")["score"].tolist() == [7.0, 5.0]
    first = holistic_ratings(frame, dimensions=("goal_completion",), samples="first")
    assert first.sort_values("run_id")["score"].tolist()[0] == 6.0


def test_missing_scores_leave_the_conversation_out():
    out = _table([5, 6, np.nan, 8, 9, 2, 3, 4, 5, 6, 7], [5, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7], n_boot=20)
    assert set(out["n"]) == {10}
