"""The async HTTP client under every chat model convoeval builds: the openai SDK's aiohttp transport, per event loop.

Why not the SDK's default (httpx over anyio): measured against the same stub, 200 conversations × 7 calls in
flight, ``ChatOpenAI.ainvoke`` cost 3.4 ms of CPU per call with the default client and 2.0 ms with the SDK's
aiohttp one (``openai.DefaultAioHttpClient``, the ``openai[aiohttp]`` extra); the bare SDK call 2.2 ms against
1.35 ms. When a run keeps hundreds of calls in flight on one core, the HTTP client is most of its CPU.

Why per event loop: an aiohttp session (like httpx's connection pool) belongs to the loop that opened it, and the
same cached model is used from several loops — convoeval's background loop for the synchronous verbs, a notebook's
own loop for ``await``-ed ones, a fresh loop per test. ``PerLoopTransport`` opens one aiohttp transport per running
loop and forgets it with its loop, so a model never meets "Event loop is closed" or a session of another loop.

The transport class lives in the SDK's vendored ``httpx_aiohttp`` module. Should a release move it, models fall
back to the SDK's default client: slower, never wrong (``aiohttp_available`` says which one is in use).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx2

__all__ = ["PerLoopTransport", "aiohttp_available", "async_http_client"]


def _transport_factory() -> Callable[[], Any] | None:
    """A maker of the SDK's aiohttp transport with the SDK's connection limits, or ``None`` when unavailable."""
    try:
        from openai._base_client import DEFAULT_CONNECTION_LIMITS  # noqa: PLC0415 - private: may be gone in a release
        from openai._vendor.httpx_aiohttp.transport import AiohttpTransport  # noqa: PLC0415 - private, as above
    except ImportError:
        return None
    return lambda: AiohttpTransport(limits=DEFAULT_CONNECTION_LIMITS)


def aiohttp_available() -> bool:
    """Whether model clients use the aiohttp transport (``openai[aiohttp]`` installed and where expected)."""
    return _transport_factory() is not None


class PerLoopTransport:
    """An httpx transport (the SDK's ``httpx2`` flavour) that keeps one inner transport per running event loop.

    Each inner transport is closed on its own loop, so aiohttp never reports an unclosed session: by the loop's
    ``shutdown_asyncgens`` (what ``asyncio.run`` and pytest do before closing a loop), or at interpreter exit for a
    loop still running then (convoeval's background loop, a notebook's).

    Args:
        make: builds one inner transport (an aiohttp session is opened lazily by it, on its loop).
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()  # loops in several threads may ask at once
        _LIVE.add(self)

    async def _for_running_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._by_loop.get(loop)
            if entry is not None:
                return entry[0]
            transport = self._make()
            closer = _close_at_loop_shutdown(transport)
            self._by_loop[loop] = (transport, closer)
        await closer.asend(None)  # started on this loop: its ``finally`` runs when the loop shuts down
        return transport

    async def handle_async_request(self, request: Any) -> Any:
        """Send ``request`` through this loop's transport."""
        transport = await self._for_running_loop()
        try:
            return await transport.handle_async_request(request)
        except Exception as exc:
            replaced = _untimed(exc)
            if replaced is exc:
                raise
            raise replaced from exc

    async def aclose(self) -> None:
        """Close this loop's transport (the others close with their loops)."""
        with self._lock:
            entry = self._by_loop.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].aclose()

    async def __aenter__(self) -> PerLoopTransport:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def close_running_loops(self, timeout: float = 2.0) -> None:
        """Close the transports of loops still running in other threads (at interpreter exit)."""
        with self._lock:
            entries = list(self._by_loop.items())
            self._by_loop.clear()
        for loop, (transport, _closer) in entries:
            if loop.is_running() and not loop.is_closed():
                try:
                    asyncio.run_coroutine_threadsafe(transport.aclose(), loop).result(timeout)
                except Exception:  # noqa: BLE001 - exiting anyway: a session that will not close is not an error
                    pass


def _untimed(exc: Exception) -> Exception:
    """A refused or dropped connection as a connection error, not the timeout the SDK's transport calls it.

    The vendored transport maps every ``aiohttp.ClientConnectionError`` to ``ConnectTimeout``, so an endpoint
    that is down ("connection refused") would be reported as "timed out" after the whole retry budget.
    """

    cause = exc.__cause__
    if isinstance(exc, httpx2.TimeoutException) and cause is not None and not isinstance(cause, TimeoutError):
        return httpx2.ConnectError(str(cause) or type(cause).__name__)
    return exc


async def _close_at_loop_shutdown(transport: Any) -> AsyncGenerator[None, None]:
    """An async generator parked on its loop: ``loop.shutdown_asyncgens()`` closes it, and the transport with it."""
    try:
        yield
        await asyncio.Future()  # never resumed: only closed
    finally:
        await transport.aclose()


_LIVE: weakref.WeakSet[PerLoopTransport] = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    for transport in list(_LIVE):
        transport.close_running_loops()


def async_http_client(timeout: float | None, base_url: str | None = None) -> Any:
    """The ``http_async_client`` for a ``ChatOpenAI``: aiohttp per loop, or ``None`` for the SDK's default.

    Args:
        timeout: seconds per request (the SDK's default when ``None``).
        base_url: the endpoint. One with credentials in it (``http://user:pw@proxy…``) keeps the SDK's default
            client, which sends them as HTTP basic auth; aiohttp refuses a URL's credentials beside the SDK's
            ``Authorization`` header.
    """
    make = _transport_factory()
    if make is None or (base_url and "@" in base_url.partition("://")[2].partition("/")[0]):
        return None
    from openai import DefaultAsyncHttpxClient  # noqa: PLC0415 - openai loads on first use (start-up budget, tests/test_startup.py)

    kwargs: dict[str, Any] = {"transport": PerLoopTransport(make)}  # httpx only calls the transport's methods
    if timeout is not None:
        kwargs["timeout"] = timeout
    # DefaultAsyncHttpxClient: the SDK's defaults (timeouts, limits, redirects); proxies from the environment still
    # get the SDK's own proxy transports (httpx mounts them beside ``transport``).
    return DefaultAsyncHttpxClient(**kwargs)
