"""The benchmarks' LLM: ``convoeval.testing.FakeOpenAIServer`` in a process of its own, on 127.0.0.1.

Run by ``benchmarks.common.FakeLLM``, never by hand. It answers the simulator with a patient who needs ``--turns``
messages to reach ``[GOAL_COMPLETE]`` and the judges with generated, schema-valid tool calls, after ``--latency``
seconds, reporting ``--usage`` tokens. A separate process keeps the server's own CPU (HTTP parsing, JSON,
threads) out of the measurements of convoeval's process, as a real remote endpoint would.

Protocol on standard input/output: it prints ``READY <base_url>``; each ``stats`` line read is answered with one
JSON line of the server's counters, ``reset-peak`` zeroes ``max_in_flight`` (answering ``{}``); ``quit`` or end
of input stops it. It also stops by itself after ``--lifetime``
seconds, so a crashed benchmark never leaves it running.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from convoeval.testing import FakeOpenAIServer, example_from_schema

#: The patient's lines, in order; the last one a patient sends carries the stop signal.
PATIENT_LINES = (
    "Oi, quero pagar minha fatura",
    "Pix, por favor",
    "Sim, pode gerar",
    "Qual o valor mesmo?",
    "Certo, e o vencimento?",
    "Entendi",
    "Pode mandar o link de novo?",
    "Ok",
)


def patient_reply(request: dict[str, Any], turns: int) -> str | None:
    """The simulator's reply (``None`` for any other call): line k of the patient, ``[GOAL_COMPLETE]`` at ``turns``.

    The simulator's chat framing sends the patient's own earlier messages as ``assistant`` turns, so their count is
    the index of the message being written.
    """
    if request.get("tools") or request.get("response_format"):
        return None  # a judge (structured output): the server's generated, schema-valid answer
    written = sum(1 for m in request.get("messages") or [] if m.get("role") == "assistant")
    line = PATIENT_LINES[written % len(PATIENT_LINES)]
    return f"{line} [GOAL_COMPLETE]" if written + 1 >= turns else line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--turns", type=int, default=6, help="patient messages per conversation, the last ending it")
    parser.add_argument("--usage", default="", help="fixed PROMPT,COMPLETION tokens per reply (default: word counts)")
    parser.add_argument("--lifetime", type=float, default=1800.0, help="stop after this many seconds regardless")
    args = parser.parse_args(argv)

    # A sweep opens a few hundred connections at once; the standard library's listen backlog of 5 would drop the
    # surplus SYNs and the kernel would retry them a second later, a stall that belongs to no real endpoint.
    ThreadingHTTPServer.request_queue_size = 1024
    ThreadingHTTPServer.handle_error = _quiet_on_hang_up  # type: ignore[method-assign]
    usage = tuple(int(x) for x in args.usage.split(",")) if args.usage else None

    def responder(request: dict[str, Any]) -> Any:
        return patient_reply(request, args.turns) or judge_reply(request)

    server = FakeOpenAIServer(responder=responder, latency=args.latency, usage=usage).start()
    threading.Timer(args.lifetime, lambda: os._exit(3)).start()
    print(f"READY {server.base_url}", flush=True)
    for line in sys.stdin:
        if line.strip() == "stats":
            stats = {**server.stats, "faults": dict(server.stats["faults"])}
            print(json.dumps(stats), flush=True)
        elif line.strip() == "reset-peak":
            with server._lock:
                server.stats["max_in_flight"] = 0
            print("{}", flush=True)
        elif line.strip() == "quit":
            break
    server.stop()
    os._exit(0)  # the lifetime timer is not a daemon thread


def _quiet_on_hang_up(self: ThreadingHTTPServer, request: Any, client_address: Any) -> None:
    """A client closing its kept-alive connections at the end of a run is normal here, not an error to print."""
    if not isinstance(sys.exc_info()[1], ConnectionError):
        ThreadingHTTPServer.__base__.handle_error(self, request, client_address)  # type: ignore[union-attr]


def judge_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A schema-valid answer to a structured-output call (the tool it forces, or its JSON schema)."""
    choice = request.get("tool_choice")
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    for tool in request.get("tools") or []:
        if name in (None, tool["function"]["name"]):
            return example_from_schema(tool["function"].get("parameters") or {})
    response_format = request.get("response_format") or {}
    return example_from_schema((response_format.get("json_schema") or {}).get("schema") or {})


if __name__ == "__main__":
    sys.exit(main())
