"""The statistics of a paired comparison, each a tidy table; every difference is candidate − baseline.

* ``pair_table`` — one row per pair: both sides' status, score, pass flag, usage, and the candidate's replay columns.
  A pair where either side ended in ``error`` is kept with the reason in ``excluded`` and left out of every
  statistic (an error is neither a pass nor a 0).
* ``score_changes`` — the paired composite-score difference per scenario and overall, with verdicts. Overall: the
  mean of the per-scenario differences, its interval resampling pairs within each scenario (the scenarios compared
  are a fixed set; from ``strata.RANDOM_SCENARIOS_FROM`` scenarios on, resampling scenarios) and a sign-flip
  permutation test stratified by scenario (``convoeval.stats.strata``); per scenario: its pairs resampled and
  Wilcoxon's signed-rank test. The overall and per-scenario p-values are one Holm family. Also the minimum
  detectable difference and the pairs needed to detect ``detect`` points.
* ``pass_rate_changes`` — the pass-rate difference per scenario and overall, with McNemar's exact test.
* ``item_changes`` — per rubric criterion (``criterion_changes``) or database assertion (``assertion_flips``): the
  pass→fail and fail→pass flips, McNemar's exact test, Holm-adjusted over the family, and a verdict.
* ``holistic_changes`` — per holistic dimension: the paired difference (stratified like the score) and Wilcoxon's
  test.
* ``pass_k_changes`` — pass^k of each side and the difference, resampling pairs within each scenario.
* ``usage_changes`` — evaluation cost, agent tokens and latency, messages and duration per conversation.

The bootstrap, McNemar and Wilcoxon code is ``convoeval.stats``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from convoeval.compare.pairing import Pairing
from convoeval.compare.verdict import (
    decide,
    flip_verdict,
    holm,
    min_pairs_for_significance,
    paired_minimum_detectable_difference,
    pairs_needed,
)
from convoeval.frames import HOLISTIC_DIMENSIONS, RunFrames
from convoeval.stats import ALL, rubric_ratings, run_outcomes
from convoeval.stats.bootstrap import LEVEL, N_BOOT, percentile_interval
from convoeval.stats.effects import mcnemar_p, wilcoxon_p
from convoeval.stats.sample_size import ci_too_wide
from convoeval.stats.strata import N_PERM, SAMPLE, sign_flip_p, stratified_difference

__all__ = ["USAGE_METRICS", "assertion_flips", "criterion_changes", "holistic_changes", "pair_table",
           "pass_k_changes", "pass_rate_changes", "score_changes", "usage_changes"]

#: Per-conversation usage columns of ``pair_table`` (``<name>_a`` / ``<name>_b``) and what each is.
USAGE_METRICS = {
    "eval_cost_usd": "simulator + judge cost per conversation (USD; NaN where a model has no price)",
    "agent_tokens": "tokens the agent reported per conversation (NaN where it reports none)",
    "agent_latency_s": "mean agent reply time (s)",
    "n_messages": "messages per conversation",
    "duration_s": "conversation wall time, judging included (s)",
}


# ── the pairs ──


def pair_table(pairing: Pairing) -> pd.DataFrame:
    """One row per pair with both sides' outcomes side by side (suffix ``_a`` baseline, ``_b`` candidate).

    Columns: ``scenario, seed, trial, run_id_a, run_id_b``; per side ``target, status, score, passed`` (1.0 / 0.0 /
    NaN for an error), ``error`` and the ``USAGE_METRICS``; the candidate's ``replayed_turns`` and
    ``divergence_turn``; ``excluded`` (why the pair is left out of the statistics, NA when it is not).
    """
    out = pairing.pairs.copy()
    for side, data in (("a", pairing.baseline), ("b", pairing.candidate)):
        per_run = _per_run(data.frames)
        out = out.merge(per_run.add_suffix(f"_{side}"), left_on=f"run_id_{side}", right_index=True, how="left")
    candidate_runs = pairing.candidate.runs.set_index("run_id")
    for column in ("replayed_turns", "divergence_turn"):
        out[column] = out["run_id_b"].map(candidate_runs[column]).astype("Int64")
    out["excluded"] = pd.Series([_excluded(a, b, ea, eb) for a, b, ea, eb in zip(
        out["status_a"], out["status_b"], out["error_a"], out["error_b"], strict=True)], index=out.index,
        dtype="string")
    return out.reset_index(drop=True)


def _per_run(frames: RunFrames) -> pd.DataFrame:
    """Per run id: target, status, score, passed, error and usage."""
    scores = frames.scores.set_index("run_id")
    runs = frames.runs.set_index("run_id")
    status = scores["status"].astype("string")
    out = pd.DataFrame({
        "target": runs["target"].astype("string"),
        "status": status.reindex(runs.index),
        "score": scores["score"].astype(float).reindex(runs.index),
        "error": scores["error"].astype("string").reindex(runs.index).fillna(runs["error"].astype("string")),
        "n_messages": runs["n_messages"].astype(float),
        "duration_s": runs["duration_s"].astype(float),
    }, index=runs.index)
    out["passed"] = np.where(out["status"].isna() | (out["status"] == "error"), np.nan,
                             (out["status"] == "pass").astype(float))
    agent = frames.transcripts
    agent = agent[agent["role"] == "agent"]
    if len(agent):
        grouped = agent.groupby("run_id")
        out["agent_latency_s"] = grouped["latency_s"].mean().reindex(out.index)
        tokens = agent["prompt_tokens"].astype(float) + agent["completion_tokens"].astype(float)
        out["agent_tokens"] = tokens.groupby(agent["run_id"]).sum(min_count=1).reindex(out.index)
    else:
        out["agent_latency_s"] = out["agent_tokens"] = np.nan
    out["eval_cost_usd"] = _cost_per_run(frames, runs)
    return out


def _cost_per_run(frames: RunFrames, runs: pd.DataFrame) -> pd.Series:
    """Each run's LLM cost from the call records (they carry scenario, seed and trial, not the run id)."""
    calls = frames.calls
    if calls.empty or "cost_usd" not in calls:
        return pd.Series(np.nan, index=runs.index)
    seed = calls["seed"].astype("Int64").astype("string").fillna("-")
    key = calls["scenario"].astype(str) + "|" + seed + "|" + calls["trial"].astype(str)
    # NaN when any call of the run has no price: an unknown cost is not a cost of 0.
    cost = calls["cost_usd"].astype(float).groupby(key).agg(lambda v: v.sum() if v.notna().all() else np.nan)
    run_seed = runs["seed"].astype("Int64").astype("string").fillna("-")
    run_key = runs["scenario"].astype(str) + "|" + run_seed + "|" + runs["trial"].astype(str)
    return pd.Series(run_key.map(cost).to_numpy(dtype=float), index=runs.index)


def _excluded(status_a: object, status_b: object, error_a: object, error_b: object) -> str | None:
    reasons = []
    for side, status, error in (("baseline", status_a, error_a), ("candidate", status_b, error_b)):
        if pd.isna(status) or status == "error":
            reasons.append(f"{side} ended in error: {error if not pd.isna(error) else 'no score'}")
    return "; ".join(reasons) or None


def valid_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs the statistics use: neither side ended in error."""
    return pairs[pairs["excluded"].isna()]


# ── paired differences ──


def _groups(pairs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(scenario or ``ALL``, its pairs): ``ALL`` first, then each scenario."""
    return [(ALL, pairs), *((str(scenario), part) for scenario, part in pairs.groupby("scenario", sort=True))]


def score_changes(pairs: pd.DataFrame, *, alpha: float = 0.05, power: float = 0.8, detect: float = 1.0,
                  n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0, n_perm: int = N_PERM) -> pd.DataFrame:
    """The composite score's paired difference, per scenario and overall (``scenario == "(all)"``), with verdicts.

    The overall difference is the mean of the per-scenario differences (``strata.stratified_difference``) and its
    test the stratified sign-flip permutation test (``strata.sign_flip_p``); a scenario's test is Wilcoxon's
    signed-rank test on its pairs. The overall and the scenarios' p-values are Holm-adjusted as one family.

    Args:
        pairs: ``pair_table(...)``.
        alpha: significance level of the family (overall and scenarios).
        power: the power of the minimum detectable difference.
        detect: a difference (score points) to size the sample for (``pairs_needed``, ``more_pairs``).
        n_boot: bootstrap replicates.
        level: confidence level.
        seed: bootstrap and permutation seed.
        n_perm: random sign flips of the overall test (when its pairs are too many to enumerate); raised to
            ``20 × (scenarios + 1) / alpha`` when fewer, so that its smallest p can survive the family's correction.

    Returns:
        ``scenario, n_pairs, n_excluded, baseline, candidate, difference, ci_low, ci_high, p_value, p_adjusted,
        verdict, mdd, pairs_needed, more_pairs, ci_too_wide, method, scenarios_as`` (how the interval treated the
        scenarios: ``strata.FIXED``, ``strata.SAMPLE`` or ``"none"``).
    """
    rows: list[dict[str, object]] = []  # one per scenario, ALL first
    for name, part in _groups(pairs):
        valid = valid_pairs(part)
        a, b = valid["score_a"].to_numpy(float), valid["score_b"].to_numpy(float)
        strata = valid["scenario"].to_numpy()
        stat = stratified_difference(a, b, strata, n_boot=n_boot, level=level, seed=seed)
        if name == ALL:
            # Enough random flips that the smallest p they can give survives Holm over the whole family ten times
            # over: with 999 flips (p >= 0.002) and 30 scenarios, no overall change could ever be called.
            flips = max(n_perm, math.ceil(20 * (len(rows) + pairs["scenario"].nunique()) / alpha))
            p, how = sign_flip_p(a, b, strata, n_perm=flips, seed=seed)
        else:
            p, how = wilcoxon_p(b - a)
        needed = pairs_needed(stat["sd"], detect, alpha=alpha, power=power)
        rows.append({
            "scenario": name, "n_pairs": stat["n"], "n_excluded": len(part) - len(valid),
            "baseline": stat["baseline"], "candidate": stat["candidate"], "difference": stat["difference"],
            "ci_low": stat["ci_low"], "ci_high": stat["ci_high"], "p_value": p,
            "mdd": paired_minimum_detectable_difference(stat["sd"], stat["n"], alpha=alpha, power=power),
            "pairs_needed": needed, "more_pairs": None if needed is None else max(0, needed - stat["n"]),
            # the bootstrap's units: pairs within the scenarios, or the scenarios themselves
            "ci_too_wide": bool(ci_too_wide(stat["ci_low"], stat["ci_high"], scale=10.0, n=stat[
                "n_clusters" if stat["scenarios_as"] == SAMPLE else "n"])),
            "method": f"{how}; {stat['ci_method']}", "scenarios_as": stat["scenarios_as"],
            "_informative": int(np.count_nonzero(b - a)),
        })
    return _with_verdicts(pd.DataFrame(rows), alpha)


def _with_verdicts(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Holm over the overall row and the scenarios as one family, then each row's verdict.

    One family, so that the score's rows together call a change in an A/A comparison no more often than ``alpha``:
    the overall test is the intersection of the scenarios' and is usually the smallest p when a change is broad.
    Rows with fewer nonzero differences than a paired test needs to reach ``alpha`` are not counted (``holm``).
    """
    # A row whose nonzero differences are too few to ever reach p < alpha cannot make a false alarm: not counted.
    testable = table.pop("_informative") >= min_pairs_for_significance(alpha)
    table["p_adjusted"] = holm(table["p_value"].to_numpy(float), testable)
    table["verdict"] = [decide(d, lo, hi, p, alpha) for d, lo, hi, p in zip(
        table["difference"], table["ci_low"], table["ci_high"], table["p_adjusted"], strict=True)]
    first = ["scenario", "n_pairs", "n_excluded", "baseline", "candidate", "difference", "ci_low", "ci_high",
             "p_value", "p_adjusted", "verdict"]
    return table[first + [c for c in table.columns if c not in first]]


def pass_rate_changes(pairs: pd.DataFrame, *, n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0
                      ) -> pd.DataFrame:
    """The pass rate's paired difference per scenario and overall, with McNemar's exact test on the flips.

    Returns:
        ``scenario, n_pairs, baseline, candidate, difference, ci_low, ci_high, pass_to_fail, fail_to_pass, p_value,
        method``.
    """
    rows = []
    for name, part in _groups(pairs):
        valid = valid_pairs(part)
        stat = stratified_difference(valid["passed_a"], valid["passed_b"], valid["scenario"].to_numpy(),
                                     n_boot=n_boot, level=level, seed=seed)
        a, b = valid["passed_a"].to_numpy(float), valid["passed_b"].to_numpy(float)
        p, how = mcnemar_p(a, b)
        rows.append({"scenario": name, "n_pairs": stat["n"], "baseline": stat["baseline"],
                     "candidate": stat["candidate"], "difference": stat["difference"], "ci_low": stat["ci_low"],
                     "ci_high": stat["ci_high"], "pass_to_fail": int(((a == 1) & (b == 0)).sum()),
                     "fail_to_pass": int(((a == 0) & (b == 1)).sum()), "p_value": p, "method": how})
    return pd.DataFrame(rows)


# ── criteria and assertions: flips ──


def _verdicts_per_run(frame: pd.DataFrame, item: str) -> pd.DataFrame:
    """``run_id, <item>, passed`` with one verdict per run and item (the rubric's samples by strict majority)."""
    if frame.empty:
        return pd.DataFrame(columns=["run_id", item, "passed"])
    if item == "criterion":
        frame = rubric_ratings(frame)
    return frame[["run_id", item, "passed"]].drop_duplicates(["run_id", item])


def item_changes(pairs: pd.DataFrame, frame_a: pd.DataFrame, frame_b: pd.DataFrame, *, item: str,
                 alpha: float = 0.05) -> pd.DataFrame:
    """Per item (criterion or assertion), pooled over the scenarios that have it: flips and McNemar's exact test.

    An item counts for a pair only when both sides have a verdict on it (a judge error or a check error on either
    side leaves it out, counted in ``n_missing``). p-values are Holm-adjusted over the items that have enough flips
    to ever reach ``alpha`` (``holm``'s ``testable``).

    Returns:
        ``<item>, scenarios, n_pairs, n_missing, baseline, candidate, difference, pass_to_fail, fail_to_pass,
        p_value, p_adjusted, verdict, method``.
    """
    valid = valid_pairs(pairs)
    a = _verdicts_per_run(frame_a, item).rename(columns={"run_id": "run_id_a", "passed": "passed_a"})
    b = _verdicts_per_run(frame_b, item).rename(columns={"run_id": "run_id_b", "passed": "passed_b"})
    keys = valid[["scenario", "run_id_a", "run_id_b"]]
    # Every item either side has for a pair; one the other side lacks (a changed rubric) counts as missing there.
    both = keys.merge(a, on="run_id_a").merge(keys.merge(b, on="run_id_b")[["run_id_a", item, "passed_b"]],
                                              on=["run_id_a", item], how="outer")
    both["scenario"] = both["run_id_a"].map(keys.set_index("run_id_a")["scenario"])
    rows = []
    for name, part in both.groupby(item, sort=True):
        rated = part.dropna(subset=["passed_a", "passed_b"])
        x, y = rated["passed_a"].astype(float).to_numpy(), rated["passed_b"].astype(float).to_numpy()
        p, how = mcnemar_p(x, y) if len(rated) else (float("nan"), "no pair rated on both sides")
        rows.append({item: name, "scenarios": ", ".join(sorted(map(str, part["scenario"].unique()))),
                     "n_pairs": len(rated), "n_missing": len(part) - len(rated),
                     "baseline": x.mean() if len(x) else np.nan, "candidate": y.mean() if len(y) else np.nan,
                     "difference": (y - x).mean() if len(x) else np.nan,
                     "pass_to_fail": int(((x == 1) & (y == 0)).sum()), "fail_to_pass": int(((x == 0) & (y == 1)).sum()),
                     "p_value": p, "method": how})
    table = pd.DataFrame(rows, columns=[item, "scenarios", "n_pairs", "n_missing", "baseline", "candidate",
                                        "difference", "pass_to_fail", "fail_to_pass", "p_value", "method"])
    # An item with too few flips to ever reach p < alpha cannot make a false alarm: not counted (``holm``).
    discordant = table["pass_to_fail"] + table["fail_to_pass"]
    testable = (discordant >= min_pairs_for_significance(alpha)).to_numpy()
    table.insert(len(table.columns) - 1, "p_adjusted", holm(table["p_value"].to_numpy(float), testable))
    table.insert(len(table.columns) - 1, "verdict", [
        flip_verdict(pf, fp, p, alpha) for pf, fp, p in zip(
            table["pass_to_fail"], table["fail_to_pass"], table["p_adjusted"], strict=True)])
    return table


def criterion_changes(pairing: Pairing, pairs: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """``item_changes`` of the rubric criteria (by their text, pooled over the scenarios whose rubric has them)."""
    return item_changes(pairs, pairing.baseline.frames.rubric, pairing.candidate.frames.rubric,
                        item="criterion", alpha=alpha)


def assertion_flips(pairing: Pairing, pairs: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """``item_changes`` of the database assertions: truth that needs no judge."""
    return item_changes(pairs, pairing.baseline.frames.assertions, pairing.candidate.frames.assertions,
                        item="assertion", alpha=alpha)


# ── holistic dimensions, pass^k, usage ──


def _mean_per_run(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Per run id, the mean over judge samples of ``columns`` (samples in error are NaN and do not count)."""
    if frame.empty:
        return pd.DataFrame(columns=list(columns))
    return frame.groupby("run_id")[list(columns)].mean()


def holistic_changes(pairing: Pairing, pairs: pd.DataFrame, *, n_boot: int = N_BOOT, level: float = LEVEL,
                     seed: int = 0) -> pd.DataFrame:
    """Per holistic dimension (and ``overall``): the paired difference in points (stratified by scenario, like the
    score's), its CI and Wilcoxon's p."""

    dims = [*HOLISTIC_DIMENSIONS, "overall"]
    valid = valid_pairs(pairs)
    a = _mean_per_run(pairing.baseline.frames.holistic, dims).reindex(valid["run_id_a"])
    b = _mean_per_run(pairing.candidate.frames.holistic, dims).reindex(valid["run_id_b"])
    rows = []
    for dim in dims:
        x, y = a[dim].to_numpy(float), b[dim].to_numpy(float)
        stat = stratified_difference(x, y, valid["scenario"].to_numpy(), n_boot=n_boot, level=level, seed=seed)
        p, how = wilcoxon_p(y - x)
        rows.append({"dimension": dim, "n_pairs": stat["n"], "baseline": stat["baseline"],
                     "candidate": stat["candidate"], "difference": stat["difference"], "ci_low": stat["ci_low"],
                     "ci_high": stat["ci_high"], "p_value": p, "method": how})
    return pd.DataFrame(rows)


def pass_k_changes(pairs: pd.DataFrame, *, k: Sequence[int] = (1, 2, 3), n_boot: int = N_BOOT,
                   level: float = LEVEL, seed: int = 0) -> pd.DataFrame:
    """pass^k of each side over the valid pairs (a scenario's seeds × trials are its repeats) and the difference.

    Over the scenarios that have at least k valid pairs. The difference's CI resamples the pairs within each of them
    (the scenarios are the fixed set compared, as in ``strata``), recomputing both sides' pass^k per replicate.
    """
    from scipy.special import comb  # SciPy is heavy to import; only the comparison's statistics need it  # noqa: PLC0415 - SciPy (half a second) loads on first statistic

    valid = valid_pairs(pairs)
    ok = {s: run_outcomes(pd.DataFrame({"status": valid[f"status_{s}"]})).to_numpy() for s in ("a", "b")}
    scenarios = valid["scenario"].to_numpy()
    rng = np.random.default_rng(seed)
    draws = {}
    for name in sorted(set(scenarios)):
        idx = np.flatnonzero(scenarios == name)
        draws[name] = (idx, rng.multinomial(len(idx), np.full(len(idx), 1 / len(idx)), size=n_boot))
    rows = []
    for kk in k:
        point: dict[str, list[float]] = {"a": [], "b": []}
        reps = {"a": np.zeros(n_boot), "b": np.zeros(n_boot)}
        used = 0
        for idx, w in draws.values():
            x = {s: ok[s][idx] for s in ("a", "b")}
            if min(np.isfinite(v).sum() for v in x.values()) < kk:
                continue
            used += 1
            for s, v in x.items():
                seen = np.isfinite(v)
                point[s].append(comb(v[seen].sum(), kk) / comb(seen.sum(), kk))
                c, n = w[:, seen] @ v[seen], w[:, seen].sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    reps[s] += np.where(n >= kk, comb(c, kk) / comb(n, kk), np.nan)
        base, cand = (float(np.mean(point[s])) if used else np.nan for s in ("a", "b"))
        low, high = percentile_interval((reps["b"] - reps["a"]) / max(used, 1), level) if used else (np.nan, np.nan)
        rows.append({"k": kk, "n_scenarios": used, "baseline": base, "candidate": cand, "difference": cand - base,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["k", "n_scenarios", "baseline", "candidate", "difference", "ci_low",
                                       "ci_high"])


def usage_changes(pairs: pd.DataFrame, *, n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0
                  ) -> pd.DataFrame:
    """Cost, tokens, latency, messages and duration per conversation: each side's mean and the paired difference."""
    valid = valid_pairs(pairs)
    rows = []
    for metric, meaning in USAGE_METRICS.items():
        stat = stratified_difference(valid[f"{metric}_a"], valid[f"{metric}_b"], valid["scenario"].to_numpy(),
                                     n_boot=n_boot, level=level, seed=seed)
        rows.append({"metric": metric, "meaning": meaning, "n_pairs": stat["n"], "baseline": stat["baseline"],
                     "candidate": stat["candidate"], "difference": stat["difference"], "ci_low": stat["ci_low"],
                     "ci_high": stat["ci_high"]})
    return pd.DataFrame(rows)
