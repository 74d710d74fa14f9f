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
* **It stops itself when idle** (``convoeval.local_server.idle.IdleWatchdog``): after ``CONVOEVAL_LOCAL_IDLE_TIMEOUT``
  seconds (default 600) without a request it removes its state file and exits; the next call starts it again.

Environment (read by the server process; ``convoeval.llm.local`` passes it on):
    CONVOEVAL_LOCAL_PROMPT_CACHE_MB: memory for prompt snapshots (default 256; 0 re-reads every prompt).
    CONVOEVAL_LOCAL_IDLE_TIMEOUT: seconds without a request before the server stops itself (default 600; 0 = never).
    CONVOEVAL_LOCAL_STATE_FILE: the launcher's ``server.json``, removed (under its lock) when the server stops itself.
"""

from __future__ import annotations

import contextvars
import ctypes
import mmap
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from convoeval.errors import ConvoevalError
from convoeval.local_server.idle import IDLE_TIMEOUT_ENV, IdleWatchdog, parse_idle_timeout, start_line, stop_this_server

__all__ = ["GenerationCancelled", "PromptCache", "patch_llama", "serve", "wrap_app"]


#: The cancel flag of the request being served; set by ``_StopOnDisconnect`` when its client goes away and read by
#: the generation loop in llama-cpp-python's worker thread (anyio copies the context into the thread).
_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("convoeval_cancel", default=None)


class GenerationCancelled(ConvoevalError):
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
        import anyio  # noqa: PLC0415 - anyio loads on first use (start-up budget, tests/test_startup.py)

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
                message: dict[str, Any] = await receive()
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
        for a, b in zip(key, prompt, strict=False):  # the common prefix: the shorter one bounds it
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
        import llama_cpp  # noqa: PLC0415 - llama.cpp loads only inside the local model's server

        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        snapshot = mmap.mmap(-1, size)
        target = (ctypes.c_uint8 * size).from_buffer(snapshot)
        written = llama_cpp.llama_state_seq_get_data(ctx, target, size, 0)
        del target  # release the export, or the mapping could never be closed
        return snapshot if written == size else None  # (the size is exact by llama.cpp's contract)

    @staticmethod
    def _load(llama: Any, snapshot: mmap.mmap) -> None:
        import llama_cpp  # noqa: PLC0415 - llama.cpp loads only inside the local model's server

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
        if reset:  # (reset=False: a caller continuing its own context; left alone)
            if cache is None:
                self.reset()  # n_tokens = 0: no prefix match, the whole prompt is evaluated from scratch
            else:
                cache.prepare(self, prompt)
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
    from llama_cpp.server import errors  # noqa: PLC0415 - llama.cpp loads only inside the local model's server

    original = errors.RouteErrorHandler.error_message_wrapper

    def error_message_wrapper(self: Any, error: Exception, body: Any = None) -> Any:
        if isinstance(error, GenerationCancelled):
            return 499, errors.ErrorResponse(message=str(error), type="cancelled", param=None, code=None)
        return original(self, error, body)

    # A deliberate patch of llama_cpp's server class (it has no hook for a custom error); mypy forbids method-assign.
    errors.RouteErrorHandler.error_message_wrapper = error_message_wrapper  # type: ignore[method-assign]


def wrap_app(app: Any, *, idle_timeout_s: float | None = None) -> IdleWatchdog:
    """The server's ASGI app with convoeval's middleware: stop on disconnect, stop when idle.

    Args:
        app: llama-cpp-python's FastAPI app (or a stand-in).
        idle_timeout_s: Default: ``CONVOEVAL_LOCAL_IDLE_TIMEOUT``, else 600 s.
    """
    timeout = parse_idle_timeout(os.environ.get(IDLE_TIMEOUT_ENV) if idle_timeout_s is None else idle_timeout_s)
    watchdog = IdleWatchdog(_StopOnDisconnect(app), timeout, on_idle=stop_this_server)
    print(f"convoeval.local_server: {start_line(timeout)}", file=sys.stderr, flush=True)
    return watchdog


def serve(argv: list[str]) -> None:
    """Run llama-cpp-python's server (``argv``: its command-line arguments) with the changes above."""
    import llama_cpp  # noqa: PLC0415 - llama.cpp loads only inside the local model's server
    from llama_cpp.server import __main__ as server_main  # noqa: PLC0415 - llama.cpp loads only inside the local model's server

    megabytes = float(os.environ.get("CONVOEVAL_LOCAL_PROMPT_CACHE_MB", "256"))
    patch_llama(llama_cpp.Llama, int(megabytes * 1024 * 1024))
    _quiet_cancellations()
    parse_idle_timeout(os.environ.get(IDLE_TIMEOUT_ENV))  # a bad setting fails before the model loads
    create_app = server_main.create_app
    server_main.create_app = lambda **kwargs: wrap_app(create_app(**kwargs))
    sys.argv = ["llama_cpp.server", *argv]
    server_main.main()
