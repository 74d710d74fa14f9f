"""A comparison in words: the console lines ``convoeval compare`` prints (``Comparison.lines``).

Every number goes through ``num``, ``signed`` or ``p_text``: a missing value (no interval with one pair per
scenario, no p-value) is said in words, never printed as ``nan``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from convoeval.compare.advice import untested_lines
from convoeval.compare.shape import ComparisonView
from convoeval.compare.verdict import IMPROVED, REGRESSED
from convoeval.stats import ALL

__all__ = ["comparison_lines", "fact_lines", "num", "p_text", "score_line", "signed"]

#: How many flipped checks the console lists one by one (all of them are in ``Comparison.flips``).
MAX_FLIP_LINES = 20


def _missing(value: object) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def num(value: object, fmt: str = "{:.2f}", *, none: str = "n/a") -> str:
    """``value`` in ``fmt``, or ``none`` when it is missing.

    Example:
        >>> num(8.532), num(float("nan")), num(-6.3, "{:+.2f}")
        ('8.53', 'n/a', '-6.30')
    """
    return none if _missing(value) else fmt.format(value)


def signed(value: object) -> str:
    """A difference with its sign, ``n/a`` when missing."""
    return num(value, "{:+.2f}")


def p_text(value: object) -> str:
    """A p-value in three significant digits, ``n/a`` when there is none."""
    return num(value, "{:.3g}")


def _ci(low: Any, high: Any, level: float | None = None) -> str:
    if _missing(low) or _missing(high):
        return "no CI"
    return f"{'' if level is None else f'{level:.0%} '}CI {low:+.2f} to {high:+.2f}"


def score_line(cmp: ComparisonView) -> str:
    """The overall score's line: its verdict (``untested`` when too few pairs to test), both sides, the difference,
    its interval and p-values, and how the interval treated the scenarios."""
    o, s = cmp.overall, cmp.settings
    verdict = o["verdict"] if o.get("testable", True) else "untested (too few pairs)"
    ci = "" if _missing(o["ci_low"]) else f"{_ci(o['ci_low'], o['ci_high'], float(s['level']))}, "
    return (f"score: {verdict} — {num(o['baseline'])} → {num(o['candidate'])}, difference {signed(o['difference'])} "
            f"({ci}p={p_text(o['p_value'])}, p_holm={p_text(o['p_adjusted'])}; {cmp.interval_note()})")


def _seed(value: Any) -> str:
    return "-" if _missing(value) else str(int(value))


def _said(message: Any, check: str) -> str:
    """A check's message without its own name in front (the line names the check already): an assertion's
    ``payment_link_created: expected true, got false`` says ``expected true, got false``, a turn check's
    ``tools_called: expected X, got []`` says ``got []``."""
    text = str(message)
    if check.startswith("turn "):
        name = check.split(": ", 1)[1]
        rest = text[len(name):].lstrip(", ") if text.startswith(name) else text
        return rest or "failed"
    return text[len(check) + 2:] if text.startswith(check + ": ") else text


def fact_lines(cmp: ComparisonView) -> list[str]:
    """One line per deterministic check that flipped in a scripted pair (regressions first) with the pair and what
    the failing side's check said, then how many other flips are left to the tests and why."""
    flips = cmp.flips
    if flips.empty:
        return []
    facts = flips[flips["fact"].astype(bool)]
    out = []
    for row in facts.head(MAX_FLIP_LINES).itertuples():
        broke = row.verdict == REGRESSED
        said = _said(row.candidate if broke else row.baseline, str(row.check))
        out.append(f"  {'pass → fail' if broke else 'fail → pass'}: {row.kind} {row.check} — {row.scenario} seed "
                   f"{_seed(row.seed)} trial {int(row.trial)}: {'' if broke else 'was: '}{said}")
    if len(facts) > MAX_FLIP_LINES:
        out.append(f"  … and {len(facts) - MAX_FLIP_LINES} more (Comparison.flips, the HTML page)")
    others = flips[~flips["fact"].astype(bool)]
    if len(others):
        reasons = "; ".join(sorted(set(others["why_not_fact"].astype(str))))
        out.append(f"  {len(others)} other flip(s) of a deterministic check are not facts ({reasons}): "
                   "left to the paired tests below")
    return out


def comparison_lines(cmp: ComparisonView, *, compare_args: Sequence[str] | None = None, candidate_runs_now: bool = False
                     ) -> list[str]:
    """The console summary: what was compared, the verdict and the facts behind it, the score, what was detected,
    the noise floor, and — when the pairs are too few to test the score — the next step as commands.

    Args:
        cmp: the ``Comparison``.
        compare_args: the comparison's options (without its folders), to repeat them in a suggested command.
        candidate_runs_now: the candidate ran now on the baseline's conversations (a rerun of the baseline is then
            enough; else the candidate's folder must be rerun too).
    """
    excluded = int(cmp.pairs["excluded"].notna().sum())
    out = [f"baseline:  {cmp.baseline.label} ({', '.join(cmp.baseline.targets) or '?'})",
           f"candidate: {cmp.candidate.label} ({', '.join(cmp.candidate.targets) or '?'})",
           f"{len(cmp.pairs)} pair(s) by scenario × seed × trial; {excluded} left out (an error on a side); "
           f"{len(cmp.unpaired)} conversation(s) unpaired"]
    if "divergence_turn" in cmp.pairs and cmp.pairs["replayed_turns"].fillna(0).gt(0).any():
        diverged = cmp.pairs["divergence_turn"].notna()
        out.append(f"replay: {int(diverged.sum())} of {len(cmp.pairs)} candidate conversation(s) diverged from "
                   "the baseline's recording")
    out.append(f"verdict: {cmp.verdict.upper()} — {cmp.reason()}")
    out.extend(fact_lines(cmp))
    out.append(score_line(cmp))
    for row in cmp.scores[cmp.scores["scenario"] != ALL].itertuples():
        ci = "no CI" if _missing(row.ci_low) else f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}]"
        verdict = row.verdict if getattr(row, "testable", True) else "too few pairs"
        out.append(f"  {row.scenario:<40} {verdict:<21} {signed(row.difference)} {ci} "
                   f"p_holm={p_text(row.p_adjusted)} n={row.n_pairs}")
    for title, table in ((REGRESSED, cmp.regressions()), (IMPROVED, cmp.improvements())):
        # Rows decided by facts are listed under the verdict, pair by pair.
        for row in table[table["kind"].isin(["criterion", "assertion"]) & ~table["fact"]].itertuples():
            out.append(f"{title} {row.kind}: {row.name} — {row.detail}, p_holm={p_text(row.p_adjusted)}")
    for row in cmp.calibrated.itertuples():
        shown = (f"refused: {row.refused}" if row.refused else
                 f"{num(row.baseline, '{:.0%}')} → {num(row.candidate, '{:.0%}')}, change "
                 f"{num(row.difference, '{:+.0%}')} [{num(row.ci_low, '{:+.0%}')}, {num(row.ci_high, '{:+.0%}')}]")
        out.append(f"calibrated pass rate ({row.estimator}): {row.criterion} — {shown}")
    out.append(cmp.noise_line())
    out.extend(untested_lines(cmp, compare_args=compare_args, candidate_runs_now=candidate_runs_now))
    return out
