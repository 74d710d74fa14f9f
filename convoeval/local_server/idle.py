"""The embedded model's server stops itself when idle: the clock (``IdleWatchdog``, an ASGI middleware of
``convoeval.local_server``), the setting, and the line a person reads in the log and in ``convoeval llm status``.

After ``CONVOEVAL_LOCAL_IDLE_TIMEOUT`` seconds (default 600; 0 = never) without a request, the server removes its
state file under the launcher's lock and exits, freeing its ~1 GB, as Ollama and LM Studio unload an idle model; the
next call starts it again. ``GET /convoeval/idle`` tells how long it has been idle, ``POST`` sets a new timeout.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from convoeval._util.paths import file_lock

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "IDLE_PATH",
    "IDLE_TIMEOUT_ENV",
    "STATE_FILE_ENV",
    "IdleWatchdog",
    "ask_idle",
    "idle_note",
    "parse_idle_timeout",
    "start_line",
    "stop_this_server",
]

#: Seconds without a request before the server stops itself; ``0`` keeps it until ``convoeval llm stop``.
IDLE_TIMEOUT_ENV = "CONVOEVAL_LOCAL_IDLE_TIMEOUT"
#: Ollama's default keep-alive is 5 minutes; a little longer here, because a notebook's cells can be minutes apart
#: and a restart costs a model load (seconds) plus the prompt snapshots of the conversations in flight.
DEFAULT_IDLE_TIMEOUT_S = 600.0
#: Set by the launcher: the state file the server removes when it stops itself, so no caller is sent to it again.
STATE_FILE_ENV = "CONVOEVAL_LOCAL_STATE_FILE"
#: Answered by ``IdleWatchdog`` itself (GET: how idle; POST ``{"idle_timeout_s": s}``: a new timeout).
IDLE_PATH = "/convoeval/idle"


def parse_idle_timeout(text: str | float | None) -> float:
    """The idle timeout in seconds from a setting (``None`` or empty: the default; ``0``: never).

    Raises:
        ValueError: Not a finite number of seconds ≥ 0; the message names ``CONVOEVAL_LOCAL_IDLE_TIMEOUT``.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return DEFAULT_IDLE_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"the local server's idle timeout ({IDLE_TIMEOUT_ENV}) must be a number of seconds "
                         f"≥ 0 (0 = never stop), got {text!r}")
    return seconds


def _duration(seconds: float) -> str:
    """``1.5 s``, ``45 s``, ``10 min``, ``2 h 5 min``: what a person reads in a log or a status line."""
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 or seconds == int(seconds) else f"{seconds:.1f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def start_line(timeout_s: float) -> str:
    """What the server's log says when it starts: when it will stop itself, and how to change that."""
    if timeout_s > 0:
        note = f"stops itself after {_duration(timeout_s)} without a request; the next call starts it again"
    else:
        note = "never stops itself; stop it with: convoeval llm stop"
    return f"{note} ({IDLE_TIMEOUT_ENV}={timeout_s:g}; 0 = never)"


def idle_note(report: dict[str, Any]) -> str:
    """One line for a person, from ``IdleWatchdog.report()``: e.g. "stops itself after 10 min idle; last request
    2 min ago"."""
    timeout = report.get("idle_timeout_s")
    if timeout is None:
        return "stops itself when idle: unknown (a server started by an older convoeval never does)"
    note = (f"stops itself after {_duration(timeout)} idle" if timeout > 0
            else "never stops itself (idle timeout 0); stop it with: convoeval llm stop")
    if report.get("in_flight"):
        return f"{note}; busy: {report['in_flight']} request(s) in flight"
    ago = report.get("last_request_s_ago")
    note += f"; last request {_duration(ago)} ago" if ago is not None else "; no request yet"
    if timeout > 0 and report.get("idle_s") is not None:
        note += f"; stops in about {_duration(max(0.0, timeout - report['idle_s']))}"
    return note


class IdleWatchdog:
    """ASGI middleware and thread: stops the server once ``timeout_s`` seconds pass with no request in flight.

    A request is a POST (completions, chat, embeddings): health checks and model lists (GET) do not count, or
    ``convoeval llm status`` would keep the server up. The idle clock runs from the end of the last request (from
    start-up before the first), never while one is in flight, however long a generation takes.

    Args:
        app: The ASGI app to wrap.
        timeout_s: Idle seconds before ``on_idle`` is called; 0 never.
        on_idle: Called from the watchdog's thread with this watchdog when the timeout passes; it stops the server
            and returns True, or returns False to keep serving (the clock is checked again).
        clock: Monotonic seconds (tests pass their own).
        watch: Start the watchdog's thread (tests drive ``check`` by hand).
    """

    def __init__(self, app: Any, timeout_s: float, *, on_idle: Callable[[IdleWatchdog], bool],
                 clock: Callable[[], float] = time.monotonic, watch: bool = True) -> None:
        self.app, self.timeout_s, self.on_idle, self.clock = app, parse_idle_timeout(timeout_s), on_idle, clock
        self.in_flight = self.requests = 0
        self.idle_since = clock()
        self.last_request_end: float | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        if watch:
            threading.Thread(target=self._watch, name="convoeval-idle-watchdog", daemon=True).start()

    def report(self) -> dict[str, Any]:
        """``idle_timeout_s``, ``in_flight``, ``requests`` served, ``idle_s`` (None while busy), ``last_request_s_ago``."""
        with self._lock:
            now = self.clock()
            return {
                "idle_timeout_s": self.timeout_s,
                "in_flight": self.in_flight,
                "requests": self.requests,
                "idle_s": None if self.in_flight else round(now - self.idle_since, 1),
                "last_request_s_ago": None if self.last_request_end is None else round(now - self.last_request_end, 1),
            }

    def due(self) -> bool:
        """True when the timeout has passed with no request in flight."""
        return self.remaining() == 0.0

    def remaining(self) -> float | None:
        """Seconds until the server is due to stop; None while busy or with a timeout of 0 (never)."""
        with self._lock:
            if self.timeout_s <= 0 or self.in_flight:
                return None
            return max(0.0, self.timeout_s - (self.clock() - self.idle_since))

    def set_timeout(self, seconds: float) -> None:
        """A new timeout, counted from now (``convoeval llm serve --idle-timeout`` on a running server)."""
        seconds = parse_idle_timeout(seconds)
        with self._lock:
            self.timeout_s, self.idle_since = seconds, self.clock()
        self._wake.set()

    def check(self) -> bool:
        """Call ``on_idle`` if the server is due to stop; True when it stopped."""
        return self.due() and bool(self.on_idle(self))

    def _watch(self) -> None:
        while True:
            self._wake.clear()  # before reading the clock: a request ending after this wakes the wait below
            remaining = self.remaining()
            if remaining == 0.0:
                if self.check():
                    return
                remaining = 1.0  # on_idle declined (a caller holds the server's lock): look again shortly
            self._wake.wait(remaining)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope.get("path") == IDLE_PATH:
            await self._answer(scope, receive, send)
        elif scope.get("method") != "POST":
            await self.app(scope, receive, send)
        else:
            with self._lock:
                self.in_flight += 1
            try:
                await self.app(scope, receive, send)
            finally:
                with self._lock:
                    self.in_flight -= 1
                    self.requests += 1
                    self.idle_since = self.last_request_end = self.clock()
                self._wake.set()

    async def _answer(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        status, payload = 200, None
        if scope.get("method") == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            try:
                request = json.loads(body)
                self.set_timeout(request["idle_timeout_s"])
            except ValueError as exc:  # not JSON (JSONDecodeError), or not seconds ≥ 0
                status, payload = 400, {"error": str(exc)}
            except (KeyError, TypeError):
                status, payload = 400, {"error": 'expected {"idle_timeout_s": seconds}'}
        payload = payload or self.report()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


def stop_this_server(watchdog: IdleWatchdog) -> bool:
    """``on_idle`` of the real server: forget its state file under the launcher's lock, log why, and exit.

    The lock is only tried, never waited for: a process holding it is checking or starting a server, probably
    about to use this one, so the server stays and looks again a second later. Under the lock the state file is
    removed only if it still names this process, so callers start a new server instead of being sent here.
    """
    state_file = os.environ.get(STATE_FILE_ENV)
    lock = file_lock(Path(state_file).with_name("server.lock"), blocking=False) if state_file else nullcontext()
    try:
        with lock:
            if not watchdog.due():
                return False  # a request arrived meanwhile
            if state_file:
                try:
                    if json.loads(Path(state_file).read_text()).get("pid") == os.getpid():
                        Path(state_file).unlink()
                except (OSError, ValueError):
                    pass  # no state file (stopped by hand, or never written): nothing to forget
    except BlockingIOError:
        return False
    print(f"convoeval.local_server: no request for {_duration(watchdog.timeout_s)}: stopping itself "
          f"({IDLE_TIMEOUT_ENV}={watchdog.timeout_s:g}; 0 = never); the next call starts it again",
          file=sys.stderr, flush=True)  # fmt: skip
    # uvicorn's own graceful shutdown, exactly as `convoeval llm stop` does it: the listening socket closes first,
    # and a request that got in before that is still answered.
    os.kill(os.getpid(), signal.SIGTERM)
    return True


def ask_idle(port: int, *, set_timeout_s: float | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """The idle clock of the server on ``port`` (``IdleWatchdog.report()``); with ``set_timeout_s``, set it first.

    Raises:
        OSError: The server did not answer, or answered with an error (an older launcher has no such page).
        ValueError: The answer is not the report.
    """
    data = None if set_timeout_s is None else json.dumps({"idle_timeout_s": set_timeout_s}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{IDLE_PATH}", data=data,
                                     headers={"Content-Type": "application/json"})  # POST when there is data
    with urllib.request.urlopen(request, timeout=timeout) as response:
        report = json.loads(response.read())
    if not isinstance(report, dict) or "idle_timeout_s" not in report:
        raise ValueError(f"not an idle report: {str(report)[:200]}")
    return report
