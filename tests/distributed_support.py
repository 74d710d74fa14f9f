"""Agents and a responder for the distributed tests; imported by Dask worker processes too (via PYTHONPATH).

* ``respond``: a plain agent that kills its own worker process the first time it is called in a run whose
  ``CONVOEVAL_TEST_KILL_MARKER`` file does not exist yet (it creates the file first, so it kills exactly once).
* ``varied_responder``: a cooperative simulator and judges whose verdicts and scores depend on the conversation's
  text, so that two runs agree only when they really had the same conversations.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Any

from test_reliability_support import HOLISTIC_DIMENSIONS, answer, forced_tool

KILL_MARKER_ENV = "CONVOEVAL_TEST_KILL_MARKER"
_RANDOM_TOKENS = re.compile(r"[A-Za-z0-9_-]{12,}")


def respond(message: str, session: Any) -> str:
    """Answer politely; die once (the whole worker process) when the kill marker is armed and not yet used."""
    marker = os.environ.get(KILL_MARKER_ENV)
    if marker and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os._exit(17)  # the worker process dies mid-conversation, as an OOM kill or a lost machine would
    return f"Entendi: {message[:40]}. Posso ajudar em algo mais?"


def varied_responder(request: dict[str, Any]) -> str | dict[str, Any]:
    messages = request.get("messages") or []
    text = "\n".join(str(m.get("content") or "") for m in messages)
    patient_turns = sum(1 for m in messages if m.get("role") == "assistant")
    tool = forced_tool(request.get("tools"), request.get("tool_choice"))
    reply = answer(tool, text, patient_turns)
    # Per-run ids and payment-link tokens differ between runs of the same conversation: left out of the digest.
    digest = zlib.crc32(_RANDOM_TOKENS.sub("", text).encode())
    if tool == "RubricAnswer":
        for verdict in reply["verdicts"]:  # type: ignore[index]
            verdict["passed"] = (digest >> verdict["index"]) % 3 != 0
    elif tool in ("HolisticAnswer", "TurnAnswer"):
        for i, dim in enumerate(reply["scores"]):  # type: ignore[index]
            reply["scores"][dim] = 4 + (digest >> i) % 7  # type: ignore[index]
    return reply


__all__ = ["HOLISTIC_DIMENSIONS", "KILL_MARKER_ENV", "respond", "varied_responder"]
