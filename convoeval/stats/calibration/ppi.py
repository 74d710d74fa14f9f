"""Prediction-powered inference (PPI, PPI++): a mean from judge values on every item and labels on a slice.

With labelled items ``L`` (``n``: label ``Y`` and judge value ``Yhat``) and unlabelled ones ``U`` (``N``: judge
value only), the PPI++ estimate (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453) is::

    theta = lam * mean_U(Yhat) + mean_L(Y - lam * Yhat)

It is unbiased for the mean of ``Y`` whatever the judge and whatever ``lam``: the labelled term corrects the judge's
bias. ``lam`` tunes how much the judge is trusted; ``lam = 1`` is plain PPI, ``lam = 0`` the labels alone.

PPI++ picks the ``lam`` that minimises the variance. Tuned on the very labels it is then applied to (``ppi_py``:
``lam = cov(Y, Yhat) / ((1 + n/N) var(Yhat))``, clipped to [0, 1]), the reported variance is the minimum of a noisy
curve, so it is too small when labels are few — the variance of the tuned weight is not in the formula (Mani et al.
2025, "No Free Lunch"). Hence, by default, ``lam`` is **cross-fitted**, one fold per labelled conversation: the
items of labelled conversation ``g`` get ``lam_g``, tuned on every other labelled conversation (and the unlabelled
items), so it is independent of the labels it corrects; the estimate is
``theta = lam_bar * mean_U(Yhat) + mean_L(Y - lam_g * Yhat)`` (``lam_bar``: the mean of ``lam_g`` over the labelled
items) and its variance is that of the residuals ``Y - lam_g * Yhat`` (``cluster_lambdas``). Each ``lam_g`` minimises the variance this module reports,
the **conversation-clustered** one (influence values summed per conversation), not the items-independent one: with
several criteria per conversation the two disagree. Leave-one-conversation-out folds need no random split, so the
estimate is the same on every run. ``crossfit=False`` keeps ``ppi_py``'s in-sample ``lam``, formulas and (with
``small=False``) interval exactly — ``se^2 = var(lam * Yhat_U) / N + var(Y - lam * Yhat)_L / n``, population
variances (``ddof = 0``) — which ``tests/test_stats_calibration.py`` checks. Given conversation clusters, the
influence values are summed per conversation first (cluster-robust variance).

The gain: with a judge whose correlation with the labels is ``rho``, the variance is about
``(1 - rho^2 N / (n + N))`` times that of the labels alone; a judge uncorrelated with the labels gives no gain.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np
from numpy.typing import ArrayLike

from convoeval.stats.bootstrap import LEVEL
from convoeval.stats.calibration._items import (
    MIN_LABELS,
    Estimate,
    Items,
    clip_note,
    cluster_variance,
    effective_n,
    interval,
    labels_only_variance,
    prepare,
    refusal,
    refused,
    small_sample,
)
from convoeval.stats.estimation import Estimation, LevelAlias, estimation_from

__all__ = ["check_binary", "cluster_lambdas", "judge_only_items", "judge_only_mean", "labels_only_items",
           "labels_only_mean", "ppi_items", "ppi_lambda", "ppi_mean", "ppi_proportion"]

PROPORTION = (0.0, 1.0)


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s power-tuning weight for a mean (``ppi_py._calc_lam_glm`` with an identity Hessian), in [0, 1].

    Example:
        >>> round(ppi_lambda(np.array([0., 1, 1, 0]), np.array([0., 1, 1, 0]), np.array([0., 1])), 4)
        0.2778
    """
    n, big_n = y.size, yhat_unlabelled.size
    if n < 2 or big_n == 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if var <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def cluster_lambdas(items: Items, *, leave_out: bool = True) -> np.ndarray:
    """The ``lam`` that minimises PPI's conversation-clustered variance, per labelled conversation.

    PPI's influence values are ``a_i + lam * b_i`` (labelled: ``a = (y - mean y) / n``, ``b = -(yhat - mean yhat) /
    n``; unlabelled: ``a = 0``, ``b = (yhat - mean yhat_U) / N``); summed per conversation to ``A_g + lam * B_g``,
    the clustered variance ``sum_g (A_g + lam B_g)^2`` is least at ``lam = -sum A_g B_g / sum B_g^2`` (clipped to
    [0, 1]). With ``leave_out`` (cross-fitting, one fold per labelled conversation), conversation ``g``'s ``lam`` is
    computed without ``g``'s labels, so it is independent of the labels it is applied to; otherwise every entry is
    the same in-sample ``lam``. Returns one value per labelled conversation, in the order of their codes.

    Example:
        Four labelled items the judge gets right, two unlabelled: ``(cov / n) / (var_L / n + var_U / N)`` =
        ``0.0625 / (0.0625 + 0.125)``.

        >>> items = prepare([0., 1, 1, 0, 1, 0], [0., 1, 1, 0, np.nan, np.nan])
        >>> cluster_lambdas(items, leave_out=False).round(3).tolist()
        [0.333, 0.333, 0.333, 0.333]
    """
    lab = items.labelled
    g_all = items.n_clusters
    y, h, c = items.labels[lab], items.judge[lab], items.codes[lab]
    m = np.bincount(c, minlength=g_all).astype(float)
    y_sum, h_sum = np.bincount(c, y, g_all), np.bincount(c, h, g_all)
    hu, cu = items.judge[~lab], items.codes[~lab]
    b_u = np.bincount(cu, (hu - hu.mean()) / hu.size, g_all) if hu.size else np.zeros(g_all)
    keep = m > 0
    y_sum, h_sum, m, b_u_lab = y_sum[keep], h_sum[keep], m[keep], b_u[keep]

    def total(x: np.ndarray) -> np.ndarray:  # the sum over the labelled conversations used for each entry
        return x.sum() - x if leave_out else np.full(x.size, x.sum())

    n_s = total(m)
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = total(y_sum) / n_s, total(h_sum) / n_s
        p_mm, p_mh, p_my = total(m * m), total(m * h_sum), total(m * y_sum)
        s_yh = total(y_sum * h_sum) - a * p_mh - b * p_my + a * b * p_mm
        s_hh = total(h_sum * h_sum) - 2 * b * p_mh + b * b * p_mm
        s_ab = -s_yh / n_s ** 2 + (total(y_sum * b_u_lab) - a * total(m * b_u_lab)) / n_s
        s_bb = float(np.sum(b_u ** 2)) + s_hh / n_s ** 2 - 2 * (total(h_sum * b_u_lab) - b * total(m * b_u_lab)) / n_s
        lam = -s_ab / s_bb
    return np.clip(np.where(np.isfinite(lam) & (s_bb > 0) & (n_s > 0), lam, 0.0), 0.0, 1.0)


def ppi_items(items: Items, *, lam: float | None = None, level: float = LEVEL,
              bounds: tuple[float, float] | None = None, min_labels: int = MIN_LABELS, strict: bool = True,
              what: str = "mean", small: bool = True, crossfit: bool = True) -> Estimate:
    """``ppi_mean`` on checked ``Items``; ``strict=False`` accepts identical labels (one stratum of several)."""
    name = "ppi++" if lam is None else ("ppi" if lam == 1 else f"ppi(lam={lam:g})")
    reason = refusal(items, min_labels=min_labels, need_variation=strict)
    lab = items.labelled
    y, yhat, yu = items.labels[lab], items.judge[lab], items.judge[~lab]
    n, big_n = y.size, yu.size
    if reason:
        return refused(name, items, reason, f"{what}: PPI")
    if big_n == 0:
        lams = np.zeros(n)  # every item is labelled: the labels are the answer
    elif lam is not None:
        lams = np.full(n, float(lam))
    elif crossfit:
        per_code = np.zeros(items.n_clusters)
        per_code[np.unique(items.codes[lab])] = cluster_lambdas(items)
        lams = per_code[items.codes[lab]]
    else:
        lams = np.full(n, ppi_lambda(y, yhat, yu))
    lam_bar = float(lams.mean())
    rect = y - lams * yhat
    value = lam_bar * (yu.mean() if big_n else 0.0) + rect.mean()
    influence = np.zeros(len(items.judge))
    if big_n:
        influence[~lab] = lam_bar * (yu - yu.mean()) / big_n
    # Centred on each item's own lam (y.mean() - lam * yhat.mean()): with one lam, rect - rect.mean().
    influence[lab] = (rect - (y.mean() - lams * yhat.mean())) / n
    variance = cluster_variance(influence, items.codes, items.n_clusters)
    corrected, df, quantile = small_sample(items, variance, small)
    se = float(np.sqrt(corrected))
    value, low, high = interval(value, se, level, bounds, df)
    if lam is not None:
        how = f"PPI, lam={lam:g}"
    elif crossfit:
        how = ("PPI++ (lam cross-fitted: each labelled conversation's lam minimises the clustered variance of the "
               f"others, clipped to [0, 1]), mean lam={lam_bar:.3f}")
    else:
        how = f"PPI++ (lam tuned in-sample to minimise the variance, clipped to [0, 1]), lam={lam_bar:.3f}"
    clusters = "conversation-clustered" if items.n_clusters < len(items.judge) else "items independent"
    method = (f"{what}: {how}; n labelled {n}, unlabelled {big_n}; {level:.0%} CI: {quantile}, "
              f"{clusters}{clip_note(bounds)}")
    if items.dropped:
        method += f"; {items.dropped} item(s) without a judge value left out"
    return Estimate(name, value, se, low, high, n, big_n, items.n_clusters, items.n_labelled_clusters,
                    effective_n(items, variance), method, lam=lam_bar)


def ppi_mean(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    lam: float | None = None,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small: bool = True,
    crossfit: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[LevelAlias],
) -> Estimate:
    """The PPI++ (or PPI, or any fixed-``lam``) estimate of the mean label, with its interval.

    Args:
        judge: The judge's value for every item (a 0–10 score, a 0/1 verdict); NaN leaves the item out.
        labels: The label where known, NaN elsewhere.
        clusters: The conversation of each item (cluster-robust variance); default: items independent.
        lam: ``None`` tunes it (PPI++); 1 is plain PPI; 0 the labels alone.
        min_labels: Fewest labelled conversations accepted.
        bounds: Clip the estimate and interval to this range (the range the truth lies in).
        small: The small-sample correction (``small_sample``: t with G - 1 df, variance x G/(G-1), G the labelled
            conversations); ``False`` (with ``crossfit=False``) gives ``ppi_py``'s normal interval exactly.
        crossfit: Tune PPI++'s ``lam`` for each labelled conversation on the others (the default; see the module);
            ``False``: one ``lam`` tuned in-sample, as ``ppi_py``. Ignored when ``lam`` is given.
        estimation: The interval's level (``Estimation``; the interval itself is Student t or normal, below).
        **deprecated: ``level``: use ``estimation`` (it warns).

    Returns:
        An ``Estimate``; refused (NaN, with the reason) when fewer than ``min_labels`` conversations are labelled or
        every label is the same.

    Example:
        ppi_py's own test: a judge biased by +2 on 100 labelled items, and 10,000 unlabelled items it scores 2
        (truth 0): the bias is corrected exactly and the judge fully trusted.

        >>> y = np.random.default_rng(0).normal(size=100)
        >>> est = ppi_mean(np.concatenate([y + 2, np.full(10_000, 2.0)]), np.concatenate([y, np.full(10_000, np.nan)]))
        >>> abs(est.value) < 1e-12, round(est.lam, 9)
        (True, 1.0)
    """
    est = estimation_from(estimation, deprecated, "ppi_mean")
    return ppi_items(prepare(judge, labels, clusters), lam=lam, level=est.level, bounds=bounds, min_labels=min_labels,
                     small=small, crossfit=crossfit)


def ppi_proportion(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    lam: float | None = None,
    min_labels: int = MIN_LABELS,
    small: bool = True,
    crossfit: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[LevelAlias],
) -> Estimate:
    """The PPI++ estimate of a pass rate: ``ppi_mean`` of 0/1 verdicts and labels, clipped to [0, 1].

    Example:
        >>> judge = np.array([1, 1, 0, 1] * 50); labels = np.array([1, 0, 0, 1] * 5 + [np.nan] * 180)
        >>> round(ppi_proportion(judge, labels).value, 3)
        0.498
    """
    est = estimation_from(estimation, deprecated, "ppi_proportion")
    items = prepare(judge, labels, clusters)
    check_binary(items, "ppi_proportion")
    return ppi_items(items, lam=lam, level=est.level, bounds=PROPORTION, min_labels=min_labels, what="pass rate",
                     small=small, crossfit=crossfit)


def check_binary(items: Items, who: str) -> None:
    """Raise unless the judge values and the labels are all 0/1."""
    for name, values in (("judge", items.judge), ("labels", items.labels[items.labelled])):
        if not np.isin(values, (0.0, 1.0)).all():
            raise ValueError(f"{who} needs 0/1 (pass/fail) {name}; use ppi_mean or isotonic_mean for scores")


def labels_only_mean(
    judge: ArrayLike,
    labels: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[LevelAlias],
) -> Estimate:
    """The mean of the labelled items alone (the judge ignored), cluster-robust interval (small-sample corrected
    like ``ppi_mean``'s unless ``small=False``).

    ``judge`` is only used to count the items the labels stand for (``n_unlabelled``).
    """
    est = estimation_from(estimation, deprecated, "labels_only_mean")
    return labels_only_items(prepare(judge, labels, clusters), level=est.level, min_labels=min_labels, bounds=bounds,
                             small=small)


def labels_only_items(items: Items, *, level: float = LEVEL, bounds: tuple[float, float] | None = None,
                      min_labels: int = MIN_LABELS, strict: bool = True, small: bool = True) -> Estimate:
    """``labels_only_mean`` on checked ``Items``."""
    reason = refusal(items, min_labels=min_labels, need_variation=strict)
    if reason:
        return refused("labels_only", items, reason, "labels only")
    y = items.labels[items.labelled]
    variance, df, quantile = small_sample(items, labels_only_variance(items), small)
    se = float(np.sqrt(variance))
    value, low, high = interval(float(y.mean()), se, level, bounds, df)
    method = f"mean of the {y.size} labelled item(s) alone; {level:.0%} CI: {quantile}{clip_note(bounds)}"
    return Estimate("labels_only", value, se, low, high, y.size, len(items.judge) - y.size, items.n_clusters,
                    items.n_labelled_clusters, float(y.size), method, lam=0.0)


def judge_only_mean(
    judge: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    bounds: tuple[float, float] | None = None,
    estimation: Estimation | None = None,
    **deprecated: Unpack[LevelAlias],
) -> Estimate:
    """The naive estimate: the judge's own mean over every item, as if the judge were right (no label used).

    Its interval only measures sampling noise: it says nothing of the judge's bias, so it misses the truth whenever
    the judge is biased (see ``benchmarks/bench_calibration_coverage.py``). Shown for comparison.
    """
    est = estimation_from(estimation, deprecated, "judge_only_mean")
    return judge_only_items(prepare(judge, np.full(np.asarray(judge).size, np.nan), clusters), level=est.level,
                            bounds=bounds)


def judge_only_items(items: Items, *, level: float = LEVEL, bounds: tuple[float, float] | None = None,
                     **_: object) -> Estimate:
    """``judge_only_mean`` on checked ``Items`` (their labels are ignored)."""
    if len(items.judge) < 2:
        return refused("judge_only", items, "fewer than 2 judged items", "judge only")
    s = items.judge
    variance = cluster_variance((s - s.mean()) / s.size, items.codes, items.n_clusters)
    se = float(np.sqrt(variance))
    value, low, high = interval(float(s.mean()), se, level, bounds)
    method = (f"the judge's mean over {s.size} item(s), no labels (naive: assumes the judge unbiased); "
              f"normal {level:.0%} CI{clip_note(bounds)}")
    return Estimate("judge_only", value, se, low, high, 0, s.size, items.n_clusters, 0, float("nan"), method)
