"""How stable are the numbers across seeds and trials: pass^k, per-criterion flip rates, spread of scores.

These are the two small formulas a sweep index needs; ``convoeval.agreement`` holds the full statistics (with
confidence intervals) for judge agreement.

    pass^k (tau-bench) = mean over scenarios of C(c, k) / C(n, k)
        n = conversations of the scenario (seeds × trials), c = those that passed: the chance that k independent
        tries of the scenario all pass. pass^1 is the plain pass rate; pass^k falls fast for an agent that passes
        only sometimes.

    flip rate of a criterion = share of pairs of conversations of the same scenario whose verdicts differ
        = 1 − (C(p, 2) + C(f, 2)) / C(n, 2)      for p passes and f fails among n verdicts
        0 when every seed and trial agrees; 0.5 or more when the verdict is a coin toss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb

import pandas as pd

__all__ = ["flip_rates", "pass_hat_k", "score_spread"]


def _pass_hat(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k) if n >= k else float("nan")


def pass_hat_k(scores: pd.DataFrame, *, ks: Sequence[int] | None = None, by: Sequence[str] = ("agent",),
               passing: Sequence[str] = ("pass",)) -> pd.DataFrame:
    """pass^k per group (default per agent) for k = 1 … the fewest conversations any scenario has.

    Args:
        scores: a scores frame (one row per conversation) with ``scenario`` and ``status``.
        ks: the values of k (default 1 … min n).
        by: grouping columns.
        passing: statuses that count as a success (an ``error`` never does).

    Returns:
        Columns ``*by, k, pass_hat_k, scenarios`` (scenarios with at least k conversations).

    Example:
        >>> pass_hat_k(pd.DataFrame({"agent": "a", "scenario": ["s"] * 3, "status": ["pass", "pass", "fail"]}))
          agent  k  pass_hat_k  scenarios
        0     a  1    0.666667          1
        1     a  2    0.333333          1
        2     a  3    0.000000          1
    """
    by = list(by)
    cols = [*by, "k", "pass_hat_k", "scenarios"]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    counts = (scores.assign(ok=scores["status"].isin(list(passing)))
              .groupby([*by, "scenario"], dropna=False)["ok"].agg(n="size", c="sum").reset_index())
    rows = []
    for key, group in counts.groupby(by, dropna=False, sort=True) if by else [((), counts)]:
        key = key if isinstance(key, tuple) else (key,)
        for k in ks or range(1, int(group["n"].min()) + 1):
            values = [_pass_hat(int(n), int(c), k) for n, c in zip(group["n"], group["c"], strict=True)]
            usable = [v for v in values if not math.isnan(v)]  # NaN: the scenario has fewer than k conversations
            rows.append([*key, k, sum(usable) / len(usable) if usable else float("nan"), len(usable)])
    return pd.DataFrame(rows, columns=cols)


def flip_rates(rubric: pd.DataFrame, *, by: Sequence[str] = ("agent", "scenario", "criterion_index", "criterion")
               ) -> pd.DataFrame:
    """Per criterion: how often two conversations of the same scenario (other seed or trial) got different verdicts.

    A conversation's verdict is the majority over its judge samples (a tie, or only judge errors, leaves it out).

    Returns:
        Columns ``*by, conversations, passes, fails, flip_rate, unanimous``.
    """
    by = list(by)
    cols = [*by, "conversations", "passes", "fails", "flip_rate", "unanimous"]
    judged = rubric[rubric["passed"].notna()] if len(rubric) else rubric
    if judged.empty:
        return pd.DataFrame(columns=cols)
    per_run = (judged.assign(ok=judged["passed"].astype(float))
               .groupby([*by, "run_id"], dropna=False)["ok"].mean().reset_index())
    per_run = per_run[per_run["ok"] != 0.5]
    per_run["verdict"] = per_run["ok"] > 0.5
    rows = []
    for key, group in per_run.groupby(by, dropna=False, sort=True):
        n, p = len(group), int(group["verdict"].sum())
        f = n - p
        flip = 1 - (comb(p, 2) + comb(f, 2)) / comb(n, 2) if n >= 2 else float("nan")
        rows.append([*(key if isinstance(key, tuple) else (key,)), n, p, f, flip, p in (0, n)])
    return pd.DataFrame(rows, columns=cols)


def score_spread(scores: pd.DataFrame, *, by: Sequence[str] = ("agent", "scenario")) -> pd.DataFrame:
    """Spread of the composite score per group across seeds and trials: n, mean, std, min, max, range, errors."""
    by = list(by)
    cols = [*by, "conversations", "errors", "mean", "std", "min", "max", "range"]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    frame = scores.assign(is_error=scores["status"] == "error")
    out = frame.groupby(by, dropna=False, sort=True).agg(
        conversations=("status", "size"), errors=("is_error", "sum"), mean=("score", "mean"), std=("score", "std"),
        min=("score", "min"), max=("score", "max")).reset_index()
    out["range"] = out["max"] - out["min"]
    return out[cols]
