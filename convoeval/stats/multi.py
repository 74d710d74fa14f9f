"""Three or more raters on nominal labels: several judges, or repeated samples of one judge.

* ``krippendorff_alpha`` — the primary statistic; allows missing ratings (NaN), any number of raters.
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

import krippendorff
import numpy as np
import pandas as pd
from statsmodels.stats import inter_rater

from convoeval.stats import _nominal
from convoeval.stats._result import result_frame
from convoeval.stats._wide import as_tuple, iter_groups, pivot
from convoeval.stats.bootstrap import (
    LEVEL,
    N_BOOT,
    canonical_codes,
    ci_label,
    cluster_codes,
    cluster_sums,
    resample_weights,
    summarize,
)

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


def krippendorff_alpha(reliability_data: np.ndarray) -> float:
    """Nominal Krippendorff's alpha of a ``raters × items`` array (NaN = missing); NaN when undefined.

    The ``krippendorff`` package raises when fewer than two distinct values occur; that is an undefined alpha here.
    """
    data = np.asarray(reliability_data, dtype=float)
    if data.size == 0 or np.unique(data[~np.isnan(data)]).size < 2:
        return float("nan")
    try:
        return _finite(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:  # e.g. no item with two ratings
        return float("nan")


def _finite(value: float | np.ndarray) -> float:
    number = float(value)  # a coefficient of one table comes as a 0-d array
    return number if np.isfinite(number) else float("nan")


def multi_rater_agreement(
    ratings: pd.DataFrame,
    *,
    raters: Sequence[str] | None = None,
    value: str = "passed",
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
) -> pd.DataFrame:
    """Agreement among all the given raters at once, per criterion and pooled.

    Args:
        ratings: A ratings frame (``run_id, criterion, rater`` and ``value``), one verdict per item and rater; use
            ``rubric_ratings(rubric, samples="each")`` to treat one judge's samples as raters.
        raters: The raters to include (default: all); items rated by only some of them count with missing ratings.
        value: The rating column (``"passed"``; any nominal column works).
        by: Grouping columns.
        overall: Also report the pooled group when there are several.
        n_boot: Bootstrap replicates (resampling conversations).
        level: Confidence level.
        seed: Bootstrap seed.

    Returns:
        ``*by, raters, n_raters, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.
    """
    by = as_tuple(by)
    wide = pivot(ratings, value=value, item=("criterion",), by=by)
    chosen = list(raters) if raters is not None else sorted(wide.columns)
    unknown = sorted(set(chosen) - set(wide.columns))
    if unknown:
        raise ValueError(f"unknown rater(s) {unknown}; the ratings hold {sorted(wide.columns)}")
    wide = wide[chosen]
    # Pass/fail always has two categories (AC1's chance term depends on their number), even if one never occurs.
    cells = wide.to_numpy(dtype=object)
    categories = [False, True] if value == "passed" else sorted(set(cells[pd.notna(cells)].tolist()), key=str)
    ci = ci_label("run_id", n_boot, level)
    rows = []
    for group, items in iter_groups(wide, by, overall):
        items = items[items.notna().sum(axis=1) >= 1]
        codes, q = _codes(items.to_numpy(dtype=object), categories)
        sums = _nominal.unit_sums(_nominal.unit_counts(codes, q))
        cl, n_conv = cluster_codes(items.index.get_level_values("run_id"))
        cl = canonical_codes(cl, n_conv, sums)  # the same CI whatever the run ids
        per_conv = cluster_sums(cl, n_conv, sums)
        reps = _nominal.coefficients(resample_weights(n_conv, n_boot=n_boot, seed=seed) @ per_conv, q)
        point = {stat: float(value) for stat, value in _nominal.coefficients(per_conv.sum(axis=0), q).items()}
        point["krippendorff_alpha"] = krippendorff_alpha(codes.T)
        point["fleiss_kappa"] = fleiss_kappa(codes, categories=range(q))
        labels = {**group, "raters": ", ".join(chosen), "n_raters": len(chosen)}
        for stat, how in MULTI_METHODS.items():
            rows.append(summarize(stat, point[stat], reps[stat], n=n_conv, n_items=len(items),
                                  method=f"{how}; {ci}", level=level, groups=labels))
    return result_frame(rows, [*by, "raters", "n_raters"])
