"""Overhead: convoeval's own time per LLM call (everything but the server's latency), and where it goes.

Two parts, both against the fake LLM (``benchmarks/fake_llm.py``, its own process) answering at once (latency 0),
so every millisecond measured is the client's or the loopback's:

1. **One call, layer by layer** (``--calls`` calls each, one at a time and then 42 in flight): a raw ``httpx``
   POST of the same request, the ``openai`` SDK, LangChain's ``ChatOpenAI.ainvoke`` (the client ``get_model``
   builds), then ``acall_model`` with the cache off and with the cache on (a miss and a write each time), for a
   simulator call (plain text) and a rubric judge call (a forced tool call validated against the 4-criterion
   schema). CPU is this process's (``time.process_time``); wall also holds the server process's work.
2. **A whole sweep** (``--seeds`` × ``--trials`` × the 14 conversational scenarios, all in flight) at latency 0:
   this process's CPU per LLM call, everything included (agents, store, frames, judges, results files), with a
   ``cProfile`` of where it goes grouped by package, and a ``pyinstrument`` sampling of it grouped by convoeval
   stage (thread-pool work run inline so one profiler sees it).

Usage:
    .venv/bin/python benchmarks/bench_overhead.py [--calls 300] [--seeds 3] [--trials 1]
"""

from __future__ import annotations

import argparse
import cProfile
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import (
    FakeLLM,
    conversational_scenarios,
    inline_threads,
    isolated_env,
    markdown_table,
    profile_by_package,
    run,
    save,
    stage_breakdown,
    temp_folder,
    timed,
)

SIMULATOR_MESSAGES = [
    ("system", "You are simulating a real patient interacting with a clinic's WhatsApp chatbot. " * 8),
    ("user", "The conversation is starting now. Send your first message to the clinic chatbot."),
]
JUDGE_CRITERIA = 4
#: The second measurement of each layer: this many calls in flight at once, as in a sweep of 42 conversations.
CONCURRENT = 42


async def _repeat(make_call: Callable[[int], Awaitable[Any]], calls: int, start: int = 0, in_flight: int = 1) -> None:
    """``calls`` calls, ``in_flight`` at a time (the sweep's situation: many connections in one client pool)."""
    import asyncio

    gate = asyncio.Semaphore(in_flight)

    async def one(i: int) -> None:
        async with gate:
            await make_call(i)

    await asyncio.gather(*(one(i) for i in range(start, start + calls)))


def _row(layer: str, kind: str, calls: int, in_flight: int, wall_s: float, cpu_s: float) -> dict[str, Any]:
    return {"call": kind, "layer": layer, "calls": calls, "in_flight": in_flight,
            "wall_ms_per_call": round(1000 * wall_s / calls, 3), "cpu_ms_per_call": round(1000 * cpu_s / calls, 3)}


def layers(llm: FakeLLM, folder: Path, calls: int) -> list[dict[str, Any]]:
    """Part 1: the same call through each layer of the stack, sequentially, CPU and wall per call."""
    import httpx
    import openai
    from langchain_core.messages import convert_to_messages

    from convoeval.judges.rubric import rubric_schema
    from convoeval.llm import SampleIdentity, acall_model, structured_kwargs
    from convoeval.llm.cache import ResponseCache
    from convoeval.llm.models import get_model

    rows: list[dict[str, Any]] = []
    schema = rubric_schema(JUDGE_CRITERIA)
    tool_kwargs = structured_kwargs(schema, "function_calling")
    wire = [{"role": r, "content": t} for r, t in SIMULATOR_MESSAGES]
    async def run_layers(model: Any) -> None:
        for kind, extra in (("simulator (text)", {}), ("judge (tool call)", tool_kwargs)):
            body = {"model": "fake-model", "messages": wire, "temperature": 0, "seed": 1, **extra}
            lc_messages = convert_to_messages(SIMULATOR_MESSAGES)
            async with httpx.AsyncClient(base_url=llm.base_url) as client:
                await measure("httpx POST", kind, lambda i, c=client, b=body: c.post("/chat/completions", json=b))
            sdk = openai.AsyncOpenAI(base_url=llm.base_url, api_key="EMPTY", max_retries=0)
            await measure("openai SDK", kind, lambda i, b=body, c=sdk: c.chat.completions.create(**b))
            await sdk.close()
            await measure("LangChain ainvoke", kind,
                          lambda i, m=lc_messages, x=extra: model.ainvoke(m, temperature=0, seed=1, **x))
            structured = schema if extra else None
            role = "judge" if extra else "simulator"
            # the last pass replays what the one before recorded: the same identities, so every call is a hit
            passes = (("acall_model, cache off", "off"), ("acall_model, cache on (miss + write)", "rw"),
                      ("acall_model, cache hit", "rw"))
            for label, mode in passes:
                cache = ResponseCache(folder / f"cache-{mode}-{role}.sqlite", mode=mode)
                await measure(label, kind, lambda i, c=cache, s=structured, r=role: acall_model(
                    model, SIMULATOR_MESSAGES, schema=s, seed=1, temperature=0, cache=c,
                    identity=SampleIdentity(scenario="bench", seed=1, trial=i, role=r, turn=0)))
                cache.close()

    async def measure(layer: str, kind: str, make_call: Callable[[int], Awaitable[Any]]) -> None:
        for n, in_flight in enumerate((1, CONCURRENT)):
            base = 100_000 * n  # call i is trial base + i: distinct cache keys per pass, the same ones per layer
            # warm-up: connections (as many as will be in flight), lazy imports, schema caches
            await _repeat(make_call, in_flight, start=base - 1000, in_flight=in_flight)
            with timed() as t:
                await _repeat(make_call, calls, start=base, in_flight=in_flight)
            rows.append(_row(layer, kind, calls, in_flight, t.wall_s, t.cpu_s))

    with isolated_env(folder, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_CACHE="off", CONVOEVAL_MAX_CONCURRENCY="1024"):
        run(run_layers(get_model("simulator")))
    return rows


def sweep_profile(llm: FakeLLM, folder: Path, seeds: int, trials: int, profile_path: Path) -> dict[str, Any]:
    """Part 2: a whole sweep at latency 0; CPU per LLM call and a profile grouped by package."""
    from benchmarks.bench_concurrency import sweep
    from convoeval import load_results
    from convoeval.pipeline import plan

    jobs = plan(conversational_scenarios(), seeds=list(range(1, seeds + 1)), trials=trials)
    with isolated_env(folder / "sweep", OPENAI_BASE_URL=llm.base_url, CONVOEVAL_MAX_CONCURRENCY="1024"):
        run(sweep(jobs[:2], folder / "warm-up", 2))  # imports, first client, schema reflection
        with timed() as plain:
            run(sweep(jobs, folder / "timed", len(jobs)))
        calls = len(load_results(folder / "timed").frames.calls)
        profiler = cProfile.Profile()
        with inline_threads():
            profiler.enable()
            run(sweep(jobs, folder / "profiled", len(jobs)))
            profiler.disable()
        stages = _stages(jobs, folder, calls)
    profiler.dump_stats(profile_path)
    return {
        "conversations": len(jobs),
        "llm_calls": calls,
        "wall_s": round(plain.wall_s, 2),
        "cpu_s": round(plain.cpu_s, 2),
        "cpu_ms_per_call": round(1000 * plain.cpu_s / calls, 2),
        "cpu_ms_per_conversation": round(1000 * plain.cpu_s / len(jobs), 1),
        "by_package_profiled": profile_by_package(profile_path, calls),
        "by_stage_sampled": stages,
    }


def _stages(jobs: list[Any], folder: Path, calls: int) -> list[dict[str, Any]]:
    """The same sweep under pyinstrument (sampling, so little distortion), by convoeval stage; [] without it."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed: no stage breakdown (pip install pyinstrument)", file=sys.stderr)
        return []
    from benchmarks.bench_concurrency import sweep

    sampler = Profiler(interval=0.001, async_mode="disabled")
    with inline_threads():
        sampler.start()
        run(sweep(jobs, folder / "sampled", len(jobs)))
        sampler.stop()
    return stage_breakdown(sampler.last_session, calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per layer (default 300)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds of the profiled sweep (default 3)")
    parser.add_argument("--trials", type=int, default=1, help="trials of the profiled sweep (default 1)")
    parser.add_argument("--turns", type=int, default=6, help="patient messages per conversation (default 6)")
    parser.add_argument("--profile", type=Path, default=Path("/tmp/convoeval-bench-overhead.prof"),
                        help="where to write the sweep's cProfile (default /tmp/convoeval-bench-overhead.prof)")
    parser.add_argument("--skip-layers", action="store_true", help="only the sweep part")
    parser.add_argument("--save", default="overhead", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args(argv)

    with temp_folder("overhead") as folder, FakeLLM(latency=0.0, turns=args.turns) as llm:
        rows = [] if args.skip_layers else layers(llm, folder, args.calls)
        if rows:
            print(markdown_table(rows), flush=True)
        swept = sweep_profile(llm, folder, args.seeds, args.trials, args.profile)
    print(markdown_table([{k: v for k, v in swept.items() if not k.startswith("by_")}]))
    print(markdown_table(swept["by_package_profiled"]))
    print(markdown_table(swept["by_stage_sampled"]))
    save(args.save, {"settings": vars(args) | {"profile": str(args.profile)}, "layers": rows, "sweep": swept})
    return 0


if __name__ == "__main__":
    sys.exit(main())
