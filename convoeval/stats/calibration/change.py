"""How a calibrated pass rate changed between two sets of runs (a baseline and a candidate), per criterion.

Each side's rate is calibrated on the labels of its own conversations (``pass_rate_estimates``, PPI++ by default),
so a judge that is lenient on both sides does not hide or invent a change. The difference's interval treats the two
estimates as independent (each side's conversations and labels are its own): ``se = sqrt(se_b^2 + se_c^2)``, normal.
Paired designs (the same scenarios, seeds and trials on both sides) are positively correlated, so this interval is
conservative there. A side whose estimate is refused makes the change refused, with that side's reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import numpy as np
import pandas as pd

from convoeval.stats.calibration._items import MIN_LABELS, z_value
from convoeval.stats.calibration.rates import pass_rate_estimates
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from

__all__ = ["CHANGE_COLUMNS", "calibrated_rate_changes"]

#: Columns of ``calibrated_rate_changes``.
CHANGE_COLUMNS = ("criterion", "estimator", "baseline", "baseline_low", "baseline_high", "candidate", "candidate_low",
                  "candidate_high", "difference", "ci_low", "ci_high", "n_labelled_baseline", "n_labelled_candidate",
                  "refused", "method")


def _side(rubric: pd.DataFrame, labels: pd.DataFrame, estimator: str, **options) -> pd.DataFrame:
    mine = labels[labels["conversation"].astype(str).isin(set(rubric["run_id"].astype(str)))]
    table = pass_rate_estimates(rubric.assign(_side="side"), mine, rater="_side", estimators=(estimator,),
                                overall=False, **options)
    return table.set_index("criterion")


def _check_keys(labels: pd.DataFrame) -> None:
    # Both sides usually share scenario, seed and trial: a short key would label a conversation on each side.
    short = labels["conversation"].astype(str).str.fullmatch(r"[^/]+/-?\d+/-?\d+")
    if short.any():
        first = labels[short].iloc[0]
        where = f"{first['file']}, line {first['line']}: " if "file" in labels and "line" in labels else ""
        raise ValueError(f"{where}conversation {first['conversation']!r} is a scenario/seed/trial key, which names a "
                         "conversation on both sides of a comparison; name it by its run_id")


def calibrated_rate_changes(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    estimator: str = "ppi++",
    sources: str | Sequence[str] | None = None,
    samples: str | int = "majority",
    min_labels: int = MIN_LABELS,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Per criterion both sides hold: each side's calibrated pass rate and the change (candidate − baseline).

    Args:
        baseline: The baseline's rubric frame (one judge configuration).
        candidate: The candidate's rubric frame.
        labels: A labels frame covering conversations of either side, named by ``run_id`` (a ``scenario/seed/trial``
            key would name a conversation on both sides, and is refused).
        estimator: A name from ``convoeval.stats.calibration.estimators.ESTIMATORS`` (``ppi++``, ``isotonic``, ...).
        sources: Label sources to use (default all).
        samples: How several judge samples become one verdict.
        min_labels: Fewest labelled conversations per side and criterion.
        estimation: Level, bootstrap replicates (Rogan–Gladen) and seed: ``Estimation``.
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``CHANGE_COLUMNS``, one row per criterion; a refused row has NaN numbers and the reason.

    Raises:
        ValueError: a label names its conversation by ``scenario/seed/trial``.
    """
    est = estimation_from(estimation, deprecated, "calibrated_rate_changes")
    level = est.level
    _check_keys(labels)
    options = {"sources": sources, "samples": samples, "min_labels": min_labels, "estimation": est}
    sides = {"baseline": _side(baseline, labels, estimator, **options),
             "candidate": _side(candidate, labels, estimator, **options)}
    z = z_value(level)
    rows = []
    for criterion in [c for c in sides["baseline"].index if c in sides["candidate"].index]:
        b, c = sides["baseline"].loc[criterion], sides["candidate"].loc[criterion]
        why = "; ".join(f"{name}: {row['refused']}" for name, row in (("baseline", b), ("candidate", c))
                        if isinstance(row["refused"], str) and row["refused"])
        diff = c["value"] - b["value"]
        half = z * float(np.sqrt(b["se"] ** 2 + c["se"] ** 2))
        nan = float("nan")
        rows.append({
            "criterion": criterion, "estimator": estimator,
            "baseline": b["value"], "baseline_low": b["ci_low"], "baseline_high": b["ci_high"],
            "candidate": c["value"], "candidate_low": c["ci_low"], "candidate_high": c["ci_high"],
            "difference": nan if why else diff, "ci_low": nan if why else diff - half,
            "ci_high": nan if why else diff + half,
            "n_labelled_baseline": int(b["n_labelled"]), "n_labelled_candidate": int(c["n_labelled"]),
            "refused": why,
            "method": (f"{estimator} on each side's own labels; difference candidate - baseline, normal {level:.0%} "
                       "CI with the sides' variances added (independent sides; conservative when paired)"),
        })
    return pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))
