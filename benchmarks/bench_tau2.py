"""τ²-bench side by side: τ²'s own runner and convoeval on the same tasks, the same stub LLM, whole processes.

One stub (``benchmarks/tau2_stub.py``, a fixed latency per request) serves both. τ²'s side is ``tau2 run`` (its
LLM agent and LLM user through litellm, its evaluator at the end) in .venv-tau2; convoeval's is ``convoeval run
--domain tau2:<domain> --target openai-chat --simulator llm`` (the LLM patient, the openai-chat agent with τ²'s
tools and policy, the judges, the τ² checks). Each is one process, timed from its start to its exit (start-up,
imports, τ²'s evaluation and convoeval's judges included) with its CPU read from ``wait4``. Printed and written
to benchmarks/results/tau2-side-by-side.json: simulations, wall seconds, simulations per hour, CPU seconds per
simulation, LLM requests per simulation, the machine's load.

Usage: nice -n 10 python benchmarks/bench_tau2.py [--domain retail] [--tasks 30] [--concurrency 30] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _timed(args: list[str], env: dict[str, str], log: Path) -> dict[str, float]:
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "exit": os.waitstatus_to_exitcode(status)}


class Stub:
    """The stub in a child process; ``stats()`` its counters."""

    def __init__(self, latency: float, turns: int) -> None:
        self.process = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "tau2_stub.py"), "--latency",
                                         str(latency), "--turns", str(turns)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().split()[1]

    def stats(self) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("stats\n")
        self.process.stdin.flush()
        return dict(json.loads(self.process.stdout.readline()))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        self.process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--concurrency", type=int, default=30)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--turns", type=int, default=4, help="user messages per conversation, the last ending it")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "tau2-side-by-side.json"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tau2-bench-"))
    stub = Stub(args.latency, args.turns)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONVOEVAL_", "PYTHONPATH"))}
    env = {**base, "OPENAI_API_KEY": "stub", "OPENAI_BASE_URL": stub.url, "OPENAI_API_BASE": stub.url,
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CONVOEVAL_HOME": str(work / "home")}
    results: dict[str, Any] = {"domain": args.domain, "tasks": args.tasks, "concurrency": args.concurrency,
                               "latency_s": args.latency, "user_turns": args.turns, "load_before": os.getloadavg()}
    try:
        before = stub.stats()["requests"]
        tau2 = _timed([str(REPO / ".venv-tau2" / "bin" / "tau2"), "run", "--domain", args.domain, "--agent-llm",
                       "openai/fake-model", "--user-llm", "openai/fake-model", "--num-tasks", str(args.tasks),
                       "--max-concurrency", str(args.concurrency), "--results-dir", str(work / "tau2"),
                       "--save-to", "bench"], env, work / "tau2.log")
        tau2["requests"] = stub.stats()["requests"] - before
        saved = json.loads((work / "tau2" / "bench.json").read_text())
        tau2["simulations"] = len(saved["simulations"])
        results["tau2"] = tau2
        ids = ",".join(str(s["task_id"]) for s in saved["simulations"])
        before = stub.stats()["requests"]
        ours = _timed([str(REPO / ".venv" / "bin" / "convoeval"), "run", "--domain", f"tau2:{args.domain}",
                       "--scenario", ids, "--target", "openai-chat", "--simulator", "llm", "--seed", "0",
                       "--concurrency", str(args.concurrency), "--out", str(work / "convoeval")],
                      {**env, "PYTHONPATH": str(REPO)}, work / "convoeval.log")
        ours["requests"] = stub.stats()["requests"] - before
        ours["simulations"] = len(list((work / "convoeval" / "runs").glob("*.json")))
        results["convoeval"] = ours
    finally:
        stub.close()
    results["load_after"] = os.getloadavg()
    for side in ("tau2", "convoeval"):
        r = results.get(side)
        if r and r["simulations"]:
            r["simulations_per_hour"] = 3600 * r["simulations"] / r["wall_s"]
            r["cpu_s_per_simulation"] = r["cpu_s"] / r["simulations"]
            r["requests_per_simulation"] = r["requests"] / r["simulations"]
            # The bound the stub's latency sets: each simulation's requests in a row, `concurrency` at once.
            r["latency_bound_per_hour"] = 3600 * args.concurrency / (r["requests_per_simulation"] * args.latency)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
