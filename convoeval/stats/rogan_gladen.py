"""Rogan–Gladen on arrays: the judge's pass rate corrected by its sensitivity and specificity on the labelled slice.

The same correction as ``labels.calibrated_pass_rates`` (which works on the runs' frames and reports the
sensitivity and specificity too), returned as an ``Estimate`` so it can stand beside PPI++ and isotonic calibration
and be studied with them (``benchmarks/bench_calibration_coverage.py``). ``p`` is the judge's pass rate over every
judged item (labelled or not), ``q1``/``q0`` come from the labelled items; the interval is the percentile bootstrap
over conversations, resampling all three at once.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from convoeval.stats._estimate import MIN_LABELS, Estimate, Items, labels_only_variance, prepare, refusal, refused
from convoeval.stats.bootstrap import LEVEL, N_BOOT, cluster_sums, percentile_interval, resample_weights
from convoeval.stats.labels import corrected_pass_rate
from convoeval.stats.ppi import check_binary

__all__ = ["rogan_gladen_items", "rogan_gladen_rate"]


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
    per = cluster_sums(items.codes, items.n_clusters, cols)
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
    level: float = LEVEL,
    n_boot: int = N_BOOT,
    seed: int = 0,
    min_labels: int = MIN_LABELS,
) -> Estimate:
    """The Rogan–Gladen corrected pass rate of 0/1 judge verdicts, with a conversation-bootstrap interval.

    Args:
        judge: The judge's verdict (1 pass, 0 fail) for every item; NaN leaves the item out.
        labels: The true verdict where known, NaN elsewhere.
        clusters: The conversation of each item (the bootstrap resamples conversations).
        level: Confidence level.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.
        min_labels: Fewest labelled conversations accepted.

    Returns:
        An ``Estimate``; refused when labels are too few, all one verdict, or the judge is no better than a coin.

    Example:
        >>> judge = np.array([1, 1, 1, 0] * 50); labels = np.array([1, 1, 0, 0] * 10 + [np.nan] * 160)
        >>> round(rogan_gladen_rate(judge, labels, n_boot=200).value, 3)   # p .75, q1 1, q0 .5: (.75 + .5 - 1)/.5
        0.5
    """
    return rogan_gladen_items(prepare(judge, labels, clusters), level=level, n_boot=n_boot, seed=seed,
                              min_labels=min_labels)
