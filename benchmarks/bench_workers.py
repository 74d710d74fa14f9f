"""Workers: ``convoeval run`` on one process, on ``--workers 2``, and on a real Dask cluster of separate processes.

Needs ``convoeval run --workers N`` and ``--cluster ADDR``; with a convoeval that lacks them it says so and exits 0.
The workload is ``bench_peers.py``'s (one scenario, a plain-Python agent, 5 simulator calls and 2 judges per
conversation, the lean stub ``benchmarks/stub_llm.py`` in a process of its own):

1. **Processes** — CPU-bound: the stub answers at once (``--latency 0``), ``--size`` conversations (500): one
   process against ``--workers 2``, each as a whole process (wall from spawn to exit, CPU of the process tree).
   The target on this 2-core machine is a speed-up of 1.8× or more. The stub shares the two cores (its CPU is
   reported beside).
2. **Cluster** — ``dask scheduler --host 127.0.0.1 --port <free>`` and two ``dask worker tcp://127.0.0.1:<port>``
   started as separate processes (same environment as the client: endpoint, store, cache path), then
   ``--cluster-size`` conversations at ``--cluster-latency``: once in one process (the reference), once with
   ``--cluster tcp://127.0.0.1:<port>`` recording the response cache, and once more on the cluster with
   ``CONVOEVAL_CACHE=replay``. The cluster's scores must equal the one-process run's (run ids aside) and the replay
   must reach the stub 0 times. Every process is killed at the end, and each step is bounded in time.

Usage:
    .venv/bin/python benchmarks/bench_workers.py [--size 500] [--cluster-size 60] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_peers import PEERS_DIR, SCENARIO, SCENARIOS_DIR, TARGET, convoeval_command
from benchmarks.common import (
    REPO,
    FakeLLM,
    clean_env,
    loadavg,
    machine,
    markdown_table,
    process_tree_cpu_s,
    run_process,
    save,
    temp_folder,
)

#: scores.csv columns that are per-run identifiers or free text, not scores.
_NOT_SCORES = ("run_id", "error")


def missing_flags() -> list[str]:
    """The flags this benchmark needs that ``convoeval run --help`` does not list."""
    done = run_process([*convoeval_command(), "run", "--help"], env=clean_env(PYTHONPATH=str(REPO)), timeout=120)
    return [flag for flag in ("--workers", "--cluster") if flag not in done.stdout]


def state_env(folder: Path, llm: FakeLLM, size: int, **extra: str) -> dict[str, str]:
    """The environment of every process of one configuration: isolated state, the stub, no endpoint limit."""
    return clean_env(
        PYTHONPATH=f"{REPO}:{PEERS_DIR}",
        CONVOEVAL_HOME=str(folder / "state"),
        CONVOEVAL_CACHE_PATH=str(folder / "cache.sqlite"),
        CONVOEVAL_STORE_URL=f"sqlite:///{folder / 'store.db'}",
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_MODEL="fake-model",
        CONVOEVAL_MAX_CONCURRENCY=str(max(16, 3 * size)),
        **extra,
    )


def run_once(label: str, size: int, llm: FakeLLM, env: dict[str, str], out: Path, extra: list[str],
             timeout: float, *, others: Sequence[int] = ()) -> dict[str, Any]:
    """One ``convoeval run`` of ``size`` conversations; its row (``others``: pids whose CPU counts too)."""
    before, stub_cpu = llm.stats()["requests"], llm.cpu_s()
    others_cpu = sum(process_tree_cpu_s(pid) for pid in others)
    load_before = loadavg()
    args = [*convoeval_command(), "run", "--scenario", SCENARIO, "--scenarios-dir", SCENARIOS_DIR,
            "--trials", str(size), "--target", TARGET, "--concurrency", str(size), "--out", str(out),
            "--no-progress", *extra]
    done = run_process(args, env=env, timeout=timeout)
    calls = llm.stats()["requests"] - before
    cluster_cpu = sum(process_tree_cpu_s(pid) for pid in others) - others_cpu
    row = {"run": label, "conversations": size, "wall_s": round(done.wall_s, 2),
           "cpu_s": round(done.cpu_s + cluster_cpu, 2), "cluster_processes_cpu_s": round(cluster_cpu, 2),
           "cpu_ms_per_conversation": round(1000 * (done.cpu_s + cluster_cpu) / size, 1),
           "stub_calls": calls, "stub_cpu_s": round(llm.cpu_s() - stub_cpu, 2),
           "completed": len(scores(out)), "returncode": done.returncode, "timed_out": done.timed_out,
           "load_before": load_before, "load_after": loadavg()}
    if done.returncode or done.timed_out:
        row["stderr_tail"] = done.stderr[-1500:]
    print(f"  {label:28} wall {row['wall_s']:7.2f} s  cpu {row['cpu_s']:7.2f} s  calls {calls:5}  "
          f"rc {done.returncode}  load {load_before[0]}→{row['load_after'][0]}", flush=True)
    return row


def scores(out: Path) -> list[tuple[Any, ...]]:
    """The run's scores without run ids, one tuple per conversation, sorted (for comparing two runs)."""
    path = out / "data" / "scores.csv"
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(tuple((k, v) for k, v in sorted(r.items()) if k not in _NOT_SCORES) for r in rows)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def dask_cluster(env: dict[str, str], workers: int, nthreads: int, log: Path) -> Iterator[tuple[str, list[int]]]:
    """``dask scheduler`` and ``workers`` × ``dask worker`` as separate processes on 127.0.0.1; all killed after.

    Yields:
        The scheduler's address and the pids of every process of the cluster.
    """
    dask = Path(sys.executable).parent / "dask"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    log.mkdir(parents=True, exist_ok=True)

    def start(name: str, args: list[str]) -> None:
        with (log / f"{name}.log").open("wb") as fh:
            procs.append(subprocess.Popen(args, env=env, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT,
                                          start_new_session=True))

    try:
        start("scheduler", [str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                            "--no-dashboard", "--idle-timeout", "3600"])
        wait_for_port(port, timeout=60)
        for i in range(workers):
            start(f"worker-{i}", [str(dask), "worker", address, "--nthreads", str(nthreads), "--nworkers", "1",
                                  "--no-dashboard", "--name", f"bench-{i}", "--death-timeout", "60"])
        wait_for_workers(address, workers, timeout=120, log=log)
        yield address, [p.pid for p in procs]
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


def wait_for_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"the dask scheduler did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def wait_for_workers(address: str, count: int, timeout: float, log: Path) -> None:
    """Block until ``count`` workers are registered (through a distributed Client, else the workers' logs)."""
    try:
        from distributed import Client
    except ImportError:
        Client = None  # noqa: N806
    if Client is not None:
        with Client(address, timeout=timeout) as client:
            client.wait_for_workers(count, timeout=timeout)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = sum("Registered to" in p.read_text(errors="replace") for p in log.glob("worker-*.log"))
        if ready >= count:
            return
        time.sleep(0.5)
    raise RuntimeError(f"{count} dask workers did not register with {address} within {timeout:.0f} s")


def processes(args: argparse.Namespace, folder: Path) -> list[dict[str, Any]]:
    """One process against ``--workers 2``, CPU-bound (stub latency 0)."""
    rows = []
    timeout = max(600.0, 2.0 * args.size)
    with FakeLLM(latency=0.0, turns=args.turns, lean=True, lifetime=4 * timeout) as llm:
        for label, extra in (("one process", []), (f"--workers {args.workers}", ["--workers", str(args.workers)])):
            sub = folder / label.replace(" ", "-").strip("-")
            sub.mkdir(parents=True)
            rows.append(run_once(label, args.size, llm, state_env(sub, llm, args.size), sub / "results", extra,
                                 timeout))
    if len(rows) == 2 and rows[1]["wall_s"]:
        rows[1]["speedup"] = round(rows[0]["wall_s"] / rows[1]["wall_s"], 2)
    return rows


def cluster(args: argparse.Namespace, folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Scores on a real Dask cluster against one process, then a replay from the cluster's cache."""
    size, rows = args.cluster_size, []
    timeout = max(300.0, 3.0 * size)
    with FakeLLM(latency=args.cluster_latency, turns=args.turns, lean=True, lifetime=6 * timeout + 600) as llm:
        reference = folder / "reference"
        reference.mkdir(parents=True)
        rows.append(run_once("one process (reference)", size, llm, state_env(reference, llm, size),
                             reference / "results", [], timeout))
        shared = folder / "cluster"  # the client and the workers share the state folder, store and cache
        env = state_env(shared, llm, size)
        with dask_cluster(env, args.cluster_workers, args.nthreads, shared / "logs") as (address, pids):
            rows.append(run_once("cluster, cache rw", size, llm, env, shared / "results", ["--cluster", address],
                                 timeout, others=pids))
            rows.append(run_once("cluster, cache replay", size, llm, {**env, "CONVOEVAL_CACHE": "replay"},
                                 shared / "replay", ["--cluster", address], timeout, others=pids))
    one, on_cluster, replayed = (scores(reference / "results"), scores(shared / "results"),
                                 scores(shared / "replay"))
    checks = {
        "cluster_scores_equal_one_process": bool(one) and one == on_cluster,
        "replay_scores_equal": bool(one) and one == replayed,
        "replay_stub_calls": rows[2]["stub_calls"],
        "replay_call_free": rows[2]["stub_calls"] == 0,
        "conversations_compared": len(one),
    }
    return rows, checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500, help="conversations of the one-vs-two-processes runs")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the second run")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--cluster-size", type=int, default=60, help="conversations of the cluster runs")
    parser.add_argument("--cluster-latency", type=float, default=0.2, help="stub latency of the cluster runs")
    parser.add_argument("--cluster-workers", type=int, default=2, help="dask worker processes")
    parser.add_argument("--nthreads", type=int, default=1, help="threads per dask worker")
    parser.add_argument("--skip-processes", action="store_true")
    parser.add_argument("--skip-cluster", action="store_true")
    parser.add_argument("--save", default="workers")
    args = parser.parse_args(argv)

    missing = missing_flags()
    if missing:
        print(f"bench_workers: not available in this convoeval (`convoeval run` has no {', '.join(missing)}); "
              "nothing measured")
        return 0
    start_machine = machine()
    print(f"machine: nproc {start_machine['nproc']}, load {start_machine['loadavg']}", flush=True)
    payload: dict[str, Any] = {"machine_at_start": start_machine, "turns": args.turns}
    with temp_folder("workers") as folder:
        if not args.skip_processes:
            payload["processes"] = processes(args, folder)
            print(markdown_table(payload["processes"]), end="\n\n")
        if not args.skip_cluster:
            try:
                payload["cluster"], payload["cluster_checks"] = cluster(args, folder)
            except RuntimeError as exc:  # the cluster did not come up: say so, keep the other figures
                payload["cluster_error"] = str(exc)
                print(f"cluster: {exc}", file=sys.stderr)
            else:
                print(markdown_table(payload["cluster"]), end="\n\n")
                print(markdown_table([payload["cluster_checks"]]), end="\n\n")
    path = save(args.save, payload)
    print(f"written: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
