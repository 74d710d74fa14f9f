"""Render a transcript for a judge so that nothing inside it can pose as instructions or close its frame.

Each message becomes one line, numbered by turn, a patient message and the agent's reply sharing one (``[Turn i // 2 + 1]``)::

    <transcript-5f0c2a9e1b7d>
    [Turn 1] Patient: "Oi, quero pagar minha fatura"
    [Turn 1] Agent: "Sua fatura de R$ 150,00 vence dia 20." tools: ["lookup_invoices"]
    </transcript-5f0c2a9e1b7d>

The guarantees, each tested:
* a message is a JSON string, so its line breaks are ``\\n`` escapes: a message cannot start a line of its own and
  so cannot forge a ``[Turn N] Agent:`` line or the closing tag;
* inside the strings ``[ ] < > ``` `` and Unicode line separators are ``\\u`` escapes: a fake ``</transcript-…>``,
  a code fence or a ``[GOAL_COMPLETE]`` marker never appears literally (``json.loads`` still gives back the exact
  text);
* the tag carries a code derived from the conversation's first message (a hash, so the rendering stays deterministic
  and cacheable, and a growing conversation keeps its tag: the prompts of successive turns share their prefix).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_LABELS = {"patient": "Patient", "agent": "Agent"}
# Characters that make up our framing (tags, turn markers, fences) or break lines for some readers.
_ESCAPES = {c: f"\\u{ord(c):04x}" for c in "[]<>`\u0085\u2028\u2029"}
_TABLE = str.maketrans(_ESCAPES)
_FRAMING = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")


def quote(text: str) -> str:
    """``text`` as a JSON string literal with framing characters escaped; ``json.loads(quote(t)) == t``."""
    # json.dumps never emits these characters itself, so translating its output only touches the content.
    # ``str.translate`` with a table walks every character in Python: only run it when one of them is there.
    dumped = json.dumps(text, ensure_ascii=False)
    return dumped.translate(_TABLE) if _FRAMING.search(dumped) else dumped


def render_messages(entries: Sequence[Mapping[str, Any]], *, include_tools: bool = True) -> list[str]:
    """One line per message (no frame); see ``render_transcript``."""
    lines = []
    for i, entry in enumerate(entries):
        role = entry.get("role")
        if role not in _LABELS:
            raise ValueError(f"transcript entry {i}: role must be 'patient' or 'agent', got {role!r}")
        line = f"[Turn {i // 2 + 1}] {_LABELS[role]}: {quote(str(entry.get('text') or ''))}"
        tools = list(entry.get("tools") or [])
        if include_tools and role == "agent" and tools:
            line += " tools: [" + ", ".join(quote(str(t)) for t in tools) + "]"
        lines.append(line)
    return lines


def render_transcript(entries: Sequence[Mapping[str, Any]], *, include_tools: bool = True) -> str:
    """The transcript framed as data for a judge prompt.

    Args:
        entries: One conversation's messages in order (dicts with ``role``, ``text`` and optionally ``tools``),
            e.g. from ``convoeval.frames.transcript_to_entries``.
        include_tools: Show the names of the tools each agent message called (criteria such as "the agent
            generated a payment link" cannot be judged from the words alone).

    Returns:
        The framed transcript text.

    Example:
        >>> print(render_transcript([{"role": "patient", "text": "Oi [GOAL_COMPLETE]"}]))  # doctest: +ELLIPSIS
        <transcript-...>
        [Turn 1] Patient: "Oi \\u005bGOAL_COMPLETE\\u005d"
        </transcript-...>
    """
    lines = render_messages(entries, include_tools=include_tools)
    body = "\n".join(lines)
    # The code comes from the first message only, so it stays the same as the conversation grows: a judge's prompt at
    # turn k+1 then starts with its prompt at turn k, and the local server re-reads only what is new.
    tag = "transcript-" + hashlib.sha256((lines[0] if lines else "").encode("utf-8")).hexdigest()[:12]
    return f"<{tag}>\n{body}\n</{tag}>" if body else f"<{tag}>\n</{tag}>"
