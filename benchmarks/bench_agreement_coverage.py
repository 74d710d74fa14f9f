"""Do the agreement statistics' 95% intervals cover the truth at 30 conversations? A simulation (issue #45, item 7).

    .venv/bin/python benchmarks/bench_agreement_coverage.py                 # the tables of RESULTS.md
    .venv/bin/python benchmarks/bench_agreement_coverage.py --reps 200 --sizes 30   # a quick look

Synthetic datasets, no model. Each dataset is ``n`` conversations rated by two raters; the truth is the population
value of each statistic (computed once on 200,000 conversations drawn from the same design), which is what an
interval claims to cover.

* **pass/fail**: a true verdict per conversation (pass rate 0.5); each judge gets it right with probability 0.85,
  independently: Cohen's kappa, Gwet's AC1, Krippendorff's alpha (nominal), % agreement, sensitivity
  (``binary_agreement``);
* **0–10 scores**: a latent quality ~ N(6, 1.8); rater A scores it with noise N(0, 1.2), rater B 0.7 points higher
  with the same noise, both rounded and clipped to 0–10: the ICCs, Krippendorff's alpha (ordinal, interval),
  weighted kappas, Spearman, mean bias, MAE (``score_agreement``).

Each dataset's intervals are made twice, by the percentile bootstrap and by BCa (``Estimation(interval=...)``), with
the same replicates (B = 1000, seed = the dataset's number). Coverage from 1,000 datasets has a standard error of
about 0.7 points. Target: 93–97%.
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

import krippendorff  # noqa: E402
from scipy import stats as sps  # noqa: E402
from sklearn.metrics import cohen_kappa_score  # noqa: E402

from benchmarks.common import RESULTS, machine, markdown_table  # noqa: E402
from convoeval.stats import Estimation, binary_agreement, icc, score_agreement  # noqa: E402
from convoeval.stats.binary import table_statistics  # noqa: E402

BINARY = ("cohen_kappa", "gwet_ac1", "krippendorff_alpha", "percent_agreement", "sensitivity")
SCORES = ("icc_a1", "icc_c1", "icc_11", "icc_ak", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval",
          "weighted_kappa", "linear_weighted_kappa", "spearman", "mean_bias", "mae")
TARGET = (0.93, 0.97)
KINDS = ("percentile", "bca", "auto")


def draw_binary(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.random(n) < 0.5
    right_a, right_b = rng.random(n) < 0.85, rng.random(n) < 0.85
    return truth == right_a, truth == right_b  # a judge right on an item gives the true verdict


def draw_scores(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    quality = rng.normal(6.0, 1.8, n)
    a = np.clip(np.rint(quality + rng.normal(0, 1.2, n)), 0, 10)
    b = np.clip(np.rint(quality + 0.7 + rng.normal(0, 1.2, n)), 0, 10)
    return a, b


def binary_truth(n: int = 200_000) -> dict[str, float]:
    a, b = draw_binary(n, np.random.default_rng(10**6))
    table = np.array([np.sum(~a & ~b), np.sum(~a & b), np.sum(a & ~b), np.sum(a & b)], dtype=float)
    return {k: float(v) for k, v in table_statistics(table).items() if k in BINARY}


def score_truth(n: int = 200_000) -> dict[str, float]:
    a, b = draw_scores(n, np.random.default_rng(10**6 + 1))
    d = a - b
    out: dict[str, float] = {k: float(v) for k, v in icc(np.column_stack([a, b])).items()}
    for level in ("ordinal", "interval"):
        value_counts = np.zeros((n, 11))
        np.add.at(value_counts, (np.arange(n), a.astype(int)), 1)
        np.add.at(value_counts, (np.arange(n), b.astype(int)), 1)
        out[f"krippendorff_alpha_{level}"] = float(krippendorff.alpha(
            value_counts=value_counts, value_domain=list(range(11)), level_of_measurement=level))
    labels = list(range(11))
    out["weighted_kappa"] = float(cohen_kappa_score(a.astype(int), b.astype(int), labels=labels, weights="quadratic"))
    out["linear_weighted_kappa"] = float(cohen_kappa_score(a.astype(int), b.astype(int), labels=labels,
                                                           weights="linear"))
    out["spearman"] = float(sps.spearmanr(a, b).statistic)
    out["mean_bias"], out["mae"] = float(d.mean()), float(np.abs(d).mean())
    return out


def _binary_frame(a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    n = len(a)
    runs = [f"r{i}" for i in range(n)]
    return pd.DataFrame({"run_id": runs * 2, "criterion": "c", "rater": ["a"] * n + ["b"] * n,
                         "passed": np.concatenate([a, b])})


def _score_frame(a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    n = len(a)
    runs = [f"r{i}" for i in range(n)]
    return pd.DataFrame({"run_id": runs * 2, "dimension": "overall", "rater": ["a"] * n + ["b"] * n,
                         "score": np.concatenate([a, b])})


def coverage(design: str, n: int, reps: int, truth: dict[str, float], n_boot: int) -> list[dict[str, Any]]:
    """Coverage and mean half-width per statistic and kind of interval over ``reps`` datasets of ``n``."""
    names = BINARY if design == "pass/fail" else SCORES
    hits = {(s, k): [] for s in names for k in KINDS}
    widths = {(s, k): [] for s in names for k in KINDS}
    for rep in range(reps):
        rng = np.random.default_rng(rep)
        data = _binary_frame(*draw_binary(n, rng)) if design == "pass/fail" else _score_frame(*draw_scores(n, rng))
        for kind in KINDS:  # the same data and replicates for both kinds of interval
            est = Estimation(n_boot=n_boot, seed=rep, interval=kind)
            agreement = binary_agreement if design == "pass/fail" else score_agreement
            rows = agreement(data, pairs=[("a", "b")], estimation=est).set_index("statistic")
            for stat in names:
                low, high = rows.loc[stat, "ci_low"], rows.loc[stat, "ci_high"]
                if np.isfinite(low) and np.isfinite(high):
                    hits[stat, kind].append(low <= truth[stat] <= high)
                    widths[stat, kind].append((high - low) / 2)
    rows_out = []
    for stat in names:
        row: dict[str, Any] = {"design": design, "n": n, "statistic": stat, "truth": round(truth[stat], 4)}
        for kind in KINDS:
            got = hits[stat, kind]
            row[f"{kind} coverage"] = round(100 * float(np.mean(got)), 1) if got else float("nan")
            row[f"{kind} half-width"] = round(float(np.mean(widths[stat, kind])), 3) if got else float("nan")
            row[f"{kind} undefined"] = reps - len(got)
        rows_out.append(row)
    return rows_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="datasets per design and size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 100], help="conversations per dataset")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--save", default="agreement_coverage")
    args = parser.parse_args()
    started = time.time()
    truths = {"pass/fail": binary_truth(), "0-10 scores": score_truth()}
    rows = []
    for n in args.sizes:
        for design, truth in truths.items():
            rows += coverage(design, n, args.reps, truth, args.n_boot)
            print(f"{design} at n={n}: done after {time.time() - started:.0f} s", flush=True)
    print(markdown_table(rows))
    record = {"reps": args.reps, "sizes": args.sizes, "n_boot": args.n_boot, "target": TARGET,
              "machine": machine(), "wall_s": round(time.time() - started, 1), "coverage": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.save}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
