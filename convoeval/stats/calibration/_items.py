"""What every calibrated estimator returns (``Estimate``), and the pieces they share: input checks, refusals,
cluster-robust variances and the normal interval.

An estimator takes a judge value for every item (a 0/1 verdict or a 0–10 score), a label where one is known (NaN
elsewhere) and optionally a cluster per item (the conversation: several criteria of one conversation are not
independent). It returns an ``Estimate``: the value, its standard error and interval, how many items were labelled
and unlabelled, the effective sample size (how many labels alone would give the same variance), and — when it
cannot give an honest interval — no number at all and a ``refused`` reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, TypedDict

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from convoeval.stats._result import stat_row
from convoeval.stats.bootstrap import LEVEL, cluster_codes


class EstimatorOptions(TypedDict, total=False):
    """Options an estimator may take beyond the items (each estimator is passed only the ones it knows)."""

    strict: bool
    small: bool
    seed: int
    n_boot: int
    folds: int
    variance: str
    max_outside: float

#: Fewest labelled conversations an estimator accepts (CJE's floor; below it the normal interval is not believed).
MIN_LABELS = 10


@dataclass(frozen=True)
class Estimate:
    """One calibrated (or naive, or labels-only) estimate of a mean or a pass rate.

    Attributes:
        estimator: ``"ppi++"``, ``"ppi"``, ``"isotonic"``, ``"labels_only"``, ``"judge_only"``, ``"rogan_gladen"``.
        value: The estimate; NaN when refused.
        se: Its standard error (NaN for a bootstrap interval's replicates that were not defined).
        ci_low: Lower bound of the interval.
        ci_high: Upper bound.
        n_labelled: Labelled items (criterion verdicts or scores) used.
        n_unlabelled: Items with a judge value and no label.
        n_clusters: Conversations behind the estimate (labelled or not).
        n_labelled_clusters: Conversations with at least one labelled item.
        n_effective: Labelled items that labels alone would need for the same variance (``n_labelled`` for the
            labels-only estimate; NaN for the judge-only one, which uses no label).
        method: How the value and the interval were made, in words.
        refused: Why no estimate was given ("" when one was).
        lam: PPI's weight on the judge (0 = labels only, 1 = plain PPI); NaN for other estimators.
        extra: Anything else an estimator reports (e.g. the share of scores outside the labelled range).
    """

    estimator: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    n_labelled: int
    n_unlabelled: int
    n_clusters: int
    n_labelled_clusters: int
    n_effective: float
    method: str
    refused: str = ""
    lam: float = float("nan")
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self, *, groups: dict[str, Any] | None = None, scale: float = 1.0) -> dict[str, Any]:
        """This estimate as a result row (``stat_row``) plus ``estimator, n_labelled, n_unlabelled, n_effective,
        lam, se, refused``; ``statistic`` is ``"mean"``."""
        base = stat_row("mean", self.value, self.ci_low, self.ci_high, n=self.n_clusters,
                        n_items=self.n_labelled + self.n_unlabelled, method=self.method, scale=scale,
                        groups=groups)
        return {**(groups or {}), "estimator": self.estimator, "n_labelled": self.n_labelled,
                "n_unlabelled": self.n_unlabelled, "n_effective": self.n_effective, "lam": self.lam,
                "se": self.se, "refused": self.refused, **base}


@dataclass(frozen=True)
class Items:
    """Checked inputs: judge values, labels (NaN = unlabelled), cluster codes; items without a judge value dropped."""

    judge: np.ndarray
    labels: np.ndarray
    codes: np.ndarray
    n_clusters: int
    dropped: int

    @property
    def labelled(self) -> np.ndarray:
        mask: np.ndarray = ~np.isnan(self.labels)
        return mask

    @property
    def n_labelled(self) -> int:
        return int(self.labelled.sum())

    @property
    def n_labelled_clusters(self) -> int:
        return int(np.unique(self.codes[self.labelled]).size)


def prepare(judge: Any, labels: Any, clusters: Any = None) -> Items:
    """Check and align the inputs of an estimator.

    Args:
        judge: A judge value per item (NaN where the judge gave none: the item is left out).
        labels: A label per item, NaN where unlabelled (booleans are read as 1/0).
        clusters: The conversation of each item (any hashable values); default every item its own.

    Raises:
        ValueError: lengths differ, or a value is not a number.
    """
    judge_a = np.asarray(judge, dtype=float).ravel()
    # Through pandas' nullable float: booleans, None and pd.NA (an unsure or missing label) all read as 1/0/NaN.
    labels_a = pd.Series(np.asarray(labels, dtype=object).ravel()).astype("Float64").to_numpy(
        dtype=float, na_value=np.nan)
    if judge_a.size != labels_a.size:
        raise ValueError(f"judge has {judge_a.size} values but labels has {labels_a.size}; give one per item")
    if clusters is None:
        codes = np.arange(judge_a.size)
    else:
        cl = np.asarray(clusters, dtype=object).ravel()
        if cl.size != judge_a.size:
            raise ValueError(f"clusters has {cl.size} values but there are {judge_a.size} items")
        codes, _ = cluster_codes(cl)
    keep = ~np.isnan(judge_a)
    codes, n = cluster_codes(codes[keep]) if keep.any() else (np.zeros(0, dtype=int), 0)
    return Items(judge_a[keep], labels_a[keep], np.asarray(codes, dtype=int), n, int((~keep).sum()))


def refusal(items: Items, *, min_labels: int, need_variation: bool = True) -> str:
    """Why no honest interval can be given from these labels ("" when one can)."""
    if items.n_labelled_clusters < min_labels:
        return (f"only {items.n_labelled_clusters} labelled conversation(s); at least {min_labels} are needed for an "
                "interval (label more, or lower min_labels knowingly)")
    if need_variation:
        values = items.labels[items.labelled]
        if np.all(values == values[0]):
            return (f"every labelled item has the same label ({values[0]:g}): a normal interval from them has zero "
                    "width, which is not an honest interval")
    return ""


def refused(estimator: str, items: Items, reason: str, method: str) -> Estimate:
    """An ``Estimate`` with no number: NaN value and interval, and the reason."""
    nan = float("nan")
    n_lab = items.n_labelled
    return Estimate(estimator, nan, nan, nan, nan, n_lab, len(items.judge) - n_lab, items.n_clusters,
                    items.n_labelled_clusters, nan, method, refused=reason)


def cluster_variance(influence: np.ndarray, codes: np.ndarray, n_clusters: int) -> float:
    """Cluster-robust variance of a sum of per-item influence values: ``sum over clusters of (cluster's sum)^2``.

    With one item per cluster this is ``sum(influence^2)``, the usual (``ddof=0``) variance of a mean.

    Example:
        >>> cluster_variance(np.array([1.0, -1.0, 2.0]), np.array([0, 0, 1]), 2)   # (1 - 1)^2 + 2^2
        4.0
    """
    sums = np.bincount(codes, weights=influence, minlength=n_clusters)
    return float(np.sum(sums ** 2))


def z_value(level: float = LEVEL) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 95%)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def interval(value: float, se: float, level: float, bounds: tuple[float, float] | None,
             df: int | None = None) -> tuple[float, float, float]:
    """``(value, low, high)``: ``value ± q * se`` with ``q`` the normal quantile, or Student's t with ``df`` degrees of
    freedom; all clipped to ``bounds`` (the range the truth lies in)."""
    q = z_value(level) if df is None else float(student_t.ppf(0.5 + level / 2, df))
    half = q * se
    low, high = value - half, value + half
    if bounds is not None:
        value, low, high = (float(np.clip(x, *bounds)) for x in (value, low, high))
    return float(value), float(low), float(high)


def small_sample(items: Items, variance: float, enabled: bool) -> tuple[float, int | None, str]:
    """The small-sample correction of an interval from ``G`` labelled conversations: the variance times
    ``G / (G - 1)`` (CR1: a cluster-robust variance from few clusters is too small) and Student's t with ``G - 1``
    degrees of freedom. Returns ``(variance, df, words)``; unchanged (normal) when not ``enabled``."""
    g = items.n_labelled_clusters
    if not enabled or g < 2:
        return variance, None, "normal"
    return variance * g / (g - 1), g - 1, f"Student t with {g - 1} df, variance x G/(G-1) for G = {g} labelled"


def labels_only_variance(items: Items) -> float:
    """Cluster-robust variance of the mean of the labels alone (the yardstick of the effective sample size)."""
    lab = items.labelled
    y = items.labels[lab]
    return cluster_variance((y - y.mean()) / y.size, items.codes[lab], items.n_clusters)


def effective_n(items: Items, variance: float) -> float:
    """Labelled items that labels alone would need to reach ``variance``: ``n_labelled * var_labels / variance``."""
    if not np.isfinite(variance) or variance <= 0:
        return float("nan")
    return float(items.n_labelled * labels_only_variance(items) / variance)


def clip_note(bounds: tuple[float, float] | None) -> str:
    return f"; clipped to [{bounds[0]:g}, {bounds[1]:g}]" if bounds is not None else ""
