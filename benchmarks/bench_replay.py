"""Replay: re-running a finished sweep from the response cache makes no LLM call.

The sweep (14 conversational scenarios × ``--seeds`` × ``--trials``, reference clinic agents, fake LLM at
``--latency``) runs once with the cache recording (``CONVOEVAL_CACHE=rw``), then again into a new results folder
with ``CONVOEVAL_CACHE=replay`` (a miss would be an error, never a call). The table gives, for both runs, the wall
time, the requests the LLM server received (its own counter) and the calls convoeval answered from the cache.

Usage:
    .venv/bin/python benchmarks/bench_replay.py [--seeds 3] [--trials 1] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_concurrency import sweep
from benchmarks.common import (
    FakeLLM,
    conversational_scenarios,
    isolated_env,
    markdown_table,
    run,
    save,
    temp_folder,
    timed,
)


def one_run(label: str, jobs: list[Any], llm: FakeLLM, folder: Path, mode: str) -> dict[str, Any]:
    """A sweep with the shared cache file in ``mode``; what the server and the results say about its calls."""
    from convoeval import load_results

    out = folder / label
    before = llm.stats()["requests"]
    settings = {"OPENAI_BASE_URL": llm.base_url, "CONVOEVAL_CACHE": mode, "CONVOEVAL_MAX_CONCURRENCY": "1024",
                "CONVOEVAL_CACHE_PATH": str(folder / "cache.sqlite")}
    with isolated_env(folder / f"state-{label}", **settings), timed() as t:
        run(sweep(jobs, out, len(jobs)))
    frames = load_results(out).frames
    calls = frames.calls
    return {
        "run": label,
        "cache": mode,
        "conversations": len(frames.runs),
        "errors": int((frames.scores["status"] == "error").sum()),
        "server_requests": llm.stats()["requests"] - before,
        "calls_from_cache": int(calls["cache_hit"].sum()),
        "calls_total": len(calls),
        "wall_s": round(t.wall_s, 2),
        "cpu_s": round(t.cpu_s, 2),
        "scores_equal_to_first": None,
        "_scores": frames.scores[["scenario", "seed", "trial", "status", "score"]]
        .sort_values(["scenario", "seed", "trial"]).reset_index(drop=True),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per scenario (default 3)")
    parser.add_argument("--trials", type=int, default=1, help="trials per scenario × seed (default 1)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per LLM call (default 0.2)")
    parser.add_argument("--turns", type=int, default=6, help="patient messages per conversation (default 6)")
    parser.add_argument("--save", default="replay", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args(argv)

    from convoeval.pipeline import plan

    jobs = plan(conversational_scenarios(), seeds=list(range(1, args.seeds + 1)), trials=args.trials)
    with temp_folder("replay") as folder, FakeLLM(latency=args.latency, turns=args.turns) as llm:
        with isolated_env(folder / "state-warm-up", OPENAI_BASE_URL=llm.base_url):
            run(sweep(jobs[:2], folder / "warm-up", 2))  # imports and the first client, outside the timings
        first = one_run("record", jobs, llm, folder, "rw")
        again = one_run("replay", jobs, llm, folder, "replay")
    again["scores_equal_to_first"] = bool(again["_scores"].equals(first["_scores"]))
    rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in (first, again)]
    print(markdown_table(rows))
    save(args.save, {"settings": vars(args), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
