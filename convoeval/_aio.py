"""Run a coroutine from synchronous code, including inside Jupyter where an event loop is already running."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result.

    ``asyncio.run`` refuses to start inside a running loop (every notebook cell runs in one), so in that case the
    coroutine runs on a fresh loop in a worker thread; the caller blocks until it is done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
