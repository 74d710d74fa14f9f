"""The DataFrame column contracts, declared once; every module that builds or reads a frame imports them here.

Each contract is an ordered mapping ``column -> pandas dtype``. The frames are long and tidy: one row per message
(transcripts), per conversation × criterion × judge sample (rubric), per conversation × sample (holistic), per
conversation (scores). A value that could not be produced is missing (``NA``/``NaN``) with the reason in ``error``,
never a made-up ``False``, ``0`` or ``5``.

A conversation is identified by ``run_id`` (the run that seeded its fixtures), so frames join on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

# dtype shorthands: nullable so that "unknown" stays distinguishable from a real value.
_STR = "string"
_INT = "Int64"
_FLOAT = "float64"  # NaN for unscored, as analysts expect from numpy-based tools
_BOOL = "boolean"
_OBJ = "object"  # lists and dicts

ROLES = ("patient", "agent")

#: One row per message of a conversation.
TRANSCRIPT_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,  # the scenario's agent type (billing, scheduling, ...)
    "target": _STR,  # the agent under test (e.g. "clinic:billing")
    "seed": _INT,
    "trial": _INT,
    "turn": _INT,  # 1-based; a patient message and the agent's reply to it share a turn
    "role": _STR,  # "patient" | "agent"
    "text": _STR,  # all bubbles joined by newlines
    "bubbles": _OBJ,  # list[str]
    "tools": _OBJ,  # list[str]: names of the tools called
    "tool_calls": _OBJ,  # list[dict]: {"name", "arguments", "result"}
    "signal": _STR,  # "GOAL_COMPLETE" | "STUCK" | NA; only ever set on patient rows
    "latency_s": _FLOAT,
    "prompt_tokens": _INT,
    "completion_tokens": _INT,
    "model": _STR,  # the simulator model for patient rows; the agent's model when it reports one
    "cache_hit": _BOOL,
    "prompt_version": _STR,  # the simulator prompt version (and framing) for patient rows
}

#: One row per conversation × criterion × judge sample.
RUBRIC_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "criterion_index": _INT,  # 0-based position in the scenario's rubric (the judge sees it 1-based)
    "criterion": _STR,  # our text, never the judge's rewording
    "assertion": _STR,  # the database assertion this criterion corresponds to, if declared
    "passed": _BOOL,  # NA when the judge errored
    "evidence": _STR,
    "reasoning": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,  # NA when the verdict is valid
}

#: The holistic judge's dimensions, in the order its prompt asks for them.
HOLISTIC_DIMENSIONS = ("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion")
#: The scripted per-turn judge's dimensions.
TURN_DIMENSIONS = HOLISTIC_DIMENSIONS[:5]

#: One row per conversation × judge sample.
HOLISTIC_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    **{d: _FLOAT for d in HOLISTIC_DIMENSIONS},
    "overall": _FLOAT,  # the mean of the six dimensions, computed by convoeval (not the judge's own arithmetic)
    "issues": _OBJ,  # list[str]
    "suggestion": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,
}

#: One row per scripted turn × judge sample: the per-turn checks and the five-dimension judge.
TURN_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "turn": _INT,
    "check_failures": _OBJ,  # list[str] from check_turn; empty when every expectation held
    **{d: _FLOAT for d in TURN_DIMENSIONS},
    "overall": _FLOAT,  # mean of the five dimensions; NaN when the judge errored or was not asked
    "issues": _OBJ,
    "suggestion": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,
}

#: One row per database assertion checked after a conversation.
ASSERTION_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "assertion": _STR,  # the key in the scenario's ``assertions``
    "expected": _OBJ,
    "actual": _OBJ,
    "passed": _BOOL,  # NA when the check itself failed (see error)
    "message": _STR,  # e.g. "invoice_status: expected paid, got pending"
    "error": _STR,
}

#: One row per conversation: how it ended, before any judging.
RUN_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "type": _STR,  # "conversational" | "scripted"
    "agent": _STR,
    "target": _STR,
    "seed": _INT,
    "trial": _INT,
    "status": _STR,  # "completed" | "error" | "simulator_failure" (the simulated patient broke: not scored)
    "stop_reason": _STR,  # "GOAL_COMPLETE" | "STUCK" | "max_turns" | "script_end" | "error" | "simulator_failure"
    "goal_completed": _BOOL,
    "n_messages": _INT,
    "duration_s": _FLOAT,
    "error": _STR,
    "replayed_turns": _INT,  # patient turns sent from a recording before the simulator took over (0: none)
    "divergence_turn": _INT,  # the first turn whose agent reply differed from the recording; NA: none did
    "simulator_failure": _STR,  # the gate check that stopped the run (convoeval.gate.GATE_CHECKS); NA: none did
    "simulator_failure_turn": _INT,  # the patient turn at which it broke
    "simulator_failure_detail": _STR,  # one sentence: what the patient did, quoting it
    "attempt": _INT,  # 1: the first simulation; k: the (k-1)th re-simulation of the same job (convoeval.gate)
    "superseded": _BOOL,  # True: a simulator failure a later attempt replaced (it has no score row)
}

#: One row per conversation: the composite score beside its components.
SCORE_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "status": _STR,  # "pass" | "warn" | "fail" (the agent's) | "error" | "simulator_failure" (neither scored)
    "score": _FLOAT,  # NaN when status is "error" or "simulator_failure"
    "rubric_score": _FLOAT,
    "rubric_passed": _INT,
    "rubric_total": _INT,
    "holistic_overall": _FLOAT,
    "assertion_failures": _INT,
    "goal_completed": _BOOL,
    "error": _STR,
}

#: The score statuses that judge the agent: only these count in its pass rates, means and thresholds.
AGENT_STATUSES = ("pass", "warn", "fail")
#: The status of a conversation whose simulated patient broke (``convoeval.gate``): never the agent's pass or fail.
SIMULATOR_FAILURE = "simulator_failure"
#: Every score status, in report order.
STATUSES = (*AGENT_STATUSES, "error", SIMULATOR_FAILURE)

TRANSCRIPT_COLUMNS = tuple(TRANSCRIPT_SCHEMA)
RUBRIC_COLUMNS = tuple(RUBRIC_SCHEMA)
HOLISTIC_COLUMNS = tuple(HOLISTIC_SCHEMA)
TURN_COLUMNS = tuple(TURN_SCHEMA)
ASSERTION_COLUMNS = tuple(ASSERTION_SCHEMA)
RUN_COLUMNS = tuple(RUN_SCHEMA)
SCORE_COLUMNS = tuple(SCORE_SCHEMA)

#: The columns that describe a conversation rather than one of its messages.
CONVERSATION_KEYS = ("run_id", "scenario", "agent", "target", "seed", "trial")
_LIST_COLUMNS = frozenset({"bubbles", "tools", "tool_calls", "issues", "check_failures"})


def empty_frame(schema: Mapping[str, str]) -> pd.DataFrame:
    """A zero-row frame with the contract's columns and dtypes.

    Example:
        >>> list(empty_frame(SCORE_SCHEMA).columns)[:3]
        ['run_id', 'scenario', 'agent']
    """
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in schema.items()})


def typed_frame(rows: Iterable[Mapping[str, Any]], schema: Mapping[str, str]) -> pd.DataFrame:
    """Build a frame from row mappings, in the contract's column order and dtypes.

    Missing keys become missing values. An unknown key is an error, so a typo cannot create a column that no
    reader knows about.

    Args:
        rows: One mapping per row.
        schema: One of the ``*_SCHEMA`` contracts.

    Returns:
        The typed frame (zero rows when ``rows`` is empty).

    Raises:
        ValueError: when a row carries a key the contract does not declare.
    """
    rows = list(rows)
    if not rows:
        return empty_frame(schema)
    unknown = sorted({k for r in rows for k in r} - set(schema))
    if unknown:
        raise ValueError(f"unknown column(s) {unknown}; declared columns are {list(schema)}")
    data = {c: [_cell(r.get(c), c) for r in rows] for c in schema}
    return pd.DataFrame({c: _series(data[c], t) for c, t in schema.items()})


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as plain Python values, missing ones (``NA``, ``NaN``, ``None``) as ``None``.

    Column by column with ``tolist`` rather than ``astype(object).where(notna)``: the same values for about a
    tenth of the CPU.
    """
    if not len(frame):
        return []
    columns = [str(c) for c in frame.columns]
    values = [[plain(v) for v in frame[c].tolist()] for c in frame.columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


def plain(value: Any) -> Any:
    """One cell as a plain Python value: numpy scalars unwrapped, every kind of missing value as ``None``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):  # a numpy scalar kept in an object column
        value = value.item()
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value


def conform(frame: pd.DataFrame, schema: Mapping[str, str]) -> pd.DataFrame:
    """Reorder and re-type a frame to a contract, adding missing columns as missing values.

    Columns the contract does not declare are kept, after the declared ones (a reader may add its own).
    """
    out = pd.DataFrame(index=frame.index)
    for c, t in schema.items():
        out[c] = _series(list(frame[c]) if c in frame else [None] * len(frame), t, index=frame.index)
    extras = [c for c in frame.columns if c not in schema]
    return pd.concat([out, frame[extras]], axis=1) if extras else out


def _cell(value: Any, column: str) -> Any:
    if column in _LIST_COLUMNS and value is None:
        return []
    if column in _LIST_COLUMNS and isinstance(value, tuple):
        return list(value)
    return value


def _series(values: list[Any], dtype: str, index: Any = None) -> pd.Series:
    if dtype == _OBJ:
        return pd.Series(values, dtype=object, index=index)
    # None/NaN/NA all mean "missing"; normalise first so the nullable dtypes accept them.
    clean = [None if _is_missing(v) else v for v in values]
    return pd.Series(clean, dtype=dtype if dtype != _FLOAT else "float64", index=index)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return bool(pd.isna(value)) if not isinstance(value, (list, tuple, dict, str)) else False
    except (TypeError, ValueError):
        return False


# ── Transcripts: entries <-> frame ──


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
