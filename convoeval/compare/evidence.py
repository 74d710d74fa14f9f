"""Deterministic evidence that flipped within a pair: database and path assertions, scripted turn checks.

A scripted scenario sends the same patient lines to both sides, and an assertion or a turn check reads the
transcript and the store with no model. When one held in the baseline's conversation and fails in the candidate's
(or the reverse), that is a fact about the two agents on this input, not a sample from a noisy judge — as the red
team treats a scripted attack that newly leaks (``convoeval.redteam.compare``). Such a flip decides the headline
without a statistical test (``Comparison.verdict``).

Two guards keep it a fact:

* only **scripted** pairs count: a simulated patient may say something else once the agent answers differently,
  so a conversational pair's flip stays with the paired tests (McNemar over the assertion's pairs);
* a check whose outcome differs between a side's **own** runs of the same scenario (other seeds or trials: the
  agent or the store is not deterministic there) is not a fact on that scenario; ``why_not_fact`` says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from convoeval.compare.pairing import Pairing
from convoeval.compare.stats import valid_pairs
from convoeval.compare.verdict import IMPROVED, NO_CHANGE, REGRESSED
from convoeval.frames import AGENT_STATUSES, RunFrames

__all__ = ["FLIP_COLUMNS", "check_flips", "fact_counts", "fact_verdict", "with_facts"]

#: Columns of ``check_flips``: one row per check that flipped in one valid pair.
FLIP_COLUMNS = ("kind", "check", "scenario", "seed", "trial", "run_id_a", "run_id_b", "verdict", "fact",
                "why_not_fact", "baseline", "candidate")
#: The kinds of deterministic check.
DATABASE, PATH, TURN = "database assertion", "path assertion", "turn check"
#: What a turn check's failure says after its expectation: the value seen, which differs between the two sides.
_SEEN = re.compile(r", got .*$", re.S)


def _kind(assertion: str) -> str:
    return PATH if assertion.startswith("path:") else DATABASE


def _assertion_outcomes(frames: RunFrames) -> pd.DataFrame:
    """``run_id, kind, check, passed, message``: one row per run and assertion with a verdict (a check in error is
    neither a pass nor a failure, so it is left out)."""
    frame = frames.assertions
    if frame.empty:
        return pd.DataFrame(columns=["run_id", "kind", "check", "passed", "message"])
    frame = frame[frame["passed"].notna()].drop_duplicates(["run_id", "assertion"])
    return pd.DataFrame({"run_id": frame["run_id"].astype(str), "kind": [_kind(str(a)) for a in frame["assertion"]],
                         "check": frame["assertion"].astype(str), "passed": frame["passed"].astype(bool),
                         "message": frame["message"].astype("string").fillna("").astype(str)})


def _as_list(value: object) -> list[str]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return [str(v) for v in value] if isinstance(value, Iterable) and not isinstance(value, str) else [str(value)]


def _turn_failures(frames: RunFrames) -> dict[str, dict[int, dict[str, str]]]:
    """run id -> turn -> {check: its failure message}; every turn the run has is present (empty: all held).

    A check is named by its expectation without what was seen (``tools_called: expected create_payment_link``), so
    the same expectation reads the same on both sides whatever each agent did.
    """
    turns = frames.turns
    out: dict[str, dict[int, dict[str, str]]] = {}
    if turns.empty:
        return out
    for row in turns.drop_duplicates(["run_id", "turn"]).itertuples():
        messages = _as_list(row.check_failures)
        out.setdefault(str(row.run_id), {})[int(row.turn)] = {_SEEN.sub("", m): m for m in messages}
    return out


def _turn_outcomes(run_ids: Iterable[str], failures: dict[str, dict[int, dict[str, str]]],
                   checks: set[tuple[int, str]]) -> pd.DataFrame:
    """``run_id, kind, check, passed, message`` of the turn checks ``checks`` (turn, expectation) in these runs."""
    rows = []
    for run_id in run_ids:
        turns = failures.get(run_id, {})
        for turn, check in checks:
            if turn in turns:
                failed = turns[turn].get(check)
                rows.append({"run_id": run_id, "kind": TURN, "check": f"turn {turn}: {check}",
                             "passed": failed is None, "message": failed or "held"})
    return pd.DataFrame(rows, columns=["run_id", "kind", "check", "passed", "message"])


def _outcomes(side_frames: RunFrames, run_ids: set[str], checks: set[tuple[int, str]],
              failures: dict[str, dict[int, dict[str, str]]]) -> pd.DataFrame:
    assertions = _assertion_outcomes(side_frames)
    return pd.concat([assertions[assertions["run_id"].isin(run_ids)], _turn_outcomes(sorted(run_ids), failures,
                                                                                     checks)], ignore_index=True)


def _unstable(outcomes: pd.DataFrame, scenario_of: pd.Series) -> set[tuple[str, str]]:
    """(scenario, check) pairs whose outcome differs between this side's own runs of the scenario."""
    if outcomes.empty:
        return set()
    spread = outcomes.assign(scenario=outcomes["run_id"].map(scenario_of)).groupby(["scenario", "check"])[
        "passed"].nunique()
    return {(str(s), str(c)) for (s, c), n in spread.items() if n > 1}


def check_flips(pairing: Pairing, pairs: pd.DataFrame) -> pd.DataFrame:
    """Every deterministic check that flipped in a valid pair (both sides scored), worst first.

    Args:
        pairing: the two sides.
        pairs: ``stats.pair_table(pairing)``.

    Returns:
        ``FLIP_COLUMNS``: the check's ``kind`` (database assertion, path assertion, turn check) and name, the pair
        (scenario, seed, trial, both run ids), ``verdict`` (regressed: held in the baseline, fails in the
        candidate; improved: the reverse), ``fact`` (True for a scripted pair whose sides each gave one outcome on
        this scenario), ``why_not_fact`` when it is not, and each side's message.
    """
    valid = valid_pairs(pairs)
    valid = valid[valid["status_a"].isin(AGENT_STATUSES) & valid["status_b"].isin(AGENT_STATUSES)]
    if valid.empty:
        return pd.DataFrame(columns=list(FLIP_COLUMNS))
    fail_a, fail_b = _turn_failures(pairing.baseline.frames), _turn_failures(pairing.candidate.frames)
    # Every expectation either side reports failing on a turn is a check of that turn on both sides.
    checks = {(turn, check) for failures in (fail_a, fail_b) for turns in failures.values()
              for turn, found in turns.items() for check in found}
    ids_a, ids_b = set(valid["run_id_a"].astype(str)), set(valid["run_id_b"].astype(str))
    out_a = _outcomes(pairing.baseline.frames, ids_a, checks, fail_a)
    out_b = _outcomes(pairing.candidate.frames, ids_b, checks, fail_b)
    keys = valid[["scenario", "seed", "trial", "run_id_a", "run_id_b"]].astype({"run_id_a": str, "run_id_b": str})
    both = keys.merge(out_a.rename(columns={"run_id": "run_id_a", "passed": "passed_a", "message": "baseline"}),
                      on="run_id_a").merge(
        out_b.rename(columns={"run_id": "run_id_b", "passed": "passed_b", "message": "candidate"}),
        on=["run_id_b", "kind", "check"])
    flipped = both[both["passed_a"] != both["passed_b"]].copy()
    if flipped.empty:
        return pd.DataFrame(columns=list(FLIP_COLUMNS))
    flipped["verdict"] = np.where(flipped["passed_a"], REGRESSED, IMPROVED)
    types = pairing.baseline.runs.drop_duplicates("scenario").set_index("scenario")["type"].astype(str)
    unstable = {"baseline": _unstable(out_a, _scenario_of(pairing.baseline.runs)),
                "candidate": _unstable(out_b, _scenario_of(pairing.candidate.runs))}
    flipped["why_not_fact"] = [_why_not(str(s), str(c), types, unstable)
                               for s, c in zip(flipped["scenario"], flipped["check"], strict=True)]
    flipped["fact"] = flipped["why_not_fact"] == ""
    order = flipped.assign(_v=flipped["verdict"].ne(REGRESSED), _f=~flipped["fact"])
    order = order.sort_values(["_v", "_f", "kind", "check", "scenario", "seed", "trial"], na_position="first")
    return order[list(FLIP_COLUMNS)].reset_index(drop=True)


def _scenario_of(runs: pd.DataFrame) -> pd.Series:
    return runs.set_index(runs["run_id"].astype(str))["scenario"].astype(str)


def _why_not(scenario: str, check: str, types: pd.Series, unstable: dict[str, set[tuple[str, str]]]) -> str:
    if types.get(scenario) != "scripted":
        return "a conversational pair: the simulated patient may have answered the agents differently"
    sides = [side for side, found in unstable.items() if (scenario, check) in found]
    if sides:
        return (f"the {' and the '.join(sides)}'s own runs of this scenario disagree on it (not deterministic "
                "there)")
    return ""


def fact_counts(flips: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, check): the facts that went pass→fail and fail→pass, and the pairs where they did."""
    facts = flips[flips["fact"].astype(bool)] if len(flips) else flips
    rows = []
    for (kind, check), part in facts.groupby(["kind", "check"], sort=False):
        where = ", ".join(sorted({_where(*row) for row in zip(part["scenario"], part["seed"], part["trial"],
                                                                strict=True)}))
        rows.append({"kind": kind, "check": check, "fact_pass_to_fail": int((part["verdict"] == REGRESSED).sum()),
                     "fact_fail_to_pass": int((part["verdict"] == IMPROVED).sum()), "where": where})
    return pd.DataFrame(rows, columns=["kind", "check", "fact_pass_to_fail", "fact_fail_to_pass", "where"])


def _where(scenario: str, seed: float | None, trial: int) -> str:
    seed_text = "-" if seed is None or pd.isna(seed) else str(int(seed))
    return f"{scenario} seed {seed_text} trial {int(trial)}"


def fact_verdict(pass_to_fail: int, fail_to_pass: int) -> str:
    """A check's verdict from its facts: regressed when any went pass→fail (a broken conversation is not offset
    by another one fixed; both are listed), improved when only fail→pass, else no detectable change.

    Example:
        >>> fact_verdict(1, 0), fact_verdict(0, 2), fact_verdict(0, 0)
        ('regressed', 'improved', 'no detectable change')
    """
    if pass_to_fail:
        return REGRESSED
    return IMPROVED if fail_to_pass else NO_CHANGE


def with_facts(assertions: pd.DataFrame, flips: pd.DataFrame) -> pd.DataFrame:
    """The assertion table with each row's facts (``fact_pass_to_fail``, ``fact_fail_to_pass``, ``basis``) and, where
    there are facts, the verdict they decide; a row without facts keeps its McNemar verdict."""
    counts = fact_counts(flips[flips["kind"] != TURN] if len(flips) else flips).set_index("check")
    table = assertions.copy()
    names = table["assertion"].astype(str)
    table["fact_pass_to_fail"] = names.map(counts["fact_pass_to_fail"]).fillna(0).astype(int)
    table["fact_fail_to_pass"] = names.map(counts["fact_fail_to_pass"]).fillna(0).astype(int)
    decided = (table["fact_pass_to_fail"] + table["fact_fail_to_pass"]) > 0
    table["basis"] = np.where(decided, "scripted flips (deterministic)", "McNemar")
    table.loc[decided, "verdict"] = [fact_verdict(pf, fp) for pf, fp in zip(
        table.loc[decided, "fact_pass_to_fail"], table.loc[decided, "fact_fail_to_pass"], strict=True)]
    return table
