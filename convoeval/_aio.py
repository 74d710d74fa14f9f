"""Run a coroutine from synchronous code, including inside Jupyter where an event loop is already running.

Every synchronous call runs on ONE long-lived event loop in a daemon thread, not on a fresh ``asyncio.run`` loop
each time: the chat clients that ``get_model`` builds once and reuses hold async HTTP connections bound to the
loop that first used them, and a second ``asyncio.run`` would find that loop closed ("Event loop is closed").
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="convoeval-sync-loop", daemon=True).start()
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on convoeval's background loop and return its result.

    Works the same in scripts and in notebook cells (whose own loop is left alone). Interrupting the caller
    (Ctrl-C, a notebook's stop button) cancels the coroutine.

    Raises:
        RuntimeError: when called from a coroutine already running on that loop (await the coroutine instead).
    """
    loop = _background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError("a synchronous convoeval verb was called from convoeval's own event loop; await it")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise
