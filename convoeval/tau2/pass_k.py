"""pass^k, τ²'s reliability figure: the chance that all k trials of a task succeed, averaged over tasks.

For a task run n times with c successes, τ² estimates pass^k as C(c, k) / C(n, k) (unbiased for k <= n; Yao et al.,
τ-bench, 2024) and reports its mean over tasks for k = 1…4. ``pass_k`` does the same on any frame with one row per
conversation (a task column, a success column) and adds a percentile bootstrap interval over tasks (tasks
resampled with replacement: the trials of a task stay together). ``tau2_success`` reads a τ² run's frames into that
frame: a conversation succeeds when the simulated user ended it and every τ² check of the task's reward basis
passed (τ²'s reward 1).

Example:
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"scenario": ["a"] * 4 + ["b"] * 4, "success": [1, 1, 1, 1, 1, 1, 0, 0]})
    >>> table = pass_k(runs, n_boot=200)
    >>> table[["k", "pass_k", "tasks"]].round(3).to_dict("records")[:2]
    [{'k': 1, 'pass_k': 0.75, 'tasks': 2}, {'k': 2, 'pass_k': 0.583, 'tasks': 2}]
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np
import pandas as pd

__all__ = ["pass_k", "tau2_success"]


def _task_pass_k(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k) if n >= k else float("nan")


def pass_k(frame: pd.DataFrame, *, task: str = "scenario", success: str = "success",
           k: Sequence[int] = (1, 2, 3, 4), n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """pass^k for each k, with a bootstrap interval over tasks.

    Args:
        frame: one row per conversation: its task (``task``) and whether it succeeded (``success``: bool or 0/1).
        task: the column naming the task.
        success: the column saying whether the conversation succeeded.
        k: the k to report; a task with fewer than k trials is left out of that k's mean (``tasks`` says how many
            count).
        n_boot: bootstrap resamples of the tasks.
        level: the interval's coverage.
        seed: the bootstrap's seed.

    Returns:
        Columns ``k``, ``pass_k``, ``low``, ``high``, ``tasks`` (tasks with at least k trials), ``trials`` (the
        fewest trials of those tasks).
    """
    counts = frame.groupby(task)[success].agg(n="size", c=lambda s: int(pd.Series(s).astype(bool).sum()))
    rng = np.random.default_rng(seed)
    rows = []
    for kk in k:
        usable = counts[counts["n"] >= kk]
        values = np.array([_task_pass_k(int(n), int(c), kk) for n, c in zip(usable["n"], usable["c"], strict=True)])
        if len(values) == 0:
            rows.append({"k": kk, "pass_k": float("nan"), "low": float("nan"), "high": float("nan"), "tasks": 0,
                         "trials": 0})
            continue
        boots = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
        alpha = (1 - level) / 2
        rows.append({"k": kk, "pass_k": float(values.mean()), "low": float(np.quantile(boots, alpha)),
                     "high": float(np.quantile(boots, 1 - alpha)), "tasks": len(values), "trials": int(usable["n"].min())})
    return pd.DataFrame(rows)


def tau2_success(runs: pd.DataFrame, assertions: pd.DataFrame, *, basis: Sequence[str] = ("tau2_state",
                                                                                           "tau2_communicate")
                 ) -> pd.DataFrame:
    """One row per conversation of a τ² run (``scenario``, ``trial``, ``success``) from its ``runs`` and
    ``assertions`` frames: success when the user ended it (``GOAL_COMPLETE`` / ``STUCK``) and every assertion of
    ``basis`` it has passed."""
    kept = assertions[assertions["assertion"].isin(list(basis))]
    failed = set(kept.loc[~kept["passed"].astype(bool), "run_id"])
    current = runs[~runs["superseded"].astype(bool)] if "superseded" in runs else runs
    ended = current["stop_reason"].isin(["GOAL_COMPLETE", "STUCK"]) & current["error"].isna()
    return pd.DataFrame({"scenario": current["scenario"], "trial": current["trial"],
                         "success": ended & ~current["run_id"].isin(failed)}).reset_index(drop=True)
