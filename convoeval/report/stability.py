"""The spread of composite scores across the seeds and trials of a sweep.

pass^k and flip rates come from ``convoeval.agreement`` (``pass_hat_k``, ``trial_flip_rate``), with bootstrap
confidence intervals; this module only adds the plain descriptive spread the sweep index shows beside them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from convoeval.frames import AGENT_STATUSES, SIMULATOR_FAILURE

__all__ = ["score_spread"]


def score_spread(scores: pd.DataFrame, *, by: Sequence[str] = ("agent", "scenario")) -> pd.DataFrame:
    """Spread of the composite score per group across seeds and trials: n, errors, simulator failures, mean, std,
    min, max, range.

    A conversation in error has no score: it is counted in ``errors`` and left out of the statistics; one the
    simulator-failure gate stopped likewise, in ``simulator_failures``.

    Example:
        >>> score_spread(pd.DataFrame({"agent": "a", "scenario": "s", "status": ["pass", "fail"],
        ...                            "score": [9.0, 3.0]}))[["mean", "range"]].values.tolist()
        [[6.0, 6.0]]
    """
    by = list(by)
    cols = [*by, "conversations", "errors", "simulator_failures", "mean", "std", "min", "max", "range"]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    # Only the agent's statuses carry a score; the mask says so even where an old frame holds a stray one.
    frame = scores.assign(is_error=scores["status"] == "error", broke=scores["status"] == SIMULATOR_FAILURE,
                          score=scores["score"].where(scores["status"].isin(AGENT_STATUSES)))
    out = frame.groupby(by, dropna=False, sort=True).agg(
        conversations=("status", "size"), errors=("is_error", "sum"), simulator_failures=("broke", "sum"),
        mean=("score", "mean"), std=("score", "std"), min=("score", "min"), max=("score", "max")).reset_index()
    out["range"] = out["max"] - out["min"]
    return out[cols]
