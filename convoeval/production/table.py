"""A plain table of messages, CSV or JSON Lines, for everything else: one row per message.

Columns (a header row in CSV, keys in JSON Lines): ``conversation_id`` (or ``conversation``), ``role`` (``patient``,
``user``, ``customer`` / ``agent``, ``assistant``, ``bot``), ``text``; optional ``time`` (ISO 8601 or Unix seconds),
``message_id`` and ``tool_calls`` (a JSON list of ``{"name", "arguments", "result"}``). Rows keep the file's order
within a conversation unless every row of it has a time. A row that cannot be read (no conversation id, an unknown
role, no text, a bad time, ``tool_calls`` that is not a JSON list) is reported with its line and skipped.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from convoeval.production.messages import ImportedConversation, ImportedMessage, ReadResult, SkippedLine, stable_id
from convoeval.production.settings import ImportSettings

__all__ = ["REQUIRED", "looks_like_table", "read_table"]

FORMAT = "table"
#: The columns every row needs (``conversation`` is accepted for ``conversation_id``).
REQUIRED = ("conversation_id", "role", "text")
_ROLES = {"patient": "patient", "user": "patient", "customer": "patient", "human": "patient",
          "agent": "agent", "assistant": "agent", "bot": "agent", "ai": "agent"}


def looks_like_table(columns: Mapping[str, Any] | list[str]) -> bool:
    """Whether a header row (or a first JSON object's keys) names the table's columns."""
    names = {str(c).strip().lower() for c in columns}
    return {"role", "text"} <= names and bool(names & {"conversation_id", "conversation"})


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line, row, problem)`` for every row of the file."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        if path.suffix.lower() == ".csv":
            reader = csv.DictReader(fh)
            for row in reader:
                yield reader.line_num, {str(k).strip().lower(): v for k, v in row.items() if k is not None}, None
            return
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                yield number, None, f"not JSON: {exc}"
                continue
            if not isinstance(value, dict):
                yield number, None, "not a JSON object"
                continue
            yield number, {str(k).lower(): v for k, v in value.items()}, None


def read_table(path: Path, settings: ImportSettings) -> ReadResult:
    """Read a CSV or JSON Lines table of messages into conversations (one per ``conversation_id``)."""
    result = ReadResult()
    grouped: dict[str, list[ImportedMessage]] = {}
    for line, row, problem in _rows(path):
        if row is not None:
            try:
                conversation, message = _message(row, line)
            except ValueError as exc:
                problem = str(exc)
            else:
                grouped.setdefault(conversation, []).append(message)
                continue
        result.skipped.append(SkippedLine(str(path), line, str(problem)))
    for conversation, messages in grouped.items():
        if all(m.sent_at is not None for m in messages):
            messages.sort(key=lambda m: m.sent_at or datetime.min)
        result.conversations.append(ImportedConversation(
            key=f"tb-{stable_id(FORMAT, path.name, conversation)[:12]}", format=FORMAT, source_file=str(path),
            source_id=conversation, messages=tuple(messages)))
    return result


def _message(row: Mapping[str, Any], line: int) -> tuple[str, ImportedMessage]:
    conversation = str(row.get("conversation_id") or row.get("conversation") or "").strip()
    if not conversation:
        raise ValueError("no conversation_id")
    said = str(row.get("role") or "").strip().lower()
    role = _ROLES.get(said)
    if role is None:
        raise ValueError(f"role {said!r} is neither patient (user, customer) nor agent (assistant, bot)")
    text = row.get("text")
    if text is None or not str(text).strip():
        raise ValueError("no text")
    calls = _tool_calls(row.get("tool_calls"))
    message_id = str(row["message_id"]) if row.get("message_id") not in (None, "") else None
    return conversation, ImportedMessage(role, str(text), _time(row.get("time")), ({"type": "text", "text": str(text)},),
                                         message_id, "delivered" if role == "patient" else "reply", calls, None, line)


def _time(value: Any) -> datetime | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, (int, float)) or str(value).strip().replace(".", "", 1).isdigit():
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
        return datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"time {value!r} is neither ISO 8601 nor Unix seconds") from None


def _tool_calls(value: Any) -> tuple[dict[str, Any], ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("tool_calls is not JSON") from None
    if not isinstance(value, list) or not all(isinstance(c, dict) and c.get("name") for c in value):
        raise ValueError("tool_calls is not a JSON list of {name, arguments, result}")
    return tuple({"name": str(c["name"]), "arguments": c.get("arguments") or {}, "result": c.get("result")}
                 for c in value)
