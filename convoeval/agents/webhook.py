"""The ``http://`` / ``https://`` adapter: an agent behind an HTTP webhook.

Contract (documented with a worked example in ``docs/agents-protocol.md``)::

    POST <url>   {"message": "...", "session": AgentSession.to_json()}
    200          {"bubbles": ["...", ...] | "text": "..." | "parts": [{"type": "text" | "buttons" | ..., ...}],
                  "tool_calls": [{"name": "...", "arguments": {...}}]?, "conversation_id": "..."?}

Every way the agent can fail ends as an ``AgentError`` within a bounded time and memory: the whole exchange has one
deadline (``timeout``, default 60 s), the body is streamed and abandoned once it passes ``max_body_bytes`` (default
1 MB), and a non-2xx status, invalid JSON or a wrongly typed field each give a message saying what was wrong.

The optional auth header comes from ``CONVOEVAL_AGENT_AUTH_HEADER`` (``"Authorization: Bearer xyz"``). Its value
is sent and nothing else: it never appears in the agent's name, repr, errors or logs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from typing import Any

import httpx

from convoeval._util.urls import hide_in_logs, safe_url
from convoeval.agents.base import DEFAULT_TIMEOUT, TIMEOUT_ENV, AgentError, AgentReply, AgentSession
from convoeval.agents.base import number_from_env as _number_from_env
from convoeval.agents.replies import reply_from_mapping

log = logging.getLogger(__name__)

AUTH_HEADER_ENV = "CONVOEVAL_AGENT_AUTH_HEADER"
MAX_BYTES_ENV = "CONVOEVAL_AGENT_MAX_BYTES"
DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_RETRIES = 2

# Statuses that mean "not processed, come back later": safe to resend even though POST is not idempotent.
# A 500 is not retried: the agent may already have booked the appointment before failing.
_RETRY_STATUSES = frozenset({429, 503})
_SNIPPET_CHARS = 200


class _Secret:
    """An auth header whose value stays out of every repr and message."""

    def __init__(self, name: str, value: str):
        self.name, self._value = name, value

    def __repr__(self) -> str:
        return f"<header {self.name}: ***>"

    def headers(self) -> dict[str, str]:
        return {self.name: self._value}

    def secrets(self) -> set[str]:
        # The credential alone too: a server may echo "xyz" without its "Bearer " prefix.
        return {s for s in (self._value, self._value.split()[-1]) if len(s) >= 4}

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets(), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


def _auth_from_env() -> _Secret | None:
    raw = os.environ.get(AUTH_HEADER_ENV, "").strip()
    if not raw:
        return None
    name, sep, value = raw.partition(":")
    if not sep or not name.strip() or not value.strip() or any(c.isspace() for c in name.strip()):
        # Never echo ``raw``: it is a credential.
        raise ValueError(f"{AUTH_HEADER_ENV} must look like 'Header-Name: value' (e.g. 'Authorization: Bearer …')")
    return _Secret(name.strip(), value.strip())


class WebhookAgent:
    """An ``Agent`` that POSTs each patient message to a webhook.

    One ``httpx.AsyncClient`` per adapter, reused across calls (connection pooling); a new one is made if the
    adapter is used from another event loop (e.g. a notebook calling ``asyncio.run`` twice).

    Example (calls your webhook, so not run as a doctest)::

        agent = WebhookAgent("https://bot.example.com/convoeval", timeout=30)
        reply = await agent.respond("Hi, I need my invoice", session)
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = None,
        max_body_bytes: int | None = None,
        retries: int = DEFAULT_RETRIES,
        client: httpx.AsyncClient | None = None,
    ):
        """Configure the adapter.

        Args:
            url: The webhook URL (``http://`` or ``https://``).
            timeout: Seconds for the whole exchange, retries included (default ``$CONVOEVAL_AGENT_TIMEOUT`` or 60).
            max_body_bytes: Largest response body read (default ``$CONVOEVAL_AGENT_MAX_BYTES`` or 1 MB).
            retries: Extra attempts after a connection failure or a 429/503 (honouring ``Retry-After``).
            client: A client to use instead of the adapter's own (the caller closes it).

        Raises:
            ValueError: a malformed URL, limit or ``CONVOEVAL_AGENT_AUTH_HEADER``.
        """
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"agent target {safe_url(url)!r} is not a valid URL ({exc})") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"agent target {safe_url(url)!r} must be an http:// or https:// URL with a host")
        self.url = url
        self.name = safe_url(url)
        self.timeout = float(timeout) if timeout is not None else _number_from_env(TIMEOUT_ENV, DEFAULT_TIMEOUT, float)
        self.max_body_bytes = (
            int(max_body_bytes)
            if max_body_bytes is not None
            else int(_number_from_env(MAX_BYTES_ENV, DEFAULT_MAX_BODY_BYTES, int))
        )
        if self.timeout <= 0 or self.max_body_bytes <= 0:
            raise ValueError("timeout and max_body_bytes must be positive")
        self.retries = max(0, int(retries))
        self._auth = _auth_from_env()
        hide_in_logs(parsed, *(self._auth.secrets() if self._auth else ()))
        self._own_client = client is None
        self._client = client
        self._client_loop: asyncio.AbstractEventLoop | None = None
        # ``…/hook#idle``: the webhook asks for the WhatsApp channel's quiet moments (docs/whatsapp.md). A fragment is
        # never sent over HTTP, so the URL the webhook sees is unchanged; without it the agent has no ``idle``.
        if parsed.fragment == "idle":
            self.idle = self._idle

    def __repr__(self) -> str:
        auth = f", auth={self._auth!r}" if self._auth else ""
        return f"WebhookAgent({self.name!r}, timeout={self.timeout:g}, max_body_bytes={self.max_body_bytes}{auth})"

    # -- public -----------------------------------------------------------------------------------------------

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        """POST the message and session; validate the JSON reply.

        Raises:
            AgentError: timeout, connection failure, non-2xx, oversized or invalid body, or a reply that breaks
                the contract; the message says which.
        """
        return await self._exchange({"message": message, "session": session.to_json()},
                                    waiting=session.inbound is not None)

    async def _idle(self, session: AgentSession) -> AgentReply:
        """The channel's quiet moment (``session.now``): POST ``{"event": "idle", "message": "", "session": …}``;
        the webhook answers the kept fragments, a follow-up, or ``{"bubbles": []}`` (nothing)."""
        return await self._exchange({"event": "idle", "message": "", "session": session.to_json()}, waiting=True)

    async def _exchange(self, payload: dict[str, Any], *, waiting: bool) -> AgentReply:
        refusals: list[str] = []
        # Our own client (its TLS context took 0.8 s on a loaded 2-core machine) is built before the agent's clock starts.
        self._client_for_this_loop()
        try:
            async with asyncio.timeout(self.timeout):
                status, body = await self._post_with_retries(payload, refusals)
        except TimeoutError:
            if refusals:
                # Every try so far was refused and none started sending: nothing listens there, whatever number of
                # retries the machine's load let fit in the deadline.
                raise AgentError(self._unreachable(refusals)) from None
            raise AgentError(f"agent {self.name!r} did not answer within {self.timeout:g} s") from None
        if not 200 <= status < 300:
            raise AgentError(f"agent {self.name!r} answered HTTP {status}: {self._snippet(body)}")
        try:
            # JSON on the wire is UTF-8 (RFC 8259); json.loads(bytes) would also guess UTF-16/32 from the first bytes.
            data = json.loads(body.decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise AgentError(f"agent {self.name!r} sent a body that is not UTF-8 JSON") from None
        except json.JSONDecodeError as exc:
            raise AgentError(
                f"agent {self.name!r} sent invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                f"body starts with: {self._snippet(body)}"
            ) from None
        return reply_from_mapping(self.name, data, waiting=waiting)

    async def aclose(self) -> None:
        """Close the adapter's HTTP client (a client passed in by the caller is left open)."""
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> WebhookAgent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- internals --------------------------------------------------------------------------------------------

    def _client_for_this_loop(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or (self._own_client and self._client_loop is not loop):
            # A pooled connection belongs to the loop that opened it; a client from a finished loop cannot be reused.
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), follow_redirects=False)
            self._client_loop = loop
        return self._client

    async def _post_with_retries(self, payload: dict[str, Any], refusals: list[str]) -> tuple[int, bytes]:
        """POST with retries on refused connections and 429/503.

        ``refusals`` holds the refused tries since the last one that started sending: it is emptied as soon as a
        request's headers go out (the agent may have received it, so a later timeout is a real one).
        """
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        if self._auth:
            headers.update(self._auth.headers())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                status, retry_after, body = await self._post_once(payload, headers, refusals)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # The request never reached the agent, so resending cannot double an action.
                refusals.append(type(exc).__name__)
                if last:
                    raise AgentError(self._unreachable(refusals)) from None
                wait = 0.25 * 2**attempt
            except httpx.TimeoutException:
                raise TimeoutError from None
            except httpx.HTTPError as exc:
                raise AgentError(f"agent {self.name!r}: HTTP failure ({type(exc).__name__}: {exc})") from None
            else:
                if status not in _RETRY_STATUSES or last:
                    return status, body
                wait = retry_after if retry_after is not None else 0.25 * 2**attempt
            wait *= 1 + random.random() * 0.1  # jitter so retried conversations do not arrive in lockstep
            if loop.time() + wait >= deadline:
                # No room for another try: report what the agent did (refused, answered 503), not a vague timeout
                # whose wording would depend on how loaded the machine was.
                if refusals:
                    raise AgentError(self._unreachable(refusals)) from None
                return status, body
            log.debug("agent %s: retrying in %.2f s (attempt %d)", self.name, wait, attempt + 2)
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _post_once(
        self, payload: dict[str, Any], headers: dict[str, str], refusals: list[str]
    ) -> tuple[int, float | None, bytes]:
        async def sending(event: str, info: dict[str, Any]) -> None:
            # httpcore's trace hook: from the request's first header on, the agent may have the message.
            if event.endswith("send_request_headers.started"):
                refusals.clear()

        client = self._client_for_this_loop()
        async with client.stream("POST", self.url, json=payload, headers=headers,
                                 extensions={"trace": sending}) as response:
            ok = response.is_success
            # An error page only needs enough for a snippet; a reply needs up to the limit.
            limit = self.max_body_bytes if ok else 4096
            body = await self._read_bounded(response, limit, enforce=ok)
            return response.status_code, _retry_after(response), body

    def _unreachable(self, refusals: list[str]) -> str:
        tries = f"{len(refusals)} tr{'y' if len(refusals) == 1 else 'ies'}"
        return f"agent {self.name!r} is unreachable ({refusals[-1]}); gave up after {tries} within {self.timeout:g} s"

    async def _read_bounded(self, response: httpx.Response, limit: int, *, enforce: bool) -> bytes:
        declared = response.headers.get("content-length", "")
        if enforce and declared.isdigit() and int(declared) > limit:
            raise AgentError(self._too_big(f"declares {int(declared):,} bytes"))
        buffer = bytearray()
        async for chunk in response.aiter_bytes():
            buffer += chunk
            if len(buffer) > limit:
                if enforce:
                    # Leaving the stream now closes the connection: the rest of the body is never downloaded.
                    raise AgentError(self._too_big(f"sent more than {limit:,} bytes"))
                return bytes(buffer[:limit])
        return bytes(buffer)

    def _too_big(self, what: str) -> str:
        return (
            f"agent {self.name!r} reply body {what}, over the limit of {self.max_body_bytes:,} bytes "
            f"(set max_body_bytes or ${MAX_BYTES_ENV} to raise it)"
        )

    def _snippet(self, body: bytes) -> str:
        text = " ".join(body[: _SNIPPET_CHARS * 4].decode("utf-8", errors="replace").split())
        if self._auth:
            text = self._auth.redact(text)
        if len(text) > _SNIPPET_CHARS:
            text = text[:_SNIPPET_CHARS] + "…"
        return repr(text) if text else "(empty body)"


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(raw)) if raw else None
    except ValueError:
        return None  # an HTTP-date; fall back to our own backoff
