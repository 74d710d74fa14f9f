"""``compare(baseline, candidate)``: every statistic of a paired comparison, its verdicts and the CI gate.

Each family — the composite score (overall and per scenario, one Holm family), the rubric criteria, the database
assertions — has its verdicts (see ``convoeval.compare.verdict``). A deterministic check — a database or path
assertion, a scripted turn check — that flips in a scripted pair is a fact and needs no test
(``convoeval.compare.evidence``). The headline verdict of the comparison accounts for all of them, so it cannot
contradict a row it prints: **regressed** when any family shows a supported regression or a check broke in a
scripted pair, else **improved** when any shows an improvement, else **no detectable change**; ``reason()`` names
the rows behind it. ``--fail-on-regression`` follows the headline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from convoeval.compare import evidence, stats
from convoeval.compare.advice import too_few_pairs, untested_lines
from convoeval.compare.console import comparison_lines, num, signed
from convoeval.compare.pairing import CompareError, Pairing, Side, SideSource, load_side, pair_sides
from convoeval.compare.stats import valid_pairs
from convoeval.compare.verdict import IMPROVED, NO_CHANGE, REGRESSED
from convoeval.stats import ALL
from convoeval.stats.bootstrap import LEVEL, N_BOOT
from convoeval.stats.calibration.change import CHANGE_COLUMNS, calibrated_rate_changes
from convoeval.stats.estimation import Estimation
from convoeval.stats.labels import load_labels
from convoeval.stats.strata import FIXED, SAMPLE

__all__ = ["Comparison", "compare"]

#: Columns of ``Comparison.regressions()`` / ``improvements()`` (``fact``: decided by deterministic checks that
#: flipped in scripted pairs, ``convoeval.compare.evidence``, not by a test).
FINDING_COLUMNS = ("kind", "name", "difference", "p_adjusted", "detail", "fact")


@dataclass
class Comparison:
    """A paired comparison of a candidate against a baseline; every difference is candidate − baseline.

    Attributes:
        pairing: the two sides, their pairs and the unpaired conversations.
        pairs: ``stats.pair_table``: one row per pair, both sides' outcomes, the candidate's divergence turn.
        scores: ``stats.score_changes`` (per scenario and ``"(all)"``, with verdicts), and ``testable``: False for a
            row with no interval or fewer pairs than a paired test needs (its verdict is then shown as untested).
        pass_rates: ``stats.pass_rate_changes``.
        criteria: ``stats.criterion_changes`` (per rubric criterion, with verdicts).
        assertions: ``stats.assertion_flips`` (per database or path assertion, with verdicts), with its facts
            (``evidence.with_facts``): where it flipped in a scripted pair, the verdict is the flips'.
        holistic: ``stats.holistic_changes``.
        pass_k: ``stats.pass_k_changes``.
        usage: ``stats.usage_changes``.
        settings: alpha, power, level, detect, n_boot, seed, and the scope (agent, scenario, type).
        calibrated: with labels, ``convoeval.stats.calibration.calibrated_rate_changes``: each criterion's pass rate calibrated
            on each side's labels (PPI++) and its change; empty without labels. Not part of the verdict.
        flips: ``evidence.check_flips``: every database or path assertion and scripted turn check that flipped in
            a pair, with scenario, seed and trial; those with ``fact`` decide the headline without a test.
        rerun: how this comparison was asked for, so that its advice repeats it (``lines``' keyword arguments:
            ``compare_args``, ``candidate_runs_now``); the CLI and the notebook set it.
    """

    pairing: Pairing
    pairs: pd.DataFrame
    scores: pd.DataFrame
    pass_rates: pd.DataFrame
    criteria: pd.DataFrame
    assertions: pd.DataFrame
    holistic: pd.DataFrame
    pass_k: pd.DataFrame
    usage: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    calibrated: pd.DataFrame = field(default_factory=pd.DataFrame)
    flips: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(evidence.FLIP_COLUMNS)))
    rerun: dict[str, Any] = field(default_factory=dict)

    @property
    def baseline(self) -> Side:
        return self.pairing.baseline

    @property
    def candidate(self) -> Side:
        return self.pairing.candidate

    @property
    def unpaired(self) -> pd.DataFrame:
        return self.pairing.unpaired

    @property
    def overall(self) -> pd.Series:
        """The ``"(all)"`` row of ``scores``."""
        return self.scores[self.scores["scenario"] == ALL].iloc[0]

    @property
    def verdict(self) -> str:
        """The headline: regressed / improved / no detectable change, over every family it prints.

        **regressed** when any row — the overall score, a scenario, a criterion, an assertion — regressed (each after
        its family's Holm correction) or a deterministic check (a database or path assertion, a scripted turn check)
        went from pass to fail in a scripted pair (``flips``: a fact, no test needed); else **improved** when any
        improved; else **no detectable change**. The overall score's own verdict is ``overall["verdict"]``.
        """
        if len(self.regressions()):
            return REGRESSED
        if len(self.improvements()):
            return IMPROVED
        return NO_CHANGE

    def reason(self) -> str:
        """Which rows make the headline, in words (e.g. ``"2 scenarios and 1 assertion regressed"``)."""
        parts = []
        for verdict, found in ((REGRESSED, self.regressions()), (IMPROVED, self.improvements())):
            facts, tested = found[found["fact"].astype(bool)], found[~found["fact"].astype(bool)]
            if len(facts):
                moved = "pass → fail" if verdict == REGRESSED else "fail → pass"
                # database assertions first: what the agent did, then how (path), then what it said (turns)
                names = sorted(facts["name"].astype(str), key=lambda n: (n.startswith("turn "), n.startswith("path:")))
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
                parts.append(f"{_count('deterministic check', len(facts))} went {moved} in scripted conversations "
                             f"({shown}): a fact, no test needed")
            if len(tested):
                counts = tested["kind"].value_counts()
                named = [_count(kind, counts[kind]) for kind in ("overall", "scenario", "criterion", "assertion")
                         if kind in counts]
                parts.append(f"{_and(named)} {verdict}")
        return "; ".join(parts) or "no row of any family changed detectably"

    def findings(self, verdict: str) -> pd.DataFrame:
        """Every row with this verdict: overall score, scenarios, criteria, assertions and scripted turn checks
        (``FINDING_COLUMNS``; a row decided by deterministic flips has ``fact`` True and no p-value)."""
        rows = []
        for row in self.scores[self.scores["verdict"] == verdict].itertuples():
            kind = "overall" if row.scenario == ALL else "scenario"
            rows.append({"kind": kind, "name": "all scenarios" if kind == "overall" else row.scenario,
                         "difference": row.difference,
                         "p_adjusted": row.p_adjusted,
                         "detail": f"score {num(row.baseline)} → {num(row.candidate)} "
                                   f"(CI {signed(row.ci_low)} to {signed(row.ci_high)}, {row.n_pairs} pairs)",
                         "fact": False})
        for kind, table in (("criterion", self.criteria), ("assertion", self.assertions)):
            for row in table[table["verdict"] == verdict].to_dict("records"):
                fact = bool(row.get("fact_pass_to_fail", 0) or row.get("fact_fail_to_pass", 0))
                detail = (f"pass rate {num(row['baseline'], '{:.0%}')} → {num(row['candidate'], '{:.0%}')}: "
                          f"{row['pass_to_fail']} pass→fail, {row['fail_to_pass']} fail→pass of {row['n_pairs']} "
                          f"pairs ({row['scenarios']})")
                if fact:
                    detail += (f"; in scripted pairs {row['fact_pass_to_fail']} pass→fail, "
                               f"{row['fact_fail_to_pass']} fail→pass")
                rows.append({"kind": kind, "name": row[kind], "difference": row["difference"],
                             "p_adjusted": row["p_adjusted"], "detail": detail, "fact": fact})
        turns = evidence.fact_counts(self.flips[self.flips["kind"] == evidence.TURN])
        for row in turns.itertuples():
            if evidence.fact_verdict(row.fact_pass_to_fail, row.fact_fail_to_pass) == verdict:
                rows.append({"kind": "turn check", "name": row.check, "difference": float("nan"),
                             "p_adjusted": float("nan"), "fact": True,
                             "detail": f"{row.fact_pass_to_fail} pass→fail, {row.fact_fail_to_pass} fail→pass "
                                       f"({row.where})"})
        return pd.DataFrame(rows, columns=list(FINDING_COLUMNS)).astype({"fact": bool})

    def regressions(self) -> pd.DataFrame:
        """Every regression: statistically supported, or a deterministic check broken in a scripted pair (what
        ``--fail-on-regression`` fails on)."""
        return self.findings(REGRESSED)

    def improvements(self) -> pd.DataFrame:
        """Every improvement: statistically supported, or a deterministic check fixed in a scripted pair."""
        return self.findings(IMPROVED)

    def lines(self, *, compare_args: Sequence[str] | None = None, candidate_runs_now: bool | None = None
              ) -> list[str]:
        """The console summary: what was compared, the verdict and the facts behind it, what was detected, the noise
        floor, and the next step as commands when the pairs are too few (``console.comparison_lines``; the
        arguments default to ``rerun``'s)."""
        args = self.rerun.get("compare_args") if compare_args is None else compare_args
        now = self.rerun.get("candidate_runs_now", False) if candidate_runs_now is None else candidate_runs_now
        return comparison_lines(self, compare_args=args, candidate_runs_now=bool(now))

    def advice(self) -> list[str]:
        """When the pairs are too few to test the score: what that means and the commands that would test it (as
        ``rerun`` asked for); empty otherwise (``advice.untested_lines``)."""
        return untested_lines(self, compare_args=self.rerun.get("compare_args"),
                              candidate_runs_now=bool(self.rerun.get("candidate_runs_now", False)))

    def regression_summary(self) -> str:
        """The regressions in one line, for a failed gate: the checks broken in scripted pairs, then those a test
        supports."""
        found = self.regressions()
        parts = []
        for fact, words in ((True, "deterministic check(s) broke in scripted conversations"),
                            (False, "regression(s) statistically supported")):
            part = found[found["fact"] == fact]
            if len(part):
                parts.append(f"{len(part)} {words}: " + "; ".join(f"{r.kind} {r.name}" for r in part.itertuples()))
        return "; ".join(parts) or "no regression"

    def interval_note(self) -> str:
        """How the overall interval treated the scenarios, in a few words."""
        n = int(valid_pairs(self.pairs)["scenario"].nunique())
        return {FIXED: f"CI within each of {n} scenario(s), as a fixed set",
                SAMPLE: f"CI over {n} scenarios, as a sample of possible scenarios"}.get(
            str(self.overall["scenarios_as"]), "no CI: a scenario has a single pair")

    def noise_line(self) -> str:
        """What this comparison could have missed, and how many more runs would detect ``detect`` points."""
        o, s = self.overall, self.settings
        mdd = o["mdd"]
        if pd.isna(mdd):
            head = f"minimum detectable difference: unknown with {o['n_pairs']} pair(s)"
        else:
            head = (f"minimum detectable difference at this size: {mdd:.2f} points (alpha {s['alpha']}, power "
                    f"{s['power']:.0%})")
        if pd.isna(o["pairs_needed"]):
            return head + "; the noise of the pair differences is unknown, so no sample size can be given"
        per = max(1, int(self.scores["scenario"].ne(ALL).sum()))
        more = int(o["more_pairs"])
        if more == 0:
            return head + f"; a difference of {s['detect']:g} points is detectable with these {o['n_pairs']} pairs"
        return (head + f"; to detect {s['detect']:g} points, about {int(o['pairs_needed'])} pairs: {more} more, "
                f"i.e. ~{-(-more // per)} more seed(s) × trial(s) per scenario")

    def exit_code(self, fail_on_regression: bool) -> int:
        """1 when ``fail_on_regression`` and the headline is regressed, else 0."""
        return 1 if fail_on_regression and self.verdict == REGRESSED else 0

    def __repr__(self) -> str:
        return f"<Comparison: {self.verdict}, {len(self.pairs)} pair(s), {len(self.regressions())} regression(s)>"


def _count(kind: str, n: int) -> str:
    if kind == "overall":
        return "the overall score"
    plural = {"criterion": "criteria"}.get(kind, kind + "s")
    return f"{n} {kind if n == 1 else plural}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def compare(
    baseline: SideSource,
    candidate: SideSource,
    *,
    agent: str | None = None,
    scenario: str | None = None,
    type: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    level: float = LEVEL,
    detect: float = 1.0,
    n_boot: int = N_BOOT,
    seed: int = 0,
    labels: str | Path | pd.DataFrame | None = None,
) -> Comparison:
    """Compare a candidate with a baseline, conversation by conversation.

    Args:
        baseline: a results folder (a run's or a sweep's), an ``EvalResult``, a ``Side`` or frames.
        candidate: the same, for the candidate (``run_candidate`` makes one on exactly the baseline's pairs).
        agent: only this agent's scenarios.
        scenario: only this scenario.
        type: only ``"scripted"`` or ``"conversational"`` scenarios.
        alpha: significance level of every test (each family Holm-adjusted: the score's overall and scenario rows,
            the criteria, the assertions).
        power: power of the minimum detectable difference.
        level: confidence level of the CIs.
        detect: a score difference (points) to size the sample for.
        n_boot: bootstrap replicates.
        seed: bootstrap seed.
        labels: human labels (a label CSV, a folder of them, or a labels frame; conversations named by run id):
            each side's pass rates are also calibrated on them (``Comparison.calibrated``).

    Returns:
        A ``Comparison``.

    Raises:
        CompareError: a side with no finished conversation, or no pair at all.

    Example (needs two saved runs, so not run as a doctest)::

        result = compare("reports/v1", "reports/v2")
        print("\\n".join(result.lines()))
    """
    sides = [load_side(baseline, label=None).select(agent=agent, scenario=scenario, type=type),
             load_side(candidate, label=None).select(agent=agent, scenario=scenario, type=type)]
    pairing = pair_sides(*sides)
    pairs = stats.pair_table(pairing)
    boot: _Bootstrap = {"n_boot": n_boot, "level": level, "seed": seed}
    flips = evidence.check_flips(pairing, pairs)
    scores = stats.score_changes(pairs, alpha=alpha, power=power, detect=detect, **boot)
    # A row without an interval, or with fewer pairs than a paired test needs to reach alpha, is untested: said so.
    scores["testable"] = [not too_few_pairs(row, alpha) for row in scores.to_dict("records")]
    return Comparison(
        pairing=pairing,
        pairs=pairs,
        scores=scores,
        pass_rates=stats.pass_rate_changes(pairs, **boot),
        criteria=stats.criterion_changes(pairing, pairs, alpha=alpha),
        assertions=evidence.with_facts(stats.assertion_flips(pairing, pairs, alpha=alpha), flips),
        holistic=stats.holistic_changes(pairing, pairs, **boot),
        pass_k=stats.pass_k_changes(pairs, **boot),
        usage=stats.usage_changes(pairs, **boot),
        settings={"alpha": alpha, "power": power, "level": level, "detect": detect, **boot,
                  "scope": {"agent": agent, "scenario": scenario, "type": type}},
        calibrated=_calibrated(sides, labels, estimation=Estimation(n_boot=n_boot, level=level, seed=seed)),
        flips=flips,
    )


class _Bootstrap(TypedDict):
    """The bootstrap settings every interval of a comparison shares."""

    n_boot: int
    level: float
    seed: int


def _calibrated(sides: list[Side], labels: Any, **options: Any) -> pd.DataFrame:
    """Each criterion's calibrated pass rate on both sides and its change; empty without labels."""
    if labels is None:
        return pd.DataFrame(columns=list(CHANGE_COLUMNS))
    frame = labels if isinstance(labels, pd.DataFrame) else load_labels(labels)
    baseline, candidate = (side.frames.rubric for side in sides)
    if baseline.empty or candidate.empty:
        return pd.DataFrame(columns=list(CHANGE_COLUMNS))
    try:
        return calibrated_rate_changes(baseline, candidate, frame, **options)
    except ValueError as exc:
        raise CompareError(str(exc)) from exc

