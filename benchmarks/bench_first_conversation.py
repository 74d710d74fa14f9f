"""Start-up as a run feels it: CPU and wall time from spawning ``convoeval run`` to its first conversation, and to exit.

One conversation (``billing-conv-happy-payment``, seed 1) against ``FakeOpenAIServer`` at ``--latency`` seconds per
call, cache on, state in a temporary folder. A hook installed before the CLI wraps ``arun_any`` and records
``time.process_time()``, the wall time since spawn and ``len(sys.modules)`` when the first conversation starts (and
when and on which thread pandas is first imported). ``--tree`` runs another source tree (e.g. a ``git worktree`` of
the commit before a change); medians of ``--runs``.

    .venv/bin/python benchmarks/bench_first_conversation.py [--tree PATH] [--runs 3] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from test_reliability_support import clean_env, llm_responder, run_args  # noqa: E402

from convoeval.testing import FakeOpenAIServer  # noqa: E402

HOOK = """
import functools, importlib.abc, importlib.machinery, json, os, sys, threading, time

OUT, T0 = os.environ["PROBE_OUT"], float(os.environ["PROBE_T0"])


class Probe(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "pandas" and not os.path.exists(OUT + ".pandas"):
            with open(OUT + ".pandas", "w") as f:
                json.dump({"wall": time.time() - T0, "thread": threading.current_thread().name}, f)
            return None
        if name != "convoeval.pipeline.conversation":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        exec_module = spec.loader.exec_module

        def patched(module):
            exec_module(module)
            first = module.arun_any

            @functools.wraps(first)
            async def arun_any(*args, **kwargs):
                if not os.path.exists(OUT):
                    with open(OUT, "w") as f:
                        json.dump({"cpu": time.process_time(), "wall": time.time() - T0, "modules": len(sys.modules)}, f)
                return await first(*args, **kwargs)

            module.arun_any = arun_any

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, Probe())
sys.argv = ["convoeval", *sys.argv[1:]]
from convoeval.cli import main
main()
"""


def one_run(tree: Path, server: FakeOpenAIServer) -> dict[str, float | str]:
    tmp = Path(tempfile.mkdtemp(prefix="first-conversation-"))
    out = tmp / "probe.json"
    env = clean_env(tmp, OPENAI_BASE_URL=server.base_url, CONVOEVAL_LLM_TIMEOUT="30", CONVOEVAL_CACHE="rw",
                    CONVOEVAL_STORE_URL=f"sqlite:///{tmp / 'store.db'}", PROBE_OUT=str(out))
    env["PYTHONPATH"] = str(tree)
    before = os.times()
    env["PROBE_T0"] = str(time.time())
    start = time.time()
    done = subprocess.run([sys.executable, "-c", HOOK, *run_args(tmp / "out", "--seed", "1", "--scenario",
                                                                  "billing-conv-happy-payment")],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tree)
    wall = time.time() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    first = json.loads(out.read_text())
    pandas = json.loads(Path(str(out) + ".pandas").read_text())
    return {"cpu_to_first_s": first["cpu"], "wall_to_first_s": first["wall"], "modules_at_first": first["modules"],
            "cpu_total_s": (after.children_user - before.children_user) + (after.children_system - before.children_system),
            "wall_total_s": wall, "pandas_at_s": pandas["wall"], "pandas_thread": pandas["thread"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="convoeval source tree to run (default: this one)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake server takes per call")
    args = parser.parse_args()
    with FakeOpenAIServer(responder=llm_responder, latency=args.latency) as server:
        rows = [one_run(args.tree.resolve(), server) for _ in range(args.runs)]
    print(f"{args.tree} (load {os.getloadavg()[0]:.2f}, latency {args.latency} s, {args.runs} runs; medians):")
    for key in rows[0]:
        values = [r[key] for r in rows]
        shown = statistics.median(values) if isinstance(values[0], float | int) else sorted(set(values))
        print(f"  {key}: {shown if not isinstance(shown, float) else round(shown, 2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
