"""Scale: memory while a sweep of 5,000 short conversations streams its results to disk.

The 14 conversational scenarios × seeds × trials make ``--conversations`` jobs (5,000 by default); each patient
says one line and ``[GOAL_COMPLETE]`` (``max_turns`` 2), then both judges answer, against the fake LLM at
``--latency`` (1 ms). ``--concurrency`` conversations are in flight at once. A sampler thread reads this process's
resident set size every ``--every`` seconds and the number of finished runs on disk; the table gives the RSS
when 1,000, 2,000, … conversations had finished, and the peak (``ru_maxrss``). Flat means the sweep holds no
finished conversation in memory.

Usage:
    .venv/bin/python benchmarks/bench_scale.py [--conversations 5000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_concurrency import sweep
from benchmarks.common import (
    FakeLLM,
    conversational_scenarios,
    current_rss_mb,
    isolated_env,
    markdown_table,
    peak_rss_mb,
    run,
    save,
    temp_folder,
    timed,
)


class Sampler(threading.Thread):
    """Every ``every`` seconds: (seconds, finished runs on disk, RSS MiB). Stops with ``stop()`` or at ``deadline``."""

    def __init__(self, runs_dir: Path, every: float, deadline: float) -> None:
        super().__init__(daemon=True)
        self.runs_dir, self.every, self.deadline = runs_dir, every, deadline
        self.samples: list[tuple[float, int, float]] = []
        self._stop_event = threading.Event()
        self._start = time.perf_counter()

    def run(self) -> None:
        while not self._stop_event.wait(self.every) and time.perf_counter() - self._start < self.deadline:
            self.sample()

    def sample(self) -> None:
        finished = 0
        if self.runs_dir.is_dir():
            finished = sum(1 for entry in os.scandir(self.runs_dir) if entry.name.endswith(".json"))
        self.samples.append((time.perf_counter() - self._start, finished, current_rss_mb()))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        self.sample()


def plan_jobs(count: int) -> list[Any]:
    """``count`` jobs: the conversational scenarios × as many seeds as needed, one trial, cut to ``count``."""
    from convoeval.pipeline import plan

    scenarios = conversational_scenarios(max_turns=2)
    seeds = list(range(1, math.ceil(count / len(scenarios)) + 1))
    return plan(scenarios, seeds=seeds, trials=1)[:count]


def at_milestones(samples: list[tuple[float, int, float]], step: int, total: int) -> list[dict[str, Any]]:
    """The first sample at or past each ``step`` finished conversations."""
    rows = []
    for milestone in range(step, total + 1, step):
        hit = next((s for s in samples if s[1] >= milestone), None)
        if hit is not None:
            rows.append({"finished": milestone, "seconds": round(hit[0], 1), "rss_mib": round(hit[2], 1)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=5000, help="conversations in the sweep (default 5000)")
    parser.add_argument("--concurrency", type=int, default=32, help="conversations in flight (default 32)")
    parser.add_argument("--latency", type=float, default=0.001, help="seconds per LLM call (default 0.001)")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between RSS samples (default 1)")
    parser.add_argument("--deadline", type=float, default=1800.0, help="stop sampling after this (default 1800 s)")
    parser.add_argument("--save", default="scale", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args(argv)

    jobs = plan_jobs(args.conversations)
    with temp_folder("scale") as folder, FakeLLM(latency=args.latency, turns=2, lifetime=args.deadline + 60) as llm:
        with isolated_env(folder, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_MAX_CONCURRENCY=str(args.concurrency)):
            run(sweep(jobs[:20], folder / "warm-up", args.concurrency))  # imports and clients before measuring
            rss_before = current_rss_mb()
            out = folder / "sweep"
            sampler = Sampler(out / "runs", args.every, args.deadline)
            sampler.start()
            with timed() as t:
                run(sweep(jobs, out, args.concurrency))
            sampler.stop()
        finished = sum(1 for _ in (out / "runs").glob("*.json"))
        disk_mib = sum(p.stat().st_size for p in (out / "runs").glob("*.json")) / 2**20
    milestones = at_milestones(sampler.samples, max(1, args.conversations // 5), args.conversations)
    summary = {
        "conversations": finished,
        "concurrency": args.concurrency,
        "wall_s": round(t.wall_s, 1),
        "cpu_s": round(t.cpu_s, 1),
        "rss_before_mib": round(rss_before, 1),
        "rss_end_mib": round(sampler.samples[-1][2], 1),
        "peak_rss_mib": round(peak_rss_mb(), 1),
        "results_on_disk_mib": round(disk_mib, 1),
    }
    print(markdown_table(milestones))
    print(markdown_table([summary]))
    save(args.save, {"settings": vars(args), "summary": summary, "milestones": milestones,
                     "samples": [[round(a, 1), b, round(c, 1)] for a, b, c in sampler.samples]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
