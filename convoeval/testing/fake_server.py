"""A local OpenAI-compatible test server that answers on cue and misbehaves on demand.

``FakeOpenAIServer`` listens on 127.0.0.1 on a free port and answers ``POST /v1/chat/completions`` (plain text, tool
calls for structured output, ``response_format`` JSON, usage numbers) and ``GET /v1/models``, with a configurable
latency. Faults can be scripted per request or injected at a rate: 429 with ``Retry-After``, 500/503, timeouts,
dropped connections, malformed or truncated JSON, empty replies, refusals, 400/401.

It is built on the standard library's ``ThreadingHTTPServer`` running in a background thread: no dependency beyond
Python, it serves sync and async clients alike (its own thread, not the test's event loop), and a thread per
connection is plenty for the few hundred concurrent calls a benchmark makes.

Example (``await acall_model(...)`` in a coroutine is the same):
    >>> from langchain_openai import ChatOpenAI
    >>> from convoeval.llm import RetryPolicy, call_model
    >>> quick = RetryPolicy(initial_wait=0.01)                # the default backs off half a second, then doubles
    >>> with FakeOpenAIServer(latency=0.05) as server:
    ...     _ = server.fail_next("429", "500")         # the next two requests fail, then normal replies
    ...     model = ChatOpenAI(base_url=server.base_url, api_key="x", model=server.model, max_retries=0)
    ...     reply = call_model(model, [("user", "hi")], cache="off", retry=quick)   # retried twice, then answered
    >>> dict(server.stats["faults"])
    {'429': 1, '500': 1}
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["SERVER_FAULTS", "FakeOpenAIServer", "ServerFault", "example_from_schema"]

#: Every fault the server can inject.
SERVER_FAULTS = (
    "429", "500", "503", "400", "401", "timeout", "drop", "malformed", "truncated", "empty", "refusal",
)  # fmt: skip

REFUSAL_TEXT = "I'm sorry, but I can't help with that request."


@dataclass(frozen=True)
class ServerFault:
    """A scripted failure.

    Attributes:
        kind: One of ``SERVER_FAULTS``.
        retry_after: ``Retry-After`` seconds sent with a 429.
        hang_s: How long a ``timeout`` fault keeps the request open (longer than the client's timeout).
    """

    kind: str
    retry_after: float = 0.0
    hang_s: float = 30.0

    def __post_init__(self) -> None:
        if self.kind not in SERVER_FAULTS:
            raise ValueError(f"unknown fault {self.kind!r}; expected one of {SERVER_FAULTS}")


#: A scripted reply: text, a dict (structured answer: tool call arguments or JSON content), or a ServerFault.
Reply = str | dict | ServerFault
Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAIServer:
    """An OpenAI-compatible HTTP server for tests and benchmarks.

    Args:
        replies: Scripted replies, used in order (then ``responder``, then generated replies).
        responder: Called with the request JSON when the script is empty; returns a reply.
        latency: Seconds before each answer, or a callable of the request JSON returning seconds.
        fault_rate: Random faults: ``{"429": 0.1, "timeout": 0.05}`` (probabilities per request), seeded.
        seed: Seed of the fault dice, so a faulty run is repeatable.
        model: The model name the server reports.
        retry_after: ``Retry-After`` seconds of injected 429s.
        hang_s: How long an injected ``timeout`` holds the request.
        usage: Fixed ``(prompt_tokens, completion_tokens)``; default counts words.

    Attributes:
        requests: The JSON body of every chat request received (headers are not kept: they carry keys).
        stats: Counters: ``requests``, ``replies``, ``faults`` per kind, and ``max_in_flight`` (the most requests
            being answered at once).
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        latency: float | Callable[[dict[str, Any]], float] = 0.0,
        fault_rate: Mapping[str, float] | None = None,
        seed: int = 0,
        model: str = "fake-model",
        retry_after: float = 0.0,
        hang_s: float = 30.0,
        usage: tuple[int, int] | None = None,
    ) -> None:
        for kind in fault_rate or {}:
            ServerFault(kind)  # validates the name
        self.model = model
        self.responder = responder
        self.latency = latency
        self.fault_rate = dict(fault_rate or {})
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.usage = usage
        self.requests: list[dict[str, Any]] = []
        self.stats: dict[str, Any] = {"requests": 0, "replies": 0, "faults": Counter(), "max_in_flight": 0}
        self._in_flight = 0
        self._script: deque[Reply] = deque(replies)
        self._faults: deque[ServerFault] = deque()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Start serving on 127.0.0.1 on a free port (see ``base_url``)."""
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release requests held by ``timeout`` faults or latency."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, e.g. ``http://127.0.0.1:43211/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script -----------------------------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> FakeOpenAIServer:
        """Append scripted replies."""
        with self._lock:
            self._script.extend(replies)
        return self

    def fail_next(self, *kinds: str | ServerFault) -> FakeOpenAIServer:
        """Make the next requests fail, one fault each, before any scripted reply is used."""
        faults = [k if isinstance(k, ServerFault) else ServerFault(k, self.retry_after, self.hang_s) for k in kinds]
        with self._lock:
            self._faults.extend(faults)
        return self

    # -- answering ----------------------------------------------------------------------------------------------------

    def _next(self, request: dict[str, Any]) -> tuple[Reply, int]:
        """The reply for a request (pending fault, random fault, script, responder, generated) and its number."""
        with self._lock:
            self.stats["requests"] += 1
            number = self.stats["requests"]
            self.requests.append(request)
            if self._faults:
                return self._faults.popleft(), number
            for kind, rate in self.fault_rate.items():
                if self._rng.random() < rate:
                    return ServerFault(kind, self.retry_after, self.hang_s), number
            if self._script:
                return self._script.popleft(), number
        if self.responder is not None:
            return self.responder(request), number
        return _generated(request, number), number

    def _delay(self, request: dict[str, Any]) -> None:
        seconds = self.latency(request) if callable(self.latency) else self.latency
        if seconds > 0:
            self._closing.wait(seconds)

    def completion(self, request: dict[str, Any], reply: str | dict, number: int) -> dict[str, Any]:
        """The chat-completion JSON for a reply: a tool call when the request forces a tool, else content."""
        tool = _forced_tool(request)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(reply, dict) and tool is not None:
            arguments = json.dumps(reply, ensure_ascii=False)
            message["tool_calls"] = [
                {"id": f"call_{number}", "type": "function", "function": {"name": tool, "arguments": arguments}}
            ]
            finish, completion_text = "tool_calls", arguments
        else:
            message["content"] = completion_text = json.dumps(reply) if isinstance(reply, dict) else reply
            finish = "stop"
        prompt_tokens, completion_tokens = self.usage or (
            sum(len(str(m.get("content") or "").split()) for m in request.get("messages", [])),
            len(completion_text.split()),
        )
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as OpenAI clients expect
    # Headers and body leave in separate writes; with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms per call), which would swamp the per-call overhead the benchmarks measure.
    disable_nagle_algorithm = True
    server_state: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests and benchmarks read stats, not access logs

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": self.server_state.model, "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        reply, number = state._next(request)
        with state._lock:
            state._in_flight += 1
            state.stats["max_in_flight"] = max(state.stats["max_in_flight"], state._in_flight)
        try:
            state._delay(request)
            self._answer(reply, request, number)
        finally:
            with state._lock:
                state._in_flight -= 1

    def _answer(self, reply: Reply, request: dict[str, Any], number: int) -> None:
        state = self.server_state
        if isinstance(reply, ServerFault):
            with state._lock:
                state.stats["faults"][reply.kind] += 1
            self._fault(reply, request, number)
            return
        with state._lock:
            state.stats["replies"] += 1
        self._json(200, state.completion(request, reply, number))

    def _fault(self, fault: ServerFault, request: dict[str, Any], number: int) -> None:
        state = self.server_state
        kind = fault.kind
        if kind in ("429", "500", "503", "400", "401"):
            messages = {
                "429": ("Rate limit reached for requests", "rate_limit_exceeded"),
                "500": ("The server had an error while processing your request", "server_error"),
                "503": ("The engine is currently overloaded", "server_error"),
                "400": ("Invalid request", "invalid_request_error"),
                "401": ("Incorrect API key provided", "invalid_api_key"),
            }
            text, code = messages[kind]
            headers = {"Retry-After": f"{fault.retry_after:g}"} if kind == "429" else {}
            self._json(int(kind), {"error": {"message": text, "type": code, "code": code}}, headers)
        elif kind == "timeout":
            state._closing.wait(fault.hang_s)  # the client gives up first; shutdown releases us
            self.close_connection = True
        elif kind == "drop":
            self.close_connection = True
            self.connection.close()
        elif kind == "malformed":
            self._raw(200, b'{"id": "chatcmpl-x", "choices": [ {"message": ', "application/json")
        elif kind == "truncated":
            payload = json.dumps(state.completion(request, "cut short", number)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()
        elif kind == "empty":
            self._json(200, state.completion(request, "", number))
        elif kind == "refusal":
            self._json(200, state.completion(request, REFUSAL_TEXT, number))

    def _json(self, status: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
        self._raw(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json", headers)

    def _raw(self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _forced_tool(request: dict[str, Any]) -> str | None:
    """The tool a request asks for: a forced ``tool_choice``, else the only tool offered with ``required``."""
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        forced: str | None = (choice.get("function") or {}).get("name")
        return forced
    tools = request.get("tools") or []
    if tools and choice in ("required", "any"):
        only: str = tools[0]["function"]["name"]
        return only
    return None


def _generated(request: dict[str, Any], number: int) -> str | dict:
    """A default reply: an object valid for the requested schema, or a short text."""
    tool = _forced_tool(request)
    if tool is not None:
        spec = next(t for t in request["tools"] if t["function"]["name"] == tool)
        arguments: dict[str, Any] = example_from_schema(spec["function"].get("parameters") or {})  # an object
        return arguments
    response_format = request.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        answer: dict[str, Any] = example_from_schema(response_format["json_schema"].get("schema") or {})  # an object
        return answer
    if response_format.get("type") == "json_object":
        return {}
    return f"Fake reply {number}."


def example_from_schema(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small value valid for a JSON schema (objects, arrays, enums, strings with maxLength, numbers, refs)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return example_from_schema(defs[schema["$ref"].split("/")[-1]], defs)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            options = [s for s in schema[combinator] if s.get("type") != "null"] or schema[combinator]
            return example_from_schema(options[0], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_from_schema(sub, defs) for name, sub in props.items()}
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        return [example_from_schema(schema.get("items", {}), defs) for _ in range(count)]
    if kind == "string":
        text = "ok".ljust(schema.get("minLength", 0), "k")
        return text[: schema.get("maxLength", len(text))]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    return None
