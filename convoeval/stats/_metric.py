"""Krippendorff's alpha at every level of measurement, and weighted kappa, from sums over units.

Both statistics are functions of a table that is a sum over units (conversations): alpha of the coincidence matrix
(Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), weighted kappa of the two raters' contingency
table. So per-conversation tables times bootstrap weights (or leave-one-out weights, for the BCa acceleration) give
every replicate at once, as for the nominal coefficients in ``_nominal``.

Alpha: with ``o_ck`` the coincidences, ``n_c = Σ_k o_ck`` and ``n = Σ_c n_c``,
``alpha = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck``, where the distance ``δ²`` is the level's:

* nominal: 0 when ``c = k``, else 1;
* ordinal: ``(Σ_{g=c..k} n_g - (n_c + n_k)/2)²`` (ranks, from the coincidences' margins);
* interval: ``(v_c - v_k)²``;
* ratio: ``((v_c - v_k)/(v_c + v_k))²``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]
#: The levels of measurement alpha takes, in Krippendorff's order.
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
Weights = Literal["linear", "quadratic"] | None


def check_level(level: str) -> Level:
    """``level`` if it is one of ``LEVELS``; a ``ValueError`` naming them otherwise."""
    if level not in LEVELS:
        raise ValueError(f"level of measurement {level!r} is not one of {list(LEVELS)}")
    return level


def coincidences(counts: np.ndarray) -> np.ndarray:
    """``(units, q²)``: each unit's coincidences ``n_ic (n_ik - [c = k]) / (r_i - 1)``, 0 for units with one value."""
    counts = np.asarray(counts, dtype=float)
    q = counts.shape[1]
    r = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(q)[None]
    with np.errstate(invalid="ignore", divide="ignore"):
        coinc = np.where((r >= 2)[:, None, None], outer / (r - 1)[:, None, None], 0.0)
    return coinc.reshape(len(counts), q * q)


def distances(level: Level, values: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """``δ²`` between the categories, ``(..., q, q)``; ``margins`` ``(..., q)`` are the ``n_c`` (for ordinal)."""
    v = np.asarray(values, dtype=float)
    q = v.size
    out: np.ndarray
    if level == "nominal":
        out = 1.0 - np.eye(q)
        return out
    if level == "interval":
        out = (v[:, None] - v[None, :]) ** 2
        return out
    if level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = ((v[:, None] - v[None, :]) / (v[:, None] + v[None, :])) ** 2
        out = np.where(np.isfinite(ratio), ratio, 0.0)
        return out
    n = np.asarray(margins, dtype=float)
    cum = np.cumsum(n, axis=-1)
    # For c <= k: Σ_{g=c..k} n_g = cum_k - cum_c + n_c; the matrix is symmetric.
    upper = cum[..., None, :] - cum[..., :, None] + n[..., :, None]
    lower = np.swapaxes(upper, -1, -2)
    span = np.where(np.arange(q)[:, None] <= np.arange(q)[None, :], upper, lower)
    out = (span - (n[..., :, None] + n[..., None, :]) / 2) ** 2
    return out


def alpha(coinc: np.ndarray, values: np.ndarray, level: Level) -> np.ndarray:
    """Alpha from summed coincidences ``(..., q²)`` (one row per replicate); NaN where undefined."""
    values = np.asarray(values, dtype=float)
    q = values.size
    o = np.asarray(coinc, dtype=float).reshape(*np.shape(coinc)[:-1], q, q)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    delta = distances(level, values, n_c)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (o * delta).sum(axis=(-2, -1))
        expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
        out = 1 - (n - 1) * observed / expected
    out = np.where(n >= 2, out, np.nan)
    return np.where(np.isfinite(out), out, np.nan)


def kappa_weights(q: int, weights: Weights) -> np.ndarray:
    """Disagreement weights between category indices, as sklearn's ``cohen_kappa_score`` sets them."""
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    i, j = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    out: np.ndarray
    if weights is None:
        out = (i != j).astype(float)
    else:
        out = np.abs(i - j).astype(float) if weights == "linear" else ((i - j) ** 2).astype(float)
    return out


def weighted_kappa_from_tables(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted kappa ``1 - Σ w O / Σ w E`` of contingency tables ``(..., q²)`` (rows A, columns B)."""
    q = w.shape[0]
    t = np.asarray(tables, dtype=float).reshape(*np.shape(tables)[:-1], q, q)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = t.sum(axis=-1)[..., :, None] * t.sum(axis=-2)[..., None, :] / n[..., None, None]
        out = 1 - (w * t).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))
    return np.where(np.isfinite(out), out, np.nan)
