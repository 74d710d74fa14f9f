"""Does a verdict survive being asked again? Flip rates over repeats, and one judge's self-consistency.

A *repeat* is another verdict on the same item: another judge sample on the same conversation (self-consistency),
or another seed/trial of the same scenario (``noise.trial_flip_rate``). For each item with at least two non-missing
verdicts, ``m`` verdicts of which ``c`` pass:

* ``flip_rate`` — share of items whose verdicts are not all equal (``0 < c < m``). Grows with the number of repeats:
  compare flip rates only at equal ``m``.
* ``pairwise_disagreement`` — mean over items of the chance that two distinct repeats disagree,
  ``2c(m - c) / (m(m - 1))``; comparable across numbers of repeats (it is 1 − Fleiss' observed agreement).
* ``pass_rate`` — share of passing verdicts over the same items (flip rates are highest near 50%).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import numpy as np
import pandas as pd

from convoeval.stats._result import result_frame, stacked
from convoeval.stats._wide import as_tuple, iter_groups
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
from convoeval.stats.multi import multi_rater_agreement
from convoeval.stats.ratings import SCORE_DIMENSIONS, holistic_ratings, rubric_ratings

FLIP_METHODS = {
    "flip_rate": "share of items whose repeats are not unanimous",
    "pairwise_disagreement": "mean P(two distinct repeats disagree) = 2c(m-c)/(m(m-1))",
    "pass_rate": "share of passing verdicts on those items",
}


def flip_rates(
    frame: pd.DataFrame,
    *,
    item: str | Sequence[str],
    value: str = "passed",
    by: str | Sequence[str] = (),
    overall: bool = True,
    cluster: str = "run_id",
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Flip rates of pass/fail verdicts over repeats of the same item.

    Args:
        frame: One row per verdict (repeat); ``value`` is boolean (NA = missing, not counted).
        item: Columns that identify an item; rows sharing them are repeats (e.g. ``("run_id", "criterion")`` for
            judge samples, ``("scenario", "criterion")`` for seeds and trials).
        value: The verdict column.
        by: Grouping columns (constant within an item), e.g. ``"criterion"``.
        overall: Also the pooled group when there are several.
        cluster: Resampling unit for the CI (constant within an item): ``run_id`` for samples, ``scenario`` for trials.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``*by, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``; ``n`` counts clusters,
        ``n_items`` items with at least two verdicts.

    Example:
        >>> df = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 3, "criterion": ["c"] * 6,
        ...                    "passed": [True, True, False, True, True, True]})
        >>> flip_rates(df, item=("run_id", "criterion"), estimation=Estimation(n_boot=50)).set_index("statistic")["value"].round(3).tolist()
        [0.5, 0.333, 0.833]
    """
    est = estimation_from(estimation, deprecated, "flip_rates")
    cluster = est.unit(cluster)
    item, by = as_tuple(item), as_tuple(by)
    key = list(dict.fromkeys([*by, *item]))
    missing = [c for c in [*key, value, cluster] if c not in frame]
    if missing:
        raise ValueError(f"flip_rates needs column(s) {missing}; the frame has {list(frame.columns)}")
    votes = frame[[*dict.fromkeys([*key, cluster])]].copy()
    votes["_pass"] = frame[value].astype("boolean").astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    grouped = votes.groupby(key, sort=False, dropna=False)
    items = grouped.agg(_c=("_pass", "sum"), _m=("_pass", "count"), _cluster=(cluster, "first"))
    items = items[items["_m"] >= 2]
    c, m = items["_c"].to_numpy(), items["_m"].to_numpy()
    items = items.assign(_flip=((c > 0) & (c < m)).astype(float), _pair=2 * c * (m - c) / (m * (m - 1)))
    items = items.reset_index().set_index(key)
    ci = ci_label(cluster, est)
    rows = []
    for group, part in iter_groups(items, by, overall):
        codes, n_cl = cluster_codes(part["_cluster"])
        content = part[["_flip", "_pair", "_c", "_m"]].to_numpy(dtype=float)
        codes = canonical_codes(codes, n_cl, np.column_stack([content, np.ones(len(part))]))  # whatever the ids
        per = cluster_sums(codes, n_cl, content)
        per = np.column_stack([per, np.bincount(codes, minlength=n_cl)])
        reps = resample_weights(n_cl, n_boot=est.n_boot, seed=est.seed) @ per
        jack, point = jackknife_weights(n_cl) @ per, per.sum(axis=0)
        for stat, how in FLIP_METHODS.items():
            rows.append(summarize(stat, _ratio(stat, point[None])[0], _ratio(stat, reps), jackknife=_ratio(stat, jack),
                                  estimation=est, n=n_cl, n_items=len(part), method=f"{how}; {ci}", groups=group))
    return result_frame(rows, list(by))


def _ratio(stat: str, sums: np.ndarray) -> np.ndarray:
    flips, pairs, passes, verdicts, n_items = (sums[:, i] for i in range(5))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios: dict[str, np.ndarray] = {"flip_rate": flips / n_items, "pairwise_disagreement": pairs / n_items,
                                         "pass_rate": passes / verdicts}
    return ratios[stat]


def self_consistency(
    rubric: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """How consistently each rubric judge repeats its own verdicts across samples of the same conversation.

    Reports, per judge and criterion (and pooled): ``flip_rate``, ``pairwise_disagreement``, ``pass_rate`` and
    ``krippendorff_alpha`` with the samples as raters. Needs runs judged with ``judge_samples >= 2``.

    Args:
        rubric: A rubric frame with several samples per conversation × criterion.
        rater: Column(s) naming the judge configuration.
        by: Grouping columns.
        overall: Also pool the criteria (per judge).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``rater, *by, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.
    """
    est = estimation_from(estimation, deprecated, "self_consistency")
    by = as_tuple(by)
    ratings = rubric_ratings(rubric, rater=rater, samples="each")
    parts = []
    for judge, rows in ratings.groupby("judge", sort=True):
        flips = flip_rates(rows, item=("run_id", "criterion"), by=by, overall=overall, estimation=est)
        alpha = multi_rater_agreement(rows, by=by, overall=overall, estimation=est)
        alpha = alpha[alpha["statistic"] == "krippendorff_alpha"].drop(columns=["raters", "n_raters"])
        alpha["method"] = alpha["method"].str.replace("krippendorff.alpha", "krippendorff.alpha across samples", n=1)
        parts.append(pd.concat([flips, alpha], ignore_index=True).assign(rater=judge))
    return stacked(parts, "rater", by)


def score_consistency(
    holistic: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    dimensions: Sequence[str] = SCORE_DIMENSIONS,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """How much a holistic judge's scores move between samples of the same conversation.

    * ``score_sd`` — within-conversation SD, pooled: ``sqrt(mean over conversations of the samples' variance)``
      (Bland–Altman's within-subject SD; 2.77 × it is the repeatability coefficient), in score points.
    * ``mean_range`` — mean over conversations of max − min across samples, in score points.

    Args:
        holistic: A holistic frame with several samples per conversation.
        rater: Column(s) naming the judge configuration.
        dimensions: Score columns.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``rater, dimension, statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide`` (the flag uses a
        1.5-point limit).
    """
    est = estimation_from(estimation, deprecated, "score_consistency")
    ratings = holistic_ratings(holistic, rater=rater, samples="each", dimensions=dimensions)
    items = (ratings.dropna(subset=["score"]).groupby(["judge", "dimension", "run_id"], sort=True)["score"]
             .agg(_var="var", _range=lambda s: s.max() - s.min(), _m="count").reset_index())
    items = items[items["_m"] >= 2]
    ci = ci_label("run_id", est)
    rows = []
    for (judge, dimension), part in items.groupby(["judge", "dimension"], sort=True):
        codes, n_conv = cluster_codes(part["run_id"])
        content = np.column_stack([part["_var"], part["_range"], np.ones(len(part))])
        codes = canonical_codes(codes, n_conv, content)  # the same CI whatever the run ids
        per = cluster_sums(codes, n_conv, content)
        reps = resample_weights(n_conv, n_boot=est.n_boot, seed=est.seed) @ per
        jack, point = jackknife_weights(n_conv) @ per, per.sum(axis=0)[None]
        how = {"score_sd": "sqrt(mean within-conversation variance across samples), points",
               "mean_range": "mean (max - min) across samples, points"}
        for stat, words in how.items():
            rows.append(summarize(stat, _spread(stat, point)[0], _spread(stat, reps), jackknife=_spread(stat, jack),
                                  estimation=est, n=n_conv, n_items=len(part), method=f"{words}; {ci}", scale=10.0,
                                  groups={"rater": judge, "dimension": dimension}))
    return result_frame(rows, ["rater", "dimension"])


def _spread(stat: str, sums: np.ndarray) -> np.ndarray:
    variance, spread, n_items = sums[:, 0], sums[:, 1], sums[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.sqrt(variance / n_items) if stat == "score_sd" else spread / n_items
    return out
