"""Two sets of conversations that do not pair: this week's production against last week's, or production against a
simulated run of the same agent family.

``convoeval compare`` pairs conversations by scenario, seed and trial (``convoeval.compare``); real conversations
have no such partner, so a comparison with an imported folder on either side compares two independent samples
instead: the pass rate, the mean composite score and each criterion's pass rate on each side, the difference with a
percentile bootstrap interval that resamples each side's conversations on its own, and a verdict per row
(``improved`` / ``regressed`` when the interval excludes zero, else ``no detectable change``). Only conversations the
judges scored count (``pass``, ``warn``, ``fail``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from convoeval.frames.schemas import AGENT_STATUSES, PRODUCTION
from convoeval.pipeline.results import EvalResult, load_run

__all__ = ["SampleComparison", "compare_samples", "is_production_folder"]


def is_production_folder(folder: Path | str) -> bool:
    """Whether a results folder holds imported conversations (``runs.source = production``)."""
    try:
        runs = load_run(folder).frames.runs
    except FileNotFoundError:
        return False
    return bool(len(runs)) and "source" in runs and (runs["source"] == PRODUCTION).any()


@dataclass
class SampleComparison:
    """Two independent samples of judged conversations compared, row by row (``table``)."""

    baseline: str
    candidate: str
    table: pd.DataFrame
    n: tuple[int, int]
    level: float

    def lines(self) -> list[str]:
        """The console summary: the sizes, then one line per row with both sides, the difference and its CI."""
        out = [f"{self.baseline} ({self.n[0]} judged conversation(s)) vs {self.candidate} ({self.n[1]}): independent "
               f"samples (nothing pairs a real conversation), {self.level:.0%} bootstrap intervals"]
        for row in self.table.itertuples():
            out.append(f"  {row.measure:60.60} {row.baseline:6.2f} → {row.candidate:6.2f}  Δ {row.difference:+.2f} "
                       f"[{row.ci_low:+.2f}, {row.ci_high:+.2f}]  {row.verdict}")
        return out


def _judged(result: EvalResult) -> tuple[pd.DataFrame, pd.DataFrame]:
    scores = result.frames.scores
    scores = scores[scores["status"].isin(AGENT_STATUSES)] if len(scores) else scores
    rubric = result.frames.rubric
    rubric = rubric[rubric["run_id"].isin(set(scores["run_id"])) & rubric["passed"].notna()] if len(rubric) else rubric
    return scores, rubric


def _difference(a: np.ndarray, b: np.ndarray, *, n_boot: int, level: float, rng: np.random.Generator
                ) -> tuple[float, float, float]:
    observed = float(b.mean() - a.mean())
    boots = (rng.choice(b, size=(n_boot, len(b))).mean(axis=1) - rng.choice(a, size=(n_boot, len(a))).mean(axis=1))
    low, high = np.quantile(boots, [(1 - level) / 2, 1 - (1 - level) / 2])
    return observed, float(low), float(high)


def compare_samples(baseline: Path | str, candidate: Path | str, *, level: float = 0.95, n_boot: int = 2000,
                    seed: int = 0) -> SampleComparison:
    """Compare two folders' judged conversations as independent samples.

    Raises:
        ValueError: a side with no judged conversation (judge an imported folder with ``convoeval judge`` first).
    """
    sides = [load_run(baseline), load_run(candidate)]
    judged = [_judged(side) for side in sides]
    for side, (scores, _) in zip(sides, judged, strict=True):
        if not len(scores):
            raise ValueError(f"{side.out_dir} has no judged conversation: judge it first (convoeval judge "
                             f"{side.out_dir})")
    rng = np.random.default_rng(seed)
    rows = []

    def add(measure: str, a: np.ndarray, b: np.ndarray) -> None:
        if len(a) and len(b):
            diff, low, high = _difference(a, b, n_boot=n_boot, level=level, rng=rng)
            verdict = "improved" if low > 0 else "regressed" if high < 0 else "no detectable change"
            rows.append({"measure": measure, "baseline": float(a.mean()), "candidate": float(b.mean()),
                         "difference": diff, "ci_low": low, "ci_high": high, "verdict": verdict,
                         "n_baseline": len(a), "n_candidate": len(b)})

    (sa, ra), (sb, rb) = judged
    add("pass rate", (sa["status"] == "pass").to_numpy(float), (sb["status"] == "pass").to_numpy(float))
    add("mean score", sa["score"].dropna().to_numpy(float), sb["score"].dropna().to_numpy(float))
    for criterion in sorted(set(ra["criterion"]) & set(rb["criterion"])):
        per_a = ra[ra["criterion"] == criterion].groupby("run_id")["passed"].mean().to_numpy(float)
        per_b = rb[rb["criterion"] == criterion].groupby("run_id")["passed"].mean().to_numpy(float)
        add(f"criterion: {criterion}", per_a, per_b)
    table = pd.DataFrame(rows)
    return SampleComparison(Path(baseline).name, Path(candidate).name, table, (len(sa), len(sb)), level)
