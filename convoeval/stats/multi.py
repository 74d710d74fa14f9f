"""Three or more raters on nominal labels: several judges, or repeated samples of one judge.

* ``krippendorff_alpha`` — the primary statistic; allows missing ratings (NaN), any number of raters; nominal for
  verdicts, and at the ordinal, interval or ratio level for scores (``level=``; Krippendorff 2011's example: nominal
  0.743, ordinal 0.815, interval 0.849, ratio 0.797).
* ``fleiss_kappa`` — statsmodels (``aggregate_raters`` + ``fleiss_kappa``) when every item has the same number of
  ratings; with missing ratings Gwet's generalisation (observed agreement over items with two or more ratings,
  category shares over all rated items), which equals statsmodels' value on complete data.
* ``gwet_ac1`` — multi-rater AC1 (Gwet 2008/2014), same handling of missing ratings.
* ``percent_agreement`` — the share of agreeing rater pairs within an item, averaged over items.

Checked against irrCAC's published values on its ``raw_4raters`` data (Gwet 2014, p. 120: 4 raters, 12 items,
5 categories, missing ratings): AC1 0.77544, Fleiss' kappa 0.76117, Krippendorff's alpha 0.74342.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import krippendorff
import numpy as np
import pandas as pd
from statsmodels.stats import inter_rater

from convoeval.stats import _metric, _nominal
from convoeval.stats._result import result_frame
from convoeval.stats._wide import as_tuple, iter_groups, pivot
from convoeval.stats.bootstrap import (
    canonical_codes,
    ci_label,
    cluster_codes,
    cluster_sums,
    jackknife_weights,
    resample_weights,
    summarize,
)
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from

#: The statistics ``multi_rater_agreement`` reports, with how each is computed.
MULTI_METHODS = {
    "krippendorff_alpha": "krippendorff.alpha(level_of_measurement='nominal'); missing ratings allowed",
    "fleiss_kappa": "statsmodels fleiss_kappa (complete data) / Gwet's missing-data form",
    "gwet_ac1": "Gwet's AC1, multi-rater, missing-data form",
    "percent_agreement": "mean share of agreeing rater pairs per item",
}


def _codes(data: np.ndarray | pd.DataFrame, categories: Sequence | None) -> tuple[np.ndarray, int]:
    """``(units, raters)`` values to category codes 0..q-1 (NaN for missing) and q."""
    values = np.asarray(data, dtype=object)
    if values.ndim != 2:
        raise ValueError(f"expected a 2-D (items × raters) table, got shape {values.shape}")
    present = pd.notna(values)
    cats = list(categories) if categories is not None else sorted(set(values[present].tolist()), key=str)
    index = {c: i for i, c in enumerate(cats)}
    codes = np.full(values.shape, np.nan)
    for (i, j) in zip(*np.nonzero(present), strict=True):
        if values[i, j] not in index:
            raise ValueError(f"rating {values[i, j]!r} is not one of the categories {cats}")
        codes[i, j] = index[values[i, j]]
    return codes, len(cats)


def _sums(data: np.ndarray | pd.DataFrame, categories: Sequence | None) -> tuple[np.ndarray, int]:
    codes, q = _codes(data, categories)
    return _nominal.unit_sums(_nominal.unit_counts(codes, q)), q


def gwet_ac1(data: np.ndarray | pd.DataFrame, categories: Sequence | None = None) -> float:
    """Gwet's AC1 of an ``items × raters`` table (missing ratings as NaN/None).

    Args:
        data: One row per item, one column per rater.
        categories: All possible labels (their number ``q`` enters chance agreement); default the observed ones.

    Example:
        >>> round(gwet_ac1([[1, 1], [1, 1], [0, 0], [1, 0]]), 4)   # pa = .75, pe = 2(.625)(.375)
        0.5294
    """
    sums, q = _sums(data, categories)
    return _finite(_nominal.coefficients(sums.sum(axis=0), q)["gwet_ac1"]) if q > 1 else _ac1_single(sums)


def _ac1_single(sums: np.ndarray) -> float:
    # One category only: every pair agrees and chance agreement is 0 under AC1's (q-1) normalisation -> AC1 = 1.
    return 1.0 if sums[:, 1].sum() > 0 else float("nan")


def fleiss_kappa(data: np.ndarray | pd.DataFrame, categories: Sequence | None = None) -> float:
    """Fleiss' kappa of an ``items × raters`` table; statsmodels on complete data, Gwet's form with missing ratings.

    Example:
        >>> round(fleiss_kappa([[1, 1, 1], [0, 0, 0], [1, 1, 0]]), 4)
        0.55
    """
    codes, q = _codes(data, categories)
    rated = (~np.isnan(codes)).sum(axis=1)
    if len(codes) and q > 1 and (rated == codes.shape[1]).all() and codes.shape[1] >= 2:
        table, _ = inter_rater.aggregate_raters(codes.astype(int), n_cat=q)
        with np.errstate(invalid="ignore", divide="ignore"):
            return _finite(inter_rater.fleiss_kappa(table, method="fleiss"))
    sums = _nominal.unit_sums(_nominal.unit_counts(codes, q))
    return _finite(_nominal.coefficients(sums.sum(axis=0), q)["fleiss_kappa"])


def krippendorff_alpha(reliability_data: np.ndarray | Sequence[Sequence[float]], level: str = "nominal") -> float:
    """Krippendorff's alpha of a ``raters × items`` array of numbers (NaN = missing); NaN when undefined.

    Args:
        reliability_data: One row per rater, one column per item (conversation).
        level: ``"nominal"`` (verdicts, categories), ``"ordinal"`` (ranks: the holistic judge's 0–10 scores),
            ``"interval"`` or ``"ratio"``.

    The ``krippendorff`` package raises when fewer than two distinct values occur; that is an undefined alpha here.

    Example:
        >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
        ...         [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
        >>> data = np.array(data, dtype=float)   # Krippendorff (2011)'s example
        >>> [round(krippendorff_alpha(data, level), 3) for level in ("nominal", "ordinal", "interval", "ratio")]
        [0.743, 0.815, 0.849, 0.797]
    """
    chosen = _metric.check_level(level)
    data = np.asarray(reliability_data, dtype=float)
    if data.size == 0 or np.unique(data[~np.isnan(data)]).size < 2:
        return float("nan")
    try:
        return _finite(krippendorff.alpha(reliability_data=data, level_of_measurement=chosen))
    except ValueError:  # e.g. no item with two ratings
        return float("nan")


def _finite(value: float | np.ndarray) -> float:
    number = float(value)  # a coefficient of one table comes as a 0-d array
    return number if np.isfinite(number) else float("nan")


def _coefficients(sums: np.ndarray, q: int, categories: Sequence, metric: str) -> dict[str, np.ndarray]:
    """The nominal coefficients and, for another level, alpha at that level, from summed unit rows."""
    width = sums.shape[-1] - q * q
    out = _nominal.coefficients(sums[..., :width], q)
    if metric != "nominal":
        values = np.asarray(categories, dtype=float)
        out[f"krippendorff_alpha_{metric}"] = _metric.alpha(sums[..., width:], values, metric)  # type: ignore[arg-type]
    return out


def multi_rater_agreement(
    ratings: pd.DataFrame,
    *,
    raters: Sequence[str] | None = None,
    value: str = "passed",
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    measurement: str = "nominal",
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Agreement among all the given raters at once, per criterion and pooled.

    Args:
        ratings: A ratings frame (``run_id, criterion, rater`` and ``value``), one verdict per item and rater; use
            ``rubric_ratings(rubric, samples="each")`` to treat one judge's samples as raters.
        raters: The raters to include (default: all); items rated by only some of them count with missing ratings.
        value: The rating column (``"passed"``; any nominal column works).
        by: Grouping columns.
        overall: Also report the pooled group when there are several.
        measurement: The ratings' level of measurement: ``"nominal"`` (default), or ``"ordinal"``, ``"interval"``,
            ``"ratio"`` for numeric ratings (e.g. 0–10 scores as ``value``): adds the row
            ``krippendorff_alpha_<measurement>`` (the categories ordered by value).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``*by, raters, n_raters, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.
    """
    est = estimation_from(estimation, deprecated, "multi_rater_agreement")
    metric = _metric.check_level(measurement)
    by, unit = as_tuple(by), est.unit()
    wide = pivot(ratings, value=value, item=("criterion",), by=by, cluster=unit)
    chosen = list(raters) if raters is not None else sorted(wide.columns)
    unknown = sorted(set(chosen) - set(wide.columns))
    if unknown:
        raise ValueError(f"unknown rater(s) {unknown}; the ratings hold {sorted(wide.columns)}")
    wide = wide[chosen]
    # Pass/fail always has two categories (AC1's chance term depends on their number), even if one never occurs.
    cells = wide.to_numpy(dtype=object)
    present = set(cells[pd.notna(cells)].tolist())
    ordered = sorted(present) if metric != "nominal" else sorted(present, key=str)
    categories = [False, True] if value == "passed" else ordered
    methods = dict(MULTI_METHODS)
    if metric != "nominal":
        methods[f"krippendorff_alpha_{metric}"] = f"krippendorff.alpha(level_of_measurement={metric!r})"
    ci = ci_label(unit, est)
    rows = []
    for group, items in iter_groups(wide, by, overall):
        items = items[items.notna().sum(axis=1) >= 1]
        codes, q = _codes(items.to_numpy(dtype=object), categories)
        counts = _nominal.unit_counts(codes, q)
        sums = np.hstack([_nominal.unit_sums(counts), _metric.coincidences(counts)])
        cl, n_conv = cluster_codes(items.index.get_level_values(unit))
        cl = canonical_codes(cl, n_conv, sums)  # the same CI whatever the run ids
        per_conv = cluster_sums(cl, n_conv, sums)
        reps = _coefficients(resample_weights(n_conv, n_boot=est.n_boot, seed=est.seed) @ per_conv, q, categories,
                             metric)
        jack = _coefficients(jackknife_weights(n_conv) @ per_conv, q, categories, metric)
        point = {stat: float(v) for stat, v in _coefficients(per_conv.sum(axis=0), q, categories, metric).items()}
        point["krippendorff_alpha"] = krippendorff_alpha(codes.T)
        if metric != "nominal":
            numbers = np.asarray(categories, dtype=float)[np.nan_to_num(codes).astype(int)]
            numbers[np.isnan(codes)] = np.nan
            point[f"krippendorff_alpha_{metric}"] = krippendorff_alpha(numbers.T, metric)
        point["fleiss_kappa"] = fleiss_kappa(codes, categories=range(q))
        labels = {**group, "raters": ", ".join(chosen), "n_raters": len(chosen)}
        for stat, how in methods.items():
            rows.append(summarize(stat, point[stat], reps[stat], jackknife=jack[stat], estimation=est, n=n_conv,
                                  n_items=len(items), method=f"{how}; {ci}", groups=labels))
    return result_frame(rows, [*by, "raters", "n_raters"])
