"""CPU per conversation in process, without start-up and without HTTP: convoeval's own work plus LangChain's
per-call machinery, with the in-process fake model (``convoeval.testing.FakeChatModel``) as simulator and judges.

    .venv/bin/python benchmarks/bench_inprocess.py --n 200                      # a plain Python agent
    .venv/bin/python benchmarks/bench_inprocess.py --n 200 --target clinic      # the reference billing agent
    .venv/bin/python benchmarks/bench_inprocess.py --n 200 --cache rw           # every call through a fresh cache

Prints CPU ms per conversation (``time.process_time`` of this process, every thread) after one warm-up conversation.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "benchmarks" / "peers")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="conversations")
    parser.add_argument("--target", default="peer_app:respond", help="agent target ('clinic' for the reference one)")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--cache", choices=("off", "rw"), default="off",
                        help="rw: every call a miss and a write in a fresh response cache (the fake model is "
                             "otherwise never cached)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    os.environ.update(CONVOEVAL_HOME=str(tmp / "state"), CONVOEVAL_CACHE="off",
                      CONVOEVAL_STORE_URL=f"sqlite:///{tmp / 'store.db'}")
    from test_reliability_support import fake_responder

    from convoeval._util.aio import run_sync
    from convoeval.llm.cache import ResponseCache, use_cache
    from convoeval.pipeline import EvalConfig, RunOptions
    from convoeval.pipeline.execute import build_agents, select_scenarios
    from convoeval.pipeline.jobs import plan
    from convoeval.pipeline.local import arun_jobs
    from convoeval.pipeline.results import write_conversation
    from convoeval.store import open_store
    from convoeval.testing import FakeChatModel

    target = None if args.target == "clinic" else args.target
    scenarios = select_scenarios(EvalConfig(agent="billing", scenario="billing-conv-happy-payment"))
    model = FakeChatModel(responder=fake_responder)
    options = RunOptions(target=target, simulator_model=model, judge_model=model, store=open_store(),
                         agents=build_agents(target, scenarios))
    out = tmp / "out"

    def save(job, result):
        write_conversation(out, job.key, result.payload())

    cache = ResponseCache(tmp / "cache.sqlite", mode=args.cache)

    async def sweep(jobs, concurrency):
        with use_cache(cache):  # inside the coroutine: the context of run_sync's caller does not reach its loop
            await arun_jobs(jobs, options, concurrency=concurrency, on_result=save)

    run_sync(sweep(plan(scenarios, seeds=[999_999]), 1))  # warm-up
    jobs = plan(scenarios, seeds=list(range(1, args.n + 1)))
    cpu, wall = time.process_time(), time.perf_counter()
    run_sync(sweep(jobs, args.concurrency))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{args.n} conversations, target {args.target}, cache {args.cache}: {cpu / args.n * 1000:.1f} ms CPU per "
          f"conversation ({wall:.1f} s wall, load {os.getloadavg()[0]:.1f}; {len(cache) if cache.enabled else 0} "
          "replies in the cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
