"""Percentile bootstrap resampled by cluster (a conversation, ``run_id``; or a scenario for trial-level statistics).

Criterion rows of one conversation are not independent (one judge call produces them all), so resampling rows would
make every CI too narrow. Every CI in ``convoeval.stats`` resamples whole clusters with replacement, seeded, and
reports the percentile interval of the replicates that are defined (a replicate where, say, kappa is undefined
because every resampled item carries one label is left out).

Two ways in:

* ``resample_weights`` — a (replicates × clusters) matrix of how often each cluster was drawn. The library's own
  statistics are sums over clusters, so a whole bootstrap is one matrix product (fast enough for B = 1000 per
  criterion per pair of raters).
* ``bootstrap_ci`` / ``bootstrap_statistic`` — any ``frame -> float`` function, re-run on each resampled frame
  (slower; for the bias probes and one-off analyses).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from convoeval.stats._result import result_frame, stat_row

N_BOOT = 1000
LEVEL = 0.95


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


def bootstrap_ci(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    cluster: str = "run_id",
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile CI of any ``frame -> float`` statistic, resampling whole clusters.

    Args:
        frame: Tidy rows; several rows may belong to one cluster.
        statistic: Computes the value from a frame shaped like ``frame``.
        cluster: The column naming the resampling unit.
        n_boot: Replicates.
        level: Confidence level.
        seed: RNG seed (deterministic).

    Returns:
        ``(ci_low, ci_high)``.

    Example:
        >>> df = pd.DataFrame({"run_id": ["a", "a", "b", "c"], "x": [1.0, 1.0, 0.0, 1.0]})
        >>> low, high = bootstrap_ci(df, lambda f: f["x"].mean(), n_boot=200)
        >>> 0.0 <= low <= high <= 1.0
        True
    """
    reps = bootstrap_replicates(frame, statistic, cluster=cluster, n_boot=n_boot, seed=seed)
    return percentile_interval(reps, level)


def bootstrap_statistic(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], float],
    *,
    name: str,
    cluster: str = "run_id",
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
    scale: float = 1.0,
    method: str = "",
) -> pd.DataFrame:
    """One result row (the library's result contract) for any statistic: value, cluster-bootstrap CI, flag.

    Args:
        frame: Tidy rows.
        statistic: ``frame -> float``.
        name: The ``statistic`` column's value.
        cluster: Resampling unit column.
        n_boot: Replicates.
        level: Confidence level.
        seed: RNG seed.
        scale: 1 for 0–1 statistics, 10 for 0–10 score points (see ``ci_too_wide``).
        method: How the value is computed (the CI method is appended).

    Returns:
        A one-row frame with ``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.
    """
    value = float(statistic(frame)) if len(frame) else float("nan")
    reps = bootstrap_replicates(frame, statistic, cluster=cluster, n_boot=n_boot, seed=seed)
    n = int(frame[cluster].nunique(dropna=False)) if len(frame) else 0
    label = "; ".join(x for x in (method, ci_label(cluster, n_boot, level)) if x)
    row = summarize(name, value, reps, n=n, n_items=len(frame), method=label, level=level, scale=scale)
    return result_frame([row], [])


def summarize(
    statistic: str,
    value: float,
    replicates: np.ndarray,
    *,
    n: int,
    n_items: int,
    method: str,
    level: float = LEVEL,
    scale: float = 1.0,
    groups: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A result row from a point estimate and its bootstrap replicates (percentile CI, ``ci_too_wide`` flag)."""
    low, high = percentile_interval(replicates, level)
    return stat_row(statistic, value, low, high, n=n, n_items=n_items, method=method, scale=scale, groups=groups)


def ci_label(cluster: str, n_boot: int, level: float) -> str:
    """How a CI was made, appended to every ``method``."""
    return f"CI: percentile bootstrap over {cluster}, B={n_boot}, {level:.0%}"
