"""One conversation's messages as plain dicts: ``as_entries`` (from entries or a frame) and ``transcript_to_entries``.

Light on purpose: the simulated patient and the turn judge call ``as_entries`` on every message of every
conversation, with plain entries, so this module does not import pandas. A DataFrame handed to it means pandas is
already loaded; it is then read from ``sys.modules`` (issue #28: nothing heavy before a run's first conversation,
``tests/test_startup.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from convoeval.frames.schemas import MESSAGE_ROLES, TRANSCRIPT_SCHEMA

if TYPE_CHECKING:
    import pandas as pd


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
        dumped: Mapping[str, Any] = entry.model_dump()
        return dumped
    if hasattr(entry, "__dict__"):
        attributes: Mapping[str, Any] = vars(entry)
        return attributes
    raise TypeError(f"a transcript entry must be a mapping or an object with attributes, got {type(entry).__name__}")


def _is_frame(value: Any) -> bool:
    # Not loaded: no DataFrame can exist. Partly loaded (another thread is importing it): none of ours either.
    frame_type = getattr(sys.modules.get("pandas"), "DataFrame", None)
    return frame_type is not None and isinstance(value, frame_type)


def _missing_in_frame(value: Any) -> bool:
    """``frames.typed._is_missing`` for a value read out of a DataFrame (so pandas is loaded)."""
    pandas = sys.modules["pandas"]
    if value is None or value is pandas.NA:
        return True
    try:
        return bool(pandas.isna(value)) if not isinstance(value, (list, tuple, dict, str)) else False
    except (TypeError, ValueError):
        return False


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
        entries.append({k: (None if _missing_in_frame(v) else v) for k, v in rec.items()})
    return entries


def as_entries(transcript: pd.DataFrame | Sequence[Any]) -> list[dict[str, Any]]:
    """Accept a one-conversation transcript as a frame or a list of entries; return entries with ``text``."""
    if _is_frame(transcript):
        return transcript_to_entries(transcript)
    out = []
    for i, raw in enumerate(transcript):
        entry = dict(_as_mapping(raw))
        if entry.get("role") not in MESSAGE_ROLES:
            raise ValueError(f"transcript entry {i}: role must be 'patient' or 'agent', got {entry.get('role')!r}")
        entry["text"] = _entry_text(entry)
        entries_tools = entry.get("tools")
        entry["tools"] = list(entries_tools) if entries_tools else []
        out.append(entry)
    return out
