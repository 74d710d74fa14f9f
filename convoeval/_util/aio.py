"""Run a coroutine from synchronous code, including inside Jupyter where an event loop is already running.

Every synchronous call runs on ONE long-lived event loop in a daemon thread, not on a fresh ``asyncio.run`` loop
each time: the chat clients that ``get_model`` builds once and reuses hold async HTTP connections bound to the
loop that first used them, and a second ``asyncio.run`` would find that loop closed ("Event loop is closed").

The loop outlives a ``SystemExit`` or ``KeyboardInterrupt`` raised by a task (asyncio lets those two escape
``run_forever``): it is started again at once, so the task's caller receives the exception instead of waiting
forever on a loop that stopped (a Python agent calling ``sys.exit()`` used to hang the whole run).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

log = logging.getLogger(__name__)

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_serve, args=(_loop,), name="convoeval-sync-loop", daemon=True).start()
        return _loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run ``loop`` forever, even past a ``SystemExit`` / ``KeyboardInterrupt`` that a task let escape.

    asyncio records such an exception as the task's result *and* re-raises it out of ``run_forever``. Without a
    restart the loop would stop with the task's awaiters never woken: ``run_sync``'s caller would wait forever.
    Started again, the loop wakes them and the exception travels up to the caller like any other.
    """
    while True:
        try:
            loop.run_forever()
        except BaseException as exc:  # noqa: BLE001 - the task that raised it holds it; its awaiters get it
            log.debug("convoeval's event loop: a task raised %s; the loop carries on", type(exc).__name__)
            continue
        return  # stopped on purpose (loop.stop())


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


def blocking(afn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The synchronous twin of the coroutine function ``afn``: the same parameters, run to completion by ``run_sync``.

    The twin is named ``afn``'s name without its leading ``a`` (``ajudge_rubric`` -> ``judge_rubric``), carries its
    docstring and its signature (``help()``, notebooks' completion and type checkers see the real parameters), so
    the parameters are declared once, on the coroutine.

    Example (as ``judge_rubric = blocking(ajudge_rubric)``):
        >>> async def agreet(name: str) -> str:
        ...     '''Greet ``name``.'''
        ...     return f"Oi, {name}"
        >>> greet = blocking(agreet)
        >>> greet("Maria"), greet.__name__, greet.__doc__
        ('Oi, Maria', 'greet', 'Greet ``name``.')
    """

    @functools.wraps(afn)
    def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(afn(*args, **kwargs))

    name = afn.__name__.removeprefix("a")
    twin.__name__ = name
    twin.__qualname__ = afn.__qualname__.rsplit(".", 1)[0] + "." + name if "." in afn.__qualname__ else name
    return twin
