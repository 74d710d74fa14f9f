"""Isotonic calibration of judge scores (CJE-style): map each 0–10 score to the label it predicts, then average.

A judge's 0–10 score is rarely the label's scale (a pass rate, a human score): a judge that gives 8 to conversations a
person fails is biased, not useless, if its scores still *order* the conversations. The map ``f(score) = E[label |
score]`` is fitted on the labelled items by isotonic regression (monotone, no shape assumed; ``scipy.optimize.
isotonic_regression``), and the estimate is::

    theta = (sum of the labels + sum over unlabelled items of f(score)) / all items

Labelled items count with their own label; the rest with what their score predicts. Because the isotonic fit
preserves the labels' sum, this equals the labels' mean corrected by how the unlabelled scores differ from the
labelled ones.

**The interval includes the calibration's own variance.** To first order the estimate's influence is
``(f(s) - theta) / N_all`` for every item plus ``(label - f(s)) / n`` for each labelled one: the second term is the
calibrator's uncertainty. The residuals are **cross-fitted** (each labelled item's ``f`` is fitted on the other
folds: an in-sample isotonic fit follows its own noise and would make the interval too narrow). Folds hold whole
conversations, and the variance sums influences per conversation (cluster-robust). ``variance="jackknife"`` uses
CJE's alternative instead: the fold jackknife (refit without each fold of labels, ``(K-1)/K * sum (theta_k -
mean)^2``) for the calibration term; with 5 folds it has 4 degrees of freedom and is noisier (see
``benchmarks/RESULTS.md``).

**Refusals.** An isotonic map says nothing beyond the labelled scores' range (it is flat outside it): when more than
``max_outside`` of the unlabelled items score outside ``[min, max]`` of the labelled scores, the estimate is refused
(label some of those conversations). Fewer than ``min_labels`` labelled conversations, or identical labels, are
refused too.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
from numpy.typing import ArrayLike

from convoeval.stats.bootstrap import LEVEL
from convoeval.stats.calibration._items import (
    MIN_LABELS,
    Estimate,
    Items,
    clip_note,
    cluster_variance,
    effective_n,
    interval,
    prepare,
    refusal,
    refused,
    small_sample,
)
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from

__all__ = ["FOLDS", "MAX_OUTSIDE", "fit_isotonic", "isotonic_items", "isotonic_mean"]

#: Cross-fitting folds (CJE's default).
FOLDS = 5
#: Largest share of unlabelled items whose score may fall outside the labelled scores' range.
MAX_OUTSIDE = 0.05
_VARIANCES = ("cross-fit", "jackknife")


def fit_isotonic(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The increasing isotonic fit of ``labels`` on ``scores``: ``(distinct scores, fitted value at each)``.

    Ties in the score are pooled first (a 0–10 judge gives many), weighted by their count.

    Example:
        >>> xs, fx = fit_isotonic(np.array([1., 2, 2, 3]), np.array([0., 1, 0, 1]))
        >>> xs.tolist(), fx.tolist()
        ([1.0, 2.0, 3.0], [0.0, 0.5, 1.0])
    """
    from scipy.optimize import isotonic_regression  # noqa: PLC0415 - SciPy (>= 1.12) is heavy and used here only

    xs, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=labels) / counts
    fitted = isotonic_regression(means, weights=counts.astype(float), increasing=True).x
    return xs, np.asarray(fitted, dtype=float)


def _predict(fit: tuple[np.ndarray, np.ndarray], scores: np.ndarray) -> np.ndarray:
    xs, fx = fit
    predicted: np.ndarray = np.interp(scores, xs, fx)  # linear between labelled scores, flat beyond them
    return predicted


def _folds(items: Items, k: int, seed: int) -> np.ndarray:
    """A fold (0..k-1) per labelled item; a conversation's labelled items share one."""
    lab_codes = items.codes[items.labelled]
    clusters = np.unique(lab_codes)
    order = np.random.default_rng(seed).permutation(clusters.size)
    fold_of = np.empty(clusters.size, dtype=int)
    fold_of[order] = np.arange(clusters.size) % k
    folds: np.ndarray = fold_of[np.searchsorted(clusters, lab_codes)]
    return folds


def _estimate(s: np.ndarray, y: np.ndarray, lab: np.ndarray, fit: tuple[np.ndarray, np.ndarray]) -> float:
    return float((y[lab].sum() + _predict(fit, s[~lab]).sum()) / s.size)


def isotonic_mean(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    folds: int = FOLDS,
    variance: str = "cross-fit",
    max_outside: float = MAX_OUTSIDE,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> Estimate:
    """The mean label, from labels where known and isotonic-calibrated judge scores elsewhere, with its interval.

    Args:
        judge: The judge's score for every item (0–10, or 0/1 verdicts); NaN leaves the item out.
        labels: The label where known (pass/fail as 1/0, or a score), NaN elsewhere.
        clusters: The conversation of each item (folds and the variance keep a conversation together).
        folds: Cross-fitting folds.
        variance: ``"cross-fit"`` (default; cross-fitted residuals) or ``"jackknife"`` (CJE's fold jackknife).
        max_outside: Refuse when a larger share of unlabelled items scores outside the labelled scores' range.
        min_labels: Fewest labelled conversations accepted.
        bounds: Clip the estimate and interval to this range (``(0, 1)`` for a pass rate).
        small: The small-sample correction of ``ppi_mean`` (t with G - 1 df, variance x G/(G-1)).
        estimation: The level and the seed of the fold assignment (``Estimation``).
        **deprecated: ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        An ``Estimate`` (``extra`` holds ``outside``: unlabelled items scored outside the labelled range).

    Example:
        >>> s = np.array([2., 4, 6, 8] * 50); y = (s > 5).astype(float)       # scores 6 and 8 pass, 2 and 4 fail
        >>> labels = np.where(np.arange(200) < 40, y, np.nan)
        >>> round(isotonic_mean(s, labels).value, 3)
        0.5
    """
    est = estimation_from(estimation, deprecated, "isotonic_mean")
    return isotonic_items(prepare(judge, labels, clusters), folds=folds, variance=variance, max_outside=max_outside,
                          level=est.level, min_labels=min_labels, bounds=bounds, seed=est.seed, small=small)


def isotonic_items(items: Items, *, folds: int = FOLDS, variance: str = "cross-fit", max_outside: float = MAX_OUTSIDE,
                   level: float = LEVEL, min_labels: int = MIN_LABELS, bounds: tuple[float, float] | None = None,
                   seed: int = 0, strict: bool = True, small: bool = True) -> Estimate:
    """``isotonic_mean`` on checked ``Items``; ``strict=False`` accepts identical labels (one stratum of several)."""
    if variance not in _VARIANCES:
        raise ValueError(f"variance must be one of {_VARIANCES}, got {variance!r}")
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    reason = refusal(items, min_labels=min_labels, need_variation=strict)
    if reason:
        return refused("isotonic", items, reason, "isotonic calibration")
    s, y, lab = items.judge, items.labels, items.labelled
    low_s, high_s = float(s[lab].min()), float(s[lab].max())
    outside = int(((s[~lab] < low_s) | (s[~lab] > high_s)).sum())
    share = outside / max(1, int((~lab).sum()))
    if share > max_outside:
        return refused("isotonic", items, (
            f"{outside} of {int((~lab).sum())} unlabelled item(s) ({share:.0%}) score outside the labelled scores' "
            f"range [{low_s:g}, {high_s:g}], where the calibration knows nothing; label some of them (or raise "
            f"max_outside knowingly)"), "isotonic calibration")
    fit = fit_isotonic(s[lab], y[lab])
    value = _estimate(s, y, lab, fit)
    k = min(folds, items.n_labelled_clusters)
    fold = _folds(items, k, seed)
    lab_idx = np.flatnonzero(lab)
    oof = np.empty(lab_idx.size)
    jack = np.empty(k)
    for f in range(k):
        train = lab_idx[fold != f]
        fit_k = fit_isotonic(s[train], y[train])
        oof[fold == f] = _predict(fit_k, s[lab_idx[fold == f]])
        if variance == "jackknife":
            hidden = lab.copy()
            hidden[lab_idx[fold == f]] = False
            jack[f] = _estimate(s, y, hidden, fit_k)
    n_all = s.size
    spread = (_predict(fit, s) - value) / n_all
    var_scores = cluster_variance(spread, items.codes, items.n_clusters)
    if variance == "jackknife":
        var_cal = float((k - 1) / k * np.sum((jack - jack.mean()) ** 2))
        how = f"fold jackknife over {k} folds"
    else:
        resid = y[lab] - oof
        influence = np.zeros(n_all)
        influence[lab] = (resid - resid.mean()) / lab.sum()
        var_cal = cluster_variance(influence, items.codes, items.n_clusters)
        how = f"cross-fitted residuals over {k} folds"
    total = var_scores + var_cal
    corrected, df, quantile = small_sample(items, total, small and variance != "jackknife")
    if variance == "jackknife":  # CJE's reading: the jackknife term has K - 1 degrees of freedom at most
        quantile = "normal"
    se = float(np.sqrt(corrected))
    value, low, high = interval(value, se, level, bounds, df)
    method = (f"isotonic calibration of the judge's scores to the labels (labels where known); {level:.0%} CI: "
              f"{quantile}, with the calibration's variance ({how}); n labelled {int(lab.sum())}, unlabelled "
              f"{int((~lab).sum())}{clip_note(bounds)}")
    if outside:
        method += f"; {outside} unlabelled score(s) outside the labelled range [{low_s:g}, {high_s:g}], mapped flat"
    if items.dropped:
        method += f"; {items.dropped} item(s) without a judge value left out"
    return Estimate("isotonic", value, se, low, high, int(lab.sum()), int((~lab).sum()), items.n_clusters,
                    items.n_labelled_clusters, effective_n(items, total), method, extra={"outside": outside})
