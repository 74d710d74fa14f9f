"""Transcripts between their two forms: message entries (what a conversation produces) and the transcript frame."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from convoeval.frames.schemas import CONVERSATION_KEYS, ROLES, TRANSCRIPT_SCHEMA
from convoeval.frames.typed import _is_missing, typed_frame


def _entry_text(entry: Mapping[str, Any]) -> str:
    text = entry.get("text")
    if text is None:
        text = entry.get("message")  # the field name of transcripts written by other tools
    if text is None and entry.get("bubbles"):
        text = "\n".join(entry["bubbles"])
    return "" if text is None else str(text)


def _as_mapping(entry: Any) -> Mapping[str, Any]:
    if isinstance(entry, Mapping):
        return entry
    if hasattr(entry, "model_dump"):
        return entry.model_dump()
    if hasattr(entry, "__dict__"):
        return vars(entry)
    raise TypeError(f"a transcript entry must be a mapping or an object with attributes, got {type(entry).__name__}")


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
        if role not in ROLES:
            raise ValueError(f"transcript entry {i}: role must be 'patient' or 'agent', got {role!r}")
        text = _entry_text(entry)
        entry.pop("message", None)
        row = {**conversation, **entry, "text": text}
        row.setdefault("turn", i // 2 + 1)
        if not row.get("bubbles"):
            row["bubbles"] = [text]
        rows.append(row)
    return typed_frame(rows, TRANSCRIPT_SCHEMA)


def transcript_to_entries(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The messages of ONE conversation as plain dicts (``role``, ``text``, ``tools``, ``bubbles``, ...), in order.

    Args:
        frame: A transcript frame holding a single ``run_id`` (select one with ``iter_conversations``).

    Returns:
        One dict per row with every transcript column present in the frame; missing values become ``None``.

    Raises:
        ValueError: when the frame holds more than one conversation.
    """
    if "run_id" in frame and frame["run_id"].nunique(dropna=False) > 1:
        raise ValueError(
            f"the frame holds {frame['run_id'].nunique()} conversations; pass one (see iter_conversations)"
        )
    cols = [c for c in frame.columns if c in TRANSCRIPT_SCHEMA]
    entries = []
    for rec in frame[cols].to_dict("records"):
        entries.append({k: (None if _is_missing(v) else v) for k, v in rec.items()})
    return entries


def as_entries(transcript: pd.DataFrame | Sequence[Any]) -> list[dict[str, Any]]:
    """Accept a one-conversation transcript as a frame or a list of entries; return entries with ``text``."""
    if isinstance(transcript, pd.DataFrame):
        return transcript_to_entries(transcript)
    out = []
    for i, raw in enumerate(transcript):
        entry = dict(_as_mapping(raw))
        if entry.get("role") not in ROLES:
            raise ValueError(f"transcript entry {i}: role must be 'patient' or 'agent', got {entry.get('role')!r}")
        entry["text"] = _entry_text(entry)
        entries_tools = entry.get("tools")
        entry["tools"] = list(entries_tools) if entries_tools else []
        out.append(entry)
    return out


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
