"""What every benchmark shares: an isolated state folder, the fake LLM process, the machine, timing, result files.

Nothing here touches the user's state: every benchmark runs inside ``isolated_env`` (its own ``CONVOEVAL_HOME``,
cache and store in a temporary folder, no API key, ``OPENAI_BASE_URL`` on 127.0.0.1), and every server it starts
listens on 127.0.0.1 and stops by itself.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import platform
import resource
import select
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "evals" / "scenarios"
RESULTS = REPO / "benchmarks" / "results"

#: Variables that could point a benchmark at a real endpoint, a key, or the user's state; all cleared first.
_CLEARED_PREFIXES = ("OPENAI_", "CONVOEVAL_", "SUPABASE_", "AZURE_OPENAI")


@contextlib.contextmanager
def isolated_env(folder: Path, **overrides: str) -> Iterator[dict[str, str]]:
    """Point convoeval at ``folder`` for its state, cache and store, with no key and no endpoint; restore after.

    Args:
        folder: A temporary folder (``state/``, ``cache.sqlite`` and ``store.db`` go there).
        overrides: More variables to set, e.g. ``OPENAI_BASE_URL``.

    Yields:
        The variables set.
    """
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES):
            del os.environ[name]
    values = {
        "CONVOEVAL_HOME": str(folder / "state"),
        "CONVOEVAL_CACHE_PATH": str(folder / "cache.sqlite"),
        "CONVOEVAL_STORE_URL": f"sqlite:///{folder / 'store.db'}",
        "CONVOEVAL_CACHE": "off",
        "OPENAI_MODEL": "fake-model",
        **overrides,
    }
    os.environ.update(values)
    _forget_process_caches()
    try:
        yield values
    finally:
        os.environ.clear()
        os.environ.update(saved)
        _forget_process_caches()


def _forget_process_caches() -> None:
    """Drop clients and caches built under other settings (convoeval keeps one per configuration)."""
    from convoeval.llm import cache, models

    models.clear_model_cache()
    for stored in cache._DEFAULTS.values():
        stored.close()
    cache._DEFAULTS.clear()


class FakeLLM:
    """``benchmarks/fake_llm.py`` in a child process: an OpenAI-compatible server on 127.0.0.1.

    Args:
        latency: Seconds before each answer.
        turns: Patient messages per conversation (the last one says ``[GOAL_COMPLETE]``).
        usage: Fixed ``(prompt_tokens, completion_tokens)`` per reply; default word counts.
        lifetime: The child exits by itself after this many seconds.
        lean: Serve with ``benchmarks/stub_llm.py`` (one asyncio loop, a fraction of the CPU per request) instead
            of ``fake_llm.py``; same answers. Its ``stats()`` add ``by_kind`` and the server's own ``cpu_s``.

    Example:
        >>> with FakeLLM(latency=0.2, turns=6) as llm:
        ...     llm.base_url, llm.stats()["requests"]
    """

    def __init__(self, *, latency: float = 0.2, turns: int = 6, usage: tuple[int, int] | None = None,
                 lifetime: float = 1800.0, lean: bool = False) -> None:
        self.latency, self.turns, self.usage, self.lifetime = latency, turns, usage, lifetime
        self.script = "stub_llm.py" if lean else "fake_llm.py"
        self.base_url = ""
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Self:
        args = [sys.executable, str(REPO / "benchmarks" / self.script), "--latency", str(self.latency),
                "--turns", str(self.turns), "--lifetime", str(self.lifetime)]
        if self.usage:
            args += ["--usage", f"{self.usage[0]},{self.usage[1]}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED_PREFIXES)}
        env["PYTHONPATH"] = str(REPO)
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        line = self._readline(timeout=30)
        if not line.startswith("READY "):
            self.__exit__()
            raise RuntimeError(f"the fake LLM server did not start: {line!r}")
        self.base_url = line.split()[1]
        return self

    def stats(self) -> dict[str, Any]:
        """The server's counters: ``requests``, ``replies``, ``faults``, ``max_in_flight``."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write("stats\n")
        self._proc.stdin.flush()
        return json.loads(self._readline(timeout=10))

    def cpu_s(self) -> float:
        """The server process's own CPU seconds so far (user + system, from ``/proc``)."""
        assert self._proc is not None
        return process_cpu_s(self._proc.pid)

    def reset_peak(self) -> None:
        """Start counting ``max_in_flight`` afresh (the server keeps the most requests it had at once)."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write("reset-peak\n")
        self._proc.stdin.flush()
        self._readline(timeout=10)

    def _readline(self, timeout: float) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        return self._proc.stdout.readline().strip() if ready else ""

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(BrokenPipeError, OSError):
            proc.stdin.write("quit\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (``/proc/<pid>/stat``), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree_cpu_s(pid: int) -> float:
    """CPU seconds of a live process and of its live descendants (a ``dask worker``'s nanny runs the worker in a
    child process); children that already exited are counted only if the process reaped them."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        total += process_cpu_s(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                pending += [int(child) for child in task.read_text().split()]
    return total


def conversational_scenarios(*, max_turns: int | None = None) -> list[Any]:
    """The repository's conversational scenarios (every agent), optionally with ``max_turns`` overridden."""
    from convoeval.scenarios import load_scenarios

    found = load_scenarios(str(SCENARIOS), type="conversational")
    if max_turns is not None:
        found = [s.model_copy(update={"max_turns": max_turns}) for s in found]
    return found


# ── measuring ──

_LOOP: Any = None


def run(coro: Any) -> Any:
    """Run ``coro`` on the benchmark's one event loop, in this thread (so ``cProfile`` sees it).

    One loop for the whole process: LangChain shares one async HTTP client per endpoint across every
    ``ChatOpenAI`` it builds, and that client's connections belong to the loop that opened them, so a second
    ``asyncio.run`` would find them on a closed loop.
    """
    import asyncio

    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
        atexit.register(_close_loop, _LOOP)
    return _LOOP.run_until_complete(coro)


def _close_loop(loop: Any) -> None:
    """Shut the benchmark's loop down as ``asyncio.run`` would: its async generators first, which is where
    convoeval's HTTP transports close their aiohttp sessions (else aiohttp reports each one unclosed at exit)."""
    if not loop.is_closed():
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()



@dataclass
class Timing:
    """Wall and CPU seconds of a block (CPU of every thread of this process: the loop, the thread pool, SQLite)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    _start: tuple[float, float] = field(default=(0.0, 0.0), repr=False)


@contextlib.contextmanager
def timed() -> Iterator[Timing]:
    """Measure the wall and process CPU time of a block.

    Example:
        >>> with timed() as t:
        ...     run()
        >>> t.wall_s, t.cpu_s
    """
    timing = Timing(_start=(time.perf_counter(), time.process_time()))
    try:
        yield timing
    finally:
        timing.wall_s = time.perf_counter() - timing._start[0]
        timing.cpu_s = time.process_time() - timing._start[1]


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    """This process's resident set size now, in MiB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def chains(calls: Any) -> Any:
    """Each conversation's sequential chain of LLM calls, from the ``calls`` frame of ``load_results``.

    The simulator's calls follow one another; the rubric and holistic judges (and their samples) run together
    once the conversation ends, so they add one link. Retried HTTP attempts are counted too.

    Returns:
        One row per conversation: ``scenario``, ``seed``, ``trial``, ``simulator_calls``, ``judge_calls``,
        ``chain`` (links in the longest sequential chain) and ``extra_attempts``.
    """
    import pandas as pd

    frame = pd.DataFrame(calls)
    rows = []
    for (scenario, seed, trial), group in frame.groupby(["scenario", "seed", "trial"], dropna=False):
        sim = group[group["role"] == "simulator"]
        judges = group[group["role"] == "judge"]
        rows.append({
            "scenario": scenario, "seed": seed, "trial": trial,
            "simulator_calls": len(sim), "judge_calls": len(judges),
            "chain": len(sim) + (1 if len(judges) else 0),
            "extra_attempts": int((group["attempts"].clip(lower=1) - 1).sum()),
        })
    return pd.DataFrame(rows)


@dataclass
class ProcessRun:
    """A finished child process: exit code, wall seconds, CPU of its whole tree, its output."""

    args: list[str]
    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    stdout: str
    stderr: str
    timed_out: bool

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds of the process and of every descendant it waited for."""
        return self.user_s + self.sys_s


def run_process(args: Sequence[str], *, env: Mapping[str, str], timeout: float, cwd: Path = REPO) -> ProcessRun:
    """Run a command as a whole process, bounded in time, and measure it as a user would see it.

    Wall time runs from spawning to exit (interpreter start-up and imports included); CPU is the ``wait4``
    resource usage of the child, which covers its threads and the children it reaped. Output goes to temporary
    files (no pipe to fill). On timeout the child's whole process group is killed and ``timed_out`` is set.
    """
    import signal
    import threading

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(args), env=dict(env), cwd=cwd, stdout=out, stderr=err, text=True,
                                start_new_session=True)
        reaped: dict[str, Any] = {}

        def reap() -> None:
            _, status, usage = os.wait4(proc.pid, 0)
            reaped.update(wall=time.perf_counter() - started, status=status, usage=usage)

        waiter = threading.Thread(target=reap, daemon=True)
        waiter.start()
        waiter.join(timeout)
        timed_out = waiter.is_alive()
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            waiter.join(30)
        proc.returncode = os.waitstatus_to_exitcode(reaped["status"]) if "status" in reaped else -9
        usage = reaped.get("usage")
        out.seek(0)
        err.seek(0)
        return ProcessRun(args=list(args), returncode=proc.returncode, wall_s=reaped.get("wall", float(timeout)),
                          user_s=usage.ru_utime if usage else 0.0, sys_s=usage.ru_stime if usage else 0.0,
                          stdout=out.read(), stderr=err.read(), timed_out=timed_out)


def loadavg() -> list[float]:
    """The 1, 5 and 15-minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without anything that could reach a real endpoint, key or user state."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_CLEARED_PREFIXES + ("LANGSMITH_", "LANGCHAIN_"))}
    env.update(overrides)
    return env


# ── reporting ──


def machine() -> dict[str, Any]:
    """Where a figure was measured: cores, memory, CPU, Python, commit, date, load."""
    mem_total = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    cpu = ""
    with contextlib.suppress(OSError):
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), "")
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--", "convoeval"))
    return {
        "nproc": os.cpu_count(),
        "memory": mem_total,
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": commit + ("+uncommitted convoeval changes" if dirty else ""),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "busiest_other_processes": _busiest_processes(),
    }


def _busiest_processes(count: int = 5) -> list[str]:
    """The other processes using the most CPU right now (what else was running), as ``"%cpu command"``."""
    try:
        done = subprocess.run(["ps", "-eo", "pid,pcpu,args", "--sort=-pcpu", "--no-headers"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    rows = []
    for line in done.stdout.splitlines():
        pid, cpu, args = (line.split(None, 2) + ["", ""])[:3]
        if int(pid) != os.getpid() and float(cpu) >= 1.0:
            rows.append(f"{cpu}% {args[:100]}")
    return rows[:count]


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False)
        return done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def command_line() -> str:
    """The command that reproduces this run, as typed from the repository root."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return shlex.join([".venv/bin/python", str(shown), *sys.argv[1:]])


def save(name: str, payload: Mapping[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` with the command and the machine beside the figures."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {"benchmark": name, "command": command_line(), "machine": machine(), **payload}
    path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A Markdown table of ``rows`` (the keys of the first row are the columns)."""
    if not rows:
        return "(no rows)"
    columns = list(rows[0])

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


@contextlib.contextmanager
def temp_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder removed afterwards (``--keep`` in a benchmark keeps it for inspection)."""
    with tempfile.TemporaryDirectory(prefix=f"convoeval-bench-{prefix}-") as folder:
        yield Path(folder)


# ── profiling ──


@contextlib.contextmanager
def inline_threads() -> Iterator[None]:
    """Run ``asyncio.to_thread`` work inline on the event loop's thread, so one ``cProfile`` sees all of it.

    Only for profiling: it serialises the store's work onto the loop, which changes the timing but not the CPU
    spent, and lets the profile attribute the thread pool's work (SQLite, fixtures) to its callers.
    """
    import asyncio

    original = asyncio.to_thread

    async def inline(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    asyncio.to_thread = inline  # type: ignore[assignment]
    try:
        yield
    finally:
        asyncio.to_thread = original  # type: ignore[assignment]


#: Where self time goes, by the module that spends it: first matching prefix wins.
PACKAGE_GROUPS: tuple[tuple[str, str], ...] = (
    ("convoeval/agents", "convoeval: reference clinic agents"),
    ("convoeval/store", "convoeval: fixtures store"),
    ("convoeval/frames", "convoeval: frames (DataFrame building)"),
    ("convoeval/judges", "convoeval: judges (prompts, parsing, scoring)"),
    ("convoeval/", "convoeval: engine, LLM layer, cache, batch"),
    ("langchain_openai", "langchain-openai"),
    ("langchain_core", "langchain-core"),
    ("openai/", "openai SDK"),
    ("httpx", "httpx / httpcore"),
    ("httpcore", "httpx / httpcore"),
    ("h11", "httpx / httpcore"),
    ("anyio", "httpx / httpcore"),
    ("pandas", "pandas"),
    ("pyarrow", "pandas"),
    ("numpy", "pandas"),
    ("sqlalchemy", "SQLAlchemy + sqlite3"),
    ("sqlite3", "SQLAlchemy + sqlite3"),
    ("pydantic", "pydantic"),
    ("tenacity", "tenacity (retries)"),
    ("asyncio", "asyncio event loop"),
    ("selectors", "asyncio event loop"),
    ("json", "json"),
    ("typing", "typing (mostly the openai SDK's request transform)"),
)


def profile_by_package(path: Path | str, total_calls: int) -> list[dict[str, Any]]:
    """Self time of a ``cProfile`` dump grouped by package, per LLM call, largest first.

    Built-in functions (``{method 'execute' of 'sqlite3.Cursor'}``) are attributed to the package of the caller
    that spends the most time in them, so SQLite's C code counts as the store's and ``json.dumps``'s C code as json.
    """
    import pstats

    stats = pstats.Stats(str(path))
    groups: dict[str, float] = {}
    total = 0.0
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        total += tottime
        where = filename
        if filename == "~" and callers:  # a C function: charge it to its heaviest caller's file
            where = max(callers.items(), key=lambda item: item[1][2])[0][0]
        group = next((label for prefix, label in PACKAGE_GROUPS if prefix in where), "other (stdlib, imports, ...)")
        groups[group] = groups.get(group, 0.0) + tottime
    rows = [
        {"where": g, "cpu_ms_per_call": round(1000 * s / max(total_calls, 1), 3), "share": f"{100 * s / total:.0f}%"}
        for g, s in sorted(groups.items(), key=lambda item: -item[1])
    ]
    rows.append({"where": "total", "cpu_ms_per_call": round(1000 * total / max(total_calls, 1), 3), "share": "100%"})
    return rows


#: convoeval's stages, by the function that starts them; a sample belongs to the innermost stage on its stack.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("convoeval/llm/call.py", "acall_model", "LLM calls (acall_model: cache, client stack, HTTP, parsing)"),
    ("convoeval/simulator/", "apatient_turn", "simulator prompt building and parsing"),
    ("convoeval/judges/", "ajudge_rubric", "judges: prompts, transcript rendering, result frames"),
    ("convoeval/judges/", "ajudge_holistic", "judges: prompts, transcript rendering, result frames"),
    ("convoeval/judges/scoring.py", "score_frame", "scoring (score_frame)"),
    ("convoeval/agents/", "respond", "reference clinic agent (incl. its store queries)"),
    ("convoeval/store/fixtures.py", "seed_run", "store: seed fixtures"),
    ("convoeval/store/fixtures.py", "cleanup_run", "store: clean up"),
    ("convoeval/store/fixtures.py", "finish_run", "store: clean up"),
    ("convoeval/store/assertions.py", "check_assertions", "store: assertions"),
    ("convoeval/store/conversations.py", "record_message", "store: log messages"),
    ("convoeval/frames/", "typed_frame", "result frames (typed_frame)"),
    ("convoeval/pipeline/results.py", "write_conversation", "results file (write_run)"),
    ("convoeval/", "", "convoeval: other runner code"),
)
_IDLE = ("selectors.py", "select")
#: LangChain runs each generation in a task of its own (``asyncio.gather``), so its client work has no convoeval
#: frame above it; these packages mark it.
_CLIENT_PACKAGES = ("langchain_core", "langchain_openai", "/openai/", "httpx", "httpcore", "anyio", "h11")


def stage_breakdown(session: Any, total_calls: int) -> list[dict[str, Any]]:
    """Where a pyinstrument session's samples went, by convoeval stage, in ms per LLM call (idle waits excluded).

    Args:
        session: ``pyinstrument.Profiler().last_session`` of a run made with ``inline_threads``.
        total_calls: LLM calls made in that run.

    Returns:
        Rows ``stage``, ``ms_per_call``, ``share``, largest first, then a total.
    """
    root = session.root_frame()
    totals: dict[str, float] = {}

    def walk(frame: Any, stage: str) -> None:
        path = frame.file_path or ""
        if path.endswith(_IDLE[0]) and frame.function == _IDLE[1]:
            return  # the loop waiting for sockets: not work
        for prefix, function, label in STAGES:
            if prefix in path and (not function or frame.function == function):
                # the runner's own code only counts as "other" when no stage encloses it
                stage = label if function or stage.startswith("(") else stage
                break
        else:
            if stage.startswith("(") and any(p in path for p in _CLIENT_PACKAGES):
                stage = "LLM client stack in LangChain's own tasks (openai SDK, httpx, LangChain)"
        totals[stage] = totals.get(stage, 0.0) + frame.total_self_time
        for child in frame.children:
            walk(child, stage)

    if root is not None:
        walk(root, "(no convoeval frame: event loop, sockets, thread hops)")
    total = sum(totals.values()) or 1.0
    rows = [
        {"stage": s, "ms_per_call": round(1000 * t / max(total_calls, 1), 3), "share": f"{100 * t / total:.0f}%"}
        for s, t in sorted(totals.items(), key=lambda item: -item[1])
    ]
    rows.append({"stage": "total (busy)", "ms_per_call": round(1000 * total / max(total_calls, 1), 3),
                 "share": "100%"})
    return rows
