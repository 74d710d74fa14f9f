"""The conversation bootstrap, the ci_too_wide rule, sample sizes and verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from convoeval.stats import (
    RESULT_COLUMNS,
    bootstrap_ci,
    bootstrap_statistic,
    ci_too_wide,
    interpret,
    percentile_interval,
    required_sample_size,
    resample_weights,
    sample_size_for_half_width,
)


def test_resample_weights_are_seeded_counts_of_clusters():
    w = resample_weights(7, n_boot=50, seed=3)
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all() and (w >= 0).all()
    np.testing.assert_array_equal(w, resample_weights(7, n_boot=50, seed=3))
    assert not np.array_equal(w, resample_weights(7, n_boot=50, seed=4))
    with pytest.raises(ValueError, match="n_boot"):
        resample_weights(3, n_boot=0)


def test_percentile_interval_skips_undefined_replicates():
    assert percentile_interval(np.array([np.nan, 1.0, 1.0, np.nan]), 0.9) == (1.0, 1.0)
    assert all(np.isnan(percentile_interval(np.array([np.nan, np.nan]))))
    with pytest.raises(ValueError, match="level"):
        percentile_interval(np.array([1.0]), 1.5)


def test_bootstrap_ci_keeps_a_conversation_drawn_twice_as_two():
    frame = pd.DataFrame({"run_id": ["a", "a", "b", "c", "c", "c"], "x": range(6)})
    # Every replicate holds 3 conversations, whichever were drawn, once the cluster ids are relabelled.
    assert bootstrap_ci(frame, lambda f: f["run_id"].nunique(), n_boot=30) == (3.0, 3.0)
    # Rows of one conversation travel together: the count of rows is a sum of whole conversation sizes.
    low, high = bootstrap_ci(frame, len, n_boot=200, seed=2)
    assert 3 <= low <= high <= 9


def test_bootstrap_ci_is_deterministic():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"run_id": np.repeat(np.arange(20), 3), "x": rng.random(60)})
    stat = lambda f: f["x"].mean()  # noqa: E731
    assert bootstrap_ci(frame, stat, n_boot=100, seed=9) == bootstrap_ci(frame, stat, n_boot=100, seed=9)


def test_bootstrap_statistic_returns_one_contract_row():
    frame = pd.DataFrame({"run_id": np.repeat(np.arange(12), 2), "x": np.tile([1.0, 0.0], 12)})
    row = bootstrap_statistic(frame, lambda f: f["x"].mean(), name="share", n_boot=50, method="mean of x")
    assert list(row.columns) == list(RESULT_COLUMNS)
    assert (row["value"].iloc[0], row["ci_low"].iloc[0], row["ci_high"].iloc[0]) == (0.5, 0.5, 0.5)
    assert (row["n"].iloc[0], row["n_items"].iloc[0]) == (12, 24)
    assert row["method"].iloc[0].startswith("mean of x; CI: BCa bootstrap over run_id")


@pytest.mark.parametrize(("low", "high", "n", "scale", "expected"), [
    (0.60, 0.90, 50, 1, False),   # half-width exactly 0.15
    (0.59, 0.90, 50, 1, True),
    (0.70, 0.80, 9, 1, True),     # fewer than 10 conversations
    (np.nan, 0.80, 50, 1, True),  # undefined CI
    (-1.0, 1.9, 50, 10, False),   # 1.45 points on a 0–10 statistic
    (-1.0, 2.1, 50, 10, True),
])
def test_ci_too_wide_rule(low, high, n, scale, expected):
    assert ci_too_wide(low, high, n=n, scale=scale) is expected


def test_required_sample_sizes_match_the_bloch_kraemer_figures():
    # judge-agreement notes: to claim alpha > .800 with 2 raters: 103, 164, 294, 560 items at 50/20/10/5% minority.
    got = [required_sample_size(prevalence=p) for p in (0.5, 0.2, 0.1, 0.05)]
    assert got == [103, 164, 294, 560]
    assert required_sample_size(power=0.8) > 103
    with pytest.raises(ValueError, match="must exceed"):
        required_sample_size(kappa_expected=0.7)


def test_sample_size_for_a_half_width():
    assert sample_size_for_half_width(0.1, prevalence=0.5) == 97  # 1.96² · .25 / .01 = 96.04
    assert sample_size_for_half_width(0.15, kappa=0.8, prevalence=0.5) == int(np.ceil(1.959964**2 * 0.36 / 0.0225))
    assert sample_size_for_half_width(0.5) == 10  # never below the minimum number of conversations


def test_interpret_reads_the_lower_bound():
    table = pd.DataFrame({
        "statistic": ["krippendorff_alpha", "krippendorff_alpha", "cohen_kappa", "icc_a1", "icc_a1", "mae"],
        "ci_low": [0.85, 0.70, 0.30, 0.80, 0.60, 0.2],
        "ci_too_wide": [False, False, True, False, False, False],
    })
    verdicts = interpret(table)["verdict"]
    assert verdicts[:5].tolist() == [
        "reliable (lower bound >= .800)", "tentative (lower bound .667-.800)",
        "inconclusive: CI too wide or too few conversations", "good (lower bound >= 0.75)",
        "moderate (lower bound >= 0.5)",
    ]
    assert pd.isna(verdicts[5])  # rates and biases describe; they are not graded


def test_every_interval_is_the_same_when_the_conversations_get_other_run_ids():
    # A replayed study holds the same conversations under new random run ids, its rows perhaps in another order (the
    # conversations finish in another order); its intervals must not move.
    from agreement_support import holistic, rubric

    from convoeval.stats import (
        binary_agreement,
        holistic_ratings,
        multi_rater_agreement,
        probe_effects,
        rubric_ratings,
        score_agreement,
        score_consistency,
        self_consistency,
    )
    from convoeval.stats.calibration import pass_rate_estimates

    rng = np.random.default_rng(7)
    n_runs, criteria = 9, ("c1", "c2")
    verdicts = {j: rng.random(n_runs * len(criteria) * 2).round().astype(bool).tolist() for j in "abc"}
    verdicts_frame = rubric(verdicts, criteria=criteria, samples=2)
    scores = holistic({j: rng.integers(0, 11, n_runs * 2).astype(float).tolist() for j in "ab"}, samples=2)
    labels = pd.DataFrame({"conversation": [f"r{i}" for i in range(n_runs)], "criterion": "c1", "rater": "ana",
                           "label": pd.array(rng.random(n_runs).round().astype(bool), "boolean"), "note": None,
                           "file": "labels.csv", "line": range(2, n_runs + 2)})
    first_a = rubric_ratings(verdicts_frame, samples="first").query("rater == 'a' and criterion == 'c1'")
    agrees = first_a.set_index("run_id")["passed"]
    # A rater who agrees with judge a but on r0: a judge with information, so Rogan–Gladen gives intervals to compare.
    informed = labels.assign(label=pd.array([bool(agrees[f"r{i}"]) != (i == 0) for i in range(n_runs)], "boolean"))
    pairs = pd.DataFrame({"probe": "verbosity", "run_id": [f"r{i}" for i in range(n_runs)], "instrument": "rubric",
                          "item": "c1", "before": rng.random(n_runs).round(), "after": rng.random(n_runs).round()})

    def tables(rename, shuffle=False):
        def new(frame):
            frame = frame.assign(run_id=frame["run_id"].map(rename))
            return frame.sample(frac=1, random_state=3) if shuffle else frame

        rub, hol = new(verdicts_frame), new(scores)
        first = rubric_ratings(rub, samples="first")
        return {
            "binary": binary_agreement(first, n_boot=200),
            "multi": multi_rater_agreement(first, n_boot=200),
            "scores": score_agreement(holistic_ratings(hol, samples="mean"), n_boot=200),
            "self": self_consistency(rub, n_boot=200),
            "score_consistency": score_consistency(hol, n_boot=200),
            # Rogan–Gladen, the one bootstrap among the calibrated estimators (9 labelled conversations: min_labels 5)
            "calibrated": pass_rate_estimates(rub, informed.assign(conversation=informed["conversation"].map(rename)),
                                              estimators=("rogan_gladen",), min_labels=5, n_boot=200),
            "probes": probe_effects(new(pairs), n_boot=200),
        }

    before = tables(lambda r: r)
    after = tables(lambda r: f"z{n_runs - int(r[1:])}", shuffle=True)  # the reverse order, as random ids may sort
    for name, table in before.items():
        assert len(table) and table["ci_low"].notna().any(), name
        pd.testing.assert_frame_equal(table.reset_index(drop=True), after[name].reset_index(drop=True), obj=name)
