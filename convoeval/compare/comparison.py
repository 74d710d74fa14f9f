"""``compare(baseline, candidate)``: every statistic of a paired comparison, its verdicts and the CI gate.

Each family — the composite score (overall and per scenario, one Holm family), the rubric criteria, the database
assertions — has its verdicts (see ``convoeval.compare.verdict``). The headline verdict of the comparison accounts
for all of them, so it cannot contradict a row it prints: **regressed** when any family shows a supported
regression, else **improved** when any shows a supported improvement, else **no detectable change**; ``reason()``
names the rows behind it. ``--fail-on-regression`` follows the headline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from convoeval.compare import stats
from convoeval.compare.pairing import CompareError, Pairing, Side, SideSource, load_side, pair_sides
from convoeval.compare.stats import valid_pairs
from convoeval.compare.verdict import IMPROVED, NO_CHANGE, REGRESSED
from convoeval.stats import ALL
from convoeval.stats.bootstrap import LEVEL, N_BOOT
from convoeval.stats.calibrated_change import CHANGE_COLUMNS, calibrated_rate_changes
from convoeval.stats.labels import load_labels
from convoeval.stats.strata import FIXED, SAMPLE

__all__ = ["Comparison", "compare"]

#: Columns of ``Comparison.regressions()`` / ``improvements()``.
FINDING_COLUMNS = ("kind", "name", "difference", "p_adjusted", "detail")


@dataclass
class Comparison:
    """A paired comparison of a candidate against a baseline; every difference is candidate − baseline.

    Attributes:
        pairing: the two sides, their pairs and the unpaired conversations.
        pairs: ``stats.pair_table``: one row per pair, both sides' outcomes, the candidate's divergence turn.
        scores: ``stats.score_changes`` (per scenario and ``"(all)"``, with verdicts).
        pass_rates: ``stats.pass_rate_changes``.
        criteria: ``stats.criterion_changes`` (per rubric criterion, with verdicts).
        assertions: ``stats.assertion_flips`` (per database assertion, with verdicts).
        holistic: ``stats.holistic_changes``.
        pass_k: ``stats.pass_k_changes``.
        usage: ``stats.usage_changes``.
        settings: alpha, power, level, detect, n_boot, seed.
        calibrated: with labels, ``convoeval.stats.calibrated_rate_changes``: each criterion's pass rate calibrated
            on each side's labels (PPI++) and its change; empty without labels. Not part of the verdict.
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
        its family's Holm correction); else **improved** when any improved; else **no detectable change**. The
        overall score's own verdict is ``overall["verdict"]``.
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
            if found.empty:
                continue
            counts = found["kind"].value_counts()
            named = [_count(kind, counts[kind]) for kind in ("overall", "scenario", "criterion", "assertion")
                     if kind in counts]
            parts.append(f"{_and(named)} {verdict}")
        return "; ".join(parts) or "no row of any family changed detectably"

    def findings(self, verdict: str) -> pd.DataFrame:
        """Every row with this verdict: overall score, scenarios, criteria, assertions (``FINDING_COLUMNS``)."""
        rows = []
        for row in self.scores[self.scores["verdict"] == verdict].itertuples():
            kind = "overall" if row.scenario == ALL else "scenario"
            rows.append({"kind": kind, "name": "all scenarios" if kind == "overall" else row.scenario,
                         "difference": row.difference,
                         "p_adjusted": row.p_adjusted,
                         "detail": f"score {row.baseline:.2f} → {row.candidate:.2f} "
                                   f"(CI {row.ci_low:+.2f} to {row.ci_high:+.2f}, {row.n_pairs} pairs)"})
        for kind, table in (("criterion", self.criteria), ("assertion", self.assertions)):
            for row in table[table["verdict"] == verdict].to_dict("records"):
                rows.append({"kind": kind, "name": row[kind], "difference": row["difference"],
                             "p_adjusted": row["p_adjusted"],
                             "detail": f"pass rate {row['baseline']:.0%} → {row['candidate']:.0%}: "
                                       f"{row['pass_to_fail']} pass→fail, {row['fail_to_pass']} fail→pass "
                                       f"of {row['n_pairs']} pairs ({row['scenarios']})"})
        return pd.DataFrame(rows, columns=list(FINDING_COLUMNS))

    def regressions(self) -> pd.DataFrame:
        """Every statistically supported regression (what ``--fail-on-regression`` fails on)."""
        return self.findings(REGRESSED)

    def improvements(self) -> pd.DataFrame:
        """Every statistically supported improvement."""
        return self.findings(IMPROVED)

    def lines(self) -> list[str]:
        """The console summary: what was compared, the verdicts, what was detected, the noise floor."""
        o = self.overall
        s = self.settings
        excluded = int(self.pairs["excluded"].notna().sum())
        out = [f"baseline:  {self.baseline.label} ({', '.join(self.baseline.targets) or '?'})",
               f"candidate: {self.candidate.label} ({', '.join(self.candidate.targets) or '?'})",
               f"{len(self.pairs)} pair(s) by scenario × seed × trial; {excluded} left out (an error on a side); "
               f"{len(self.unpaired)} conversation(s) unpaired"]
        if "divergence_turn" in self.pairs and self.pairs["replayed_turns"].fillna(0).gt(0).any():
            diverged = self.pairs["divergence_turn"].notna()
            out.append(f"replay: {int(diverged.sum())} of {len(self.pairs)} candidate conversation(s) diverged from "
                       "the baseline's recording")
        out.append(f"verdict: {self.verdict.upper()} — {self.reason()}")
        out.append(f"score: {o['verdict']} — {o['baseline']:.2f} → {o['candidate']:.2f}, difference "
                   f"{o['difference']:+.2f} ({s['level']:.0%} CI {o['ci_low']:+.2f} to {o['ci_high']:+.2f}, "
                   f"p={_p(o['p_value'])}, p_holm={_p(o['p_adjusted'])}; {self.interval_note()})")
        for row in self.scores[self.scores["scenario"] != ALL].itertuples():
            out.append(f"  {row.scenario:<40} {row.verdict:<21} {row.difference:+.2f} "
                       f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}] p_holm={_p(row.p_adjusted)} n={row.n_pairs}")
        for title, table in (("regressed", self.regressions()), ("improved", self.improvements())):
            for row in table[table["kind"].isin(["criterion", "assertion"])].itertuples():
                out.append(f"{title} {row.kind}: {row.name} — {row.detail}, p_holm={_p(row.p_adjusted)}")
        for row in self.calibrated.itertuples():
            shown = (f"refused: {row.refused}" if row.refused else
                     f"{row.baseline:.0%} → {row.candidate:.0%}, change {row.difference:+.0%} "
                     f"[{row.ci_low:+.0%}, {row.ci_high:+.0%}]")
            out.append(f"calibrated pass rate ({row.estimator}): {row.criterion} — {shown}")
        out.append(self.noise_line())
        return out

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


def _p(value: Any) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3g}"


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

    Example:
        >>> result = compare("reports/v1", "reports/v2")          # doctest: +SKIP
        >>> print("\\n".join(result.lines()))                      # doctest: +SKIP
    """
    sides = [load_side(baseline, label=None).select(agent=agent, scenario=scenario, type=type),
             load_side(candidate, label=None).select(agent=agent, scenario=scenario, type=type)]
    pairing = pair_sides(*sides)
    pairs = stats.pair_table(pairing)
    boot: _Bootstrap = {"n_boot": n_boot, "level": level, "seed": seed}
    return Comparison(
        pairing=pairing,
        pairs=pairs,
        scores=stats.score_changes(pairs, alpha=alpha, power=power, detect=detect, **boot),
        pass_rates=stats.pass_rate_changes(pairs, **boot),
        criteria=stats.criterion_changes(pairing, pairs, alpha=alpha),
        assertions=stats.assertion_flips(pairing, pairs, alpha=alpha),
        holistic=stats.holistic_changes(pairing, pairs, **boot),
        pass_k=stats.pass_k_changes(pairs, **boot),
        usage=stats.usage_changes(pairs, **boot),
        settings={"alpha": alpha, "power": power, "level": level, "detect": detect, **boot},
        calibrated=_calibrated(sides, labels, level=level, n_boot=n_boot, seed=seed),
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

