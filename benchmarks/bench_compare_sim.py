"""Does ``convoeval compare``'s headline hold at the sizes people run? A simulation (issue #27).

    .venv/bin/python benchmarks/bench_compare_sim.py                 # the table of RESULTS.md (~10 min on 2 cores)
    .venv/bin/python benchmarks/bench_compare_sim.py --reps 50       # a quick look

Synthetic paired score tables (no conversation runs, no model): each scenario has its own level (uniform 4–9
points), shared by both sides; each pair adds independent noise (sd 1.5 points) to each side. Some cases add a
known change to the candidate in some scenarios. For each size (2, 3, 5, 10, 20, 30 scenarios × 3, 5, 10 seeds):

* **new**: ``convoeval.compare.stats.score_changes`` as the library runs it — the overall difference is the mean of
  per-scenario differences with an interval within the scenarios (over them from ``RANDOM_SCENARIOS_FROM`` on) and
  a stratified sign-flip test, the scenarios' Wilcoxon tests, one Holm family; the **headline** calls a change when
  any row does (``Comparison.verdict``; the criteria and assertions families are not simulated here);
* **old**: the rule before #27 — the pooled mean with a percentile bootstrap resampling scenarios as clusters, and
  Wilcoxon over all pairs; the headline was the overall row alone.

Reported per case: how often the headline calls a change (A/A: the false-positive rate; with an effect: how often
it says *regressed*, the power), for new and old; then the issue's own shape (two of three scenarios fall by 4.5
points). A further table adds a pass/fail family (database assertions
through ``item_changes``) to A/A comparisons: the headline's false positives over two families. A third decides
``RANDOM_SCENARIOS_FROM``: with scenario effects drawn at random around a population mean of 0, how often the
interval resampling scenarios excludes 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, machine, markdown_table
from convoeval.compare.stats import item_changes, score_changes
from convoeval.compare.verdict import NO_CHANGE, REGRESSED, decide
from convoeval.stats import ALL, percentile_interval, resample_weights
from convoeval.stats.effects import wilcoxon_p
from convoeval.stats.strata import RANDOM_SCENARIOS_FROM, stratified_difference

ALPHA = 0.05
SIZES = [(s, n) for s in (2, 3, 5, 10, 20, 30) for n in (3, 5, 10)]
#: name -> (share of scenarios changed, change in points); at least one scenario changes when the share is > 0.
CASES = {"A/A (no change)": (0.0, 0.0), "-2 in a third of scenarios": (1 / 3, -2.0), "-1 in every scenario": (1.0, -1.0)}


def table(rng: np.random.Generator, scenarios: int, seeds: int, share: float, change: float) -> pd.DataFrame:
    """One synthetic pair table (the columns ``score_changes`` reads)."""
    hit = max(1, round(share * scenarios)) if share else 0
    rows = []
    for s in range(scenarios):
        level = rng.uniform(4, 9)
        shift = change if s < hit else 0.0
        for p in range(seeds):
            rows.append({"scenario": f"s{s:02d}", "run_id_a": f"a{s}-{p}", "excluded": None,
                         "score_a": level + rng.normal(0, 1.5), "score_b": level + shift + rng.normal(0, 1.5)})
    return pd.DataFrame(rows)


def old_verdict(pairs: pd.DataFrame, *, n_boot: int, seed: int, bounds: bool = False) -> Any:
    """The overall verdict before #27: pooled mean, percentile bootstrap over scenarios, Wilcoxon over all pairs
    (with ``bounds``, also the interval)."""
    d = pairs["score_b"] - pairs["score_a"]
    sums = d.groupby(pairs["scenario"]).agg(["sum", "count"]).to_numpy(dtype=float)
    weights = resample_weights(len(sums), n_boot=n_boot, seed=seed)
    low, high = percentile_interval(weights @ sums[:, 0] / (weights @ sums[:, 1]))
    verdict = decide(float(d.mean()), low, high, wilcoxon_p(d.to_numpy())[0], ALPHA)
    return (verdict, low, high) if bounds else verdict


def simulate(reps: int, n_boot: int, n_perm: int, seed: int) -> list[dict]:
    """The main table: per size and case, the headline's rate of calling a change (new and old)."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenarios, seeds in SIZES:
        for case, (share, change) in CASES.items():
            counts = {"new": 0, "new_overall": 0, "old": 0}
            for r in range(reps):
                pairs = table(rng, scenarios, seeds, share, change)
                scores = score_changes(pairs, alpha=ALPHA, n_boot=n_boot, seed=r, n_perm=n_perm)
                verdicts = scores["verdict"]
                overall = verdicts[scores["scenario"] == ALL].iloc[0]
                old = old_verdict(pairs, n_boot=n_boot, seed=r)
                if change:  # power: the headline says regressed
                    counts["new"] += bool((verdicts == REGRESSED).any())
                    counts["new_overall"] += overall == REGRESSED
                    counts["old"] += old == REGRESSED
                else:  # false positives: any call at all
                    counts["new"] += bool((verdicts != NO_CHANGE).any())
                    counts["new_overall"] += overall != NO_CHANGE
                    counts["old"] += old != NO_CHANGE
            rows.append({"scenarios": scenarios, "seeds": seeds, "case": case,
                         "rate": "false positives" if not change else "power",
                         "headline_new": counts["new"] / reps, "overall_score_new": counts["new_overall"] / reps,
                         "headline_old": counts["old"] / reps, "reps": reps})
            print(markdown_table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def issue_shape(reps: int, n_boot: int, n_perm: int, seed: int) -> list[dict]:
    """Issue #27's shape: 3 scenarios, two fall by 4.5 points and one is unchanged, 3–10 seeds."""
    rng = np.random.default_rng(seed)
    rows = []
    for seeds in (3, 5, 8, 10):
        counts = {"new": 0, "new_overall": 0, "old": 0, "old_ci_includes_0": 0}
        for r in range(reps):
            pairs = table(rng, 3, seeds, 2 / 3, -4.5)
            scores = score_changes(pairs, alpha=ALPHA, n_boot=n_boot, seed=r, n_perm=n_perm)
            counts["new"] += bool((scores["verdict"] == REGRESSED).any())
            counts["new_overall"] += scores["verdict"].iloc[0] == REGRESSED
            old, low, high = old_verdict(pairs, n_boot=n_boot, seed=r, bounds=True)
            counts["old"] += old == REGRESSED
            counts["old_ci_includes_0"] += bool(low <= 0 <= high)
        rows.append({"scenarios": 3, "seeds": seeds, "case": "-4.5 in 2 of 3 scenarios (issue #27)",
                     "headline_new": counts["new"] / reps, "overall_score_new": counts["new_overall"] / reps,
                     "headline_old": counts["old"] / reps, "old_ci_includes_0": counts["old_ci_includes_0"] / reps,
                     "reps": reps})
        print(markdown_table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def threshold(reps: int, n_boot: int, seed: int) -> list[dict]:
    """Scenarios as a sample: scenario effects ~ N(0, 1) around a population mean of 0, 5 seeds each. How often the
    interval resampling scenarios (as ``stratified_difference(..., over_scenarios=True)``) excludes 0, and the
    fixed-set interval (which answers another question: these scenarios) for contrast."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenarios in (3, 5, 10, 15, 20, 30):
        over = within = 0
        for r in range(reps):
            effects = np.repeat(rng.normal(0, 1, scenarios), 5)
            level = np.repeat(rng.uniform(4, 9, scenarios), 5)
            a = level + rng.normal(0, 1.5, 5 * scenarios)
            b = level + effects + rng.normal(0, 1.5, 5 * scenarios)
            strata = np.repeat(np.arange(scenarios), 5)
            for flag in (True, False):
                out = stratified_difference(a, b, strata, n_boot=n_boot, seed=r, over_scenarios=flag)
                excluded = out["ci_low"] > 0 or out["ci_high"] < 0
                over, within = (over + excluded, within) if flag else (over, within + excluded)
        rows.append({"scenarios": scenarios, "ci_over_scenarios_excludes_0": over / reps,
                     "ci_within_scenarios_excludes_0": within / reps, "reps": reps})
        print(markdown_table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def with_items(reps: int, n_boot: int, n_perm: int, seed: int) -> list[dict]:
    """A/A with a pass/fail family beside the score: 4 database assertions per conversation (each scenario × item
    passes with its own probability, 0.5–0.95, drawn afresh on each side), through ``item_changes`` as the library
    runs it. The headline calls a change when any row of either family does (bound 2 × alpha)."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenarios, seeds in ((2, 5), (3, 8), (5, 5), (10, 10), (30, 3)):
        calls = {"headline": 0, "score": 0, "assertions": 0}
        for r in range(reps):
            pairs = table(rng, scenarios, seeds, 0.0, 0.0)
            pairs["run_id_b"] = pairs["run_id_a"].str.replace("a", "b", n=1)
            chance = {(s, i): rng.uniform(0.5, 0.95) for s in pairs["scenario"].unique() for i in range(4)}
            sides = []
            for column in ("run_id_a", "run_id_b"):
                sides.append(pd.DataFrame([
                    {"run_id": run, "assertion": f"item{i}", "passed": bool(rng.random() < chance[(s, i)])}
                    for run, s in zip(pairs[column], pairs["scenario"], strict=True) for i in range(4)]))
            score = score_changes(pairs, alpha=ALPHA, n_boot=n_boot, seed=r, n_perm=n_perm)["verdict"] != NO_CHANGE
            items = item_changes(pairs, *sides, item="assertion", alpha=ALPHA)["verdict"] != NO_CHANGE
            calls["score"] += bool(score.any())
            calls["assertions"] += bool(items.any())
            calls["headline"] += bool(score.any() or items.any())
        rows.append({"scenarios": scenarios, "seeds": seeds, "case": "A/A, score + 4 assertions",
                     **{f"false_positives_{k}": v / reps for k, v in calls.items()}, "reps": reps})
        print(markdown_table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="comparisons per size and case (default 200)")
    parser.add_argument("--n-boot", type=int, default=400, help="bootstrap replicates (default 400)")
    parser.add_argument("--n-perm", type=int, default=999, help="random sign flips of the overall test (999)")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--save", default="compare_sim", help="results/<name>.json")
    parser.add_argument("--part", choices=("all", "rows", "issue", "items", "threshold"), default="all",
                        help="one table only; it replaces that table in an existing results file")
    args = parser.parse_args(argv)
    started = time.time()
    tables = {}
    if args.part in ("all", "rows"):
        tables["rows"] = simulate(args.reps, args.n_boot, args.n_perm, args.seed)
    if args.part in ("all", "issue"):
        tables["issue"] = issue_shape(args.reps, args.n_boot, args.n_perm, args.seed + 3)
    if args.part in ("all", "items"):
        tables["items"] = with_items(args.reps, args.n_boot, args.n_perm, args.seed + 2)
    if args.part in ("all", "threshold"):
        tables["threshold"] = threshold(args.reps * 5, args.n_boot, args.seed + 1)
    path = RESULTS / f"{args.save}.json"
    record = json.loads(path.read_text(encoding="utf-8")) if args.part != "all" and path.exists() else {}
    command = "benchmarks/bench_compare_sim.py " + " ".join(argv if argv is not None else sys.argv[1:])
    record.setdefault("parts", {})[args.part] = {
        "command": command, "machine": machine(), "wall_s": round(time.time() - started, 1),
        "settings": {**vars(args), "alpha": ALPHA, "random_scenarios_from": RANDOM_SCENARIOS_FROM}}
    record.update({"command": command, "machine": record["parts"][args.part]["machine"], **tables})
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    for rows in tables.values():
        print(markdown_table(rows), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
