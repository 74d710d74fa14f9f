"""A conversation's path: its turns, each with the patient's message, the agent's reply and the tools it called.

Built from the transcript rows a run records (``TRANSCRIPT_SCHEMA``: ``turn``, ``role``, ``text``, ``tool_calls``
with their arguments and results), so a saved results folder can be checked again without the database. Rows that
carry only tool names (``tools``) still give the order and counts; their arguments and results are unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "PathLog", "PathTurn"]


@dataclass(frozen=True)
class Call:
    """One tool call: its turn, its position among all the conversation's calls, name, arguments and result."""

    turn: int
    index: int
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None

    @property
    def ok(self) -> bool:
        """Whether the tool did it: a failed call's result is ``{"error": message}``."""
        return not (isinstance(self.result, Mapping) and "error" in self.result)


@dataclass(frozen=True)
class PathTurn:
    """One turn: the patient's message and the agent's reply to it (empty when there was none)."""

    turn: int
    patient: str = ""
    agent: str | None = None
    calls: tuple[Call, ...] = ()


def _listed(value: Any) -> list[Any]:
    # Rows read back from parquet hold arrays, rows from JSON hold lists; a missing value is no list at all.
    if value is None or isinstance(value, (str, bytes, float)):
        return json.loads(value) if isinstance(value, str) and value.startswith("[") else []
    return list(value) if isinstance(value, Iterable) else []


@dataclass(frozen=True)
class PathLog:
    """A conversation's turns in order."""

    turns: tuple[PathTurn, ...]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> PathLog:
        """The path of one conversation's transcript rows (patient and agent rows of every turn, in order).

        A turn through the WhatsApp channel may hold several patient messages (a burst, a redelivery) and several
        agent messages: they are joined, in order, and every call counts.
        """
        patients: dict[int, list[str]] = {}
        agents: dict[int, tuple[list[str], list[tuple[str, Mapping[str, Any], Any]]]] = {}
        for row in rows:
            turn = int(row["turn"])
            if row.get("role") == "patient":
                patients.setdefault(turn, []).append(str(row.get("text") or ""))
                continue
            listed: list[tuple[str, Mapping[str, Any], Any]] = [
                (str(c["name"]), dict(c.get("arguments") or {}), c.get("result")) for c in _listed(row.get("tool_calls"))]
            if not listed:
                listed = [(str(name), {}, None) for name in _listed(row.get("tools"))]
            texts, calls_so_far = agents.setdefault(turn, ([], []))
            texts.append(str(row.get("text") or ""))
            calls_so_far.extend(listed)
        turns, index = [], 0
        for turn in sorted(patients.keys() | agents.keys()):
            texts, raw = agents.get(turn, ([], []))
            text = "\n".join(texts) if turn in agents else None
            calls: list[Call] = []
            for name, arguments, result in raw:
                calls.append(Call(turn, index, name, arguments, result))
                index += 1
            turns.append(PathTurn(turn, "\n".join(patients.get(turn, [])), text, tuple(calls)))
        return cls(tuple(turns))

    @property
    def calls(self) -> list[Call]:
        """Every tool call, in the order made."""
        return [c for t in self.turns for c in t.calls]

    def up_to(self, turn: int) -> PathLog:
        """The path until the agent's reply of ``turn``, included."""
        return PathLog(tuple(t for t in self.turns if t.turn <= turn))

    def first_call(self, tool: str) -> Call | None:
        """The first call of ``tool``, or None."""
        return next((c for c in self.calls if c.name == tool), None)
