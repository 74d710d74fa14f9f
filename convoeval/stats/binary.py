"""Two raters on pass/fail: judge vs judge, judge vs human, judge vs database truth.

Every statistic of two raters on a binary item is a function of their 2×2 table (rows: rater A fails/passes;
columns: rater B fails/passes). Point estimates use the libraries (``sklearn`` Cohen's kappa, ``krippendorff``
alpha); the bootstrap recomputes the same quantities from resampled tables in closed form (tested equal to the
libraries), which keeps a 1000-replicate CI per criterion per pair of raters cheap.

* ``percent_agreement`` — share of items with the same verdict.
* ``cohen_kappa`` — agreement beyond chance given each rater's own pass rate. **Undefined (NaN) when both raters give
  every item the same label** (expected chance agreement is 1); not a crash, not 0.
* ``gwet_ac1`` — chance-corrected like kappa but stable when the pass rate is near 0 or 1 (kappa's paradox); 1 when
  both raters agree on every item, even if every item has one label.
* ``krippendorff_alpha`` — nominal; like Scott's pi with a small-sample correction. Undefined (NaN) when only one
  label occurs.
* ``sensitivity`` / ``specificity`` — of rater A measured against rater B as the reference: P(A passes | B passes),
  P(A fails | B fails). Put the reference (human, database) second.
* ``pass_rate_a`` / ``pass_rate_b`` — each rater's pass rate on the items both rated.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Unpack

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score

from convoeval.stats._result import result_frame
from convoeval.stats._wide import as_tuple, iter_groups, pivot, resolve_pairs
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
from convoeval.stats.multi import krippendorff_alpha

#: The statistics ``binary_agreement`` reports, in order, with how each is computed.
BINARY_METHODS = {
    "percent_agreement": "share of items with equal verdicts",
    "cohen_kappa": "sklearn cohen_kappa_score(labels=[False, True]); NaN when undefined",
    "gwet_ac1": "Gwet's AC1 (q=2)",
    "krippendorff_alpha": "krippendorff.alpha(level_of_measurement='nominal'); NaN when undefined",
    "sensitivity": "P(A passes | B passes), B = reference",
    "specificity": "P(A fails | B fails), B = reference",
    "pass_rate_a": "share of items rater A passed",
    "pass_rate_b": "share of items rater B passed",
}


def pass_fail(values: Sequence[bool], name: str = "labels") -> np.ndarray:
    """``values`` as booleans if every one is a pass/fail verdict (a bool, or the numbers 1 and 0); else ValueError.

    A verdict such as ``"fail"`` or a 0–10 score is refused rather than read as a pass (any non-empty string and
    any non-zero number would be ``True``).

    Example:
        >>> pass_fail([True, 0, 1.0]).tolist()
        [True, False, True]
    """
    array = np.asarray(values, dtype=object).ravel()
    wrong = [v for v in array if not (isinstance(v, bool | np.bool_)
                                      or (isinstance(v, int | float | np.integer | np.floating)
                                          and float(v) in (0.0, 1.0)))]
    if wrong:
        raise ValueError(f"{name} must be pass/fail verdicts (True/False or 1/0); got {wrong[0]!r} among them. For "
                         "more than two categories use convoeval.stats.weighted_kappa (weights=None for Cohen's "
                         "unweighted kappa)")
    return array.astype(bool)


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two pass/fail raters (sklearn, ``labels=[False, True]``); NaN when undefined.

    Raises:
        ValueError: a label that is not a pass/fail verdict (``weighted_kappa`` takes more categories).

    Example:
        >>> cohen_kappa([True, True, False, False], [True, False, False, False])
        0.5
        >>> cohen_kappa([True, True], [True, True])   # every item one label: undefined
        nan
    """
    x, y = pass_fail(a, "rater A's labels"), pass_fail(b, "rater B's labels")
    if x.size != y.size:
        raise ValueError(f"the raters have {x.size} and {y.size} labels; give one per item each")
    if x.size == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohen_kappa_score(x, y, labels=[False, True])
    return float(value) if np.isfinite(value) else float("nan")


def table_statistics(tables: np.ndarray) -> dict[str, np.ndarray]:
    """Every binary statistic from 2×2 tables ``(..., 4)`` ordered ``n00, n01, n10, n11`` (A then B; 1 = pass)."""
    t = np.asarray(tables, dtype=float)
    n00, n01, n10, n11 = (t[..., i] for i in range(4))
    n = n00 + n01 + n10 + n11
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (n00 + n11) / n
        pa, pb = (n10 + n11) / n, (n01 + n11) / n
        pe_kappa = pa * pb + (1 - pa) * (1 - pb)
        pi = (pa + pb) / 2
        pe_ac1 = 2 * pi * (1 - pi)
        n_pass, n_fail = n * (pa + pb), n * (2 - pa - pb)
        alpha = 1 - (2 * n - 1) * (n01 + n10) / (n_pass * n_fail)
        out = {
            "percent_agreement": po,
            "cohen_kappa": (po - pe_kappa) / (1 - pe_kappa),
            "gwet_ac1": (po - pe_ac1) / (1 - pe_ac1),
            "krippendorff_alpha": alpha,
            "sensitivity": n11 / (n11 + n01),
            "specificity": n00 / (n00 + n10),
            "pass_rate_a": pa,
            "pass_rate_b": pb,
        }
    return {k: np.where(np.isfinite(v), v, np.nan) for k, v in out.items()}


def _pairs_of(ratings: pd.DataFrame, by: tuple[str, ...], pairs, reference, unit: str = "run_id"):
    wide = pivot(ratings, value="passed", item=("criterion",), by=by, cluster=unit)
    values = pd.DataFrame(wide.to_numpy(dtype=float, na_value=np.nan), index=wide.index, columns=wide.columns)
    for a, b in resolve_pairs(list(values.columns), pairs, reference):
        both = values[[a, b]].dropna()
        if len(both):
            yield a, b, both


def binary_agreement(
    ratings: pd.DataFrame,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    reference: str | None = None,
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Agreement of pairs of pass/fail raters, per criterion and pooled over criteria.

    Items are ``(run_id, criterion)``; an item counts for a pair only when both raters gave a verdict. Groups with no
    such item are left out (e.g. criteria without a database assertion when B is ``"database"``).

    Args:
        ratings: A pass/fail ratings frame (``run_id, criterion, rater, passed``; see ``rubric_ratings``,
            ``label_ratings``, ``truth_ratings``), one verdict per item and rater.
        pairs: ``(rater_a, rater_b)`` pairs; B is the reference for sensitivity/specificity.
        reference: Instead of ``pairs``: compare every other rater (as A) with this one (as B).
            With neither, every unordered pair of raters, in sorted order.
        by: Grouping columns (default per criterion; ``()`` for one pooled row set).
        overall: Also report the pooled group (grouping columns set to ``"(all)"``) when there are several groups.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``: 1000, 95%, 0,
            BCa, conversations).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        One row per group × pair × statistic: ``*by, rater_a, rater_b, statistic, value, ci_low, ci_high, n,
        n_items, method, ci_too_wide`` (``n`` = conversations, ``n_items`` = items).

    Example (needs a judged run's frames, so not run as a doctest)::

        table = binary_agreement(pd.concat([rubric_ratings(rubric), truth_ratings(rubric, assertions)]),
                                 reference="database")
    """
    est = estimation_from(estimation, deprecated, "binary_agreement")
    by, unit = as_tuple(by), est.unit()
    rows = []
    ci = ci_label(unit, est)
    for a, b, both in _pairs_of(ratings, by, pairs, reference, unit):
        for group, items in iter_groups(both, by, overall):
            codes, n_conv = cluster_codes(items.index.get_level_values(unit))
            cells = np.eye(4)[(2 * items[a] + items[b]).to_numpy(dtype=int)]
            codes = canonical_codes(codes, n_conv, cells)  # the same CI whatever the run ids
            per_conv = cluster_sums(codes, n_conv, cells)
            point = {stat: float(value) for stat, value in table_statistics(per_conv.sum(axis=0)).items()}
            point["cohen_kappa"] = cohen_kappa(items[a].to_numpy() == 1, items[b].to_numpy() == 1)
            point["krippendorff_alpha"] = krippendorff_alpha(items[[a, b]].to_numpy().T)
            reps = table_statistics(resample_weights(n_conv, n_boot=est.n_boot, seed=est.seed) @ per_conv)
            jack = table_statistics(jackknife_weights(n_conv) @ per_conv)
            for stat, how in BINARY_METHODS.items():
                rows.append(summarize(stat, point[stat], reps[stat], jackknife=jack[stat], estimation=est, n=n_conv,
                                      n_items=len(items), method=f"{how}; {ci}",
                                      groups={**group, "rater_a": a, "rater_b": b}))
    return result_frame(rows, [*by, "rater_a", "rater_b"])


def confusion_counts(
    ratings: pd.DataFrame,
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    reference: str | None = None,
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
) -> pd.DataFrame:
    """The 2×2 tables behind ``binary_agreement``, tidy: one row per group × pair × (A verdict, B verdict).

    Returns:
        ``*by, rater_a, rater_b, a_passed, b_passed, count`` (all four cells, zeros included).
    """
    by = as_tuple(by)
    rows = []
    for a, b, both in _pairs_of(ratings, by, pairs, reference):
        for group, items in iter_groups(both, by, overall):
            for a_passed in (False, True):
                for b_passed in (False, True):
                    count = int(((items[a] == a_passed) & (items[b] == b_passed)).sum())
                    rows.append({**group, "rater_a": a, "rater_b": b, "a_passed": a_passed, "b_passed": b_passed,
                                 "count": count})
    columns = [*by, "rater_a", "rater_b", "a_passed", "b_passed", "count"]
    return pd.DataFrame(rows, columns=columns)
