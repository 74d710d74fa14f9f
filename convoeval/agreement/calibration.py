"""The agreement study's calibrated estimates: each judge's pass rates and goal rate raw, from labels alone, and
calibrated, on the free labels (database, known faults) and on human labels when there are some.

``calibration_table`` is what ``compute_tables`` saves as ``tables/calibrated_estimates.csv`` and what the notebook's
"calibrated estimates" section shows (``convoeval.report.calibration_views``). Rows are per criterion (a pooled row
would assume the labels were drawn at random across criteria, which free labels are not: the database decides only
the criteria linked to an assertion) and one for the holistic goal score.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval.agreement.fault_labels import fault_labels
from convoeval.frames import RunFrames
from convoeval.stats._result import result_frame
from convoeval.stats.bootstrap import N_BOOT
from convoeval.stats.calibrated_rates import goal_rate_estimates, label_values, pass_rate_estimates
from convoeval.stats.free_labels import database_labels
from convoeval.stats.goal import goal_truth

__all__ = ["CALIBRATION_GROUPS", "calibration_table", "free_labels"]

#: The grouping columns of ``calibration_table``, in order.
CALIBRATION_GROUPS = ("instrument", "rater", "labels", "criterion", "estimator")
#: The holistic row's ``criterion``.
GOAL_ROW = "goal_completion (holistic score)"


def free_labels(frames: RunFrames) -> pd.DataFrame:
    """Every free label of a set of runs: the database's verdicts (criteria with an assertion) and, in a fault
    study, the known faults' — one labels frame, ``source`` telling them apart."""
    parts = []
    if len(frames.rubric):
        parts.append(database_labels(frames.rubric, frames.assertions))
        parts.append(fault_labels(frames))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _labelled_criteria(table: pd.DataFrame, labels: pd.DataFrame, rubric: pd.DataFrame, sources: Any) -> pd.DataFrame:
    known = set(label_values(labels, rubric, sources=sources)["criterion"])
    return table[table["criterion"].isin(known)]


def calibration_table(
    frames: RunFrames,
    *,
    human: pd.DataFrame | None = None,
    rater: str = "judge",
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Calibrated pass rates (per criterion that has labels) and goal rates, on free labels and on human ones.

    Args:
        frames: The runs' frames with the judges' verdicts (``runs``, ``rubric``, ``holistic``, ``assertions``).
        human: Human labels (``load_labels``), or None.
        rater: Column naming the judge configuration.
        n_boot: Bootstrap replicates (Rogan–Gladen).
        seed: Seed (bootstrap, isotonic folds).

    Returns:
        ``instrument`` (``rubric`` / ``holistic``), ``rater``, ``labels`` (``database+fault``, ``human``, or
        ``database`` for the goal), ``criterion``, ``estimator`` and the ``pass_rate_estimates`` columns.
    """
    rubric = frames.rubric
    parts = []
    if len(rubric):
        for labels, sources in ((free_labels(frames), None), (human, "human")):
            if labels is None or labels.empty:
                continue
            table = pass_rate_estimates(rubric, labels, rater=rater, sources=sources, overall=False, n_boot=n_boot,
                                        seed=seed)
            parts.append(_labelled_criteria(table, labels, rubric, sources).assign(instrument="rubric"))
    holistic, assertions = frames.holistic, frames.assertions
    if len(holistic) and len(assertions):
        goals = goal_rate_estimates(holistic, goal_truth(assertions), rater=rater, seed=seed)
        parts.append(goals.drop(columns=["dimension"]).assign(criterion=GOAL_ROW, instrument="holistic"))
    parts = [p for p in parts if len(p)]
    if not parts:
        return result_frame([], list(CALIBRATION_GROUPS))
    out = pd.concat(parts, ignore_index=True)
    first = list(CALIBRATION_GROUPS)
    return out[[*first, *[c for c in out.columns if c not in first]]].reset_index(drop=True)
