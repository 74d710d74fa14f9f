"""Calibrated pass rates and goal rates from the runs' frames: the judge's raw rate, the labels alone, and the judge
calibrated by the labels (PPI++, isotonic, Rogan–Gladen), each with its interval, per criterion and pooled.

The labels are a labels frame (``load_labels``, or the free ones: ``free_labels.database_labels``,
``convoeval.agreement.fault_labels.fault_labels``), filtered by ``source`` so an analyst can calibrate on free labels
and check on human ones. Several raters of one item are reduced to their strict majority (a tie is left out).
Criterion rows of one conversation are clustered by ``run_id``; ``strata="scenario"`` stratifies when the labels
were drawn per scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np
import pandas as pd

from convoeval.stats._result import result_frame
from convoeval.stats._wide import as_tuple, iter_groups
from convoeval.stats.calibration._items import MIN_LABELS
from convoeval.stats.calibration.estimators import estimate
from convoeval.stats.calibration.isotonic import MAX_OUTSIDE
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.labels import LABEL_SOURCES, label_ratings
from convoeval.stats.ratings import holistic_ratings, rubric_ratings

__all__ = ["PASS_RATE_ESTIMATORS", "SCORE_ESTIMATORS", "goal_rate_estimates", "label_values", "pass_rate_estimates"]

#: The estimators ``pass_rate_estimates`` runs by default, in display order.
PASS_RATE_ESTIMATORS = ("judge_only", "labels_only", "ppi++", "rogan_gladen", "isotonic")
#: The estimators ``goal_rate_estimates`` runs (Rogan–Gladen needs pass/fail verdicts, not scores).
SCORE_ESTIMATORS = ("judge_only", "labels_only", "ppi++", "isotonic")
_RATE = (0.0, 1.0)


def _sources(labels: pd.DataFrame, sources: str | Sequence[str] | None) -> tuple[str, ...]:
    present = tuple(dict.fromkeys(labels["source"])) if "source" in labels else ("human",)
    if sources is None:
        return present
    wanted = as_tuple(sources)
    unknown = sorted(set(wanted) - set(LABEL_SOURCES))
    if unknown:
        raise ValueError(f"unknown label source(s) {unknown}; sources are {list(LABEL_SOURCES)}")
    return wanted


def label_values(labels: pd.DataFrame, rubric: pd.DataFrame, *,
                 sources: str | Sequence[str] | None = None) -> pd.DataFrame:
    """One verdict per labelled conversation × criterion: the strict majority of its raters (ties left out).

    Args:
        labels: A labels frame (``load_labels``, ``database_labels``, ``fault_labels`` or their concatenation).
        rubric: The rubric frame the labels refer to.
        sources: Keep only labels from these sources (``human``, ``database``, ``fault``); default all.

    Returns:
        ``run_id, criterion, label`` (float 1/0), ``n_raters``.
    """
    wanted = _sources(labels, sources)
    chosen = labels[labels["source"].isin(wanted)] if "source" in labels else labels
    empty = pd.DataFrame({"run_id": pd.Series(dtype=object), "criterion": pd.Series(dtype=object),
                          "label": pd.Series(dtype=float), "n_raters": pd.Series(dtype="int64")})
    if chosen.empty:
        return empty
    ratings = label_ratings(chosen, rubric).dropna(subset=["passed"])
    if ratings.empty:
        return empty
    votes = ratings.assign(_p=ratings["passed"].astype(float)).groupby(["run_id", "criterion"])["_p"]
    tally = votes.agg(["sum", "count"]).reset_index()
    tally = tally[tally["sum"] * 2 != tally["count"]]
    return pd.DataFrame({"run_id": tally["run_id"].astype(object), "criterion": tally["criterion"],
                         "label": (tally["sum"] * 2 > tally["count"]).astype(float),
                         "n_raters": tally["count"].astype("int64")}).reset_index(drop=True)


def pass_rate_estimates(
    rubric: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    sources: str | Sequence[str] | None = None,
    estimators: Sequence[str] = PASS_RATE_ESTIMATORS,
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    strata: str | None = None,
    min_labels: int = MIN_LABELS,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Each judge's pass rate raw, from the labels alone, and calibrated, side by side, per criterion and pooled.

    Args:
        rubric: The rubric frame: the judge's verdicts on every conversation (labelled or not).
        labels: A labels frame (any sources; see ``label_values``).
        rater: Column(s) naming the judge configuration.
        samples: How several judge samples become one verdict.
        sources: Calibrate on labels of these sources only (default: all in ``labels``).
        estimators: Names from ``convoeval.stats.calibration.estimators.ESTIMATORS``.
        by: Grouping columns (a ``"(all)"`` row pools them: criteria of one conversation are clustered).
        overall: Also pool the groups.
        strata: A column (``"scenario"``) to stratify by when the labels were drawn per stratum.
        min_labels: Fewest labelled conversations for an estimate (otherwise the row is refused, with the reason).
        estimation: Level, bootstrap replicates (Rogan–Gladen) and seed (bootstrap, isotonic folds): ``Estimation``.
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``rater, *by, estimator, n_labelled, n_unlabelled, n_effective, lam, se, refused, labels`` (the sources
        used) then ``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.

    Example (needs human labels, so not run as a doctest)::

        pass_rate_estimates(frames.rubric, load_labels(), sources="human")
    """
    est = estimation_from(estimation, deprecated, "pass_rate_estimates")
    by = as_tuple(by)
    used = "+".join(_sources(labels, sources))
    truth = label_values(labels, rubric, sources=sources)
    judges = rubric_ratings(rubric, rater=rater, samples=samples)
    items = judges.merge(truth[["run_id", "criterion", "label"]], on=["run_id", "criterion"], how="left")
    index = list(dict.fromkeys(["run_id", "criterion", *by, *([strata] if strata else [])]))
    rows = []
    for judge, mine in items.groupby("rater", sort=True):
        for group, part in iter_groups(mine.set_index(index), by, overall):
            rows += _rows(part, {"rater": judge, **group}, strata, estimators, used,
                          level=est.level, bounds=_RATE, min_labels=min_labels, n_boot=est.n_boot, seed=est.seed)
    return result_frame(rows, ["rater", *by])


def _rows(part: pd.DataFrame, groups: dict[str, Any], strata: str | None, estimators: Sequence[str], used: str,
          **options: Any) -> list[dict[str, Any]]:
    judge = part["passed"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    labels = part["label"].to_numpy(dtype=float)
    clusters = part.index.get_level_values("run_id").astype(str)
    layers = part.index.get_level_values(strata) if strata else None
    out = []
    for name in estimators:
        est = estimate(name, judge, labels, clusters=clusters, strata=layers, **options)
        out.append({**est.row(groups=groups), "labels": used})
    return out


def goal_rate_estimates(
    holistic: pd.DataFrame,
    truth: pd.DataFrame,
    *,
    dimension: str = "goal_completion",
    threshold: float = 5.0,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "mean",
    estimators: Sequence[str] = SCORE_ESTIMATORS,
    strata: str | None = None,
    min_labels: int = MIN_LABELS,
    source: str = "database",
    max_outside: float = MAX_OUTSIDE,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """The true goal rate from a holistic 0–10 score: raw (share of scores ``>= threshold``), labels alone, PPI++
    (the score / 10 as the judge's prediction) and isotonic calibration of the score, side by side.

    Args:
        holistic: The holistic frame (every conversation the judge scored).
        truth: ``run_id`` and ``goal_met`` (boolean; NA = unknown), e.g. ``convoeval.stats.goal_truth(assertions)``
            (the database's verdict: free labels) or human verdicts.
        dimension: The score column.
        threshold: The raw rate counts scores at or above it as a pass.
        rater: Column(s) naming the judge configuration.
        samples: How several holistic samples become one score.
        estimators: Names from ``ESTIMATORS`` (not ``rogan_gladen``: it needs verdicts).
        strata: A column of the holistic frame to stratify by (``"scenario"``).
        min_labels: Fewest labelled conversations.
        source: What ``truth`` is, for the ``labels`` column.
        max_outside: The isotonic map's tolerance for unlabelled scores outside the labelled range (see
            ``isotonic_mean``).
        estimation: Level and seed (of the isotonic folds): ``Estimation``.
        **deprecated: ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        The ``pass_rate_estimates`` columns, with ``dimension`` in place of ``*by``.
    """
    settings = estimation_from(estimation, deprecated, "goal_rate_estimates")
    missing = [c for c in ("run_id", "goal_met") if c not in truth]
    if missing:
        raise ValueError(f"goal_rate_estimates needs a truth frame with run_id and goal_met; missing {missing}")
    scores = holistic_ratings(holistic, rater=rater, samples=samples, dimensions=(dimension,))
    known = truth.dropna(subset=["goal_met"]).drop_duplicates("run_id")
    met = known.assign(run_id=known["run_id"].astype(str), label=known["goal_met"].astype(float))
    rows = []
    for judge, mine in scores.assign(run_id=scores["run_id"].astype(str)).groupby("rater", sort=True):
        mine = mine.merge(met[["run_id", "label"]], on="run_id", how="left")
        score = mine["score"].to_numpy(dtype=float)
        labels = mine["label"].to_numpy(dtype=float)
        layers = mine[strata].to_numpy(dtype=object) if strata else None
        for name in estimators:
            # Each estimator reads the score its own way: the raw rate thresholds it, PPI++ takes score/10 as the
            # predicted probability, the isotonic map learns its own scale.
            judged = {"judge_only": np.where(np.isnan(score), np.nan, score >= threshold),
                      "ppi++": score / 10, "ppi": score / 10}.get(name, score)
            est = estimate(name, judged, labels, clusters=mine["run_id"].to_numpy(dtype=object), strata=layers,
                           level=settings.level, bounds=_RATE, min_labels=min_labels, seed=settings.seed,
                           max_outside=max_outside)
            rows.append({**est.row(groups={"rater": judge, "dimension": dimension}), "labels": source})
    return result_frame(rows, ["rater", "dimension"])
