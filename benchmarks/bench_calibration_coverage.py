"""Do the calibrated estimators' 95% intervals cover the truth? A simulation (issue #24).

    .venv/bin/python benchmarks/bench_calibration_coverage.py               # the tables of RESULTS.md (~5 min)
    .venv/bin/python benchmarks/bench_calibration_coverage.py --reps 100    # a quick look

Synthetic datasets, no model. Each dataset draws its own size ``n`` (200–2,000 items), labelled share (5–25%,
labelled at random) and a judge with its own bias and noise; the truth is the population value the data are drawn
from (not the sample's), which is what an interval claims to cover.

* **pass rates**: true pass rate ``p`` ~ U(0.15, 0.85); the judge passes a truly passing item with probability
  ``q1`` ~ U(0.70, 0.98) and a failing one with ``1 - q0``, ``q0`` ~ U(0.55, 0.95) (so it is biased, mostly lenient);
* **scores**: a human 0–10 score (a normal, mean ~ U(3, 8), sd ~ U(1.5, 2.5), rounded and clipped); the judge's
  score is ``a + b * human + noise`` (``a`` ~ U(-1, 2.5), ``b`` ~ U(0.6, 1.1), noise sd ~ U(0.5, 2.5)), rounded and
  clipped; the truth is the human score's exact mean;
* **clustered**: conversations of 4 criteria whose truths share a conversation effect; the pooled pass rate with the
  cluster-robust variance, and the same estimator told the items are independent (to show why clustering matters).

PPI++ tunes its weight ``lam`` by cross-fitting (each labelled conversation's ``lam`` from the others, the
library's default); ``ppi++ (in-sample lam)`` is the same estimator with ``lam`` tuned on the labels it is applied to
(``crossfit=False``, as ``ppi_py``), kept to show the difference.

For each estimator: coverage of the 95% interval (among datasets it did not refuse), how often it refused, mean
half-width. The intervals carry the library's small-sample correction (Student t with G - 1 df, variance x
G/(G-1), G the labelled conversations); ``--normal`` runs them without it (the normal quantile, as ``ppi_py``).
Then **efficiency**: exactly 10% labelled, a judge whose correlation with the labels is 0.7, the PPI++
interval's width over the labels-only one. Coverage from 1,000 datasets has a standard error of about 0.7 points.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, machine, markdown_table
from convoeval.stats.calibration._items import prepare
from convoeval.stats.calibration.estimators import estimate
from convoeval.stats.calibration.ppi import ppi_items

#: ``ppi++ (in-sample lam)`` is PPI++ with ``crossfit=False``: ``ppi_py``'s one ``lam`` tuned on the same labels.
RATE_ESTIMATORS = ("judge_only", "labels_only", "ppi", "ppi++", "ppi++ (in-sample lam)", "isotonic",
                   "isotonic_jackknife", "rogan_gladen")
SCORE_ESTIMATORS = ("judge_only", "labels_only", "ppi", "ppi++", "ppi++ (in-sample lam)", "isotonic",
                    "isotonic_jackknife")
TARGET = (0.93, 0.97)


#: ``--normal`` sets it to False: the intervals without the small-sample correction (normal quantile, no G/(G-1)).
SMALL = {"small": True}


def _run(name: str, judge: np.ndarray, labels: np.ndarray, bounds, n_boot: int, seed: int, clusters=None):
    if name == "ppi++ (in-sample lam)":
        return ppi_items(prepare(judge, labels, clusters), crossfit=False, bounds=bounds, **SMALL)
    if name == "isotonic_jackknife":
        return estimate("isotonic", judge, labels, clusters=clusters, bounds=bounds, variance="jackknife", seed=seed)
    return estimate(name, judge, labels, clusters=clusters, bounds=bounds, n_boot=n_boot, seed=seed, **SMALL)


def _labelled(rng: np.random.Generator, values: np.ndarray, share: float) -> np.ndarray:
    labels = np.full(values.size, np.nan)
    chosen = rng.choice(values.size, size=max(1, round(share * values.size)), replace=False)
    labels[chosen] = values[chosen]
    return labels


def rate_dataset(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, dict[str, float]]:
    n, share = int(rng.integers(200, 2001)), float(rng.uniform(0.05, 0.25))
    p, q1, q0 = rng.uniform(0.15, 0.85), rng.uniform(0.70, 0.98), rng.uniform(0.55, 0.95)
    truth = rng.random(n) < p
    judge = np.where(truth, rng.random(n) < q1, rng.random(n) >= q0).astype(float)
    return judge, _labelled(rng, truth.astype(float), share), float(p), {"n": n, "share": share}


def _score_probabilities(mean: float, sd: float) -> np.ndarray:
    cdf = np.array([NormalDist(mean, sd).cdf(k + 0.5) for k in range(11)])
    cdf[-1] = 1.0
    return np.diff(np.concatenate([[0.0], cdf]))


def score_dataset(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, dict[str, float]]:
    n, share = int(rng.integers(200, 2001)), float(rng.uniform(0.05, 0.25))
    mean, sd = rng.uniform(3, 8), rng.uniform(1.5, 2.5)
    probs = _score_probabilities(mean, sd)
    human = rng.choice(11, size=n, p=probs).astype(float)
    a, b, noise = rng.uniform(-1, 2.5), rng.uniform(0.6, 1.1), rng.uniform(0.5, 2.5)
    judge = np.clip(np.round(a + b * human + rng.normal(0, noise, n)), 0, 10)
    return judge, _labelled(rng, human, share), float(probs @ np.arange(11)), {"n": n, "share": share}


def clustered_dataset(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Conversations × 4 criteria; a conversation's criteria pass together more often (a shared latent effect)."""
    conversations = int(rng.integers(50, 501))
    share = float(rng.uniform(0.05, 0.25))
    base, spread = rng.uniform(-1, 1.5), rng.uniform(0.5, 1.5)
    latent = base + spread * rng.normal(size=(conversations, 1)) + 0.3 * rng.normal(size=(conversations, 4))
    truth = latent > 0
    p = float(NormalDist().cdf(base / np.sqrt(spread ** 2 + 0.09)))
    q1, q0 = rng.uniform(0.70, 0.98), rng.uniform(0.55, 0.95)
    judge = np.where(truth, rng.random(truth.shape) < q1, rng.random(truth.shape) >= q0).astype(float)
    labelled = rng.random(conversations) < share  # whole conversations are labelled
    labels = np.where(labelled[:, None], truth, np.nan)
    clusters = np.repeat(np.arange(conversations), 4)
    return judge.ravel(), labels.ravel(), p, clusters


def coverage(kind: str, reps: int, seed: int, n_boot: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    names = SCORE_ESTIMATORS if kind == "scores" else RATE_ESTIMATORS
    bounds = (0.0, 10.0) if kind == "scores" else (0.0, 1.0)
    hits = {k: [] for k in names}
    widths = {k: [] for k in names}
    refusals = dict.fromkeys(names, 0)
    if kind == "clustered":
        hits["ppi++ (items as independent)"] = []
        widths["ppi++ (items as independent)"] = []
        refusals["ppi++ (items as independent)"] = 0
    for r in range(reps):
        clusters = None
        if kind == "rates":
            judge, labels, truth, _ = rate_dataset(rng)
        elif kind == "scores":
            judge, labels, truth, _ = score_dataset(rng)
        else:
            judge, labels, truth, clusters = clustered_dataset(rng)
        runs = {name: _run(name, judge, labels, bounds, n_boot, r, clusters) for name in names}
        if kind == "clustered":
            runs["ppi++ (items as independent)"] = _run("ppi++", judge, labels, bounds, n_boot, r, None)
        for name, est in runs.items():
            if est.refused:
                refusals[name] += 1
                continue
            hits[name].append(est.ci_low <= truth <= est.ci_high)
            widths[name].append((est.ci_high - est.ci_low) / 2)
    rows = []
    for name in hits:
        covered = float(np.mean(hits[name])) if hits[name] else float("nan")
        rows.append({"study": kind, "estimator": name, "datasets": reps, "refused": refusals[name],
                     "coverage": round(covered, 3), "mean_half_width": round(float(np.mean(widths[name])), 4),
                     "in_93_97": bool(TARGET[0] <= covered <= TARGET[1])})
    return rows


def efficiency(reps: int, seed: int) -> list[dict[str, Any]]:
    """10% labelled, judge-label correlation 0.7: PPI++ interval width / labels-only width."""
    rng = np.random.default_rng(seed)
    rows = []
    for kind in ("scores (continuous, rho 0.7)", "pass rates (phi 0.7)"):
        for n in (200, 500, 1000, 2000):
            ratios, corrs = [], []
            for _ in range(reps):
                if kind.startswith("scores"):
                    y = rng.normal(6, 2, n)
                    s = 1.5 + 0.7 * (y - 6) / 2 * 2 + np.sqrt(1 - 0.49) * 2 * rng.normal(size=n)
                else:  # p = 0.5, q1 = q0 = 0.85: phi = q1 + q0 - 1 = 0.7
                    y = (rng.random(n) < 0.5).astype(float)
                    s = np.where(y == 1, rng.random(n) < 0.85, rng.random(n) >= 0.85).astype(float)
                labels = _labelled(rng, y, 0.10)
                lab = ~np.isnan(labels)
                corrs.append(np.corrcoef(s[lab], y[lab])[0, 1])
                ppi, lo = estimate("ppi++", s, labels, **SMALL), estimate("labels_only", s, labels, **SMALL)
                if not (ppi.refused or lo.refused):
                    ratios.append((ppi.ci_high - ppi.ci_low) / (lo.ci_high - lo.ci_low))
            ratios_a = np.array(ratios)
            rows.append({"judge": kind, "n": n, "labelled": round(0.1 * n), "datasets": len(ratios),
                         "mean_corr_on_labels": round(float(np.mean(corrs)), 3),
                         "median_width_ratio": round(float(np.median(ratios_a)), 3),
                         "narrower_by_20pct_share": round(float(np.mean(ratios_a <= 0.8)), 3)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="datasets per study")
    parser.add_argument("--efficiency-reps", type=int, default=300, help="datasets per efficiency cell")
    parser.add_argument("--n-boot", type=int, default=1000, help="Rogan-Gladen bootstrap replicates")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--save", default="calibration_coverage", help="results/<name>.json")
    parser.add_argument("--normal", action="store_true",
                        help="intervals without the small-sample correction (normal quantile, as ppi_py)")
    args = parser.parse_args(argv)
    SMALL["small"] = not args.normal
    started = time.time()
    rows = []
    for i, kind in enumerate(("rates", "scores", "clustered")):
        t0 = time.time()
        rows += coverage(kind, args.reps, args.seed + i, args.n_boot)
        print(f"{kind}: {time.time() - t0:.0f} s", flush=True)
    eff = efficiency(args.efficiency_reps, args.seed + 10)
    record = {"command": " ".join(["benchmarks/bench_calibration_coverage.py", *(argv or sys.argv[1:])]),
              "machine": machine(), "wall_s": round(time.time() - started, 1), "coverage": rows, "efficiency": eff}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.save}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(markdown_table(rows), end="\n\n")
    print(markdown_table(eff))
    print(f"\nwall {record['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
