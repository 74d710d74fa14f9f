"""Replaying a recorded patient: send a conversation's patient messages again before the simulator takes over.

Two analyses need a conversation that starts the way an earlier one did:

* comparing two versions of an agent: the candidate first receives the baseline's patient messages turn by turn,
  as long as its replies stay equivalent to the baseline's (same tools, same normalized text); from the first
  reply that differs, the simulator continues with the same seed. Differences then come from the agent, not from
  the simulator's randomness (``PatientReplay(..., agent_replies=...)``);
* forking a conversation at turn k: its first k patient messages are sent verbatim whatever the agent answers,
  then the simulator continues with a new seed (``PatientReplay(..., agent_replies=None)``).

A replay changes nothing else: the store is seeded afresh, the agent really answers every message, and the run is
judged and asserted as usual. Its run row records how many patient turns were replayed and the turn at which the
agent's reply first differed from the recording (``replayed_turns``, ``divergence_turn``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PatientReplay", "RecordedReply", "normalize_reply_text", "replay_from_transcript", "same_reply"]


@dataclass(frozen=True)
class RecordedReply:
    """What the agent answered at one turn of the recording: its text and the tools it called, in order."""

    text: str
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatientReplay:
    """Recorded patient turns to send before the simulator takes over.

    Attributes:
        messages: the patient's messages by turn (turn 1 first), each with the stop signal it carried, if any
            (a replayed ``[GOAL_COMPLETE]`` ends the conversation as the original did).
        agent_replies: the recorded agent replies by turn. Given, the replay stops after the first turn whose
            reply differs (``same_reply``); ``None`` replays every message whatever the agent answers (a fork).
    """

    messages: tuple[tuple[str, str | None], ...]
    agent_replies: tuple[RecordedReply, ...] | None = None

    def __post_init__(self) -> None:
        if self.agent_replies is not None and len(self.agent_replies) < len(self.messages) - 1:
            # The last message may end the conversation with a stop signal and have no reply after it.
            raise ValueError(f"a replay of {len(self.messages)} patient messages needs at least "
                             f"{len(self.messages) - 1} recorded agent replies, got {len(self.agent_replies)}")

    def message(self, turn: int) -> tuple[str, str | None] | None:
        """The recorded patient message (text, signal) of ``turn`` (1-based), or ``None`` past the recording."""
        return self.messages[turn - 1] if 1 <= turn <= len(self.messages) else None

    def reply(self, turn: int) -> RecordedReply | None:
        """The recorded agent reply of ``turn`` (1-based), or ``None`` when there is none to compare with."""
        if self.agent_replies is None or not 1 <= turn <= len(self.agent_replies):
            return None
        return self.agent_replies[turn - 1]


_SPACE = re.compile(r"\s+")
#: Identifiers an agent makes afresh in every conversation (UUIDs, hex tokens such as a payment link's id): two
#: replies that differ only there are the same reply. Amounts, dates and names are kept: they are what differs.
_FRESH_ID = re.compile(r"\b(?=[0-9a-f-]*[0-9])(?=[0-9a-f-]*[a-f])[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b")


def normalize_reply_text(text: str) -> str:
    """The text two replies are compared on: case-folded, whitespace collapsed, fresh identifiers masked."""
    folded = _SPACE.sub(" ", text or "").strip().casefold()
    return _FRESH_ID.sub("<id>", folded)


def same_reply(recorded: RecordedReply, text: str, tools: Sequence[str]) -> bool:
    """Whether a live reply is equivalent to a recorded one: the same tools in the same order and the same text."""
    return tuple(tools) == tuple(recorded.tools) and normalize_reply_text(text) == normalize_reply_text(recorded.text)


def replay_from_transcript(transcript: Iterable[Mapping[str, Any]], *, up_to_turn: int | None = None,
                           until_divergence: bool = True) -> PatientReplay:
    """A replay from one conversation's transcript rows (``TRANSCRIPT_SCHEMA`` dicts or a DataFrame's records).

    Args:
        transcript: the rows of ONE conversation, in any order (sorted here by turn, patient before agent).
        up_to_turn: replay only turns 1..k (a fork at turn k); ``None`` replays every patient turn.
        until_divergence: keep the agent's recorded replies so the replay stops at the first reply that differs
            (comparing versions); ``False`` replays the messages whatever the agent answers (forking).

    Raises:
        ValueError: the rows hold more than one conversation, or no patient message.
    """
    rows = [dict(r) for r in transcript]
    run_ids = {r.get("run_id") for r in rows}
    if len(run_ids) > 1:
        raise ValueError(f"a replay is made from one conversation's transcript, got {len(run_ids)} run ids")
    order = {"patient": 0, "agent": 1}
    rows.sort(key=lambda r: (int(r["turn"]), order.get(str(r["role"]), 2)))
    if up_to_turn is not None:
        rows = [r for r in rows if int(r["turn"]) <= up_to_turn]
    patients = [r for r in rows if r["role"] == "patient"]
    if not patients:
        raise ValueError("the transcript has no patient message to replay")
    messages = tuple((str(r["text"]), _signal(r.get("signal"))) for r in patients)
    replies = None
    if until_divergence:
        replies = tuple(RecordedReply(str(r["text"]), tuple(_tools(r.get("tools")))) for r in rows
                        if r["role"] == "agent")
    return PatientReplay(messages=messages, agent_replies=replies)


def _signal(value: Any) -> str | None:
    """A row's stop signal, or ``None`` for a missing one (``None``, NaN or ``pd.NA`` from a frame)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return None
    return str(value) or None


def _tools(value: Any) -> list[str]:
    if value is None:
        return []
    try:
        return [str(t) for t in value]
    except TypeError:
        return []
