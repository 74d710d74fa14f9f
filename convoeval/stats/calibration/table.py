"""A run's or a study's calibrated table: each judge's pass rates (per criterion that has labels) and goal rate raw,
from the labels alone, and calibrated, on free labels and on human ones — the one table the agreement study saves
(``tables/calibrated_estimates.csv``) and the run report shows (``convoeval.report.calibrated_rates``).

Rows are per criterion (a pooled row would assume the labels were drawn at random across criteria, which free labels
are not: the database decides only the criteria linked to an assertion) and one for the holistic goal score. The
free labels are given (``free=``): the database's verdicts (``database_labels``) and, for a fault study, the known
faults' (``convoeval.agreement.fault_labels.free_labels`` builds both).
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd

from convoeval.frames import RunFrames
from convoeval.stats._result import result_frame
from convoeval.stats.calibration.rates import goal_rate_estimates, label_values, pass_rate_estimates
from convoeval.stats.estimation import Estimation
from convoeval.stats.goal import goal_truth

__all__ = ["CALIBRATION_GROUPS", "GOAL_ROW", "calibration_table"]

#: The grouping columns of ``calibration_table``, in order.
CALIBRATION_GROUPS = ("instrument", "rater", "labels", "criterion", "estimator")
#: The holistic row's ``criterion``.
GOAL_ROW = "goal_completion (holistic score)"


def _labelled_criteria(table: pd.DataFrame, labels: pd.DataFrame, rubric: pd.DataFrame, sources: Any) -> pd.DataFrame:
    known = set(label_values(labels, rubric, sources=sources)["criterion"])
    return table[table["criterion"].isin(known)]


def calibration_table(
    frames: RunFrames,
    *,
    free: pd.DataFrame | None = None,
    human: pd.DataFrame | None = None,
    rater: str = "judge",
    goal: bool = True,
    human_criteria: Literal["labelled", "all"] = "labelled",
    estimation: Estimation | None = None,
) -> pd.DataFrame:
    """Calibrated pass rates (per criterion that has labels) and goal rates, on free labels and on human ones.

    Args:
        frames: The runs' frames with the judges' verdicts (``runs``, ``rubric``, ``holistic``, ``assertions``).
        free: Free labels (``database_labels``; a fault study's also from ``agreement.fault_labels.free_labels``).
        human: Human labels (``load_labels``), or None.
        rater: Column naming the judge configuration (``"judge"`` in a study, ``"judge_model"`` in a run).
        goal: Also the holistic goal score's row, calibrated on the database's goal verdicts.
        human_criteria: ``"all"`` keeps a row (refused, with the reason) for criteria no human labelled.
        estimation: Level, seed and bootstrap replicates (``Estimation``; Rogan–Gladen's bootstrap, isotonic folds).

    Returns:
        ``instrument`` (``rubric`` / ``holistic``), ``rater``, ``labels`` (``database+fault``, ``human``, or
        ``database`` for the goal), ``criterion``, ``estimator`` and the ``pass_rate_estimates`` columns.
    """
    rubric = frames.rubric
    parts = []
    if len(rubric):
        for labels, sources, keep in ((free, None, "labelled"), (human, "human", human_criteria)):
            if labels is None or labels.empty:
                continue
            table = pass_rate_estimates(rubric, labels, rater=rater, sources=sources, overall=False,
                                        estimation=estimation)
            if keep == "labelled":
                table = _labelled_criteria(table, labels, rubric, sources)
            parts.append(table.assign(instrument="rubric"))
    holistic, assertions = frames.holistic, frames.assertions
    if goal and len(holistic) and len(assertions):
        goals = goal_rate_estimates(holistic, goal_truth(assertions), rater=rater, estimation=estimation)
        parts.append(goals.drop(columns=["dimension"]).assign(criterion=GOAL_ROW, instrument="holistic"))
    parts = [p for p in parts if len(p)]
    if not parts:
        return result_frame([], list(CALIBRATION_GROUPS))
    out = pd.concat(parts, ignore_index=True)
    first = list(CALIBRATION_GROUPS)
    return out[[*first, *[c for c in out.columns if c not in first]]].reset_index(drop=True)
