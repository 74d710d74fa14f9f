"""Rogan–Gladen (1978): a judge's pass rate corrected by its sensitivity and specificity measured on labels.

A judge with sensitivity ``q1`` (P(judge passes | truly passes)) and specificity ``q0`` (P(judge fails | truly
fails)) that passes a share ``p`` of the items implies a true pass rate ``theta = (p + q0 - 1) / (q0 + q1 - 1)``,
clipped to [0, 1]; NaN when ``q0 + q1 <= 1`` (such a judge is no better than a coin and its verdicts carry no
information about the true rate). The one place convoeval computes it: ``corrected_pass_rate`` is the formula,
``rogan_gladen_rate`` the estimate with its interval on arrays, and ``rogan_gladen_items`` the ``"rogan_gladen"``
entry of ``calibrated.ESTIMATORS``, through which ``pass_rate_estimates`` corrects a run's pass rates per criterion
beside PPI++ and isotonic calibration (``docs/agreement.md``, "Calibration: one function per question").

``p`` comes from every judged item (labelled or not), ``q1``/``q0`` from the labelled items; the interval is the
percentile bootstrap over conversations, resampling all three at once, so it carries the calibration's uncertainty
too. Conversations are numbered by what they hold (``canonical_codes``), so the same conversations read back under
other run ids, or in another order, get the same interval.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
from numpy.typing import ArrayLike

from convoeval.stats.bootstrap import (
    LEVEL,
    N_BOOT,
    canonical_codes,
    cluster_sums,
    percentile_interval,
    resample_weights,
)
from convoeval.stats.calibration._items import (
    MIN_LABELS,
    Estimate,
    Items,
    labels_only_variance,
    prepare,
    refusal,
    refused,
)
from convoeval.stats.calibration.ppi import check_binary
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from

__all__ = ["corrected_pass_rate", "rogan_gladen_items", "rogan_gladen_rate"]


def corrected_pass_rate(p: float | np.ndarray, sensitivity: float | np.ndarray,
                        specificity: float | np.ndarray) -> float | np.ndarray:
    """Rogan–Gladen: ``theta = (p + q0 - 1) / (q0 + q1 - 1)``, clipped to [0, 1]; NaN when ``q0 + q1 <= 1``.

    Args:
        p: The judge's observed pass rate.
        sensitivity: q1 = P(judge passes | truly passes).
        specificity: q0 = P(judge fails | truly fails).

    Example:
        >>> round(corrected_pass_rate(0.62, 0.9, 0.8), 4)   # (0.62 + 0.8 - 1) / (0.8 + 0.9 - 1)
        0.6
        >>> corrected_pass_rate(0.5, 0.5, 0.5)
        nan
    """
    p, q1, q0 = (np.asarray(v, dtype=float) for v in (p, sensitivity, specificity))
    denominator = q0 + q1 - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.where(denominator > 0, np.clip((p + q0 - 1) / denominator, 0, 1), np.nan)
    return float(theta) if theta.ndim == 0 else theta


def _corrected(sums: np.ndarray) -> np.ndarray:
    passes, judged, tp, pos, tn, neg = (sums[:, i] for i in range(6))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.atleast_1d(corrected_pass_rate(passes / judged, tp / pos, tn / neg))


def rogan_gladen_items(items: Items, *, level: float = LEVEL, n_boot: int = N_BOOT, seed: int = 0,
                       min_labels: int = MIN_LABELS, strict: bool = True, **_: object) -> Estimate:
    """``rogan_gladen_rate`` on checked ``Items``."""
    check_binary(items, "rogan_gladen_rate")
    reason = refusal(items, min_labels=min_labels, need_variation=strict)
    if reason:
        return refused("rogan_gladen", items, reason, "Rogan-Gladen")
    j, h, lab = items.judge, np.nan_to_num(items.labels), items.labelled
    cols = np.column_stack([j, np.ones_like(j), lab & (j == 1) & (h == 1), lab & (h == 1),
                            lab & (j == 0) & (h == 0), lab & (h == 0)]).astype(float)
    codes = canonical_codes(items.codes, items.n_clusters, cols)  # the same interval whatever the run ids
    per = cluster_sums(codes, items.n_clusters, cols)
    value = float(_corrected(per.sum(axis=0)[None])[0])
    if not np.isfinite(value):
        return refused("rogan_gladen", items, "sensitivity + specificity <= 1 on the labels: the judge's verdicts "
                       "carry no information about the true rate", "Rogan-Gladen")
    reps = _corrected(resample_weights(items.n_clusters, n_boot=n_boot, seed=seed) @ per)
    low, high = percentile_interval(reps, level)
    finite = reps[np.isfinite(reps)]
    variance = float(np.var(finite, ddof=1)) if finite.size > 1 else float("nan")
    n_lab = items.n_labelled
    n_eff = n_lab * labels_only_variance(items) / variance if variance > 0 else float("nan")
    method = (f"Rogan-Gladen (p + q0 - 1)/(q0 + q1 - 1), clipped to [0, 1]; percentile bootstrap over conversations, "
              f"B={n_boot}, {level:.0%}; n labelled {n_lab}, unlabelled {len(j) - n_lab}")
    return Estimate("rogan_gladen", value, float(np.sqrt(variance)), low, high, n_lab, len(j) - n_lab,
                    items.n_clusters, items.n_labelled_clusters, float(n_eff), method)


def rogan_gladen_rate(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    min_labels: int = MIN_LABELS,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> Estimate:
    """The Rogan–Gladen corrected pass rate of 0/1 judge verdicts, with a conversation-bootstrap interval.

    Args:
        judge: The judge's verdict (1 pass, 0 fail) for every item; NaN leaves the item out.
        labels: The true verdict where known, NaN elsewhere.
        clusters: The conversation of each item (the bootstrap resamples conversations).
        min_labels: Fewest labelled conversations accepted.
        estimation: Level, replicates and seed of the bootstrap (``Estimation``; its interval is the percentile one).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        An ``Estimate``; refused when labels are too few, all one verdict, or the judge is no better than a coin.

    Example:
        >>> judge = np.array([1, 1, 1, 0] * 50); labels = np.array([1, 1, 0, 0] * 10 + [np.nan] * 160)
        >>> round(rogan_gladen_rate(judge, labels, estimation=Estimation(n_boot=200)).value, 3)   # p .75, q1 1, q0 .5: (.75 + .5 - 1)/.5
        0.5
    """
    est = estimation_from(estimation, deprecated, "rogan_gladen_rate")
    return rogan_gladen_items(prepare(judge, labels, clusters), level=est.level, n_boot=est.n_boot, seed=est.seed,
                              min_labels=min_labels)
