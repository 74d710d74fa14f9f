"""Concurrency: a sweep of 210 conversations against a 200 ms LLM, as a ratio to its critical-path bound.

The sweep is the repository's 14 conversational scenarios × 5 seeds × 3 trials against the reference clinic agents
(deterministic Python: the agent side makes no LLM call). The simulator and both judges are the fake LLM of
``benchmarks/fake_llm.py`` in its own process, answering every call after ``--latency`` seconds; each patient
needs ``--turns`` messages. Three runs of the same sweep, each into its own results folder:

* ``all in flight``: every conversation at once (``concurrency`` = jobs, endpoint limit ``--endpoint-limit``);
* ``CLI defaults``: ``convoeval run``'s 4 conversations at once and the endpoint's default limit of 8 calls;
* ``one at a time``: ``concurrency=1``, the seed's loop (skip with ``--no-sequential``);

and, to show what sets the ratio, the first ``--sizes`` jobs of the same sweep, all in flight.

The critical-path bound is the longest conversation's sequential chain (its simulator calls, then its judges,
which run together) times the latency: what an infinitely fast client would take.

Usage:
    .venv/bin/python benchmarks/bench_concurrency.py [--latency 0.2] [--turns 6] [--seeds 5] [--trials 3]
"""

from __future__ import annotations

import argparse
import cProfile
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import (
    FakeLLM,
    chains,
    conversational_scenarios,
    isolated_env,
    markdown_table,
    run,
    save,
    temp_folder,
    timed,
)


async def sweep(jobs: list[Any], out: Path, concurrency: int) -> None:
    """Run ``jobs`` as ``convoeval run`` does: models and store built once, results streamed to ``out``."""
    from convoeval.llm.models import get_model
    from convoeval.pipeline.batch import arun_batch
    from convoeval.pipeline.conversation import RunOptions
    from convoeval.store import open_store

    with open_store() as store:
        options = RunOptions(simulator_model=get_model("simulator"), judge_model=get_model("judge"), store=store)
        await arun_batch(jobs, options=options, out_dir=out, concurrency=concurrency, progress=False)


def measure(label: str, jobs: list[Any], llm: FakeLLM, folder: Path, *, concurrency: int, endpoint_limit: int,
            latency: float, profile: Path | None = None) -> dict[str, Any]:
    """One sweep; its wall and CPU time, the calls it made and its ratio to the critical-path bound."""
    from convoeval import load_results

    out = folder / label.replace(" ", "-")
    before = llm.stats()["requests"]
    llm.reset_peak()
    with isolated_env(folder / f"state-{out.name}", OPENAI_BASE_URL=llm.base_url,
                      CONVOEVAL_MAX_CONCURRENCY=str(endpoint_limit)):
        profiler = cProfile.Profile() if profile else None
        with timed() as t:
            if profiler:
                profiler.enable()
            run(sweep(jobs, out, concurrency))
            if profiler:
                profiler.disable()
    if profiler and profile:
        profiler.dump_stats(profile)
    stats = llm.stats()
    frames = load_results(out).frames
    per_conv = chains(frames.calls)
    longest = int(per_conv["chain"].max())
    bound = longest * latency
    calls = int((~frames.calls["cache_hit"]).sum())
    return {
        "run": label,
        "conversations": len(frames.runs),
        "errors": int((frames.scores["status"] == "error").sum()),
        "concurrency": concurrency,
        "endpoint_limit": endpoint_limit,
        "llm_calls": calls,
        "server_requests": stats["requests"] - before,
        "longest_chain": longest,
        "bound_s": round(bound, 2),
        "wall_s": round(t.wall_s, 2),
        "ratio_to_bound": round(t.wall_s / bound, 2),
        "cpu_s": round(t.cpu_s, 2),
        "cpu_ms_per_call": round(1000 * t.cpu_s / max(calls, 1), 2),
        "cpu_over_bound": round(t.cpu_s / bound, 2),  # above 1: one core's worth of work alone exceeds the bound
        "max_in_flight": stats["max_in_flight"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per LLM call (default 0.2)")
    parser.add_argument("--turns", type=int, default=6, help="patient messages per conversation (default 6)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per scenario (default 5)")
    parser.add_argument("--trials", type=int, default=3, help="trials per scenario × seed (default 3)")
    parser.add_argument("--endpoint-limit", type=int, default=1024, help="LLM calls in flight per endpoint")
    parser.add_argument("--no-sequential", action="store_true", help="skip the one-at-a-time run")
    parser.add_argument("--no-defaults", action="store_true", help="skip the CLI-defaults run")
    parser.add_argument("--sizes", default="14,42", help="smaller all-in-flight sweeps to run too (default 14,42)")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the all-in-flight run here")
    parser.add_argument("--save", default="concurrency", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args(argv)

    from convoeval.pipeline import plan

    jobs = plan(conversational_scenarios(), seeds=list(range(1, args.seeds + 1)), trials=args.trials)
    rows = []
    with temp_folder("concurrency") as folder, FakeLLM(latency=args.latency, turns=args.turns) as llm:
        with isolated_env(folder / "state-warm-up", OPENAI_BASE_URL=llm.base_url):
            run(sweep(jobs[:2], folder / "warm-up", 2))  # imports and the first client, outside the timings
        for size in [int(x) for x in args.sizes.split(",") if x.strip()]:
            subset = jobs[:: max(1, len(jobs) // size)][:size]  # spread over the scenarios
            rows.append(measure(f"{size} in flight", subset, llm, folder, concurrency=size,
                                endpoint_limit=args.endpoint_limit, latency=args.latency))
            print(markdown_table(rows[-1:]), flush=True)
        rows.append(measure(f"all {len(jobs)} in flight", jobs, llm, folder, concurrency=len(jobs),
                            endpoint_limit=args.endpoint_limit, latency=args.latency, profile=args.profile))
        print(markdown_table(rows[-1:]), flush=True)
        if not args.no_defaults:
            rows.append(measure("CLI defaults", jobs, llm, folder, concurrency=4, endpoint_limit=8,
                                latency=args.latency))
            print(markdown_table(rows[-1:]), flush=True)
        if not args.no_sequential:
            rows.append(measure("one at a time", jobs, llm, folder, concurrency=1, endpoint_limit=8,
                                latency=args.latency))
    sequential = next((r for r in rows if r["run"] == "one at a time"), None)
    for row in rows:
        same_sweep = sequential is not None and row["conversations"] == sequential["conversations"]
        row["speedup_vs_one_at_a_time"] = round(sequential["wall_s"] / row["wall_s"], 1) if same_sweep else None
    print(markdown_table(rows))
    save(args.save, {"settings": vars(args) | {"profile": str(args.profile or "")}, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
