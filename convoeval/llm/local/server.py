"""The local model's server process: started once for the machine, checked, found again, stopped."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from convoeval._util.paths import file_lock, state_dir
from convoeval.llm.local.weights import LocalModelError, ensure_model, local_model_name
from convoeval.local_server.idle import IDLE_TIMEOUT_ENV, STATE_FILE_ENV, ask_idle, idle_note, parse_idle_timeout

# 2: the server stops itself when idle; a server of launcher 1 (never stops) is replaced by the next call.
_LAUNCHER = "convoeval.local_server/2"


def _llm_dir() -> Path:
    path = state_dir() / "llm"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _state_file() -> Path:
    return _llm_dir() / "server.json"


def _server_settings(model: Path) -> dict[str, Any]:
    """Everything that decides what the server answers; a running server with other settings is replaced."""
    return {
        "model_path": str(model.resolve()),
        "model_name": local_model_name(model),
        "n_ctx": int(os.environ.get("CONVOEVAL_LOCAL_CTX", "8192")),
        "n_threads": int(os.environ.get("CONVOEVAL_LOCAL_THREADS", str(min(4, os.cpu_count() or 1)))),
        "seed": 42,
        # The prompt cache reuses only whole batches (convoeval.local_server.PromptCache): at 256 rather than
        # llama.cpp's 512, a turn's prompt reuses all but <256 tokens of the previous one, and prompt throughput on
        # 2 cores is the same (docs/local-model.md).
        "n_batch": int(os.environ.get("CONVOEVAL_LOCAL_BATCH", "256")),
        "prompt_cache_mb": float(os.environ.get("CONVOEVAL_LOCAL_PROMPT_CACHE_MB", "256")),
        "launcher": _LAUNCHER,  # a server started by an older launcher is replaced
    }


def ensure_server(*, progress: bool = True, idle_timeout: float | None = None) -> str:
    """Start the local model server if it is not running (or runs other settings) and return its base URL.

    Safe to call from many processes at once: a file lock lets one of them start the server and the others reuse
    it. The server outlives the caller, so the next notebook run skips the start-up; it stops itself after
    ``idle_timeout`` seconds without a request (and the next call starts it again), or stop it with ``stop_server()``.

    Args:
        progress: Show a progress bar if the weights must be assembled first.
        idle_timeout: Seconds without a request before the server stops itself; 0 never. ``None``: a running
            server keeps its own, a new one gets ``CONVOEVAL_LOCAL_IDLE_TIMEOUT`` (default 600). A number is
            applied to a running server too (counted from now).

    Returns:
        The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:40123/v1``.

    Raises:
        LocalModelError: The weights are missing, llama-cpp-python is not installed, the idle timeout is not a
            number of seconds ≥ 0, or the server did not become healthy in time (the message names the server log).
    """
    timeout = _idle_timeout(idle_timeout)
    model = ensure_model(progress=progress)
    wanted = _server_settings(model)
    state = _read_state()
    # Fast path for every call after the first: no HTTP, because the one-slot server answers /v1/models only after
    # the generation in progress, which can take a minute. A server that stopped itself when idle has removed its
    # state file first, so this path never hands out its port.
    if idle_timeout is None and state and _matches(state, wanted) and state.get("pid") in _VERIFIED and _alive(state):
        return _base_url(state["port"])
    with file_lock(_llm_dir() / "server.lock"):
        state = _read_state()
        if state and _alive(state):
            # "busy": the one-slot server is in the middle of another process's generation (a judge call can take
            # minutes on 2 cores) and answers when it is done. Replacing it would kill that process's call, so only
            # a server with other settings, or one that refuses connections, is replaced.
            if _matches(state, wanted) and _probe(state["port"], timeout=_startup_timeout()) in ("ok", "busy"):
                _VERIFIED.add(state["pid"])
                if idle_timeout is not None:
                    _set_idle_timeout(state, timeout)
                return _base_url(state["port"])
            _terminate(state)  # other settings (another GGUF, context size...) or not listening: replace it
        return _start(wanted, timeout)


def _idle_timeout(explicit: float | None) -> float:
    """The idle timeout asked for (explicit, else ``CONVOEVAL_LOCAL_IDLE_TIMEOUT``, else 600 s), checked."""
    try:
        return parse_idle_timeout(os.environ.get(IDLE_TIMEOUT_ENV) if explicit is None else explicit)
    except ValueError as exc:
        raise LocalModelError(str(exc)) from None


def _set_idle_timeout(state: dict[str, Any], seconds: float) -> None:
    """Give a running server a new idle timeout (it answers even while it generates) and record it."""
    try:
        ask_idle(state["port"], set_timeout_s=seconds)
    except (OSError, ValueError) as exc:  # urllib's URLError and HTTPError are OSErrors
        raise LocalModelError(f"could not set the idle timeout of the local server (pid {state['pid']}): {exc}; "
                              "stop it (convoeval llm stop) and start it again") from None
    _write_state({**state, "idle_timeout_s": seconds})


# pids of servers this process has seen healthy; the fast path of ensure_server trusts them while they live.
_VERIFIED: set[int] = set()


def _matches(state: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return {k: state.get(k) for k in wanted} == wanted


def _startup_timeout() -> float:
    return float(os.environ.get("CONVOEVAL_LOCAL_STARTUP_TIMEOUT", "180"))


def _start(settings: dict[str, Any], idle_timeout: float) -> str:
    try:
        import llama_cpp  # noqa: F401, PLC0415 - only checks that the optional server is installed (it runs in its own process)
    except ImportError:
        raise LocalModelError(
            "the local model server is not installed: run "
            "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'llama-cpp-python[server]==0.3.36'"
        ) from None
    port = _free_port()
    log_path = _llm_dir() / "server.log"
    if log_path.exists() and log_path.stat().st_size > 20_000_000:  # one access line per request adds up
        os.replace(log_path, log_path.with_suffix(".log.1"))
    command = _launch_command(settings, port)
    with open(log_path, "ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(command)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            command,
            env={**os.environ, "CONVOEVAL_LOCAL_PROMPT_CACHE_MB": str(settings["prompt_cache_mb"]),
                 IDLE_TIMEOUT_ENV: repr(idle_timeout), STATE_FILE_ENV: str(_state_file())},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # detached: survives the notebook kernel that started it
            close_fds=True,
        )
    state = {**settings, "pid": process.pid, "port": port, "log_path": str(log_path), "started_at": time.time(),
             "idle_timeout_s": idle_timeout}
    _record_started(state)
    timeout = _startup_timeout()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalModelError(
                f"the local model server exited with code {process.returncode} during start-up; "
                f"see {log_path}:\n{_tail(log_path)}"
            )
        if _healthy(port):
            _write_state(state)
            _VERIFIED.add(process.pid)
            return _base_url(port)
        time.sleep(0.25)
    _terminate(state)
    raise LocalModelError(
        f"the local model server did not answer within {timeout:.0f} s "
        f"(CONVOEVAL_LOCAL_STARTUP_TIMEOUT); see {log_path}:\n{_tail(log_path)}"
    )


def _launch_command(settings: dict[str, Any], port: int) -> list[str]:
    """The server's command line: llama-cpp-python's server behind ``convoeval.local_server``, with these settings."""
    return [
        sys.executable, "-m", "convoeval.local_server",  # llama_cpp.server, made deterministic and cancellable
        "--model", settings["model_path"],
        "--model_alias", settings["model_name"],
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(settings["n_ctx"]),
        "--n_threads", str(settings["n_threads"]),
        "--n_threads_batch", str(settings["n_threads"]),
        "--n_batch", str(settings.get("n_batch", 512)),
        "--seed", str(settings["seed"]),
        "--cache", "False",  # llama-cpp-python's own prompt cache restores states that change replies; ours does not
        # llama-cpp-python's default (True) keeps every position's logits: n_ctx x 151,936 floats, ~5 GB at 8,192
        # tokens. Only the last position's logits are sampled from; logprobs, which need them all, are never asked.
        "--logits_all", "False",
        # Its default (True) cuts a *streamed* reply short as soon as another request waits for the one slot.
        "--interrupt_requests", "False",
        "--verbose", "False",
    ]  # fmt: skip


#: When set, every server this process (or a child that inherits the environment) starts is appended to that file
#: as one JSON line; the test suite sets it and stops them all at the end (``stop_started_servers``).
STARTED_LOG_ENV = "CONVOEVAL_LOCAL_STARTED_LOG"


def _record_started(state: dict[str, Any]) -> None:
    path = os.environ.get(STARTED_LOG_ENV)
    if not path:
        return
    line = {"pid": state["pid"], "port": state["port"], "started": _process_start(state["pid"]),
            "state_file": str(_state_file()), "log_path": state.get("log_path")}  # fmt: skip
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def stop_started_servers(log_path: str | Path) -> list[int]:
    """Stop every server recorded in ``log_path`` (see ``STARTED_LOG_ENV``) that still runs.

    A recorded pid that now belongs to another process (its start time differs) is left alone.

    Args:
        log_path: The file named by ``CONVOEVAL_LOCAL_STARTED_LOG``.

    Returns:
        The pids that were stopped.
    """
    try:
        lines = Path(log_path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    stopped = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        state = {"pid": record.get("pid")}
        if not _alive(state) or _process_start(record["pid"]) != record.get("started"):
            continue
        _terminate(state)
        stopped.append(record["pid"])
        state_file = Path(record.get("state_file") or "")
        with contextlib.suppress(OSError, ValueError):
            if json.loads(state_file.read_text()).get("pid") == record["pid"]:
                state_file.unlink()
    return stopped


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell a recycled pid from the original."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22 of proc(5), counted after the command name


def server_status() -> dict[str, Any]:
    """What the local server is doing, for ``convoeval llm status``.

    Returns:
        ``running`` and ``health`` (``ok``; ``busy`` while it answers a long request; ``down``), and when a
        server is known: ``pid``, ``port``, ``base_url``, ``model_path``, ``model_name``, ``n_ctx``, ``n_threads``,
        ``log_path``, ``uptime_s``, ``idle`` (a line for a person, e.g. "stops itself after 10 min idle; last
        request 2 min ago; stops in about 8 min"), ``idle_timeout_s``, ``last_request_s_ago``, ``in_flight``.
    """
    state = _read_state()
    if not state:
        return {"running": False, "health": "down", "state_file": str(_state_file()),
                "idle": "not running: the next call that needs the local model starts it"}  # fmt: skip
    alive, idle = _alive(state), {}
    if alive:
        with contextlib.suppress(OSError, ValueError):  # a server of an older launcher has no idle page
            idle = ask_idle(state["port"], timeout=3)
        idle = idle or {"idle_timeout_s": state.get("idle_timeout_s")}
    return {
        "running": alive,
        "health": _probe(state["port"]) if alive else "down",
        "base_url": _base_url(state["port"]),
        "uptime_s": round(time.time() - state.get("started_at", time.time()), 1),
        "idle": idle_note(idle) if alive else "not running: the next call that needs the local model starts it",
        **{k: idle.get(k) for k in ("idle_timeout_s", "last_request_s_ago", "in_flight")},
        "state_file": str(_state_file()),
        **{k: state.get(k) for k in ("pid", "port", "model_path", "model_name", "n_ctx", "n_threads", "log_path")},
    }


def stop_server(timeout: float = 15.0) -> dict[str, Any]:
    """Stop the local server if one is running, for ``convoeval llm stop``.

    Args:
        timeout: Seconds to wait after SIGTERM before SIGKILL.

    Returns:
        ``{"stopped": bool, "pid": ...}``.
    """
    with file_lock(_llm_dir() / "server.lock"):
        state = _read_state()
        if not state:
            return {"stopped": False, "pid": None}
        stopped = _alive(state) and _terminate(state, timeout)
        _state_file().unlink(missing_ok=True)
        return {"stopped": bool(stopped), "pid": state.get("pid")}


def _base_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def _read_state() -> dict[str, Any] | None:
    try:
        state = json.loads(_state_file().read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None  # another JSON value is as unreadable as a broken file


def _write_state(state: dict[str, Any]) -> None:
    tmp = _state_file().with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps(state, indent=2))
    os.replace(tmp, _state_file())


#: What a server's command line contains: ours, an older convoeval launcher's, or llama-cpp-python's own.
_SERVER_COMMANDS = (b"convoeval.local_server", b"convoeval.local_llm", b"llama_cpp.server")


def _alive(state: dict[str, Any]) -> bool:
    """True when the recorded pid is running and is our server (a recycled pid belongs to someone else)."""
    pid = state.get("pid")
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # someone else's process now holds that pid
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():  # Linux: check it is really a llama_cpp.server; elsewhere trust the pid
        try:
            command = cmdline.read_bytes()
            return any(name in command for name in _SERVER_COMMANDS)
        except OSError:
            return False
    return True


def _healthy(port: int, timeout: float = 2.0) -> bool:
    return _probe(port, timeout) == "ok"


def _probe(port: int, timeout: float = 3.0) -> str:
    """``ok`` when ``GET /v1/models`` lists a model, ``busy`` when it does not answer in time, else ``down``."""
    try:
        with urllib.request.urlopen(f"{_base_url(port)}/models", timeout=timeout) as response:
            ok = response.status == 200 and bool(json.loads(response.read()).get("data"))
            return "ok" if ok else "down"
    except TimeoutError:
        return "busy"
    except urllib.error.URLError as exc:
        return "busy" if isinstance(exc.reason, TimeoutError) else "down"
    except (OSError, ValueError):
        return "down"


def _terminate(state: dict[str, Any], timeout: float = 15.0) -> bool:
    pid = state["pid"]
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(state) or _reap(pid):
                return True
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        _reap(pid)
    return True


def _reap(pid: int) -> bool:
    """Collect a child we started ourselves (else it lingers as a zombie that still looks alive)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid
    except ChildProcessError:
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
