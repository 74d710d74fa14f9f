"""What every import format reads a file into, before anything is written: conversations of plain messages.

A reader (``whatsapp_export``, ``cloud_api``, ``otlp``, ``table``) turns a file into ``ImportedConversation`` objects
and the lines it could not read (``SkippedLine``: the file, the line number, why). The folder writer
(``convoeval.production.writing``) turns conversations into the frames of an ordinary run; the scrubber
(``convoeval.production.scrub``) rewrites their text in between. Nothing here knows a format.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

__all__ = ["ImportedConversation", "ImportedMessage", "ReadResult", "SkippedLine", "stable_id"]


@dataclass(frozen=True)
class ImportedMessage:
    """One message of a real conversation.

    Attributes:
        role: ``patient`` or ``agent`` (``convoeval.frames.MESSAGE_ROLES``).
        text: what the message says as a reader is told it (a media part as ``[audio: …]``, a tap as its title).
        sent_at: when it was sent (timezone-aware when the source says the zone; naive otherwise); ``None``: unknown.
        parts: the message as typed parts' dicts (``convoeval.channel.parts``); empty: one text part.
        message_id: the platform's id (a Cloud API ``wamid``), ``None`` when the source has none.
        delivery: patient rows ``delivered`` or ``redelivered`` (the same id seen again); agent rows ``reply``.
        tool_calls: the agent's tool calls, ``{"name", "arguments", "result"}`` (traces and tables carry them).
        sender: who the source says sent it (a name or a phone number), before any scrubbing.
        line: the line of the source file it starts on (1-based), for error messages.
    """

    role: str
    text: str
    sent_at: datetime | None = None
    parts: tuple[dict[str, Any], ...] = ()
    message_id: str | None = None
    delivery: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    sender: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class ImportedConversation:
    """One real conversation: its messages in order and where it came from.

    Attributes:
        key: unique within the import, safe in a file name and free of personal data (a hash of ``source_id``).
        format: the reader that made it (``whatsapp-export``, ``cloud-api``, ``otlp``, ``table``).
        source_file: the file it was read from.
        source_id: its id in the source (a chat file's name, a phone number, a trace id): personal data, kept
            out of the results folder unless ``--keep-original``.
        messages: the messages, oldest first.
        locale: the locale the source's dates or system lines were written in (``pt-BR``, ``en``, ``es``), if known.
        statuses: Cloud API delivery statuses of the agent's messages: ``message id -> sent|delivered|read|failed``.
        attributes: what else the source says about it (a trace's scenario, agent and target).
    """

    key: str
    format: str
    source_file: str
    source_id: str
    messages: tuple[ImportedMessage, ...]
    locale: str | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)

    def with_messages(self, messages: tuple[ImportedMessage, ...]) -> ImportedConversation:
        """The same conversation with other messages (scrubbed text, a shifted clock)."""
        return replace(self, messages=messages)


@dataclass(frozen=True)
class SkippedLine:
    """A line a reader could not read: skipped, reported, the rest of the file imported."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class ReadResult:
    """What one reader made of one file: its conversations and the lines it skipped."""

    conversations: list[ImportedConversation] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)


def stable_id(*parts: object) -> str:
    """32 hex digits from ``parts``: the same conversation imported twice gets the same ``run_id`` (and trace id).

    Example:
        >>> stable_id("whatsapp-export", "chat.txt", 1) == stable_id("whatsapp-export", "chat.txt", 1)
        True
        >>> len(stable_id("x"))
        32
    """
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:32]
