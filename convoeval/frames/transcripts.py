"""Transcripts between their two forms: message entries (what a conversation produces) and the transcript frame."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from convoeval.frames.entries import _as_mapping, _entry_text
from convoeval.frames.schemas import CONVERSATION_KEYS, MESSAGE_ROLES, TRANSCRIPT_SCHEMA
from convoeval.frames.typed import _is_missing, typed_frame


def transcript_frame(entries: Iterable[Any], **conversation: Any) -> pd.DataFrame:
    """Turn a list of transcript entries (one conversation) into a transcript frame.

    Args:
        entries: Mappings (or objects) with ``role`` ("patient" | "agent") and ``text`` (or
            ``message``, or ``bubbles``); any other ``TRANSCRIPT_COLUMNS`` key is kept.
        **conversation: Columns shared by every row, e.g. ``run_id``, ``scenario``, ``agent``, ``seed``, ``trial``.

    Returns:
        A frame with ``TRANSCRIPT_COLUMNS``; ``turn`` defaults to a patient message and its reply sharing one (``i // 2 + 1``).

    Raises:
        ValueError: an unknown role or column.

    Example:
        >>> df = transcript_frame([{"role": "patient", "text": "Oi"}, {"role": "agent", "text": "Olá!"}],
        ...                       run_id="r1", scenario="s")
        >>> df[["turn", "role", "text"]].values.tolist()
        [[1, 'patient', 'Oi'], [1, 'agent', 'Olá!']]
    """
    rows = []
    for i, raw in enumerate(entries):
        entry = dict(_as_mapping(raw))
        role = entry.get("role")
        if role not in MESSAGE_ROLES:
            raise ValueError(f"transcript entry {i}: role must be 'patient' or 'agent', got {role!r}")
        text = _entry_text(entry)
        entry.pop("message", None)
        row = {**conversation, **entry, "text": text}
        row.setdefault("turn", i // 2 + 1)
        if not row.get("bubbles"):
            row["bubbles"] = [text]
        rows.append(row)
    return typed_frame(rows, TRANSCRIPT_SCHEMA)


def as_transcripts(transcripts: pd.DataFrame | Sequence[Any]) -> pd.DataFrame:
    """A transcript frame from a frame (one or many conversations) or a list of message dicts (one conversation).

    A list's messages may carry ``run_id``, ``scenario`` and the other conversation columns; a list without a
    ``run_id`` is one conversation, given the id ``conversation-1``.

    Raises:
        TypeError: neither a frame nor a list of messages.
        ValueError: a message with an unknown role or column.
    """
    if isinstance(transcripts, pd.DataFrame):
        return transcripts
    if isinstance(transcripts, (str, bytes, Mapping)) or not isinstance(transcripts, Sequence):
        raise TypeError(f"transcripts must be a DataFrame or a list of message dicts, got {type(transcripts).__name__}")
    entries = [dict(_as_mapping(e)) for e in transcripts]
    if entries and all(e.get("run_id") is None for e in entries):
        for e in entries:
            e["run_id"] = "conversation-1"
    return transcript_frame(entries)


def iter_conversations(frame: pd.DataFrame) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """Yield ``(conversation_keys, rows)`` per ``run_id``, in first-appearance order.

    ``conversation_keys`` holds ``CONVERSATION_KEYS`` values taken from the conversation's first row (missing
    values as ``None``). Rows keep their original order.
    """
    if frame.empty:
        return
    if "run_id" not in frame:
        raise ValueError("a transcript frame needs a run_id column to tell conversations apart")
    for run_id in pd.unique(frame["run_id"]):
        rows = frame[frame["run_id"] == run_id] if not _is_missing(run_id) else frame[frame["run_id"].isna()]
        first = rows.iloc[0]
        keys = {k: (None if k not in rows or _is_missing(first[k]) else _plain(first[k])) for k in CONVERSATION_KEYS}
        yield keys, rows


def _plain(value: Any) -> Any:
    """numpy/pandas scalars to Python ones, so identities and JSON stay simple."""
    return value.item() if hasattr(value, "item") else value
