"""The overall interval and test treat the compared scenarios as the fixed set they are, and the
headline verdict reads every family it prints (so it cannot say "no detectable change" beside a regressed row)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from convoeval.compare import IMPROVED, NO_CHANGE, REGRESSED, compare
from convoeval.frames import RUN_SCHEMA, SCORE_SCHEMA, RunFrames, typed_frame
from convoeval.stats import percentile_interval, resample_weights
from convoeval.stats.strata import FIXED, RANDOM_SCENARIOS_FROM, SAMPLE, sign_flip_p, stratified_difference

ALPHA = 0.05


def frames(rows: list[tuple[str, int, float]], target: str) -> dict[str, pd.DataFrame]:
    """Frames with runs and scores only, from ``(scenario, seed, score)`` (status from the score)."""
    runs, scores = [], []
    for i, (scenario, seed, score) in enumerate(rows):
        keys = {"run_id": f"{target}-{i}", "scenario": scenario, "agent": "billing", "seed": seed, "trial": 1}
        runs.append({**keys, "target": target, "type": "conversational", "status": "completed"})
        scores.append({**keys, "status": "pass" if score >= 7 else "fail", "score": score, "error": None})
    return RunFrames.from_frames({"runs": typed_frame(runs, RUN_SCHEMA), "scores": typed_frame(scores, SCORE_SCHEMA)})


def issue_27(rng: np.random.Generator, n_seeds: int = 8) -> tuple[dict, dict]:
    """The issue's shape: 3 scenarios, two fall by 4.5 points, one is unchanged; small seed-to-seed noise."""
    rows_a, rows_b = [], []
    for scenario, drop in (("s1", 4.5), ("s2", 4.5), ("s3", 0.0)):
        for seed in range(n_seeds):
            base = float(rng.choice([6.5, 7.0, 7.5]))
            rows_a.append((scenario, seed, base))
            rows_b.append((scenario, seed, base - drop + float(rng.choice([-0.5, 0.0, 0.5])) * (drop > 0)))
    return frames(rows_a, "a"), frames(rows_b, "b")


def test_the_issues_comparison_is_a_regression_in_the_headline_and_the_overall_interval():
    result = compare(*issue_27(np.random.default_rng(3)), n_boot=1000)
    overall = result.overall
    assert overall["difference"] == pytest.approx(-3.0, abs=0.3)
    assert overall["ci_high"] < -2 and overall["scenarios_as"] == FIXED  # the interval excludes 0 by far
    assert overall["verdict"] == REGRESSED and result.verdict == REGRESSED
    assert result.exit_code(fail_on_regression=True) == 1
    assert result.reason() == "the overall score and 2 scenarios regressed"
    assert "CI within each of 3 scenario(s), as a fixed set" in result.lines()[4]
    # The old interval (the 3 scenarios resampled as clusters) reaches 0 on the same data: the issue's symptom.
    pairs = result.pairs
    d = (pairs["score_b"] - pairs["score_a"]).groupby(pairs["scenario"]).agg(["sum", "count"]).to_numpy()
    weights = resample_weights(3, n_boot=1000, seed=0)
    low, high = percentile_interval(weights @ d[:, 0] / (weights @ d[:, 1]))
    assert high == pytest.approx(0.0, abs=1e-9) and low < -4


def test_the_estimate_is_the_mean_of_per_scenario_differences_whatever_their_sizes():
    # s1: 2 pairs falling by 2; s2: 6 pairs unchanged. Pooled over pairs it would be -0.5; per scenario it is -1.
    a = [8.0] * 8
    b = [6.0, 6.0] + [8.0] * 6
    out = stratified_difference(a, b, ["s1"] * 2 + ["s2"] * 6, n_boot=200)
    assert out["difference"] == -1.0 and out["baseline"] == 8.0 and out["candidate"] == 7.0
    assert out["n"] == 8 and out["n_clusters"] == 2 and out["sd"] == 0.0
    # the same pairs in another order give the same interval
    again = stratified_difference(a[::-1], b[::-1], (["s1"] * 2 + ["s2"] * 6)[::-1], n_boot=200)
    assert (again["ci_low"], again["ci_high"]) == (out["ci_low"], out["ci_high"])


def test_a_scenario_with_a_single_pair_gives_no_interval_rather_than_a_falsely_exact_one():
    out = stratified_difference([5.0, 5.0, 5.0], [1.0, 4.0, 4.5], ["s1", "s2", "s2"], n_boot=100)
    assert np.isnan(out["ci_low"]) and out["scenarios_as"] == "none" and "single pair" in out["ci_method"]


def test_from_the_threshold_on_the_scenarios_are_resampled_as_a_sample_and_the_method_says_so():
    rng = np.random.default_rng(0)
    few, many = (stratified_difference(rng.normal(size=3 * s), rng.normal(size=3 * s), np.repeat(np.arange(s), 3),
                                       n_boot=100) for s in (RANDOM_SCENARIOS_FROM - 1, RANDOM_SCENARIOS_FROM))
    assert few["scenarios_as"] == FIXED and "within each of 19 scenarios" in few["ci_method"]
    assert many["scenarios_as"] == SAMPLE and "over 20 scenarios" in many["ci_method"]


def test_the_sign_flip_test_is_exact_for_few_pairs_and_calibrated_for_two_scenarios_of_three_seeds():
    assert sign_flip_p([5.0] * 6, [4.0] * 6, ["s"] * 6)[0] == pytest.approx(2 / 2**6)
    assert sign_flip_p([5.0] * 4, [5.0] * 4, ["s"] * 4)[0] == 1.0
    assert np.isnan(sign_flip_p([np.nan], [1.0], ["s"])[0])
    rng = np.random.default_rng(11)
    n = 400
    rejected = 0
    for _ in range(n):  # A/A: both sides from the same distribution, scenario levels shared
        level = np.repeat(rng.uniform(3, 9, 2), 3)
        rejected += sign_flip_p(level + rng.normal(0, 1, 6), level + rng.normal(0, 1, 6),
                                np.repeat(["s1", "s2"], 3))[0] < ALPHA
    assert rejected <= binom.ppf(0.99, n, ALPHA)


def test_the_headline_reads_every_family_and_the_gate_follows_it():
    rows = [(s, seed, 8.0) for s in ("s1", "s2", "s3") for seed in range(8)]
    result = compare(frames(rows, "a"), frames(rows, "b"), n_boot=100)
    assert result.verdict == NO_CHANGE and result.exit_code(fail_on_regression=True) == 0
    # One assertion regressed after Holm, the score unchanged: the headline says regressed and names it.
    assertion = pd.DataFrame([{"assertion": "payment_link_created", "scenarios": "s1, s2, s3", "n_pairs": 24,
                               "n_missing": 0, "baseline": 1.0, "candidate": 0.25, "difference": -0.75,
                               "pass_to_fail": 18, "fail_to_pass": 0, "p_value": 8e-6, "p_adjusted": 8e-6,
                               "verdict": REGRESSED, "method": "McNemar exact"}])
    broken = dataclasses.replace(result, assertions=assertion)
    assert broken.overall["verdict"] == NO_CHANGE and broken.verdict == REGRESSED
    assert broken.reason() == "1 assertion regressed"
    assert broken.lines()[3] == "verdict: REGRESSED — 1 assertion regressed"
    assert broken.exit_code(fail_on_regression=True) == 1 and broken.exit_code(fail_on_regression=False) == 0
    # An improvement alone makes the headline improved; with a regression beside it, regressed (both named).
    better = dataclasses.replace(result, assertions=assertion.assign(verdict=IMPROVED, difference=0.75))
    assert better.verdict == IMPROVED and better.exit_code(fail_on_regression=True) == 0
    both = dataclasses.replace(better, criteria=assertion.rename(columns={"assertion": "criterion"}))
    assert both.verdict == REGRESSED and both.reason() == "1 criterion regressed; 1 assertion improved"


def test_the_sign_flip_test_gives_scipys_exact_permutation_p_values():
    from scipy.stats import permutation_test

    rng = np.random.default_rng(5)
    for n in (5, 9, 14):
        a, b = rng.normal(size=n), rng.normal(0.5, 1, size=n).round(1)
        strata = rng.integers(0, 3, n)
        w = 1 / (np.bincount(strata)[strata] * len(set(strata)))
        ref = permutation_test(((b - a),), lambda x, axis, w=w: np.sum(x * w, axis=axis), permutation_type="samples",
                               vectorized=True, n_resamples=2**n, rng=0).pvalue
        assert sign_flip_p(a, b, strata)[0] == pytest.approx(ref)
