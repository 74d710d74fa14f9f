"""Where ``convoeval run``'s CPU goes in the peer comparison's workload: a py-spy profile of the whole process.

The run is ``bench_peers.py``'s convoeval side (one scenario, ``--size`` conversations all in flight, 5 simulator
calls and 2 judges each, the stub answering after ``--latency`` seconds), recorded by ``py-spy`` with ``--gil``:
only the thread holding the GIL is sampled, so a sample is Python CPU work (what a single process is bound by);
waiting threads (the thread pool's idle workers, tqdm's monitor, the loop in ``select``) and C code that released
the GIL (SQLite's ``step``) are not counted. Samples are grouped three ways:

* by package: the innermost frame of a known package (the LLM client stack — LangChain, the openai SDK, httpx —,
  pandas, SQLAlchemy, convoeval, the event loop, imports) owns the sample, with whatever it calls below;
* by convoeval stage: the innermost convoeval function of ``STAGES`` on the stack (as in ``bench_overhead``), and
  LangChain's own tasks (no convoeval frame) as the client stack;
* the top functions by self samples.

convoeval's own CPU per conversation (the issue's "everything except the LLM client stack") is the CPU of an
unprofiled run of the same size (``results/peers.json``, ``--cpu-s``, else this run's) times the non-client share.
On a loaded machine the imports' share is overstated: the importing thread holds the GIL even while the kernel has
descheduled it, whereas the run's threads release it while they wait; ``bench_peers.py``'s ``startup`` rows give
the imports' CPU measured alone.

py-spy is not a dependency of convoeval: pass its path (``pip install --target /tmp/prof py-spy``) with ``--py-spy``.

Usage:
    .venv/bin/python benchmarks/profile_peers.py --size 200 --py-spy /tmp/prof/bin/py-spy
    .venv/bin/python benchmarks/profile_peers.py --size 200 --tool openevals   # the peer, the same way
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bytecode
from benchmarks.bench_peers import (
    OPENEVALS_CONFIGS,
    PEERS_DIR,
    PEERS_PYTHON,
    SCENARIO,
    SCENARIOS_DIR,
    TARGET,
    convoeval_command,
)
from benchmarks.common import REPO, RESULTS, FakeLLM, clean_env, loadavg, markdown_table, run_process, save, temp_folder

#: Packages that own a sample (innermost match wins), by a fragment of the file path.
PACKAGES: tuple[tuple[str, str], ...] = (
    ("<frozen importlib", "imports (start-up and lazy)"),
    ("/convoeval/", "convoeval"),
    ("/openevals/", "openevals"),
    ("/langsmith/", "langsmith (openevals' tracing client)"),
    ("/langchain_core/", "LLM client stack"),
    ("/langchain_openai/", "LLM client stack"),
    ("/openai/", "LLM client stack"),
    ("/httpx", "LLM client stack"),
    ("/httpcore", "LLM client stack"),
    ("/h11/", "LLM client stack"),
    ("/anyio/", "LLM client stack"),
    ("/pandas/", "pandas / pyarrow / numpy"),
    ("/pyarrow/", "pandas / pyarrow / numpy"),
    ("/numpy/", "pandas / pyarrow / numpy"),
    ("/sqlalchemy/", "SQLAlchemy + sqlite3"),
    ("/sqlite3/", "SQLAlchemy + sqlite3"),
    ("/tqdm/", "tqdm"),
    ("/asyncio/", "asyncio event loop"),
    ("selectors.py", "asyncio event loop"),
    ("/concurrent/futures/", "thread pool"),
    ("threading.py", "thread pool"),
)
#: convoeval's stages, by the function that starts them (innermost wins); ``""`` matches any function of the file.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("convoeval/llm/", "acall_model", "LLM calls (acall_model and below: cache, client stack)"),
    ("convoeval/simulator/", "", "simulator prompt building and parsing"),
    ("convoeval/judges/rubric.py", "", "judges: prompts, transcript rendering, result frames"),
    ("convoeval/judges/holistic.py", "", "judges: prompts, transcript rendering, result frames"),
    ("convoeval/judges/scoring.py", "", "scoring (score_frame)"),
    ("convoeval/store/fixtures.py", "seed_run", "store: seed fixtures"),
    ("convoeval/store/fixtures.py", "cleanup_run", "store: clean up"),
    ("convoeval/store/fixtures.py", "finish_run", "store: clean up"),
    ("convoeval/store/assertions.py", "", "store: assertions"),
    ("convoeval/conversation.py", "write", "store: log messages"),
    ("convoeval/conversation.py", "transcript", "result frames (typed_frame)"),
    ("convoeval/frames/", "typed_frame", "result frames (typed_frame)"),
    ("convoeval/batch.py", "write_run", "results file (write_run)"),
    ("convoeval/batch.py", "load_results", "end of run: load_results"),
    ("convoeval/runs.py", "save_outputs", "end of run: Parquet, CSV, report.json"),
    # The same stages after the pipeline's move (issue #11 onwards); the old paths stay for old checkouts.
    ("convoeval/pipeline/results.py", "write_conversation", "results file (write_run)"),
    ("convoeval/pipeline/results.py", "load_results", "end of run: load_results"),
    ("convoeval/pipeline/results.py", "load_run", "end of run: load_results"),  # its name since issue #36
    ("convoeval/pipeline/execute.py", "save_outputs", "end of run: Parquet, CSV, report.json"),
    ("convoeval/fidelity/", "", "simulator gate (fidelity checks on every message)"),
    ("convoeval/gate.py", "", "simulator gate (fidelity checks on every message)"),
    ("convoeval/llm/http_transport.py", "", "LLM client stack in LangChain's own tasks (openai SDK, httpx, LangChain)"),
    ("convoeval/llm/chat_classes.py", "", "LLM client stack in LangChain's own tasks (openai SDK, httpx, LangChain)"),
    ("convoeval/summary.py", "", "end of run: summary"),
    ("convoeval/pipeline/summary.py", "", "end of run: summary"),
    ("convoeval/agents/", "", "agent under test (peer_app via the adapter)"),
    ("peers/peer_app.py", "", "agent under test (peer_app via the adapter)"),
)
_CLIENT = ("/langchain_core/", "/langchain_openai/", "/openai/", "/httpx", "/httpcore", "/h11/", "/anyio/")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")


def parse(path: Path) -> list[tuple[list[tuple[str, str]], int]]:
    """py-spy's raw (collapsed) output: per line the stack, root first, as (function, file), and its samples."""
    stacks = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = []
        for text in stack.split(";"):
            match = _FRAME.match(text)
            if match:
                frames.append((match["function"], match["file"]))
        if frames and count.isdigit():
            stacks.append((frames, int(count)))
    return stacks


def owner(frames: list[tuple[str, str]]) -> str:
    """The package of a sample: imports anywhere on the stack, else the innermost frame of a known package."""
    if any("importlib" in file for _, file in frames):
        return "imports (start-up and lazy)"
    for _function, file in reversed(frames):
        for fragment, label in PACKAGES:
            if fragment in file:
                return label
    return "other (stdlib, pydantic, json, ...)"


def stage(frames: list[tuple[str, str]]) -> str:
    """The convoeval stage of a sample (innermost stage function), or what runs outside any convoeval frame."""
    if any("importlib" in file for _, file in frames):
        return "imports (start-up and lazy)"
    for function, file in reversed(frames):
        for fragment, name, label in STAGES:
            if fragment in file and (not name or function == name):
                return label
    if any("/convoeval/" in file for _, file in frames):
        return "convoeval: other runner code"
    if any(c in file for _, file in frames for c in _CLIENT):
        return "LLM client stack in LangChain's own tasks (openai SDK, httpx, LangChain)"
    return "(no convoeval frame: event loop, thread hops, interpreter)"


def tables(stacks: list[tuple[list[tuple[str, str]], int]], rate: int, size: int, top: int,
           cpu_s: float) -> dict[str, Any]:
    """The three groupings: samples as seconds holding the GIL, share, and ms of CPU per conversation.

    ``ms_per_conversation`` spreads ``cpu_s`` (an unprofiled run's CPU) by share: on a loaded machine the thread
    holding the GIL is sometimes descheduled while holding it, so GIL seconds overstate CPU; shares hold.
    """
    total = sum(n for _, n in stacks) or 1
    by_package: Counter[str] = Counter()
    by_stage: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    for frames, n in stacks:
        by_package[owner(frames)] += n
        by_stage[stage(frames)] += n
        function, file = frames[-1]
        short = re.sub(r"^.*/(site-packages|python3\.\d+|wt-[\w-]+|main)/", "", file)
        by_function[f"{function} ({short})"] += n

    def rows(counter: Counter[str], key: str, limit: int | None = None) -> list[dict[str, Any]]:
        return [{key: k, "gil_s": round(v / rate, 2), "ms_per_conversation": round(1000 * cpu_s * v / total / size, 2),
                 "share": f"{100 * v / total:.1f}%"} for k, v in counter.most_common(limit)]

    return {"samples": total, "gil_s": round(total / rate, 2), "by_package": rows(by_package, "package"),
            "by_stage": rows(by_stage, "stage"), "top_functions": rows(by_function, "function (self)", top),
            "client_share": by_package["LLM client stack"] / total}


def unprofiled_cpu_s(size: int, tool: str = "convoeval", config: str = "default") -> float | None:
    """The CPU of ``bench_peers.py``'s run of this tool, configuration and size, if ``results/peers.json`` has one."""
    path = RESULTS / "peers.json"
    if not path.exists():
        return None
    rows = json.loads(path.read_text(encoding="utf-8")).get("rows", [])
    found = [r["cpu_s"] for r in rows if r["tool"] == tool and r["config"] == config
             and r["conversations"] == size and r["returncode"] == 0]
    return min(found) if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200, help="conversations, all in flight")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=20, help="functions in the self-time table")
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or "/tmp/prof/bin/py-spy", help="py-spy binary")
    parser.add_argument("--cpu-s", type=float, default=None,
                        help="CPU seconds of an unprofiled run of this size (default: results/peers.json's)")
    parser.add_argument("--save", default="profile_peers")
    parser.add_argument("--tool", choices=("convoeval", "openevals"), default="convoeval",
                        help="which tool to profile (openevals: benchmarks/peers/openevals_run.py in .venv-peers)")
    parser.add_argument("--openevals", default="threads", choices=sorted(OPENEVALS_CONFIGS),
                        help="openevals' configuration (bench_peers.py's names)")
    parser.add_argument("--raw", type=Path, default=None, help="also keep py-spy's raw (collapsed) stacks here")
    args = parser.parse_args(argv)
    if not Path(args.py_spy).exists():
        parser.error(f"py-spy not found at {args.py_spy}: `pip install --target /tmp/prof py-spy` (not into .venv)")

    bytecode.prepare([REPO])  # as an install has them (benchmarks/bytecode.py): imports not compiled from source
    with temp_folder("profile") as folder, FakeLLM(latency=args.latency, turns=args.turns, lean=True,
                                                   lifetime=1800) as llm:
        env = clean_env(PYTHONPATH=f"{REPO}:{PEERS_DIR}", CONVOEVAL_HOME=str(folder / "state"),
                        CONVOEVAL_CACHE_PATH=str(folder / "cache.sqlite"),
                        CONVOEVAL_STORE_URL=f"sqlite:///{folder / 'store.db'}", OPENAI_BASE_URL=llm.base_url,
                        OPENAI_MODEL="fake-model", CONVOEVAL_MAX_CONCURRENCY=str(max(16, 3 * args.size)))
        raw = folder / "profile.txt"
        spy = [args.py_spy, "record", "--gil", "--nonblocking", "--rate", str(args.rate), "--format", "raw",
               "--full-filenames", "-o", str(raw), "--"]
        if args.tool == "openevals":
            env = clean_env()
            command = [*spy, str(PEERS_PYTHON), str(PEERS_DIR / "openevals_run.py"), "--base-url", llm.base_url,
                       "--conversations", str(args.size), *OPENEVALS_CONFIGS[args.openevals][0]]
        else:
            command = [*spy, *convoeval_command(), "run", "--scenario", SCENARIO, "--scenarios-dir", SCENARIOS_DIR,
                       "--trials", str(args.size), "--target", TARGET, "--concurrency", str(args.size), "--out",
                       str(folder / "results"), "--no-progress"]
        load_before = loadavg()
        done = run_process(command, env=env, timeout=max(600.0, 3.0 * args.size))
        calls = llm.stats()["requests"]
        if done.returncode != 0 or not raw.exists():
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        config = args.openevals if args.tool == "openevals" else "default"
        cpu = args.cpu_s or unprofiled_cpu_s(args.size, args.tool, config)
        cpu_source = "--cpu-s" if args.cpu_s else f"results/peers.json (unprofiled run, {args.tool} {config})"
        if cpu is None:
            cpu, cpu_source = done.cpu_s, "this profiled run (py-spy's own CPU included)"
        result = tables(parse(raw), args.rate, args.size, args.top, cpu)
        if args.raw:
            shutil.copyfile(raw, args.raw)
    own_ms = 1000 * cpu * (1 - result["client_share"]) / args.size
    headline = {"tool": args.tool, "conversations": args.size, "llm_calls": calls, "profiled_wall_s": round(done.wall_s, 1),
                "gil_s_sampled": result["gil_s"], "cpu_s": round(cpu, 2), "cpu_source": cpu_source,
                "client_stack_share": f"{100 * result['client_share']:.0f}%",
                f"{args.tool}_own_cpu_ms_per_conversation": round(own_ms, 1),
                "load_before": load_before, "load_after": loadavg()}
    path = save(args.save, {"headline": headline, **result})
    for rows in ([headline], result["by_package"], result["by_stage"], result["top_functions"]):
        print(markdown_table(rows), end="\n\n")
    print(f"written: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
