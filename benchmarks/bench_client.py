"""The LLM client stack alone: CPU per call of several ways to call one OpenAI-compatible stub.

``--n`` conversations (200) of 7 sequential calls each, all in flight, against the lean stub
(``benchmarks/stub_llm.py``) answering after ``--latency`` seconds. Each way is measured in a fresh process
(``time.process_time``, every thread), so one way's connections and imports do not help the next:

* ``lc_httpx``: ``ChatOpenAI.ainvoke`` with the SDK's default async client (httpx over anyio);
* ``lc_threads``: ``ChatOpenAI.invoke`` in one thread per conversation (openevals' way);
* ``lc_aiohttp``: ``ChatOpenAI.ainvoke`` with the SDK's aiohttp client (``openai.DefaultAioHttpClient``);
* ``convoeval``: the model ``convoeval.llm.models.get_model`` builds (aiohttp per loop, messages in ``extra_body``);
* ``sdk_httpx`` / ``sdk_aiohttp``: the bare ``AsyncOpenAI`` client, no LangChain.

Usage:
    .venv/bin/python benchmarks/bench_client.py [--n 200] [--latency 0.2] [--ways convoeval,lc_httpx]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CALLS = 7
MESSAGES = [{"role": "system", "content": "You are simulating a patient."}, {"role": "user", "content": "Olá " * 50}]
WAYS = ("lc_httpx", "lc_threads", "lc_aiohttp", "convoeval", "sdk_httpx", "sdk_aiohttp")


def _caller(way: str, base: str):
    import openai
    from langchain_openai import ChatOpenAI

    if way == "lc_httpx":
        model = ChatOpenAI(model="stub", base_url=base, api_key="x", max_retries=0)
        return lambda: model.ainvoke(MESSAGES)
    if way == "lc_threads":
        model = ChatOpenAI(model="stub", base_url=base, api_key="x", max_retries=0)
        return lambda: model.invoke(MESSAGES)
    if way == "lc_aiohttp":
        model = ChatOpenAI(model="stub", base_url=base, api_key="x", max_retries=0,
                           http_async_client=openai.DefaultAioHttpClient())
        return lambda: model.ainvoke(MESSAGES)
    if way == "convoeval":
        from convoeval.llm.models import get_model

        model = get_model("judge", {"model": "stub", "base_url": base})
        return lambda: model.ainvoke(MESSAGES)
    client = openai.AsyncOpenAI(base_url=base, api_key="x", max_retries=0,
                                **({"http_client": openai.DefaultAioHttpClient()} if way == "sdk_aiohttp" else {}))
    return lambda: client.chat.completions.create(model="stub", messages=MESSAGES)


def measure(way: str, base: str, n: int) -> tuple[float, float]:
    """(wall s, CPU ms per call) of ``n`` conversations of ``CALLS`` calls made ``way``."""
    started, cpu = time.perf_counter(), time.process_time()
    if way == "lc_threads":
        from concurrent.futures import ThreadPoolExecutor

        call = _caller(way, base)
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(lambda _: [call() for _ in range(CALLS)], range(n)))
    else:
        async def main() -> None:
            call = _caller(way, base)

            async def conversation() -> None:
                for _ in range(CALLS):
                    await call()

            await asyncio.gather(*(conversation() for _ in range(n)))

        asyncio.run(main())
    return time.perf_counter() - started, 1000 * (time.process_time() - cpu) / (n * CALLS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--one", nargs=2, metavar=("WAY", "BASE_URL"), help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    if args.one:
        wall, per_call = measure(args.one[0], args.one[1], args.n)
        print(f"{args.one[0]:12s} wall {wall:6.2f} s  CPU {per_call:5.2f} ms per call", flush=True)
        return 0
    from benchmarks.common import FakeLLM, loadavg

    print(f"load {loadavg()}")
    with FakeLLM(latency=args.latency, turns=5, lean=True) as llm:
        for way in args.ways.split(","):
            subprocess.run([sys.executable, __file__, "--n", str(args.n), "--one", way, llm.base_url],
                           env={**os.environ, "CONVOEVAL_HOME": "/tmp/convoeval-bench-client"}, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
