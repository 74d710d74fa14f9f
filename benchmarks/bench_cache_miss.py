"""CPU per LLM call on the cache-miss path (lookup, the call, the write), in process with the fake model.

    .venv/bin/python benchmarks/bench_cache_miss.py NAME      # NAME labels the line (e.g. a commit)
    PYTHONPATH=/path/to/other/checkout .venv/bin/python benchmarks/bench_cache_miss.py before

2,000 calls with distinct identities in flight at once, each a miss and a write to a fresh response cache.
"""
import asyncio
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from convoeval.llm import SampleIdentity, acall_model
from convoeval.llm.cache import ResponseCache
from convoeval.testing import FakeChatModel

ID = SampleIdentity(scenario="s", seed=1, trial=1, role="judge", turn=1)
async def run(n):
    cache = ResponseCache(Path(tempfile.mkdtemp()) / "c.sqlite", mode="rw")
    model = FakeChatModel(responder=lambda m, k: "ok")
    await acall_model(model, [("user", "hi")], identity=ID, cache=cache)
    t = time.process_time()
    await asyncio.gather(*[acall_model(model, [("user", "hi")], identity=replace(ID, trial=i + 2), cache=cache) for i in range(n)])
    return (time.process_time() - t) / n * 1e3
print(sys.argv[1], round(asyncio.run(run(2000)), 3), "ms CPU per call (miss + write)")
