"""Repeated trials: tau-bench pass^k, trial flip rates, the minimum detectable difference, comparing targets."""

from __future__ import annotations

import warnings
from math import sqrt

import pandas as pd
import pytest
from agreement_support import rubric, scores
from scipy.stats import norm

from convoeval.stats import (
    ALL,
    InsideNoiseWarning,
    compare_targets,
    minimum_detectable_difference,
    outcome_flip_rate,
    pass_hat_k,
    trial_flip_rate,
)


def _by_k(table: pd.DataFrame) -> dict[int, float]:
    return dict(zip(table["k"], table["value"], strict=True))


def test_pass_hat_k_is_the_tau_bench_definition():
    s = scores({"a": ["pass", "pass", "fail"], "b": ["pass", "pass", "pass"]})
    got = _by_k(pass_hat_k(s, k=(1, 2, 3), n_boot=50))
    assert got[1] == pytest.approx((2 / 3 + 1) / 2)
    assert got[2] == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) = 1/3
    assert got[3] == pytest.approx((0 + 1) / 2)


def test_pass_hat_k_leaves_out_scenarios_with_fewer_trials_and_error_runs():
    s = scores({"a": ["pass", "error", "fail"], "b": ["pass", "pass", "pass"]})
    out = pass_hat_k(s, k=(2, 3, 4), n_boot=20).set_index("k")
    assert out.loc[2, "value"] == pytest.approx((0 + 1) / 2)  # a: c=1 of n=2 valid runs
    assert (out.loc[3, "value"], out.loc[3, "n"]) == (1.0, 1)  # only b has 3 outcomes
    assert out.loc[4, "n"] == 0 and pd.isna(out.loc[4, "value"]) and out.loc[4, "ci_too_wide"]


def test_pass_hat_k_with_another_success_definition_and_groups():
    s = scores({"a": ["fail", "fail"], "b": ["pass", "fail"]}).assign(goal=[True, True, False, True])
    s["agent"] = ["x", "x", "y", "y"]
    out = pass_hat_k(s, k=1, success="goal", by="agent", n_boot=20)
    assert dict(zip(out["agent"], out["value"], strict=True)) == {"x": 1.0, "y": 0.5}
    via_callable = pass_hat_k(s, k=1, success=lambda f: f["score"] > 5, n_boot=20)
    assert via_callable["value"].iloc[0] == pytest.approx((0 + 0.5) / 2)


def test_trial_flip_rate_across_seeds_and_trials():
    # One scenario, three runs: c1 [T, F, T] flips, c2 [T, T, T] does not.
    frame = rubric({"j": [True, True, False, True, True, True]}, criteria=("c1", "c2"))
    out = trial_flip_rate(frame, n_boot=20)
    v = {(r.criterion, r.statistic): r.value for r in out.itertuples()}
    assert v[("c1", "flip_rate")] == 1.0 and v[("c2", "flip_rate")] == 0.0
    assert v[(ALL, "flip_rate")] == 0.5
    assert set(out["n"]) == {1}  # one scenario: the bootstrap unit here


def test_outcome_flip_rate():
    s = scores({"a": ["pass", "fail", "pass"], "b": ["pass", "pass", "error"], "c": ["fail", "fail", "fail"]})
    v = dict(zip(*outcome_flip_rate(s, n_boot=20)[["statistic", "value"]].T.values, strict=True))
    assert v["flip_rate"] == pytest.approx(1 / 3)


def test_minimum_detectable_difference_by_hand():
    s = scores({"a": ["pass", "pass", "fail", "fail"], "b": ["pass", "pass", "pass", "fail"]})
    out = minimum_detectable_difference(s)
    pooled = (3 * (1 / 3) + 3 * 0.25) / 6  # within-scenario variances 1/3 and 1/4, 3 degrees of freedom each
    z = norm.ppf(0.975) + norm.ppf(0.8)
    assert out["value"].iloc[0] == pytest.approx(z * sqrt(2 * pooled / 8))
    assert (out["n"].iloc[0], out["n_items"].iloc[0]) == (2, 8)
    assert not out["ci_too_wide"].iloc[0] and "within-scenario" in out["method"].iloc[0]


def test_minimum_detectable_difference_with_one_run_per_scenario_uses_total_variance():
    s = scores({"a": ["pass"], "b": ["fail"], "c": ["pass"], "d": ["fail"]})
    out = minimum_detectable_difference(s, metric="score")
    z = norm.ppf(0.975) + norm.ppf(0.8)
    variance = pd.Series([8.0, 3.0, 8.0, 3.0]).var()
    assert out["value"].iloc[0] == pytest.approx(z * sqrt(2 * variance / 4))
    assert "total variance" in out["method"].iloc[0]


def test_compare_targets_warns_when_the_gap_is_inside_the_noise():
    a = scores({f"s{i}": ["pass", "fail", "pass"] for i in range(6)})
    b = scores({f"s{i}": ["pass", "pass", "fail"] for i in range(6)})
    with pytest.warns(InsideNoiseWarning, match="inside the noise"):
        out = compare_targets(a, b, labels=("new", "old"), n_boot=200)
    diff = out[out["statistic"] == "difference"].iloc[0]
    assert diff["value"] == 0.0 and diff["target_a"] == "new"
    assert out["warning"].notna().all()


def test_compare_targets_is_quiet_for_a_clear_gap():
    a = scores({f"s{i}": ["pass"] * 3 for i in range(12)})
    b = scores({f"s{i}": ["fail"] * 3 for i in range(12)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", InsideNoiseWarning)
        out = compare_targets(a, b, n_boot=200)
    assert out.set_index("statistic").loc["difference", "value"] == 1.0
    assert out["warning"].isna().all()


def test_compare_targets_score_metric_and_paired_scenarios():
    a = scores({"s0": ["pass"] * 3, "s1": ["fail"] * 3, "extra": ["pass"]})
    b = scores({"s0": ["fail"] * 3, "s1": ["fail"] * 3})
    # Two shared scenarios are the fixed set compared (issue #27): s0's three runs all differ by 5 points, s1's by
    # none, so the gap is clear. Resampling the two scenarios as clusters put 0 in the CI (half the resamples are s1
    # twice) and warned.
    with warnings.catch_warnings():
        warnings.simplefilter("error", InsideNoiseWarning)
        out = compare_targets(a, b, metric="score", n_boot=200).set_index("statistic")
    assert out.loc["value_a", "value"] == pytest.approx((8 * 3 + 3 * 3) / 6)  # the extra scenario is left out
    assert out.loc["difference", "value"] == pytest.approx(2.5)
    assert out.loc["difference", "ci_low"] == pytest.approx(2.5) and "fixed set" in out.loc["difference", "method"]
    # A scenario with a single run on a side shows no noise: no CI, and the gap is called inside the noise.
    with pytest.warns(InsideNoiseWarning, match="no 95% CI"):
        compare_targets(scores({"s0": ["pass"], "s1": ["fail"] * 2}), scores({"s0": ["fail"], "s1": ["fail"] * 2}))


def test_compare_targets_needs_shared_scenarios():
    with pytest.raises(ValueError, match="share no scenario"):
        compare_targets(scores({"a": ["pass"]}), scores({"b": ["pass"]}))
