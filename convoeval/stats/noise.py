"""Repeated trials: pass^k, flip rates across seeds and trials, the minimum detectable difference, and A/B checks.

Most variance between identical sweeps comes from the agent and the simulator, not the judge (tau2-bench issue 540:
32–55% of tasks flip between identical runs). These functions put a number on that noise so a difference between
two targets can be read against it. ``pass_hat_k`` and the flip rates resample the **scenario** (its trials are
repeats of one task), not the conversation: with few scenarios their intervals are rough (issue #27; ``ci_too_wide``
flags the widest). ``compare_targets`` treats the shared scenarios as a fixed set and resamples runs within each
(``convoeval.stats.strata``).

A run's *outcome* is, by default, success = ``status == "pass"`` in a score frame (``SCORE_SCHEMA``); a run whose
status is ``"error"``, ``"simulator_failure"`` (the simulated patient broke) or missing has no outcome and is left
out — it is neither a success nor a failure of the agent.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from math import comb
from typing import Unpack

import numpy as np
import pandas as pd
from scipy.stats import norm

from convoeval.frames import AGENT_STATUSES
from convoeval.stats._result import result_frame, stacked, stat_row
from convoeval.stats._wide import as_tuple, iter_groups
from convoeval.stats.bootstrap import ci_label, jackknife_weights, resample_weights, summarize
from convoeval.stats.consistency import flip_rates
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.ratings import rubric_ratings
from convoeval.stats.strata import RANDOM_SCENARIOS_FROM, stratified_replicates

Success = str | Callable[[pd.DataFrame], pd.Series] | None


class InsideNoiseWarning(UserWarning):
    """Two targets' gap is within what this sweep can tell apart from noise."""


def run_outcomes(scores: pd.DataFrame, *, metric: str = "pass_rate", success: Success = None) -> pd.Series:
    """Each run's outcome as floats (NaN = no outcome).

    Args:
        scores: A score frame (one row per run).
        metric: ``"pass_rate"`` (1.0 success / 0.0 failure) or ``"score"`` (the 0–10 composite).
        success: For ``"pass_rate"``: ``None`` = ``status == "pass"`` (``"error"``, ``"simulator_failure"`` → NaN);
            a column name holding booleans (e.g. ``"goal_completed"``); or a function ``frame -> boolean Series``.
    """
    if metric == "score":
        return scores["score"].astype(float)
    if metric != "pass_rate":
        raise ValueError(f"metric must be 'pass_rate' or 'score', got {metric!r}")
    if success is None:
        status = scores["status"].astype("string")
        valid = status.isin(AGENT_STATUSES).fillna(False)
        return pd.Series(np.where(valid, (status == "pass").fillna(False), np.nan), index=scores.index, dtype=float)
    flags = scores[success] if isinstance(success, str) else success(scores)
    return pd.Series(flags.astype("boolean").astype("Float64").to_numpy(dtype=float, na_value=np.nan),
                     index=scores.index)


def pass_hat_k(
    scores: pd.DataFrame,
    *,
    k: int | Sequence[int] = (1, 2, 3),
    success: Success = None,
    by: str | Sequence[str] = (),
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """pass^k (tau-bench): the chance that all of k independent trials of a scenario succeed, averaged over scenarios.

    ``pass^k = mean over scenarios with n >= k trials of C(c, k) / C(n, k)`` (c successes in n trials). pass^1 is the
    plain pass rate (averaged per scenario); a reliable agent keeps pass^k close to pass^1 as k grows. Scenarios with
    fewer than k outcomes are left out of that k (``n`` says how many counted).

    Args:
        scores: A score frame with ``scenario`` and outcomes (see ``run_outcomes``).
        k: One k or several.
        success: How a run counts as a success (see ``run_outcomes``).
        by: Grouping columns (e.g. ``"agent"``).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``*by, k, statistic ("pass^k"), value, ci_low, ci_high, n (scenarios), n_items (runs), method, ci_too_wide``.

    Example:
        >>> s = pd.DataFrame({"scenario": ["a"] * 4 + ["b"] * 4, "status": ["pass"] * 4 + ["pass", "fail"] * 2})
        >>> pass_hat_k(s, k=2, estimation=Estimation(n_boot=20))["value"].round(4).tolist()   # (1 + C(2,2)/C(4,2)) / 2
        [0.5833]
    """
    est = estimation_from(estimation, deprecated, "pass_hat_k")
    ks, by = ([k] if isinstance(k, int) else list(k)), as_tuple(by)
    if any(not isinstance(x, int) or x < 1 for x in ks):
        raise ValueError(f"k must be positive integers, got {ks}")
    frame = scores.assign(_ok=run_outcomes(scores, success=success)).dropna(subset=["_ok"])
    per = frame.groupby([*by, "scenario"], sort=True, dropna=False)["_ok"].agg(_c="sum", _n="count")
    ci = ci_label("scenario", est)
    rows = []
    for group, part in iter_groups(per, by, overall=False):
        c, n = part["_c"].to_numpy(dtype=int), part["_n"].to_numpy(dtype=int)
        for kk in ks:
            mask = n >= kk
            values = np.array([comb(ci_, kk) / comb(ni, kk) for ci_, ni in zip(c[mask], n[mask], strict=True)])
            reps, jack = np.full(est.n_boot, np.nan), None
            if mask.any():
                weights = resample_weights(int(mask.sum()), n_boot=est.n_boot, seed=est.seed)
                reps = weights @ values / weights.sum(axis=1)
                leave_out = jackknife_weights(int(mask.sum()))
                with np.errstate(invalid="ignore", divide="ignore"):
                    jack = leave_out @ values / leave_out.sum(axis=1)
            rows.append(summarize("pass^k", values.mean() if mask.any() else np.nan, reps, jackknife=jack,
                                  estimation=est, n=int(mask.sum()), n_items=int(n[mask].sum()),
                                  method=f"tau-bench pass^k: mean over scenarios of C(c,k)/C(n,k); {ci}",
                                  groups={**group, "k": kk}))
    return result_frame(rows, [*by, "k"])


def trial_flip_rate(
    rubric: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Per-criterion flip rate across the seeds and trials of each scenario (repeats = runs of one scenario).

    Args:
        rubric: A rubric frame covering several runs (seeds × trials) per scenario.
        rater: Column(s) naming the judge configuration; flips are counted per judge.
        samples: How one run's judge samples become its verdict (see ``rubric_ratings``).
        by: Grouping columns.
        overall: Also pool the criteria (per judge).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        ``rater, *by, statistic (flip_rate | pairwise_disagreement | pass_rate), value, ..., n (scenarios), n_items
        (scenario × criterion items with at least two runs)``.
    """
    est = estimation_from(estimation, deprecated, "trial_flip_rate")
    by = as_tuple(by)
    ratings = rubric_ratings(rubric, rater=rater, samples=samples)
    parts = [flip_rates(rows, item=("scenario", "criterion"), by=by, overall=overall, cluster="scenario",
                        estimation=est).assign(rater=judge)
             for judge, rows in ratings.groupby("rater", sort=True)]
    return stacked(parts, "rater", by)


def outcome_flip_rate(
    scores: pd.DataFrame,
    *,
    success: Success = None,
    by: str | Sequence[str] = (),
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Flip rate of the run outcome (success or not) across the seeds and trials of each scenario."""
    est = estimation_from(estimation, deprecated, "outcome_flip_rate")
    outcome = run_outcomes(scores, success=success)
    frame = scores.assign(_ok=pd.array([None if np.isnan(v) else v == 1 for v in outcome], dtype="boolean"))
    return flip_rates(frame, item="scenario", value="_ok", by=by, cluster="scenario", estimation=est)


def _within_variance(outcomes: pd.Series, scenarios: pd.Series) -> tuple[float, str]:
    """Pooled within-scenario variance of run outcomes; the total variance when no scenario has two runs."""
    frame = pd.DataFrame({"y": outcomes.to_numpy(), "s": scenarios.to_numpy()}).dropna(subset=["y"])
    per = frame.groupby("s", dropna=False)["y"].agg(["var", "count"])
    df = (per["count"] - 1).clip(lower=0)
    if df.sum() > 0:
        pooled = float((per["var"].fillna(0) * df).sum() / df.sum())
        return pooled, "paired by scenario: pooled within-scenario variance"
    return float(frame["y"].var(ddof=1)) if len(frame) > 1 else float("nan"), \
        "one run per scenario: total variance (independent runs)"


def _mdd(var_a: float, n_a: int, var_b: float, n_b: int, alpha: float, power: float) -> float:
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return float(z * np.sqrt(var_a / n_a + var_b / n_b)) if n_a and n_b else float("nan")


def minimum_detectable_difference(
    scores: pd.DataFrame,
    *,
    metric: str = "pass_rate",
    success: Success = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """The smallest gap between two targets that a sweep of this size (run for each) would detect.

    ``MDD = (z[1 - alpha/2] + z[power]) · sqrt(2 σ² / N)`` with N runs per target and σ² the **within-scenario**
    variance of run outcomes pooled over scenarios (both targets run the same scenarios, so scenario difficulty
    cancels; what remains is trial-to-trial noise). With one run per scenario the within-scenario variance cannot be
    seen and the total variance is used instead (conservative). Assumes the other target is equally noisy.

    Args:
        scores: One target's score frame (its sweep).
        metric: ``"pass_rate"`` (a difference in proportion) or ``"score"`` (in 0–10 points).
        success: How a run counts as a success (see ``run_outcomes``).
        alpha: Two-sided significance level.
        power: Power.

    Returns:
        One row: ``statistic ("mdd_pass_rate" | "mdd_score"), value, n (scenarios), n_items (runs), method``; no CI
        (a design quantity), ``ci_too_wide`` False.
    """
    outcomes = run_outcomes(scores, metric=metric, success=success)
    var, how = _within_variance(outcomes, scores["scenario"])
    n_runs = int(outcomes.notna().sum())
    value = _mdd(var, n_runs, var, n_runs, alpha, power)
    row = stat_row(f"mdd_{metric}", value, np.nan, np.nan, n=int(scores.loc[outcomes.notna(), "scenario"].nunique()),
                   n_items=n_runs, has_ci=False,
                   method=f"(z[1-{alpha}/2] + z[{power}]) * sqrt(2 var / N); {how}")
    return result_frame([row], [])


def compare_targets(
    scores_a: pd.DataFrame,
    scores_b: pd.DataFrame,
    *,
    labels: tuple[str, str] = ("a", "b"),
    metric: str = "pass_rate",
    success: Success = None,
    alpha: float = 0.05,
    power: float = 0.8,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Compare two targets run on the same scenarios; warn when the gap is inside the noise.

    Over the scenarios both sweeps share (runs on other scenarios are left out), each value is the mean of the
    per-scenario means, and the difference (A − B) gets a bootstrap CI that resamples each side's runs within each
    scenario: the scenarios are the fixed set compared (``convoeval.stats.strata``; from ``RANDOM_SCENARIOS_FROM``
    shared scenarios on, the scenarios themselves are resampled, paired). A scenario with a single run on a side
    shows no noise: no CI, and the gap counts as inside the noise. The gap is *inside the noise* when its CI contains 0 or it is smaller than the minimum
    detectable difference of these two sweeps; then the ``warning`` column says so and an ``InsideNoiseWarning`` is
    issued.

    Args:
        scores_a: Target A's score frame.
        scores_b: Target B's score frame.
        labels: Names of A and B for the ``target_a``/``target_b`` columns and the message.
        metric: ``"pass_rate"`` or ``"score"``.
        success: How a run counts as a success (see ``run_outcomes``).
        alpha: Two-sided significance level of the MDD.
        power: Power of the MDD.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        Rows ``value_a``, ``value_b``, ``difference`` (A − B) and ``mdd``, with ``target_a``, ``target_b`` and
        ``warning`` (NA when the gap is outside the noise).

    Raises:
        ValueError: when the sweeps share no scenario.
    """
    est = estimation_from(estimation, deprecated, "compare_targets")
    a, b = (s.assign(_y=run_outcomes(s, metric=metric, success=success)).dropna(subset=["_y"])
            for s in (scores_a, scores_b))
    shared = sorted(set(a["scenario"]) & set(b["scenario"]))
    if not shared:
        raise ValueError("the two sweeps share no scenario with an outcome; run both targets on the same scenarios")
    a, b = a[a["scenario"].isin(shared)], b[b["scenario"].isin(shared)]
    # The shared scenarios are strata (issue #27): each side's runs are resampled within each scenario (over the
    # scenarios only from RANDOM_SCENARIOS_FROM on, then the same draws for both sides), never 3 scenarios as clusters.
    over = len(shared) >= RANDOM_SCENARIOS_FROM
    (value_a, rep_a, ci, _), (value_b, rep_b, _, _) = (
        stratified_replicates(side["_y"], side["scenario"], n_boot=est.n_boot, level=est.level,
                              seed=est.seed if over else est.seed + i, over_scenarios=over)
        for i, side in enumerate((a, b)))
    (var_a, how), (var_b, _) = _within_variance(a["_y"], a["scenario"]), _within_variance(b["_y"], b["scenario"])
    mdd = _mdd(var_a, len(a), var_b, len(b), alpha, power)
    unit = "points" if metric == "score" else "proportion"
    scale = 10.0 if metric == "score" else 1.0
    n_items = len(a) + len(b)
    # Stratified replicates have no leave-one-out form here: the percentile interval (``jackknife`` not given).
    rows = [
        summarize("value_a", value_a, rep_a, n=len(shared), method=f"{metric} of A; {ci}", n_items=n_items,
                  estimation=est, scale=scale),
        summarize("value_b", value_b, rep_b, n=len(shared), method=f"{metric} of B; {ci}", n_items=n_items,
                  estimation=est, scale=scale),
        summarize("difference", value_a - value_b, rep_a - rep_b, n=len(shared),
                  method=f"{metric} A - B ({unit}); {ci}", n_items=n_items, estimation=est, scale=scale),
        stat_row("mdd", mdd, np.nan, np.nan, n=len(shared), n_items=len(a) + len(b), has_ci=False,
                 method=f"minimum detectable difference, alpha={alpha}, power={power}; {how}"),
    ]
    diff = rows[2]
    message = _noise_message(labels, diff["value"], diff["ci_low"], diff["ci_high"], mdd, est.level)
    frame = result_frame(rows, [])
    frame.insert(0, "target_b", labels[1])
    frame.insert(0, "target_a", labels[0])
    frame.insert(2, "warning", pd.Series([message] * len(frame), dtype="string"))
    if message is not None:
        warnings.warn(message, InsideNoiseWarning, stacklevel=2)
    return frame


def _noise_message(labels: tuple[str, str], diff: float, low: float, high: float, mdd: float,
                   level: float) -> str | None:
    reasons = []
    if not np.isfinite(diff):
        reasons.append("the difference is undefined")
    if not np.isfinite(low):
        reasons.append(f"it has no {level:.0%} CI (a scenario with a single run on a side shows no noise)")
    elif low <= 0 <= high:
        reasons.append(f"its {level:.0%} CI [{low:.3f}, {high:.3f}] includes 0")
    if np.isfinite(mdd) and abs(diff) < mdd:
        reasons.append(f"it is smaller than the minimum detectable difference ({mdd:.3f}) for this sweep size")
    if not reasons:
        return None
    return f"the gap {labels[0]} - {labels[1]} = {diff:+.3f} is inside the noise: " + "; ".join(reasons)
