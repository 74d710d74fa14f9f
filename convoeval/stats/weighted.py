"""Cohen's kappa for two raters on more than two categories, unweighted or weighted (ordered categories).

``cohen_kappa`` (``stats.binary``) is pass/fail only and refuses other labels; ``weighted_kappa`` takes any labels:
with ``weights=None`` it is Cohen's (1960) kappa over all categories, with ``"linear"`` or ``"quadratic"`` Cohen's
(1968) weighted kappa, the disagreement between categories ``i`` and ``j`` (their positions in ``labels``) weighted
``|i - j|`` or ``(i - j)²``. The value is sklearn's ``cohen_kappa_score``; ``weighted_kappa_ci`` adds a
conversation-bootstrap interval, computed from per-conversation contingency tables (``_metric``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np
from sklearn.metrics import cohen_kappa_score

from convoeval.stats import _metric
from convoeval.stats.bootstrap import (
    canonical_codes,
    cluster_codes,
    cluster_sums,
    interval_of,
    jackknife_weights,
    resample_weights,
)
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from

__all__ = ["weighted_kappa", "weighted_kappa_ci"]


def _labels(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any] | None) -> list[Any]:
    x, y = list(a), list(b)
    if len(x) != len(y):
        raise ValueError(f"the raters have {len(x)} and {len(y)} labels; give one per item each")
    if labels is None:
        return sorted(set(x) | set(y))
    known = list(labels)
    unknown = sorted({str(v) for v in x + y if v not in known})
    if unknown:
        raise ValueError(f"label(s) {unknown} are not in labels={known}")
    return known


def weighted_kappa(a: Sequence[Any], b: Sequence[Any], *, weights: _metric.Weights = "quadratic",
                   labels: Sequence[Any] | None = None) -> float:
    """Cohen's kappa of two raters on any number of categories, weighted by how far apart they are; NaN if undefined.

    Args:
        a: Rater A's label per item.
        b: Rater B's label per item.
        weights: ``"quadratic"`` (default), ``"linear"``, or None for unweighted (nominal) kappa.
        labels: The categories in their order (the weights use positions in it); default the sorted labels seen.

    Example:
        >>> round(weighted_kappa([1, 2, 3, 3, 2], [1, 2, 3, 2, 2], weights="linear"), 4)
        0.7368
        >>> round(weighted_kappa(["low", "mid", "high"], ["low", "high", "high"], weights=None,
        ...                      labels=["low", "mid", "high"]), 4)
        0.5
    """
    cats = _labels(a, b, labels)
    _metric.kappa_weights(len(cats), weights)  # checks ``weights``
    if len(a) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one category only: sklearn warns and returns NaN, as reported here
        value = float(cohen_kappa_score(list(a), list(b), labels=cats, weights=weights))
    return value if np.isfinite(value) else float("nan")


def weighted_kappa_ci(
    a: Sequence[Any],
    b: Sequence[Any],
    *,
    clusters: Sequence[Any] | None = None,
    weights: _metric.Weights = "quadratic",
    labels: Sequence[Any] | None = None,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> tuple[float, float, float]:
    """``weighted_kappa`` with its bootstrap interval (BCa by default), resampling ``clusters`` (conversations).

    Args:
        a: Rater A's label per item.
        b: Rater B's label per item.
        clusters: The conversation of each item; default every item its own.
        weights: ``"quadratic"``, ``"linear"`` or None.
        labels: The categories in order.
        estimation: Replicates, level, seed and kind of interval (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``(value, ci_low, ci_high)``.

    Example:
        >>> rng = np.random.default_rng(1); a = rng.integers(1, 6, 60); b = np.clip(a + rng.integers(-1, 2, 60), 1, 5)
        >>> value, low, high = weighted_kappa_ci(a.tolist(), b.tolist(), estimation=Estimation(n_boot=300))
        >>> bool(low < value < high)
        True
    """
    est = estimation_from(estimation, deprecated, "weighted_kappa_ci")
    cats = _labels(a, b, labels)
    value = weighted_kappa(a, b, weights=weights, labels=cats)
    q = len(cats)
    position = {c: i for i, c in enumerate(cats)}
    cells = np.eye(q * q)[[position[x] * q + position[y] for x, y in zip(a, b, strict=True)]].reshape(-1, q * q)
    codes, n = cluster_codes(np.arange(len(cells)) if clusters is None else np.asarray(clusters, dtype=object))
    codes = canonical_codes(codes, n, cells)  # the same interval whatever the cluster ids
    per = cluster_sums(codes, n, cells)
    w = _metric.kappa_weights(q, weights)
    reps = _metric.weighted_kappa_from_tables(resample_weights(n, n_boot=est.n_boot, seed=est.seed) @ per, w)
    jack = _metric.weighted_kappa_from_tables(jackknife_weights(n) @ per, w)
    low, high = interval_of(reps, value, jack, est) if np.isfinite(value) else (float("nan"), float("nan"))
    return value, low, high
