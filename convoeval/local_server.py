"""What runs inside the embedded model's server process (``python -m convoeval.local_server``, started by
``convoeval.llm.local``): llama-cpp-python's OpenAI-compatible server with four changes.

* **Replies are a function of the request alone, yet conversations are not re-read from the start.** A prompt's
  key/value cache is reused only in whole ``n_batch`` batches that an earlier request computed as prompt batches
  at the same positions, so every reused number is bit-for-bit what a cold evaluation would compute (see
  ``PromptCache``). Generated tokens are never reused: they were computed one at a time, and a cold run computes
  them inside a batch, with different rounding.
* **A request whose client went away stops** within one batch of prompt tokens or one generated token
  (``_StopOnDisconnect``); the upstream server runs it to ``max_tokens`` for no one while every other caller waits.
* **One line per request in the server log**: prompt tokens, how many were evaluated (the rest reused), tokens
  generated, seconds, and how it ended.
* **It stops itself when idle** (``IdleWatchdog``): after ``CONVOEVAL_LOCAL_IDLE_TIMEOUT`` seconds (default 600)
  without a request it removes its state file and exits, freeing its ~1 GB, as Ollama and LM Studio unload an idle
  model; the next call starts it again. ``GET /convoeval/idle`` tells how long it has been idle.

Environment (read by the server process; ``convoeval.llm.local`` passes it on):
    CONVOEVAL_LOCAL_PROMPT_CACHE_MB: memory for prompt snapshots (default 256; 0 re-reads every prompt).
    CONVOEVAL_LOCAL_IDLE_TIMEOUT: seconds without a request before the server stops itself (default 600; 0 = never).
    CONVOEVAL_LOCAL_STATE_FILE: the launcher's ``server.json``, removed (under its lock) when the server stops itself.
"""

from __future__ import annotations

import contextvars
import ctypes
import json
import math
import mmap
import os
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from convoeval.paths import file_lock

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "IDLE_PATH",
    "IDLE_TIMEOUT_ENV",
    "GenerationCancelled",
    "IdleWatchdog",
    "PromptCache",
    "idle_note",
    "parse_idle_timeout",
    "patch_llama",
    "serve",
    "wrap_app",
]

#: The cancel flag of the request being served; set by ``_StopOnDisconnect`` when its client goes away and read by
#: the generation loop in llama-cpp-python's worker thread (anyio copies the context into the thread).
_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("convoeval_cancel", default=None)


class GenerationCancelled(Exception):
    """The client of the request being generated went away; the server stops instead of finishing for no one."""


def _check_cancelled() -> None:
    event = _CANCEL.get()
    if event is not None and event.is_set():
        raise GenerationCancelled("the client disconnected: generation stopped")


class _StopOnDisconnect:
    """ASGI middleware: flags a POST request's generation for cancellation as soon as its client disconnects.

    llama-cpp-python's server notices a disconnect only between the chunks of a *streamed* reply; a plain request
    runs to ``max_tokens`` for a client that is gone (a killed notebook, a timeout, Ctrl-C) while every other caller
    waits behind its single slot. This middleware reads the request body for the app, then keeps listening on the
    connection; an ``http.disconnect`` sets the request's cancel flag, which the patched ``Llama.eval`` checks before
    every batch of prompt tokens and every generated token.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        import anyio

        cancel = threading.Event()
        body_read, gone = anyio.Event(), anyio.Event()
        disconnect = {"type": "http.disconnect"}

        def went_away() -> None:
            cancel.set()
            gone.set()

        async def app_receive() -> dict[str, Any]:
            if gone.is_set():  # no await: starlette's is_disconnected() asks inside a cancelled scope
                return disconnect
            if not body_read.is_set():
                message = await receive()
                if message["type"] == "http.disconnect":
                    went_away()
                elif not message.get("more_body", False):
                    body_read.set()
                return message
            await gone.wait()
            return disconnect

        async def watch() -> None:
            await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            went_away()

        token = _CANCEL.set(cancel)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(watch)
                try:
                    await self.app(scope, app_receive, send)
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            _CANCEL.reset(token)


class PromptCache:
    """Snapshots of recent prompts' key/value cache, so a conversation's next turn skips what was already read.

    A turn's prompt repeats the previous turn's prompt and adds to it; re-reading it all made a 15-turn conversation
    read 40,128 prompt tokens (16,064 with this cache). Reuse must not change a single bit of any reply: the response
    cache replays runs, but a cold run (a cleared cache) must still give the same answers. llama.cpp's results
    depend on how tokens are batched, so only what a cold evaluation would compute *identically* is reused:

    * a prompt is evaluated in ``n_batch`` slices starting at position 0 (llama-cpp-python's own batching);
    * the reusable prefix of a new prompt is its common prefix with a snapshot, rounded **down** to a multiple of
      ``n_batch`` and kept shorter than the prompt: those positions were computed as whole batches of the same
      tokens at the same places as a cold run would, so their keys and values are the same bits, and the rest of
      the prompt is evaluated in the same slices as a cold run;
    * snapshots are taken right after a prompt is evaluated, before any generated token enters the context.

    One snapshot per recent prompt (a "slot" per conversation in flight, restored into llama-cpp-python's single
    sequence), least recently used dropped first when they exceed ``budget_bytes``; a snapshot that a newer prompt
    extends is dropped at once. ~12 KB per token for Qwen2.5-0.5B.
    """

    def __init__(self, budget_bytes: int, n_batch: int) -> None:
        self.budget_bytes = budget_bytes
        self.n_batch = n_batch
        self.snapshots: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # mmap (bytes in tests)
        self.live: tuple[int, ...] | None = None  # the prompt whose keys/values the context holds

    def reusable(self, key: Sequence[int], prompt: Sequence[int]) -> int:
        """How many leading tokens of ``prompt`` can come from ``key``'s snapshot without changing a bit."""
        common = 0
        for a, b in zip(key, prompt):
            if a != b:
                break
            common += 1
        return min(common, len(prompt) - 1) // self.n_batch * self.n_batch

    def prepare(self, llama: Any, prompt: Sequence[int]) -> int:
        """Set ``llama``'s context to the longest reusable prefix of ``prompt``; returns its length (0: none)."""
        best_key, best = None, 0
        for key in (self.live, *reversed(self.snapshots)):
            if key is not None and (n := self.reusable(key, prompt)) > best:
                best_key, best = key, n
        if best_key is None:
            self.live = None  # the context is about to be overwritten
            llama.reset()
            return 0
        if best_key != self.live:
            self._restore(llama, best_key)
        llama.input_ids[:best] = prompt[:best]
        llama.n_tokens = best  # llama-cpp-python's generate then keeps exactly this prefix and evaluates the rest
        return best

    def save(self, llama: Any, prompt: Sequence[int]) -> None:
        """Snapshot the context, which holds exactly ``prompt``'s keys and values."""
        key = tuple(prompt)
        self.live = key
        if len(key) < self.n_batch:
            return  # no whole batch of it could ever be reused
        for older in [k for k in self.snapshots if len(k) <= len(key) and key[: len(k)] == k]:
            del self.snapshots[older]  # this prompt extends it: it can only be a worse match from now on
        snapshot = self._snapshot(llama)
        if snapshot is None:
            return
        self.snapshots[key] = snapshot
        while self.snapshots and sum(map(len, self.snapshots.values())) > self.budget_bytes:
            self.snapshots.popitem(last=False)

    def _restore(self, llama: Any, key: tuple[int, ...]) -> None:
        self.snapshots.move_to_end(key)
        self.live = None  # until the snapshot is in place
        llama._ctx.kv_cache_clear()  # an empty cache: the snapshot's cells land where a cold run puts them
        self._load(llama, self.snapshots[key])
        llama.input_ids[: len(key)] = key
        self.live = key

    @staticmethod
    def _snapshot(llama: Any) -> mmap.mmap | None:
        """The keys and values of ``llama``'s one sequence (llama.cpp's per-sequence state), in a mapping of its own.

        Not in Python bytes: snapshots are tens of MB (a 5,000-token judge prompt is 61 MB), and glibc serves
        blocks of that size from its arenas once a few have been freed, which then stay resident: the server grew
        to 1.66 GB over a `make run` with a 256 MB budget. A mapping is returned to the system when dropped.
        """
        import llama_cpp

        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        snapshot = mmap.mmap(-1, size)
        target = (ctypes.c_uint8 * size).from_buffer(snapshot)
        written = llama_cpp.llama_state_seq_get_data(ctx, target, size, 0)
        del target  # release the export, or the mapping could never be closed
        return snapshot if written == size else None  # (the size is exact by llama.cpp's contract)

    @staticmethod
    def _load(llama: Any, snapshot: mmap.mmap) -> None:
        import llama_cpp

        source = (ctypes.c_uint8 * len(snapshot)).from_buffer(snapshot)
        try:
            if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, source, len(snapshot), 0) == 0:
                raise RuntimeError("llama.cpp could not restore a prompt snapshot")
        finally:
            del source


def patch_llama(llama_class: Any, prompt_cache_bytes: int = 0) -> None:
    """Make llama-cpp-python's ``Llama`` deterministic per request, cancellable, and accounted in the server log.

    Args:
        llama_class: ``llama_cpp.Llama`` (a stand-in in tests).
        prompt_cache_bytes: Memory for ``PromptCache`` snapshots; 0 evaluates every prompt from scratch.
    """
    original_generate, original_eval = llama_class.generate, llama_class.eval

    def generate(self: Any, tokens: Any, *args: Any, reset: bool = True, **kwargs: Any) -> Any:
        prompt = list(tokens)
        cache = _prompt_cache(self, prompt_cache_bytes)
        if reset and cache is None:
            self.reset()  # n_tokens = 0: no prefix match, the whole prompt is evaluated from scratch
        elif reset:
            cache.prepare(self, prompt)  # (reset=False: a caller continuing its own context; left alone)
        self._convoeval_evaluated = 0
        started, generated, ending = time.perf_counter(), 0, "done"
        evaluated: int | None = None
        try:
            for token in original_generate(self, prompt, *args, reset=reset, **kwargs):
                if evaluated is None:
                    evaluated = self._convoeval_evaluated
                    if cache is not None:
                        cache.save(self, prompt)
                generated += 1
                yield token
        except GenerationCancelled:
            ending = "cancelled: the client disconnected"
            raise
        except Exception as exc:
            ending = f"failed: {type(exc).__name__}"
            raise
        finally:
            if cache is not None and evaluated is None:
                cache.live = None  # stopped inside the prompt: the context holds a fragment of it
            read = self._convoeval_evaluated if evaluated is None else evaluated
            print(f"convoeval.local_server: prompt {len(prompt)} tokens ({read} evaluated), {generated} generated, "
                  f"{time.perf_counter() - started:.1f} s, {ending}", file=sys.stderr, flush=True)  # fmt: skip

    def eval(self: Any, tokens: Any) -> None:
        tokens = list(tokens)
        for start in range(0, max(len(tokens), 1), self.n_batch):
            _check_cancelled()
            batch = tokens[start : start + self.n_batch]
            original_eval(self, batch)
            self._convoeval_evaluated = getattr(self, "_convoeval_evaluated", 0) + len(batch)

    llama_class.generate = generate
    llama_class.eval = eval


def _prompt_cache(llama: Any, budget_bytes: int) -> PromptCache | None:
    if budget_bytes <= 0:
        return None
    cache = getattr(llama, "_convoeval_prompt_cache", None)
    if cache is None:
        cache = llama._convoeval_prompt_cache = PromptCache(budget_bytes, llama.n_batch)
    return cache


def _quiet_cancellations() -> None:
    """A cancelled request answers 499 (nobody reads it) without the traceback upstream prints for errors."""
    from llama_cpp.server import errors

    original = errors.RouteErrorHandler.error_message_wrapper

    def error_message_wrapper(self: Any, error: Exception, body: Any = None) -> Any:
        if isinstance(error, GenerationCancelled):
            return 499, errors.ErrorResponse(message=str(error), type="cancelled", param=None, code=None)
        return original(self, error, body)

    errors.RouteErrorHandler.error_message_wrapper = error_message_wrapper


# -- stopping when idle ---------------------------------------------------------------------------------------------

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


def idle_note(report: dict[str, Any]) -> str:
    """One line for a person, from ``IdleWatchdog.report()``: e.g. "stops itself after 10 min idle; last request
    2 min ago"."""
    timeout = report.get("idle_timeout_s")
    if timeout is None:
        return "stops itself when idle: unknown (a server started by an older convoeval never does)"
    note = (f"stops itself after {_duration(timeout)} idle" if timeout > 0
            else f"never stops itself ({IDLE_TIMEOUT_ENV}=0); stop it with: convoeval llm stop")
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


def _stop_this_server(watchdog: IdleWatchdog) -> bool:
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


def wrap_app(app: Any, *, idle_timeout_s: float | None = None) -> IdleWatchdog:
    """The server's ASGI app with convoeval's middleware: stop on disconnect, stop when idle.

    Args:
        app: llama-cpp-python's FastAPI app (or a stand-in).
        idle_timeout_s: Default: ``CONVOEVAL_LOCAL_IDLE_TIMEOUT``, else 600 s.
    """
    timeout = parse_idle_timeout(os.environ.get(IDLE_TIMEOUT_ENV) if idle_timeout_s is None else idle_timeout_s)
    watchdog = IdleWatchdog(_StopOnDisconnect(app), timeout, on_idle=_stop_this_server)
    if timeout > 0:
        note = f"stops itself after {_duration(timeout)} without a request; the next call starts it again"
    else:
        note = "never stops itself; stop it with: convoeval llm stop"
    print(f"convoeval.local_server: {note} ({IDLE_TIMEOUT_ENV}={timeout:g}; 0 = never)", file=sys.stderr, flush=True)
    return watchdog


def serve(argv: list[str]) -> None:
    """Run llama-cpp-python's server (``argv``: its command-line arguments) with the changes above."""
    import llama_cpp
    from llama_cpp.server import __main__ as server_main

    megabytes = float(os.environ.get("CONVOEVAL_LOCAL_PROMPT_CACHE_MB", "256"))
    patch_llama(llama_cpp.Llama, int(megabytes * 1024 * 1024))
    _quiet_cancellations()
    parse_idle_timeout(os.environ.get(IDLE_TIMEOUT_ENV))  # a bad setting fails before the model loads
    create_app = server_main.create_app
    server_main.create_app = lambda **kwargs: wrap_app(create_app(**kwargs))
    sys.argv = ["llama_cpp.server", *argv]
    server_main.main()


if __name__ == "__main__":
    serve(sys.argv[1:])
