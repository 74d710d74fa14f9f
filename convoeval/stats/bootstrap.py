"""The bootstrap resampled by cluster (a conversation, ``run_id``; or a scenario for trial-level statistics).

Criterion rows of one conversation are not independent (one judge call produces them all), so resampling rows would
make every CI too narrow. Every CI in ``convoeval.stats`` resamples whole clusters with replacement, seeded, and
reports an interval of the replicates that are defined (a replicate where, say, kappa is undefined because every
resampled item carries one label is left out): the **BCa** interval by default (bias-corrected and accelerated,
Efron 1987; the acceleration from the leave-one-cluster-out jackknife), which holds its level at 30 conversations
where the plain percentile interval covers 88–93% (``benchmarks/bench_agreement_coverage.py``), or the percentile
interval (``Estimation(interval="percentile")``). BCa falls back to the percentile interval when its bias correction
is undefined (every replicate on one side of the estimate).

Two ways in:

* ``resample_weights`` — a (replicates × clusters) matrix of how often each cluster was drawn, and
  ``jackknife_weights`` the (clusters × clusters) one that leaves each out once. The library's own statistics are
  sums over clusters, so a whole bootstrap is one matrix product (fast enough for B = 1000 per criterion per pair of
  raters).
* ``bootstrap_ci`` / ``bootstrap_statistic`` — any ``frame -> float`` function, re-run on each resampled frame
  (slower; for the bias probes and one-off analyses).
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import NormalDist
from typing import Any, Literal, Unpack

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from convoeval.stats._result import result_frame, stat_row
from convoeval.stats.estimation import DEFAULT, Estimation, EstimationAliases, estimation_from

#: How a statistic's jackknife interval is made: on Fisher's z (a coefficient in [-1, 1]) or as it is.
Transform = Literal["fisher", "none"]

N_BOOT = DEFAULT.n_boot
LEVEL = DEFAULT.level
_NORMAL = NormalDist()


def resample_weights(n_clusters: int, *, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """How many times each cluster is drawn in each bootstrap replicate.

    Args:
        n_clusters: Number of clusters (conversations).
        n_boot: Replicates.
        seed: Seed of ``numpy.random.default_rng``; the same seed gives the same weights.

    Returns:
        A float array of shape ``(n_boot, n_clusters)``; each row sums to ``n_clusters``.

    Example:
        >>> resample_weights(3, n_boot=2, seed=1).sum(axis=1).tolist()
        [3.0, 3.0]
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if n_clusters == 0:
        return np.zeros((n_boot, 0))
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters), size=n_boot).astype(float)


def percentile_interval(replicates: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of the finite replicates; ``(nan, nan)`` when none is finite.

    Example:
        >>> [round(x, 6) for x in percentile_interval(np.arange(101.0), 0.9)]
        [5.0, 95.0]
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    values = np.asarray(replicates, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def jackknife_weights(n_clusters: int) -> np.ndarray:
    """``(n_clusters, n_clusters)`` weights: row ``i`` leaves cluster ``i`` out and keeps every other once.

    Example:
        >>> jackknife_weights(3).tolist()
        [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """
    return np.ones((n_clusters, n_clusters)) - np.eye(n_clusters)


def bca_interval(replicates: np.ndarray, point: float, jackknife: np.ndarray,
                 level: float = LEVEL) -> tuple[float, float]:
    """The BCa interval (Efron 1987) of the finite replicates; the percentile interval when BCa is undefined.

    The bias correction ``z0`` is the normal quantile of the share of replicates below the estimate (ties count
    half: agreement statistics of a few conversations take few values); the acceleration
    ``a = Σ d³ / (6 (Σ d²)^1.5)`` with ``d`` the jackknife values' deviations from their mean.

    Args:
        replicates: The bootstrap replicates.
        point: The estimate on the data.
        jackknife: The statistic with each cluster left out once (NaN where undefined: left out).
        level: Confidence level.

    Example:
        >>> reps = np.random.default_rng(0).normal(size=2000)
        >>> low, high = bca_interval(reps, 0.0, np.linspace(-1, 1, 30), 0.9)
        >>> bool(-1.8 < low < -1.5 and 1.5 < high < 1.8)   # symmetric data: about the percentile interval
        True
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    values = np.asarray(replicates, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0 or not np.isfinite(point):
        return percentile_interval(values, level)
    # Ties within rounding: the same conversations summed in another order must not move the interval.
    tie = np.abs(values - point) <= 1e-9 * max(1.0, abs(point))
    below = (np.sum((values < point) & ~tie) + 0.5 * np.sum(tie)) / values.size
    if not 0 < below < 1:
        return percentile_interval(values, level)
    z0 = _NORMAL.inv_cdf(below)
    jack = np.asarray(jackknife, dtype=float)
    jack = jack[np.isfinite(jack)]
    d = jack.mean() - jack if jack.size >= 3 else np.zeros(0)
    spread = float(np.sum(d**2))
    accel = float(np.sum(d**3)) / (6 * spread**1.5) if spread > 0 else 0.0
    tail = (1 - level) / 2
    shares = []
    for z in (_NORMAL.inv_cdf(tail), _NORMAL.inv_cdf(1 - tail)):
        shifted = z0 + (z0 + z) / (1 - accel * (z0 + z))
        shares.append(_NORMAL.cdf(shifted) if np.isfinite(shifted) else (0.0 if z < 0 else 1.0))
    low, high = np.quantile(values, np.clip(shares, 0, 1))
    return float(low), float(high)


def jackknife_interval(point: float, jackknife: np.ndarray, level: float = LEVEL, *,
                       transform: Transform = "fisher") -> tuple[float, float]:
    """The jackknife interval: ``f(θ) ± t[G-1] · SE``, mapped back, with ``SE`` from the leave-one-out values.

    ``f`` is Fisher's z (``atanh``) for a coefficient in [-1, 1] (``transform="fisher"``) or the identity
    (``"none"``); ``SE² = Σ (p_i - p̄)² / (G (G - 1))`` over the pseudo-values ``p_i = G f(θ) - (G - 1) f(θ_(i))``
    of the ``G`` clusters, and ``t`` is Student's quantile with ``G - 1`` degrees of freedom. At 15–100
    conversations it covers 93–97% where the bootstrap intervals of the score statistics cover 88–92%
    (``benchmarks/bench_agreement_coverage.py``).

    Example:
        >>> low, high = jackknife_interval(0.5, np.array([0.45, 0.5, 0.55, 0.5]), 0.95, transform="none")
        >>> round(low, 3), round(high, 3)
        (0.305, 0.695)
    """
    jack = np.asarray(jackknife, dtype=float)
    jack = jack[np.isfinite(jack)]
    g = jack.size
    if g < 2 or not np.isfinite(point):
        return float("nan"), float("nan")
    fisher = transform == "fisher"
    edge = 1 - 1e-9
    f = (lambda x: np.arctanh(np.clip(x, -edge, edge))) if fisher else (lambda x: np.asarray(x, dtype=float))
    centre = float(f(point))
    pseudo = g * centre - (g - 1) * f(jack)
    se = float(np.sqrt(np.var(pseudo, ddof=1) / g))
    half = float(student_t.ppf(0.5 + level / 2, g - 1)) * se
    low, high = centre - half, centre + half
    return (float(np.tanh(low)), float(np.tanh(high))) if fisher else (low, high)


def interval_kind(estimation: Estimation, *, jackknife: bool, transform: Transform | None = None) -> str:
    """Which interval ``estimation`` gives a statistic: ``"bca"``, ``"percentile"`` or ``"jackknife"``.

    ``"auto"`` is the statistic's own: the jackknife for those that name a ``transform`` (the 0–10 score
    statistics), BCa for the rest; every kind but the percentile one needs the leave-one-out values.
    """
    kind = estimation.interval
    if kind == "auto":
        kind = "jackknife" if transform is not None else "bca"
    return kind if jackknife or kind == "percentile" else "percentile"


def interval_of(replicates: np.ndarray, point: float, jackknife: np.ndarray | None,
                estimation: Estimation = DEFAULT, *, transform: Transform | None = None) -> tuple[float, float]:
    """The interval ``estimation`` asks for (``interval_kind``) from the replicates and leave-one-out values."""
    kind = interval_kind(estimation, jackknife=jackknife is not None, transform=transform)
    if kind == "bca" and jackknife is not None:
        return bca_interval(replicates, point, jackknife, estimation.level)
    if kind == "jackknife" and jackknife is not None:
        return jackknife_interval(point, jackknife, estimation.level, transform=transform or "none")
    return percentile_interval(replicates, estimation.level)


def cluster_codes(values: pd.Series | np.ndarray) -> tuple[np.ndarray, int]:
    """Integer codes 0..C-1 for the clusters of ``values`` (first-appearance order) and C."""
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=False)
    return np.asarray(codes), len(uniques)


def canonical_codes(codes: np.ndarray, n_clusters: int, content: np.ndarray) -> np.ndarray:
    """Renumber clusters by what they hold (the per-cluster sums of ``content``), not by their labels.

    Conversation ids are random, so the same conversations read back or replayed under new ids would otherwise be
    matched to other columns of the same seeded ``resample_weights`` and give another interval. Clusters whose sums
    tie hold interchangeable data as far as a sum-based statistic can tell, so their order does not matter.

    Args:
        codes: Cluster code per row (``cluster_codes``).
        n_clusters: Number of clusters.
        content: Per-row values the statistic is computed from (rows × ...).

    Returns:
        New codes 0..C-1: cluster 0 has the smallest sums in lexicographic order.

    Example:
        >>> canonical_codes(np.array([0, 0, 1]), 2, np.array([1.0, 1.0, 0.0])).tolist()
        [1, 1, 0]
    """
    per = cluster_sums(codes, n_clusters, np.asarray(content, dtype=float).reshape(len(codes), -1))
    order = np.lexsort(per.T[::-1]) if per.size else np.arange(n_clusters)
    rank = np.empty(n_clusters, dtype=int)
    rank[order] = np.arange(n_clusters)
    ranked: np.ndarray = rank[np.asarray(codes, dtype=int)]
    return ranked


def cluster_sums(codes: np.ndarray, n_clusters: int, values: np.ndarray) -> np.ndarray:
    """Sum per-row ``values`` (rows × ...) into per-cluster rows (clusters × ...)."""
    values = np.asarray(values, dtype=float)
    out = np.zeros((n_clusters, *values.shape[1:]))
    np.add.at(out, codes, values)
    return out


def bootstrap_replicates(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    cluster: str = "run_id",
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> np.ndarray:
    """``statistic`` on ``n_boot`` cluster-resampled copies of ``frame``.

    In each copy the ``cluster`` column is replaced by the draw's position (0..C-1), so a conversation drawn twice
    counts as two conversations when the statistic pivots or groups on it.
    """
    if cluster not in frame:
        raise ValueError(f"the frame has no {cluster!r} column to resample by")
    codes, n_clusters = cluster_codes(frame[cluster])
    if n_clusters == 0:
        return np.full(n_boot, np.nan)
    members = [np.flatnonzero(codes == c) for c in range(n_clusters)]
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    for b in range(n_boot):
        draw = rng.integers(0, n_clusters, size=n_clusters)
        parts = [members[c] for c in draw]
        sample = frame.iloc[np.concatenate(parts)].copy()
        sample[cluster] = np.repeat(np.arange(n_clusters), [len(p) for p in parts])
        out[b] = statistic(sample)
    return out


def jackknife_replicates(frame: pd.DataFrame, statistic: Callable[[pd.DataFrame], float], *,
                         cluster: str = "run_id") -> np.ndarray:
    """``statistic`` on ``frame`` with each cluster left out once (BCa's acceleration)."""
    codes, n_clusters = cluster_codes(frame[cluster])
    return np.array([statistic(frame[codes != c]) for c in range(n_clusters)], dtype=float)


def bootstrap_ci(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    cluster: str = "run_id",
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> tuple[float, float]:
    """The bootstrap CI (BCa by default) of any ``frame -> float`` statistic, resampling whole clusters.

    Args:
        frame: Tidy rows; several rows may belong to one cluster.
        statistic: Computes the value from a frame shaped like ``frame``.
        cluster: The column naming the resampling unit (``estimation.cluster`` overrides it).
        estimation: Replicates, level, seed and kind of interval (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``(ci_low, ci_high)``.

    Example:
        >>> df = pd.DataFrame({"run_id": ["a", "a", "b", "c"], "x": [1.0, 1.0, 0.0, 1.0]})
        >>> low, high = bootstrap_ci(df, lambda f: f["x"].mean(), estimation=Estimation(n_boot=200))
        >>> 0.0 <= low <= high <= 1.0
        True
    """
    est = estimation_from(estimation, deprecated, "bootstrap_ci")
    unit = est.unit(cluster)
    reps = bootstrap_replicates(frame, statistic, cluster=unit, n_boot=est.n_boot, seed=est.seed)
    if est.interval != "bca" or not len(frame):
        return percentile_interval(reps, est.level)
    return bca_interval(reps, float(statistic(frame)), jackknife_replicates(frame, statistic, cluster=unit), est.level)


def bootstrap_statistic(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    name: str,
    cluster: str = "run_id",
    scale: float = 1.0,
    method: str = "",
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """One result row (the library's result contract) for any statistic: value, cluster-bootstrap CI, flag.

    Args:
        frame: Tidy rows.
        statistic: ``frame -> float``.
        name: The ``statistic`` column's value.
        cluster: Resampling unit column (``estimation.cluster`` overrides it).
        scale: 1 for 0–1 statistics, 10 for 0–10 score points (see ``ci_too_wide``).
        method: How the value is computed (the CI method is appended).
        estimation: Replicates, level, seed and kind of interval (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        A one-row frame with ``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.
    """
    est = estimation_from(estimation, deprecated, "bootstrap_statistic")
    unit = est.unit(cluster)
    value = float(statistic(frame)) if len(frame) else float("nan")
    reps = bootstrap_replicates(frame, statistic, cluster=unit, n_boot=est.n_boot, seed=est.seed)
    jack = jackknife_replicates(frame, statistic, cluster=unit) if len(frame) and est.interval == "bca" else None
    n = int(frame[unit].nunique(dropna=False)) if len(frame) else 0
    label = "; ".join(x for x in (method, ci_label(unit, est)) if x)
    row = summarize(name, value, reps, jackknife=jack, estimation=est, n=n, n_items=len(frame), method=label,
                    scale=scale)
    return result_frame([row], [])


def summarize(
    statistic: str,
    value: float,
    replicates: np.ndarray,
    *,
    n: int,
    n_items: int,
    method: str,
    jackknife: np.ndarray | None = None,
    estimation: Estimation = DEFAULT,
    transform: Transform | None = None,
    scale: float = 1.0,
    groups: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A result row from a point estimate, its bootstrap replicates and (for BCa and the jackknife interval) its
    leave-one-out values; ``transform`` names the statistic's jackknife interval (``interval_kind``)."""
    low, high = interval_of(replicates, value, jackknife, estimation, transform=transform)
    return stat_row(statistic, value, low, high, n=n, n_items=n_items, method=method, scale=scale, groups=groups)


def ci_label(cluster: str, estimation: Estimation = DEFAULT, *, jackknife: bool = True,
             transform: Transform | None = None) -> str:
    """How a CI was made, appended to every ``method`` (``jackknife=False``: the statistic has no leave-one-out
    values, so only the percentile interval; ``transform``: the statistic's jackknife interval)."""
    kind = interval_kind(estimation, jackknife=jackknife, transform=transform)
    level = f"{estimation.level:.0%}"
    if kind == "jackknife":
        scale = "on Fisher's z " if transform == "fisher" else ""
        return f"CI: jackknife over {cluster} {scale}with Student t, {level}"
    words = "BCa" if kind == "bca" else "percentile"
    return f"CI: {words} bootstrap over {cluster}, B={estimation.n_boot}, {level}"
