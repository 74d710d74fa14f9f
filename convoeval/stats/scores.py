"""Two raters on 0–10 holistic scores (judge vs judge, or judge vs human scores).

Statistics of rater A against rater B, per dimension:

* ``icc_a1`` — ICC(A,1), two-way, absolute agreement, single rater (McGraw & Wong 1996; Shrout & Fleiss' ICC(2,1)):
  ``(MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE) / n)``. The primary statistic: a judge that scores everything
  two points higher is penalised. < .5 poor, .5–.75 moderate, .75–.9 good, > .9 excellent (judge the lower bound).
* ``icc_c1`` — ICC(C,1), consistency: ignores a constant offset between raters.
* ``icc_11`` — ICC(1,1), one-way random: each conversation could have been scored by other raters, so rater
  effects are noise (Shrout & Fleiss' case 1).
* ``icc_ak``, ``icc_ck``, ``icc_1k`` — the average-rater forms (ICC(2,k), ICC(3,k), ICC(1,k)): the reliability of the
  mean of the ``k`` raters' scores (two here), for a score reported as the judges' average.
* ``krippendorff_alpha_ordinal``, ``krippendorff_alpha_interval`` — Krippendorff's alpha with the 0–10 scores as
  ranks or as an interval scale (the holistic scores are ordinal; ``krippendorff`` package).
* ``weighted_kappa`` — quadratic-weighted Cohen's kappa over the integer labels 0..10 (scores are rounded first);
  ``linear_weighted_kappa`` the same with linear weights.
* ``spearman``, ``kendall_tau_b`` — rank correlations (scipy).
* ``mean_bias`` (A − B), ``mae``, ``within_1`` (share with ``|A − B| <= 1``).
* ``loa_low``, ``loa_high`` — Bland–Altman 95% limits of agreement, ``bias ± 1.96 · SD(A − B)``.

Point estimates use scipy/sklearn/krippendorff where they exist; the bootstrap recomputes each statistic with
conversation weights in vectorised form (tested equal to the libraries on the unweighted data and on duplicated
rows), and the BCa interval's jackknife is the same form with leave-one-out weights.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Unpack

import numpy as np
import pandas as pd
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from convoeval.stats import _metric
from convoeval.stats._result import result_frame
from convoeval.stats._wide import as_tuple, iter_groups, pivot, resolve_pairs
from convoeval.stats.bootstrap import (
    Transform,
    canonical_codes,
    ci_label,
    cluster_codes,
    jackknife_weights,
    resample_weights,
    summarize,
)
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.multi import krippendorff_alpha

#: Score statistics, how they are computed, and their scale (10 = in score points, for the ``ci_too_wide`` rule).
SCORE_METHODS: dict[str, tuple[str, float]] = {
    "icc_a1": ("ICC(A,1) two-way absolute agreement, single rater", 1.0),
    "icc_c1": ("ICC(C,1) two-way consistency, single rater", 1.0),
    "icc_11": ("ICC(1,1) one-way random, single rater", 1.0),
    "icc_ak": ("ICC(A,k) two-way absolute agreement, mean of the k raters (Shrout & Fleiss ICC(2,k))", 1.0),
    "icc_ck": ("ICC(C,k) two-way consistency, mean of the k raters (Shrout & Fleiss ICC(3,k))", 1.0),
    "icc_1k": ("ICC(1,k) one-way random, mean of the k raters", 1.0),
    "krippendorff_alpha_ordinal": ("krippendorff.alpha(level_of_measurement='ordinal')", 1.0),
    "krippendorff_alpha_interval": ("krippendorff.alpha(level_of_measurement='interval')", 1.0),
    "weighted_kappa": ("sklearn cohen_kappa_score(weights='quadratic', labels=0..10) on rounded scores", 1.0),
    "linear_weighted_kappa": ("sklearn cohen_kappa_score(weights='linear', labels=0..10) on rounded scores", 1.0),
    "spearman": ("scipy.stats.spearmanr", 1.0),
    "kendall_tau_b": ("scipy.stats.kendalltau (tau-b)", 1.0),
    "mean_bias": ("mean(A - B), score points", 10.0),
    "mae": ("mean |A - B|, score points", 10.0),
    "within_1": ("share with |A - B| <= 1", 1.0),
    "loa_low": ("Bland-Altman: mean(A - B) - 1.96 SD(A - B)", 10.0),
    "loa_high": ("Bland-Altman: mean(A - B) + 1.96 SD(A - B)", 10.0),
}
SCORE_LABELS = list(range(11))
LOA_Z = 1.96


#: The six intraclass correlations ``icc`` returns: McGraw & Wong's name, Shrout & Fleiss' name.
ICC_FORMS = {
    "icc_11": ("ICC(1)", "ICC(1,1)"),
    "icc_a1": ("ICC(A,1)", "ICC(2,1)"),
    "icc_c1": ("ICC(C,1)", "ICC(3,1)"),
    "icc_1k": ("ICC(k)", "ICC(1,k)"),
    "icc_ak": ("ICC(A,k)", "ICC(2,k)"),
    "icc_ck": ("ICC(C,k)", "ICC(3,k)"),
}


def icc(data: np.ndarray | pd.DataFrame, weights: np.ndarray | None = None) -> dict[str, np.ndarray | float]:
    """The six intraclass correlations of an ``items × raters`` table without missing values (ANOVA).

    Single-rater forms ICC(1,1) (one-way), ICC(A,1) = ICC(2,1) (two-way, absolute agreement), ICC(C,1) = ICC(3,1)
    (two-way, consistency), and their average-rater forms for the mean of the ``k`` raters (``ICC_FORMS``).

    Args:
        data: One row per item (conversation), one column per rater.
        weights: Optional ``(replicates, items)`` counts (bootstrap); each row gives one ICC per replicate.

    Returns:
        ``{"icc_11", "icc_a1", "icc_c1", "icc_1k", "icc_ak", "icc_ck"}`` — floats, or arrays with ``weights``.

    Example:
        >>> sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
        >>> {k: round(v, 2) for k, v in icc(sf).items()}   # Shrout & Fleiss (1979), Table 4
        {'icc_11': 0.17, 'icc_a1': 0.29, 'icc_c1': 0.71, 'icc_1k': 0.44, 'icc_ak': 0.62, 'icc_ck': 0.91}
    """
    x = np.asarray(data, dtype=float)
    single = weights is None
    w = np.ones((1, x.shape[0])) if single else np.atleast_2d(np.asarray(weights, dtype=float))
    n, k = w.sum(axis=1), x.shape[1]
    row_means = x.mean(axis=1)
    grand = (w @ row_means) / n
    col_means = (w @ x) / n[:, None]
    ss_rows = k * (w @ row_means**2 - n * grand**2)
    ss_cols = n * ((col_means - grand[:, None]) ** 2).sum(axis=1)
    ss_total = w @ (x**2).sum(axis=1) - n * k * grand**2
    ss_error = ss_total - ss_rows - ss_cols
    with np.errstate(invalid="ignore", divide="ignore"):
        msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
        mse = ss_error / ((n - 1) * (k - 1))
        msw = (ss_total - ss_rows) / (n * (k - 1))
        forms = {
            "icc_11": (msr - msw) / (msr + (k - 1) * msw),
            "icc_a1": (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
            "icc_c1": (msr - mse) / (msr + (k - 1) * mse),
            "icc_1k": (msr - msw) / msr,
            "icc_ak": (msr - mse) / (msr + (msc - mse) / n),
            "icc_ck": (msr - mse) / msr,
        }
    out = {name: np.where(np.isfinite(v), v, np.nan) for name, v in forms.items()}
    return {name: float(v[0]) for name, v in out.items()} if single else dict(out)


def _tables(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: its coincidences over the pair's distinct scores, those scores, and its cell of the 11 × 11 table of
    rounded scores (one-hot), so weighted sums give alpha and weighted kappa for any bootstrap or jackknife row."""
    values = np.unique(np.concatenate([x, y]))
    counts = np.zeros((len(x), len(values)))
    rows = np.arange(len(x))
    np.add.at(counts, (rows, np.searchsorted(values, x)), 1)
    np.add.at(counts, (rows, np.searchsorted(values, y)), 1)
    xr, yr = (np.clip(np.rint(v), 0, 10).astype(int) for v in (x, y))
    cells = np.eye(len(SCORE_LABELS) ** 2)[xr * len(SCORE_LABELS) + yr]
    return _metric.coincidences(counts), values, cells


def _weighted(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """Every score statistic for each row of bootstrap counts ``w`` ``(replicates, items)``."""
    n = w.sum(axis=1)
    coinc, values, cells = _tables(x, y)
    d = x - y
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = (w @ d) / n
        sd = np.sqrt(np.maximum(w @ d**2 - n * bias**2, 0) / (n - 1))
        xr, yr = np.rint(x), np.rint(y)
        mx, my = (w @ xr) / n, (w @ yr) / n
        vx, vy = (w @ xr**2) / n - mx**2, (w @ yr**2) / n - my**2
        qwk = 1 - ((w @ (xr - yr) ** 2) / n) / (vx + vy + (mx - my) ** 2)
        out = {
            **icc(np.column_stack([x, y]), w),
            "krippendorff_alpha_ordinal": _metric.alpha(w @ coinc, values, "ordinal"),
            "krippendorff_alpha_interval": _metric.alpha(w @ coinc, values, "interval"),
            "weighted_kappa": qwk,
            "linear_weighted_kappa": _metric.weighted_kappa_from_tables(
                w @ cells, _metric.kappa_weights(len(SCORE_LABELS), "linear")),
            "spearman": _weighted_pearson(_multiset_ranks(x, w), _multiset_ranks(y, w), w),
            "kendall_tau_b": _weighted_tau_b(x, y, w),
            "mean_bias": bias,
            "mae": (w @ np.abs(d)) / n,
            "within_1": (w @ (np.abs(d) <= 1 + 1e-9)) / n,
            "loa_low": bias - LOA_Z * sd,
            "loa_high": bias + LOA_Z * sd,
        }
    return {k: np.where(np.isfinite(v), v, np.nan) for k, v in out.items()}


def _multiset_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average ranks of each item within the multiset that repeats item j ``w[b, j]`` times."""
    below = (x[None, :] < x[:, None]).astype(float)  # [i, j]: x_j < x_i
    equal = (x[None, :] == x[:, None]).astype(float)
    ranks: np.ndarray = w @ below.T + (w @ equal.T + 1) / 2
    return ranks


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    n = w.sum(axis=1)
    ma, mb = (w * a).sum(axis=1) / n, (w * b).sum(axis=1) / n
    cov = (w * (a - ma[:, None]) * (b - mb[:, None])).sum(axis=1)
    va = (w * (a - ma[:, None]) ** 2).sum(axis=1)
    vb = (w * (b - mb[:, None]) ** 2).sum(axis=1)
    r: np.ndarray = cov / np.sqrt(va * vb)
    return r


def _weighted_tau_b(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    # tau-b = Σ sx·sy / sqrt(Σ sx² · Σ sy²) over pairs; copies of one item are tied in both and add nothing.
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    num = ((w @ (sx * sy)) * w).sum(axis=1)
    tx, ty = ((w @ sx**2) * w).sum(axis=1), ((w @ sy**2) * w).sum(axis=1)
    tau: np.ndarray = num / np.sqrt(tx * ty)
    return tau


def _point(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Point estimates, with the libraries where they exist."""
    out = {k: float(v[0]) for k, v in _weighted(x, y, np.ones((1, len(x)))).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: the libraries warn and return NaN, as we report it
        if len(x) >= 2:
            out["spearman"] = float(sps.spearmanr(x, y).statistic)
            out["kendall_tau_b"] = float(sps.kendalltau(x, y).statistic)
        for name, kind in (("weighted_kappa", "quadratic"), ("linear_weighted_kappa", "linear")):
            out[name] = float(cohen_kappa_score(np.rint(x).astype(int), np.rint(y).astype(int),
                                                labels=SCORE_LABELS, weights=kind))
    for level in ("ordinal", "interval"):
        out[f"krippendorff_alpha_{level}"] = krippendorff_alpha(np.vstack([x, y]), level=level)
    return {k: (v if np.isfinite(v) else float("nan")) for k, v in out.items()}


def score_agreement(
    ratings: pd.DataFrame,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    reference: str | None = None,
    by: str | Sequence[str] = ("dimension",),
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Agreement of pairs of raters on 0–10 scores, per dimension.

    Args:
        ratings: A score ratings frame (``run_id, dimension, rater, score``; see ``holistic_ratings``), one score per
            conversation, dimension and rater.
        pairs: ``(rater_a, rater_b)`` pairs (bias is A − B).
        reference: Instead of ``pairs``: every other rater (A) against this one (B).
        by: Grouping columns (default per dimension; pooling dimensions is not meaningful, so there is no pooled row).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``: 1000, 95%, 0,
            BCa, conversations).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``*by, rater_a, rater_b, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``; the flag for
        statistics in score points uses a limit of 1.5 points (0.15 × 10).
    """
    est = estimation_from(estimation, deprecated, "score_agreement")
    by, unit = as_tuple(by), est.unit()
    wide = pivot(ratings, value="score", item=("dimension",), by=by, cluster=unit)
    values = pd.DataFrame(wide.to_numpy(dtype=float, na_value=np.nan), index=wide.index, columns=wide.columns)
    rows = []
    for a, b in resolve_pairs(list(values.columns), pairs, reference):
        both = values[[a, b]].dropna()
        for group, items in iter_groups(both, by, overall=False):
            if items.empty:
                continue
            x, y = items[a].to_numpy(), items[b].to_numpy()
            codes, n_conv = cluster_codes(items.index.get_level_values(unit))
            # Renumbered by content (values, squares, products) so the same scores under other run ids resample alike.
            codes = canonical_codes(codes, n_conv, np.column_stack([x, y, x * x, y * y, x * y, np.ones_like(x)]))
            weights = resample_weights(n_conv, n_boot=est.n_boot, seed=est.seed)[:, codes]
            reps, point = _weighted(x, y, weights), _point(x, y)
            jack = _weighted(x, y, jackknife_weights(n_conv)[:, codes])
            for stat, (how, scale) in SCORE_METHODS.items():
                transform: Transform = "none" if scale > 1 or stat == "within_1" else "fisher"
                ci = ci_label(unit, est, transform=transform)
                rows.append(summarize(stat, point[stat], reps[stat], jackknife=jack[stat], estimation=est,
                                      transform=transform, n=n_conv, n_items=len(items), method=f"{how}; {ci}",
                                      scale=scale, groups={**group, "rater_a": a, "rater_b": b}))
    return result_frame(rows, [*by, "rater_a", "rater_b"])
