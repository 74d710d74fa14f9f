"""Database truth: ground truth that costs nothing, because every run already checks the database.

* **Rubric criteria.** A criterion may declare the assertion it corresponds to (``RubricCriterion.assertion``; the
  rubric frame's ``assertion`` column), e.g. "Agent generated a payment link" ↔ ``payment_link_created``. The
  criterion is phrased so that it holds exactly when the assertion passes (the assertion frame's ``passed`` means
  "the database shows what the scenario expects"), so the database's verdict on the criterion is that ``passed``.
* **Goal.** The database says the goal was met when every *outcome* assertion of the run passed. Process assertions
  (``tools_called``, ``tools_not_called``: which tools the agent used) are left out by default: a holistic judge
  reads the conversation's outcome, not the agent's tool log. The holistic judge says the goal was met when its
  ``goal_completion`` score is ``>= threshold`` (default 5, the midpoint of 0–10; a parameter). The simulator's own
  ``[GOAL_COMPLETE]`` claim (``runs.goal_completed``) can be scored the same way.

Missing values stay missing: an assertion whose check errored (``passed`` NA) gives no verdict, never a fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import numpy as np
import pandas as pd

from convoeval.frames import RunFrames
from convoeval.stats._result import stacked
from convoeval.stats.binary import binary_agreement
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.goal import PROCESS_ASSERTIONS, goal_truth
from convoeval.stats.ratings import RATING_COLUMNS, holistic_ratings, rubric_ratings

#: The rater name of database verdicts.
DATABASE = "database"
#: The rater name of the simulator's ``[GOAL_COMPLETE]`` claim.
SIMULATOR = "simulator"
#: The ``criterion`` of goal verdicts.
GOAL = "goal_completion"
#: Default ``goal_completion`` score at or above which the holistic judge counts the goal as met.
GOAL_THRESHOLD = 5.0


def _passed(values: pd.Series) -> pd.Series:
    return values.astype("boolean")


def truth_ratings(rubric: pd.DataFrame, assertions: pd.DataFrame) -> pd.DataFrame:
    """The database's verdict on every rubric criterion that declares an assertion, as a ratings frame.

    Args:
        rubric: A rubric frame (only ``run_id``, ``criterion``, ``assertion`` and the conversation keys are used).
        assertions: The assertion frame (``ASSERTION_SCHEMA``).

    Returns:
        ``RATING_COLUMNS`` with ``rater = "database"``; one row per run × criterion with a declared assertion that was
        checked for that run (``passed`` NA when the check itself failed).
    """
    if "assertion" not in rubric:
        raise ValueError("the rubric frame has no 'assertion' column (RUBRIC_SCHEMA declares one)")
    declared = rubric[rubric["assertion"].notna()]
    keys = [c for c in RATING_COLUMNS if c in declared and c not in ("rater", "sample", "passed")]
    items = declared[keys].drop_duplicates(["run_id", "criterion"])
    checks = assertions[["run_id", "assertion", "passed"]].drop_duplicates(["run_id", "assertion"])
    merged = items.merge(checks, on=["run_id", "assertion"], how="inner")
    merged["rater"] = DATABASE
    merged["sample"] = pd.NA
    merged["passed"] = _passed(merged["passed"])
    return merged.reindex(columns=list(RATING_COLUMNS))


def truth_pairs(
    rubric: pd.DataFrame,
    assertions: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
) -> pd.DataFrame:
    """Judge verdict beside database verdict, for every run × criterion that declares an assertion (for reports).

    Returns:
        ``run_id, scenario, seed, trial, criterion, assertion, rater, judge_passed, database_passed, agree``
        (``agree`` NA when either verdict is missing).
    """
    judge = rubric_ratings(rubric, rater=rater, samples=samples)
    judge = judge[judge["assertion"].notna()]
    truth = truth_ratings(rubric, assertions)[["run_id", "criterion", "passed"]]
    out = judge.merge(truth.rename(columns={"passed": "database_passed"}), on=["run_id", "criterion"], how="inner")
    out = out.rename(columns={"passed": "judge_passed"})
    out["agree"] = (out["judge_passed"] == out["database_passed"]).astype("boolean")
    columns = ["run_id", "scenario", "seed", "trial", "criterion", "assertion", "rater", "judge_passed",
               "database_passed", "agree"]
    return out[columns].reset_index(drop=True)


def goal_ratings(
    holistic: pd.DataFrame,
    assertions: pd.DataFrame,
    *,
    runs: pd.DataFrame | None = None,
    threshold: float = GOAL_THRESHOLD,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "mean",
    exclude: Sequence[str] = PROCESS_ASSERTIONS,
) -> pd.DataFrame:
    """Goal verdicts of the holistic judge (``goal_completion >= threshold``), the database and (given ``runs``) the
    simulator, as one pass/fail ratings frame with ``criterion = "goal_completion"``.

    Args:
        holistic: A holistic frame.
        assertions: The assertion frame.
        runs: The runs frame; adds the simulator's ``goal_completed`` as rater ``"simulator"``.
        threshold: ``goal_completion`` at or above which the judge counts the goal as met.
        rater: Column(s) naming the judge configuration.
        samples: How several holistic samples become one score (see ``holistic_ratings``).
        exclude: Assertions left out of the database's goal verdict.
    """
    scores = holistic_ratings(holistic, rater=rater, samples=samples, dimensions=(GOAL,))
    met = scores["score"].to_numpy(dtype=float)
    judge = scores.drop(columns=["dimension", "score"]).assign(
        criterion=GOAL, passed=pd.array([None if np.isnan(v) else bool(v >= threshold) for v in met], "boolean"))
    database = goal_truth(assertions, exclude=exclude).rename(columns={"goal_met": "passed"})
    parts = [judge, database.drop(columns=["n_assertions"]).assign(criterion=GOAL, rater=DATABASE)]
    if runs is not None:
        # Only a simulated patient can claim [GOAL_COMPLETE]; scripted runs have no such claim to score.
        talked = runs[runs["type"] == "conversational"] if "type" in runs else runs
        sim = talked[["run_id", "scenario", "seed", "trial"]].assign(
            criterion=GOAL, rater=SIMULATOR, passed=talked["goal_completed"].astype("boolean"))
        parts.append(sim)
    out = pd.concat([p.reindex(columns=list(RATING_COLUMNS)) for p in parts], ignore_index=True)
    out["passed"] = out["passed"].astype("boolean")
    return out


def database_agreement(
    frames: RunFrames,
    *,
    threshold: float = GOAL_THRESHOLD,
    rater: str | Sequence[str] = "judge_model",
    rubric_samples: str | int = "majority",
    holistic_samples: str | int = "mean",
    exclude: Sequence[str] = PROCESS_ASSERTIONS,
    simulator: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Agreement of the rubric judge and of the holistic ``goal_completion`` with the database, for a results folder.

    Args:
        frames: a run's ``RunFrames`` (``convoeval.load_results(folder).frames``): its ``rubric``,
            ``holistic`` and ``assertions``, and ``runs`` for the simulator.
        threshold: ``goal_completion`` threshold for "goal met".
        rater: Column(s) naming the judge configuration.
        rubric_samples: How rubric samples become one verdict.
        holistic_samples: How holistic samples become one score.
        exclude: Assertions left out of the database's goal verdict.
        simulator: Also score the simulator's ``[GOAL_COMPLETE]`` against the database.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        The ``binary_agreement`` table with ``rater_b = "database"`` and an ``instrument`` column first:
        ``"rubric"`` (per criterion with a declared assertion, and pooled) or ``"goal"`` (criterion
        ``goal_completion``: the holistic judge and the simulator).
    """
    est = estimation_from(estimation, deprecated, "database_agreement")
    parts = []
    rubric, holistic = frames.rubric, frames.holistic
    if len(rubric) and rubric["assertion"].notna().any():
        truth = truth_ratings(rubric, frames.assertions)
        judged = rubric_ratings(rubric[rubric["assertion"].notna()], rater=rater, samples=rubric_samples)
        ratings = pd.concat([judged, truth], ignore_index=True)
        parts.append(binary_agreement(ratings, reference=DATABASE, estimation=est)
                     .assign(instrument="rubric"))
    if len(holistic):
        goals = goal_ratings(holistic, frames.assertions, threshold=threshold, rater=rater,
                             samples=holistic_samples, exclude=exclude,
                             runs=frames.runs if simulator and len(frames.runs) else None)
        if (goals["rater"] == DATABASE).any():
            parts.append(binary_agreement(goals, reference=DATABASE, estimation=est)
                         .assign(instrument="goal"))
    return stacked(parts, "instrument", ["criterion", "rater_a", "rater_b"])
