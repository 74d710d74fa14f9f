"""Calibrated estimates: PPI/PPI++ against ppi_py's formulas and published example (the in-sample ``lam``,
``crossfit=False``), the cross-fitted ``lam`` against brute force, isotonic calibration, Rogan–Gladen on arrays, the
refusals, cluster-robust and stratified intervals, and the effective sample size."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from convoeval.stats.calibration._items import cluster_variance, prepare
from convoeval.stats.calibration.estimators import ESTIMATORS, calibrated_estimates, estimate
from convoeval.stats.calibration.isotonic import fit_isotonic, isotonic_mean
from convoeval.stats.calibration.ppi import (
    cluster_lambdas,
    judge_only_mean,
    labels_only_mean,
    ppi_lambda,
    ppi_mean,
    ppi_proportion,
)
from convoeval.stats.calibration.rogan_gladen import corrected_pass_rate, rogan_gladen_rate

Z = NormalDist().inv_cdf(0.975)


def _data(seed=0, n=600, share=0.15, bias=1.5, noise=0.8):
    rng = np.random.default_rng(seed)
    y = rng.normal(5, 2, n)
    s = y + bias + rng.normal(0, noise, n)
    labelled = rng.random(n) < share
    return s, np.where(labelled, y, np.nan), y, labelled


def _ppi_py(y, yhat, yhat_u, lam=None):
    """ppi_py.ppi_mean_ci (v0.2.3) for a 1-d mean, transcribed: _calc_lam_glm with an identity Hessian (clipped to
    [0, 1]), the point estimate, and ``sqrt(std(lam Yhat_u)^2 / N + std(Y - lam Yhat)^2 / n)`` (numpy std, ddof 0)."""
    n, big_n = len(y), len(yhat_u)
    if lam is None:
        est1 = yhat_u.mean() + (y - yhat).mean()
        grads, grads_hat = y - est1, yhat - est1
        gc, ghc = grads - grads.mean(), grads_hat - grads_hat.mean()
        cov = (1 / n) * (gc @ ghc + ghc @ gc)
        var = np.cov(np.concatenate([grads_hat, yhat_u - est1]))
        lam = float(np.clip(cov / (2 * (1 + n / big_n) * var), 0, 1))
    est = (lam * yhat_u).mean() + (y - lam * yhat).mean()
    se = np.sqrt((lam * yhat_u).std() ** 2 / big_n + (y - lam * yhat).std() ** 2 / n)
    return est, est - Z * se, est + Z * se, lam


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_ppi_matches_the_ppi_py_formulas(lam):
    # The non-cross-fitted variant (crossfit=False) is ppi_py's estimator exactly; a fixed lam has nothing to fit.
    s, labels, _, lab = _data()
    got = ppi_mean(s, labels, lam=lam, small=False, crossfit=False)
    want = _ppi_py(labels[lab], s[lab], s[~lab], lam)
    assert got.value == pytest.approx(want[0], rel=1e-12)
    assert (got.ci_low, got.ci_high) == pytest.approx(want[1:3], rel=1e-12)
    assert got.lam == pytest.approx(want[3], rel=1e-12)
    assert got.n_labelled == lab.sum() and got.n_unlabelled == (~lab).sum() and not got.refused
    # By default the interval is corrected for the G labelled conversations: variance x G/(G-1), t with G-1 df.
    corrected = ppi_mean(s, labels, lam=lam, crossfit=False)
    g = int(lab.sum())
    assert corrected.se == pytest.approx(got.se * np.sqrt(g / (g - 1)), rel=1e-12)
    assert corrected.ci_high - corrected.value == pytest.approx(corrected.se * student_t.ppf(0.975, g - 1))
    assert f"Student t with {g - 1} df" in corrected.method


def test_ppi_py_published_example_bias_corrected_exactly():
    # ppi_py tests/test_mean.py: Yhat = Y + 2 on 100 labelled, 10,000 unlabelled predictions of 2 -> estimate 0.
    y = np.random.default_rng(7).normal(0, 1, 100)
    judge, labels = np.concatenate([y + 2, np.full(10_000, 2.0)]), np.concatenate([y, np.full(10_000, np.nan)])
    est = ppi_mean(judge, labels, crossfit=False)
    assert est.value == pytest.approx(0.0, abs=1e-12) and est.lam == 1.0
    crossfitted = ppi_mean(judge, labels)          # every leave-one-out lam is 1 too (up to rounding)
    assert crossfitted.value == pytest.approx(0.0, abs=1e-12) and crossfitted.lam == pytest.approx(1.0, abs=1e-9)
    assert "cross-fitted" in crossfitted.method and "in-sample" in est.method


def _clustered(seed=2, conversations=60, share=0.3):
    """Conversations of 1-5 criteria sharing a conversation effect; some conversations only partly labelled."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, conversations)
    clusters = np.repeat(np.arange(conversations), sizes)
    y = rng.normal(size=conversations)[clusters] + 0.5 * rng.normal(size=clusters.size)
    s = 0.8 * y + 1 + rng.normal(0, 0.7, clusters.size)
    labelled = (rng.random(conversations) < share)[clusters] & (rng.random(clusters.size) < 0.8)
    return s, np.where(labelled, y, np.nan), clusters


def _clustered_variance(items, lam, drop=None):
    """PPI's clustered variance at ``lam``, with labelled conversation ``drop``'s labelled items left out."""
    lab = items.labelled & (items.codes != drop)
    y, h, hu = items.labels[lab], items.judge[lab], items.judge[~items.labelled]
    influence = np.zeros(items.judge.size)
    influence[lab] = ((y - y.mean()) - lam * (h - h.mean())) / y.size
    influence[~items.labelled] = lam * (hu - hu.mean()) / hu.size
    return cluster_variance(influence, items.codes, items.n_clusters)


def test_cluster_lambdas_minimise_the_clustered_variance_with_and_without_each_conversation():
    items = prepare(*_clustered())
    grid = np.linspace(0, 1, 20_001)
    best = grid[np.argmin([_clustered_variance(items, lam) for lam in grid])]
    in_sample = cluster_lambdas(items, leave_out=False)
    assert np.allclose(in_sample, in_sample[0]) and in_sample[0] == pytest.approx(best, abs=1e-4)
    assert 0.05 < best < 0.95                      # an interior minimum, not a clip
    left_out = cluster_lambdas(items)
    codes = np.unique(items.codes[items.labelled])
    assert left_out.size == codes.size == items.n_labelled_clusters
    for k in (0, 3, codes.size - 1):               # brute force: the variance without that conversation's labels
        want = grid[np.argmin([_clustered_variance(items, lam, drop=codes[k]) for lam in grid])]
        assert left_out[k] == pytest.approx(want, abs=1e-4)
    assert np.ptp(left_out) > 1e-3                 # the folds do differ


def test_a_conversations_lam_does_not_see_its_own_labels():
    s, labels, clusters = _clustered()
    before = cluster_lambdas(prepare(s, labels, clusters))
    first = clusters == clusters[~np.isnan(labels)][0]
    changed = labels.copy()
    changed[first & ~np.isnan(labels)] += 5.0      # rewrite the first labelled conversation's labels
    after = cluster_lambdas(prepare(s, changed, clusters))
    assert after[0] == pytest.approx(before[0], rel=1e-12)      # its own lam: untouched
    assert np.abs(after[1:] - before[1:]).min() > 1e-6           # every other lam saw the change


def test_crossfitted_ppi_plus_plus_is_the_formula_of_the_module():
    s, labels, clusters = _clustered()
    items = prepare(s, labels, clusters)
    est = ppi_mean(s, labels, clusters=clusters, small=False)
    lab = ~np.isnan(labels)
    per_conversation = dict(zip(np.unique(items.codes[lab]), cluster_lambdas(items), strict=True))
    lams = np.array([per_conversation[c] for c in items.codes[lab]])
    y, h, hu = labels[lab], s[lab], s[~lab]
    lam_bar = lams.mean()
    assert est.value == pytest.approx(lam_bar * hu.mean() + np.mean(y - lams * h), rel=1e-12)
    influence = np.zeros(s.size)
    influence[lab] = (y - lams * h - (y.mean() - lams * h.mean())) / y.size
    influence[~lab] = lam_bar * (hu - hu.mean()) / hu.size
    sums = pd.Series(influence).groupby(clusters).sum()
    assert est.se == pytest.approx(np.sqrt(np.sum(sums ** 2)), rel=1e-12)
    assert est.lam == pytest.approx(lam_bar) and (est.ci_low, est.ci_high) == pytest.approx(
        (est.value - Z * est.se, est.value + Z * est.se))


def test_crossfitting_changes_little_when_labels_are_many_and_items_independent():
    s, labels, _, _ = _data(n=4000, share=0.25)
    crossfitted, in_sample = ppi_mean(s, labels), ppi_mean(s, labels, crossfit=False)
    # Not equal even in-sample: ppi_py pools the judge's variance over labelled and unlabelled items, the clustered
    # variance weighs each by its own count (var_L / n + var_U / N).
    assert crossfitted.lam == pytest.approx(in_sample.lam, abs=0.03)
    assert crossfitted.value == pytest.approx(in_sample.value, abs=0.1 * in_sample.se)
    assert crossfitted.se == pytest.approx(in_sample.se, rel=0.01)


def test_ppi_plus_plus_corrects_a_biased_judge_and_beats_the_labels_alone():
    s, labels, y, _ = _data(bias=2.0)
    ppi, alone, naive = ppi_mean(s, labels), labels_only_mean(s, labels), judge_only_mean(s)
    assert naive.ci_low > 6.5                       # the judge's own interval is far from the truth (5)
    assert ppi.ci_low < 5 < ppi.ci_high and alone.ci_low < 5 < alone.ci_high
    assert ppi.ci_high - ppi.ci_low < 0.8 * (alone.ci_high - alone.ci_low)
    assert ppi.n_effective > 1.5 * ppi.n_labelled and alone.n_effective == alone.n_labelled
    assert np.isnan(naive.n_effective) and "naive" in naive.method


def test_a_judge_uncorrelated_with_the_labels_is_not_trusted():
    rng = np.random.default_rng(1)
    y = rng.normal(size=2000)
    s = rng.normal(size=2000)
    labels = np.where(np.arange(2000) < 200, y, np.nan)
    assert ppi_lambda(y[:200], s[:200], s[200:]) < 0.15
    ppi, alone = ppi_mean(s, labels), labels_only_mean(s, labels)
    assert (ppi.ci_high - ppi.ci_low) <= 1.02 * (alone.ci_high - alone.ci_low)


def test_ppi_proportion_clips_to_0_1_and_wants_verdicts():
    judge = np.ones(300)
    labels = np.where(np.arange(300) < 30, (np.arange(300) % 10 != 0).astype(float), np.nan)
    est = ppi_proportion(judge, labels)
    assert 0 <= est.ci_low <= est.value <= est.ci_high <= 1 and "clipped to [0, 1]" in est.method
    with pytest.raises(ValueError, match="0/1"):
        ppi_proportion(np.full(300, 7.0), labels)


def test_isotonic_fit_pools_ties_and_violators():
    xs, fx = fit_isotonic(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]))
    assert xs.tolist() == [1, 2, 3, 4] and fx.tolist() == [1.0, 2.5, 2.5, 4.0]


def test_isotonic_mean_uses_labels_where_known_and_the_calibrated_score_elsewhere():
    s = np.array([2.0, 4, 6, 8] * 50)
    y = (s >= 6).astype(float)
    y[[0, 4]] = 1.0                       # two labelled 2s pass: f(2) = 2/10 over the ten labelled 2s
    labels = np.where(np.arange(200) < 40, y, np.nan)
    est = isotonic_mean(s, labels, bounds=(0, 1))
    # labelled: 22 passes of 40; unlabelled: 40 of each score, f = (0.2, 0, 1, 1) pooled to (0.1, 0.1, 1, 1)
    assert est.value == pytest.approx((22 + 40 * 0.1 * 2 + 80) / 200)
    assert est.ci_low < est.value < est.ci_high and "cross-fitted" in est.method
    jack = isotonic_mean(s, labels, variance="jackknife", bounds=(0, 1))
    assert jack.value == est.value and "jackknife" in jack.method


def test_isotonic_refuses_when_scores_fall_outside_the_labelled_range():
    s, labels, _, lab = _data(seed=3)
    labels = np.where(lab & (s > 4) & (s < 8), labels, np.nan)   # label only middling scores
    est = isotonic_mean(s, labels)
    assert np.isnan(est.value) and np.isnan(est.ci_low)
    assert "outside the labelled scores' range" in est.refused
    assert not isotonic_mean(s, labels, max_outside=1.0).refused     # knowingly allowed: mapped flat, said so
    assert "mapped flat" in isotonic_mean(s, labels, max_outside=1.0).method


@pytest.mark.parametrize("name", ["labels_only", "ppi++", "ppi", "isotonic", "rogan_gladen"])
def test_every_estimator_refuses_too_few_or_identical_labels_with_a_reason(name):
    judge = np.array([1.0, 0.0] * 100)
    few = np.where(np.arange(200) < 9, judge, np.nan)
    est = estimate(name, judge, few)
    assert np.isnan(est.value) and "only 9 labelled conversation(s)" in est.refused
    same = np.where(np.arange(200) < 40, 1.0, np.nan)
    assert "same label" in estimate(name, judge, same).refused
    assert not estimate(name, judge, np.where(np.arange(200) < 40, judge, np.nan)).refused


def test_rogan_gladen_on_arrays_matches_the_formula_and_refuses_a_coin():
    judge = np.array([1, 1, 1, 0] * 50, dtype=float)
    labels = np.array([1, 1, 0, 0] * 10 + [np.nan] * 160)
    est = rogan_gladen_rate(judge, labels, n_boot=300)
    assert est.value == pytest.approx(corrected_pass_rate(0.75, 1.0, 0.5))
    assert est.ci_low <= est.value <= est.ci_high and "bootstrap over conversations" in est.method
    coin = np.array([1, 0, 1, 0] * 50, dtype=float)
    assert "no information" in rogan_gladen_rate(coin, np.array([1, 1, 0, 0] * 10 + [np.nan] * 160)).refused


def test_clustered_interval_does_not_shrink_when_a_conversation_is_copied():
    s, labels, _, _ = _data(n=300, share=0.3)
    single = ppi_mean(s, labels, lam=1, small=False)
    copies = 4  # each conversation holds 4 identical criteria: no new information
    tiled = ppi_mean(np.repeat(s, copies), np.repeat(labels, copies), clusters=np.repeat(np.arange(300), copies),
                     lam=1, small=False)
    naive = ppi_mean(np.repeat(s, copies), np.repeat(labels, copies), lam=1, small=False)
    assert tiled.value == pytest.approx(single.value)
    assert tiled.se == pytest.approx(single.se, rel=1e-9)
    assert naive.se == pytest.approx(single.se / 2, rel=1e-9)        # items as independent: sqrt(4) too narrow
    assert tiled.n_clusters == 300 and "conversation-clustered" in tiled.method
    iso = isotonic_mean(np.repeat(s, copies), np.repeat(labels, copies), clusters=np.repeat(np.arange(300), copies),
                        max_outside=1)
    assert iso.se > 1.5 * isotonic_mean(np.repeat(s, copies), np.repeat(labels, copies), max_outside=1).se


def test_stratified_estimate_weights_each_scenario_by_its_share():
    rng = np.random.default_rng(5)
    strata = np.repeat(["a", "b"], [100, 300])
    y = np.where(strata == "a", 0.2, 0.9) > rng.random(400)
    labels = np.full(400, np.nan)
    for name in ("a", "b"):                 # 20 labels in each, whatever its size
        idx = np.flatnonzero(strata == name)[:20]
        labels[idx] = y[idx]
    judge = y.astype(float)
    est = estimate("labels_only", judge, labels, strata=strata)
    mean_a, mean_b = labels[:20].mean(), labels[100:120].mean()
    assert est.value == pytest.approx(0.25 * mean_a + 0.75 * mean_b)
    se_a, se_b = (labels_only_mean(judge[m], labels[m]).se for m in (strata == "a", strata == "b"))
    assert est.se == pytest.approx(np.sqrt(0.25 ** 2 * se_a ** 2 + 0.75 ** 2 * se_b ** 2))
    assert "stratified over 2 strata" in est.method
    thin = labels.copy()
    thin[np.flatnonzero(strata == "a")[3:20]] = np.nan     # 3 labels left in stratum a
    assert "stratum 'a'" in estimate("ppi++", judge, thin, strata=strata).refused


def test_the_side_by_side_table_has_one_row_per_estimator_in_the_result_contract():
    s, labels, _, _ = _data()
    table = calibrated_estimates(s, labels, estimators=("judge_only", "labels_only", "ppi++", "isotonic"),
                                 scale=10, groups={"dimension": "overall"})
    assert table["estimator"].tolist() == ["judge_only", "labels_only", "ppi++", "isotonic"]
    assert list(table.columns[:2]) == ["dimension", "estimator"]
    assert {"n_labelled", "n_unlabelled", "n_effective", "refused", "value", "ci_low", "ci_high", "method",
            "ci_too_wide"} <= set(table.columns)
    assert set(ESTIMATORS) >= {"ppi++", "isotonic", "rogan_gladen", "labels_only", "judge_only"}
    with pytest.raises(ValueError, match="unknown estimator 'magic'"):
        estimate("magic", s, labels)


def test_inputs_are_checked_and_judge_gaps_are_left_out():
    s, labels, _, _ = _data(n=200, share=0.5)
    with pytest.raises(ValueError, match="judge has 200 values but labels has 199"):
        ppi_mean(s, labels[:-1])
    gappy = s.copy()
    gappy[:5] = np.nan
    est = ppi_mean(gappy, pd.array(np.where(np.isnan(labels), None, labels > 5), dtype="boolean"))
    assert "5 item(s) without a judge value left out" in est.method
