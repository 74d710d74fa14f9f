"""The stub LLM of the τ² side by side: ``stub_llm.py``'s asyncio server with answers for both harnesses.

Every request waits ``--latency`` seconds. Who is asking is read from the request:

* a user simulator — τ²'s (its system prompt holds τ²'s guidelines and no ``[GOAL_COMPLETE]``) or convoeval's LLM
  patient (its prompt names ``[GOAL_COMPLETE]``): the user's own earlier messages come back as ``assistant`` turns,
  so their count is the message being written; the ``--turns``-th ends the conversation (τ²'s ``###STOP###``,
  convoeval's ``[GOAL_COMPLETE]``);
* an agent (a request with tools and no forced tool choice, τ²'s or convoeval's openai-chat): a plain text answer,
  no tool call, so both harnesses hold the same conversation;
* a judge (a forced tool or a ``response_format`` schema): a schema-valid answer (``fake_llm.judge_reply``).

Usage: python benchmarks/tau2_stub.py --latency 0.2 --turns 4 (prints ``READY <base_url>``; ``stats`` on stdin).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import stub_llm  # noqa: E402
from benchmarks.fake_llm import judge_reply  # noqa: E402

USER_LINES = ["Hi, I need help with my reservation.", "My user id is in my profile; can you check it?",
              "Yes, that's right.", "Great, thank you."]


def _system(request: dict[str, Any]) -> str:
    for message in request.get("messages") or []:
        if message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def kind(request: dict[str, Any]) -> str:
    """``tau2_user``, ``convoeval_patient``, ``agent`` or ``judge``."""
    choice = request.get("tool_choice")
    if request.get("response_format") or (isinstance(choice, dict) and choice.get("function")) or choice == "required":
        return "judge"
    if request.get("tools"):
        return "agent"
    system = _system(request)
    if "[GOAL_COMPLETE]" in system:
        return "convoeval_patient"
    return "tau2_user" if "User Simulation Guidelines" in system else "agent"


def reply(request: dict[str, Any], turns: int) -> Any:
    """The answer to one request (see the module's docstring)."""
    who = kind(request)
    if who == "judge":
        return judge_reply(request)
    if who == "agent":
        return "Thank you. I have looked into it; is there anything else I can help you with?"
    written = sum(1 for m in request.get("messages") or [] if m.get("role") == "assistant")
    line = USER_LINES[written % len(USER_LINES)]
    if written + 1 >= turns:
        return f"{line} ###STOP###" if who == "tau2_user" else f"{line} [GOAL_COMPLETE]"
    return line


class Tau2Stub(stub_llm.Stub):
    """``stub_llm.Stub`` with this module's answers."""

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        if method == "POST" and path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            request = json.loads(body or b"{}")
            self.requests += 1
            self.by_kind[kind(request)] += 1
            self.replies += 1
            return 200, json.dumps(self.builder.completion(request, reply(request, self.turns), self.requests),
                                   ensure_ascii=False).encode()
        return super().answer(method, path, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--usage", default="")
    parser.add_argument("--lifetime", type=float, default=3600.0)
    stub_llm.Stub = Tau2Stub  # type: ignore[misc]  # serve() builds the module's Stub
    asyncio.run(stub_llm.serve(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
