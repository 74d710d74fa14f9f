"""A lean OpenAI-compatible stub on asyncio: the answers of ``fake_llm.py`` at a fraction of its CPU per request.

``fake_llm.py`` serves through the standard library's ``ThreadingHTTPServer``: a thread per connection and the
``http.server`` parser, about 1 ms of CPU per request. When a benchmark keeps 200–500 conversations in flight on a
2-core machine, that is CPU taken from the tool being measured (the stub shares the cores), so the peer comparison
(``bench_peers.py``) uses this one: one event loop, a minimal HTTP/1.1 parser (``Content-Length`` bodies,
keep-alive), a timer per request for the latency. Its answers are ``fake_llm``'s: the simulator gets a patient who
needs ``--turns`` messages, the last carrying ``[GOAL_COMPLETE]``; a judge gets a schema-valid answer as a tool call
(when the request forces a tool) or as JSON content (``response_format`` ``json_schema``). Nothing else of the
OpenAI API is served (no streaming, no faults: ``convoeval.testing.FakeOpenAIServer`` is for those).

Protocol on standard input/output, the same as ``fake_llm.py``: it prints ``READY <base_url>``; ``stats`` is
answered with one JSON line (``requests``, ``replies``, ``by_kind`` — ``simulator``, ``judge_tool``,
``judge_json_schema``, ``other`` —, ``max_in_flight``, ``cpu_s``: this process's own CPU seconds so far),
``reset-peak`` zeroes ``max_in_flight``, ``quit`` or end of input stops it, and so does ``--lifetime``.

Usage (from ``benchmarks.common.FakeLLM(lean=True)``, not by hand):
    python benchmarks/stub_llm.py --latency 0.2 --turns 5 --lifetime 1800
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.fake_llm import judge_reply, patient_reply  # noqa: E402
from convoeval.testing import FakeOpenAIServer  # noqa: E402  (only its reply builder; no server is started)

_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}


class Stub:
    """The answering logic and the counters, shared by every connection."""

    def __init__(self, *, latency: float, turns: int, usage: tuple[int, int] | None) -> None:
        self.latency, self.turns = latency, turns
        self.builder = FakeOpenAIServer(usage=usage)  # ``completion()`` builds the chat-completion JSON
        self.requests = 0
        self.replies = 0
        self.by_kind: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        """Status and JSON body for one request."""
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path.endswith("/models"):
            return 200, b'{"object": "list", "data": [{"id": "fake-model", "object": "model"}]}'
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, b'{"error": {"message": "not found", "type": "invalid_request_error"}}'
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return 400, b'{"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}'
        self.requests += 1
        self.by_kind[_kind(request)] += 1
        reply = patient_reply(request, self.turns) or judge_reply(request)
        self.replies += 1
        return 200, json.dumps(self.builder.completion(request, reply, self.requests), ensure_ascii=False).encode()

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "replies": self.replies, "by_kind": dict(self.by_kind),
                "max_in_flight": self.max_in_flight, "cpu_s": round(time.process_time(), 3)}


def _kind(request: dict[str, Any]) -> str:
    if request.get("tools"):
        return "judge_tool"
    if (request.get("response_format") or {}).get("type") == "json_schema":
        return "judge_json_schema"
    return "simulator" if request.get("messages") else "other"


class Connection(asyncio.Protocol):
    """One keep-alive connection: parse each request, answer it ``latency`` seconds later."""

    def __init__(self, stub: Stub, loop: asyncio.AbstractEventLoop) -> None:
        self.stub, self.loop = stub, loop
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.close_after = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            length, close = 0, False
            for line in head[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    length = int(value.strip())
                elif name == "connection" and value.strip().lower() == "close":
                    close = True
            if len(self.buffer) < end + 4 + length:
                return  # the body is still arriving
            body = bytes(self.buffer[end + 4:end + 4 + length])
            del self.buffer[:end + 4 + length]
            method, path, *_ = head[0].split(" ")
            status, payload = self.stub.answer(method, path, body)
            self.close_after = self.close_after or close
            self.stub.in_flight += 1
            self.stub.max_in_flight = max(self.stub.max_in_flight, self.stub.in_flight)
            delay = self.stub.latency if status == 200 and method == "POST" else 0.0
            self.loop.call_later(delay, self._send, status, payload)

    def _send(self, status: int, payload: bytes) -> None:
        self.stub.in_flight -= 1
        if self.transport is None or self.transport.is_closing():
            return
        head = (b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % (status, _REASONS.get(status, b"OK"), len(payload)))
        self.transport.write(head + payload)
        if self.close_after:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    usage = tuple(int(x) for x in args.usage.split(",")) if args.usage else None
    stub = Stub(latency=args.latency, turns=args.turns, usage=usage)  # type: ignore[arg-type]
    server = await loop.create_server(lambda: Connection(stub, loop), "127.0.0.1", 0, backlog=2048)
    port = server.sockets[0].getsockname()[1]
    loop.call_later(args.lifetime, os._exit, 3)  # a crashed benchmark never leaves it running
    print(f"READY http://127.0.0.1:{port}/v1", flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while raw := await reader.readline():  # b"" at end of input
        line = raw.decode().strip()
        if line == "stats":
            print(json.dumps(stub.stats()), flush=True)
        elif line == "reset-peak":
            stub.max_in_flight = 0
            print("{}", flush=True)
        elif line == "quit":
            break
    server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--turns", type=int, default=6, help="patient messages per conversation, the last ending it")
    parser.add_argument("--usage", default="", help="fixed PROMPT,COMPLETION tokens per reply (default: word counts)")
    parser.add_argument("--lifetime", type=float, default=1800.0, help="stop after this many seconds regardless")
    asyncio.run(serve(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
