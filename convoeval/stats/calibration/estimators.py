"""The calibrated estimators by name, side by side, and stratified by scenario when the labels were.

``ESTIMATORS`` names every estimator shipped: ``judge_only`` (naive, for comparison), ``labels_only``, ``ppi++``
(``stats.ppi``), ``isotonic`` (``stats.isotonic``) and, for pass/fail verdicts, ``rogan_gladen``
(``stats.rogan_gladen``). ``calibrated_estimates`` runs several on the same items and returns one result table.

**Stratified.** When labels were drawn per scenario (say 5 conversations of each, whatever its size), a pooled mean of
the labels over-weights small scenarios. With ``strata``, each estimator runs within each stratum and the results
are combined with the stratum's share of all items as weight: ``theta = sum w_h theta_h``, ``se^2 = sum w_h^2
se_h^2`` (strata independent; a conversation belongs to one). Each stratum needs ``min_per_stratum`` labelled
conversations; one whose labels all agree is accepted (its variance is then only the judge's), but not all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Unpack

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from convoeval.stats._result import result_frame
from convoeval.stats.bootstrap import LEVEL
from convoeval.stats.calibration._items import (
    MIN_LABELS,
    Estimate,
    EstimatorOptions,
    Items,
    interval,
    labels_only_variance,
    prepare,
    refusal,
    refused,
)
from convoeval.stats.calibration.isotonic import isotonic_items
from convoeval.stats.calibration.ppi import judge_only_items, labels_only_items, ppi_items
from convoeval.stats.calibration.rogan_gladen import rogan_gladen_items
from convoeval.stats.estimation import Estimation, estimation_from

__all__ = ["ESTIMATORS", "MIN_PER_STRATUM", "calibrated_estimates", "estimate", "stratified"]


class CalibratedOptions(EstimatorOptions, total=False):
    """``calibrated_estimates``' options: the estimators' own, and the deprecated ``level`` (use ``Estimation``)."""

    level: float


def _ppi_plain(items: Items, **kw: Any) -> Estimate:
    return ppi_items(items, lam=1.0, **kw)


#: Every estimator shipped, by name: a function of checked ``Items`` and keyword options.
ESTIMATORS: dict[str, Callable[..., Estimate]] = {
    "judge_only": judge_only_items,
    "labels_only": labels_only_items,
    "ppi++": ppi_items,
    "ppi": _ppi_plain,
    "isotonic": isotonic_items,
    "rogan_gladen": rogan_gladen_items,
}
#: Fewest labelled conversations per stratum of a stratified estimate.
MIN_PER_STRATUM = 5
_OPTIONS = {  # the options each estimator takes (the rest are left out of its call)
    "judge_only": {"level", "bounds"},
    "labels_only": {"level", "bounds", "min_labels", "strict", "small"},
    "ppi++": {"level", "bounds", "min_labels", "strict", "small"},
    "ppi": {"level", "bounds", "min_labels", "strict", "small"},
    "isotonic": {"level", "bounds", "min_labels", "strict", "seed", "folds", "variance", "max_outside", "small"},
    "rogan_gladen": {"level", "min_labels", "strict", "seed", "n_boot"},
}


def _run(name: str, items: Items, options: dict[str, Any]) -> Estimate:
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; known: {sorted(ESTIMATORS)}")
    return ESTIMATORS[name](items, **{k: v for k, v in options.items() if k in _OPTIONS[name]})


def stratified(name: str, items: Items, strata: np.ndarray, *, min_per_stratum: int = MIN_PER_STRATUM,
               level: float = LEVEL, bounds: tuple[float, float] | None = None, min_labels: int = MIN_LABELS,
               **options: Unpack[EstimatorOptions]) -> Estimate:
    """Estimator ``name`` within each stratum, combined by the strata's shares of the items (see the module).

    Args:
        name: A key of ``ESTIMATORS``.
        items: Checked items (``prepare``).
        strata: The stratum of each item (same length as ``items.judge``).
        min_per_stratum: Fewest labelled conversations in each stratum.
        level: Confidence level.
        bounds: Clip the combined estimate and interval to this range.
        min_labels: Fewest labelled conversations overall.
        **options: Passed to the estimator (``seed``, ``n_boot``, ``variance``, ...).
    """
    strata = np.asarray(strata, dtype=object)
    if name != "judge_only":
        reason = refusal(items, min_labels=min_labels)
        if reason:
            return refused(name, items, reason, f"{name}, stratified")
    parts: list[tuple[Any, float, Estimate, float]] = []
    for stratum in pd.unique(strata):
        mask = strata == stratum
        sub = Items(items.judge[mask], items.labels[mask], items.codes[mask], items.n_clusters, 0)
        est = _run(name, sub, {**dict(options), "level": level, "min_labels": min_per_stratum, "strict": False})
        if est.refused:
            return refused(name, items, f"stratum {stratum!r}: {est.refused}", f"{name}, stratified")
        var_lo = labels_only_variance(sub) if sub.n_labelled else float("nan")
        parts.append((stratum, mask.mean(), est, var_lo))
    weights = np.array([w for _, w, _, _ in parts])
    value = float(np.sum(weights * [e.value for _, _, e, _ in parts]))
    variance = float(np.sum(weights ** 2 * np.array([e.se ** 2 for _, _, e, _ in parts])))
    value, low, high = interval(value, float(np.sqrt(variance)), level, bounds)
    n_lab = 0 if name == "judge_only" else items.n_labelled  # the naive estimate uses no label
    if name == "judge_only":
        n_eff = float("nan")
    else:
        var_lo = float(np.sum(weights ** 2 * np.array([v for *_, v in parts])))
        n_eff = n_lab * var_lo / variance if variance > 0 else float("nan")
    first = parts[0][2]
    method = (f"{first.method.split(';')[0]}; stratified over {len(parts)} strata (weights = each stratum's share "
              f"of the items), normal {level:.0%} CI")
    return Estimate(first.estimator, value, float(np.sqrt(variance)), low, high, n_lab, len(items.judge) - n_lab,
                    items.n_clusters, items.n_labelled_clusters, float(n_eff), method,
                    extra={"strata": len(parts)})


def estimate(
    name: str,
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    level: float = LEVEL,
    bounds: tuple[float, float] | None = None,
    min_labels: int = MIN_LABELS,
    **options: Unpack[EstimatorOptions],
) -> Estimate:
    """One estimator by name on arrays, optionally stratified.

    Example:
        >>> judge = np.array([1, 1, 0, 1] * 50); labels = np.array([1, 0, 0, 1] * 5 + [np.nan] * 180)
        >>> round(estimate("labels_only", judge, labels).value, 2)
        0.5
    """
    items = prepare(judge, labels, clusters)
    opts: dict[str, Any] = {**options, "level": level, "bounds": bounds, "min_labels": min_labels}
    if strata is None:
        return _run(name, items, opts)
    keep = ~np.isnan(np.asarray(judge, dtype=float).ravel())
    return stratified(name, items, np.asarray(strata, dtype=object).ravel()[keep], **opts)


def calibrated_estimates(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    estimators: Sequence[str] = ("judge_only", "labels_only", "ppi++", "isotonic"),
    clusters: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    bounds: tuple[float, float] | None = None,
    min_labels: int = MIN_LABELS,
    scale: float = 1.0,
    groups: dict[str, Any] | None = None,
    estimation: Estimation | None = None,
    **options: Unpack[CalibratedOptions],
) -> pd.DataFrame:
    """Several estimators on the same items, as one result table (a row each, refusals included).

    Args:
        judge: The judge's value per item.
        labels: The label where known, NaN elsewhere.
        estimators: Names from ``ESTIMATORS``.
        clusters: The conversation of each item.
        strata: The stratum (scenario) of each item, when the labels were drawn per stratum.
        bounds: The range the truth lies in (``(0, 1)`` for pass rates).
        min_labels: Fewest labelled conversations.
        scale: 1 for rates, 10 for 0–10 scores (the ``ci_too_wide`` flag).
        groups: Grouping values to put first in every row.
        estimation: Level, seed (bootstrap, isotonic folds) and replicates (Rogan–Gladen): ``Estimation``.
        **options: Passed to the estimators that take them (``folds``, ``variance``, ``strict``, ``small``,
            ``max_outside``); ``level``, ``seed``, ``n_boot`` here are deprecated (they warn: use ``estimation``).

    Returns:
        ``*groups, estimator, n_labelled, n_unlabelled, n_effective, lam, se, refused`` then the result columns.
    """
    given: dict[str, Any] = dict(options)
    aliases: dict[str, Any] = {k: given.pop(k) for k in ("level", "seed", "n_boot") if k in given}
    est = estimation_from(estimation, aliases, "calibrated_estimates")
    rest: dict[str, Any] = {**given, "seed": est.seed, "n_boot": est.n_boot}
    rows = [estimate(name, judge, labels, clusters=clusters, strata=strata, level=est.level, bounds=bounds,
                     min_labels=min_labels, **rest).row(groups=groups, scale=scale)
            for name in estimators]
    return result_frame(rows, list(groups or {}))
