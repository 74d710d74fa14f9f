"""One conversation's result: plain row dicts per frame while it runs, DataFrames built lazily on first access."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

from convoeval import frames as F
from convoeval.agents import safe_target
from convoeval.frames import FRAME_SCHEMAS
from convoeval.judges.scoring import score_conversation, score_scripted_conversation
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.pipeline.options import default_target
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario
from convoeval.store.assertions import AssertionResult
from convoeval.store.fixtures import (
    new_run_id,
)

_EMPTY: dict[int, tuple[Mapping[str, str], pd.DataFrame]] = {}


def _empty(schema: Mapping[str, str]) -> pd.DataFrame:
    """``empty_frame(schema)``, built once per contract and copied: a copy costs ~0.1 ms where building one costs
    2–5 ms, and every run needs three or four (benchmarks/RESULTS.md, overhead)."""
    cached = _EMPTY.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _EMPTY[id(schema)] = (schema, F.empty_frame(schema))
    return cached[1].copy()


def _frame_property(name: str, doc: str) -> Any:
    """A read-only attribute that builds (once) and returns one of a result's frames."""
    return property(lambda self: self.frame(name), doc=doc)


@dataclass
class ConversationResult:
    """Everything one conversation produced, as plain rows; typed frames are built only when read.

    Attributes:
        rows: frame name (``FRAME_SCHEMAS``) -> its rows as dicts: ``runs`` and ``scores`` one row each,
            ``transcripts`` one per message, ``rubric`` one per criterion × judge sample, ``holistic`` one per
            judge sample, ``turns`` one per scripted turn × sample, ``assertions`` one per database assertion.
        calls: one record per LLM call made for this conversation (filled by the batch runner).

    The frames are properties: ``result.transcript``, ``result.score``, ``result.rubric``, … (``frames()`` all
    of them), each built once and kept.
    """

    rows: dict[str, list[dict[str, Any]]]
    calls: list[dict[str, Any]] = field(default_factory=list)
    _frames: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    def frame(self, name: str) -> pd.DataFrame:
        """One frame by name (``runs``, ``scores``, ``transcripts``, …), typed by its contract."""
        if name not in self._frames:
            rows = self.rows.get(name) or []
            self._frames[name] = F.typed_frame(rows, FRAME_SCHEMAS[name]) if rows else _empty(FRAME_SCHEMAS[name])
        return self._frames[name]

    def frames(self) -> RunFrames:
        """This conversation's frames as a run's (``RunFrames``, its LLM calls included)."""
        return F.RunFrames.from_rows({**self.rows, "calls": self.calls}, call_columns=CALL_COLUMNS)

    run = _frame_property("runs", "One row (``RUN_SCHEMA``): how the conversation ended.")
    transcript = _frame_property("transcripts", "One row per message (``TRANSCRIPT_SCHEMA``).")
    rubric = _frame_property("rubric", "One row per criterion × judge sample (conversational runs).")
    holistic = _frame_property("holistic", "One row per judge sample (conversational runs).")
    turns = _frame_property("turns", "One row per scripted turn × judge sample (scripted runs).")
    assertions = _frame_property("assertions", "One row per database assertion.")
    score = _frame_property("scores", "One row (``SCORE_SCHEMA``): the composite beside its components.")

    @property
    def run_id(self) -> str:
        return str(self.rows["runs"][0]["run_id"])

    @property
    def status(self) -> str:
        return str(self.rows["scores"][0]["status"])

    @property
    def error(self) -> str | None:
        value = self.rows["scores"][0].get("error")
        return None if value is None else str(value)

    def payload(self) -> dict[str, Any]:
        """The rows and calls as JSON-ready values, as saved per conversation.

        Every row carries every column of its contract, missing values as ``None`` (never NaN or ``"<NA>"``).

        Raises:
            ValueError: a row carries a column its contract does not declare.
        """
        out: dict[str, Any] = {}
        for name, schema in FRAME_SCHEMAS.items():
            rows = self.rows.get(name) or []
            for row in rows:
                if not row.keys() <= schema.keys():
                    raise ValueError(f"unknown {name} column(s) {sorted(row.keys() - schema.keys())}")
            out[name] = [{c: F.plain(row.get(c)) for c in schema} for row in rows]
        out["calls"] = self.calls
        return out

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> ConversationResult:
        """The result a ``payload()`` was made from (what a worker sends back, what a results folder holds)."""
        return cls(rows={name: list(payload.get(name) or []) for name in FRAME_SCHEMAS},
                   calls=list(payload.get("calls") or []))


def _assertion_rows(keys: Mapping[str, Any], results: list[AssertionResult]) -> list[dict[str, Any]]:
    return [
        {"run_id": keys["run_id"], "scenario": keys["scenario"], "assertion": r.key, "expected": r.expected,
         "actual": r.actual, "passed": r.passed, "message": r.detail}
        for r in results
    ]


def failed_result(scenario: Scenario, seed: int | None, trial: int, target: str | None, error: str
                  ) -> ConversationResult:
    """The result of a conversation that could not run at all (its worker died twice, its worker had no store…).

    It carries the same keys as any conversation's rows and scores ``error`` with the reason, never a default.
    """
    if seed is None and isinstance(scenario, ConversationalScenario):
        seed = scenario.seed
    keys = {"run_id": new_run_id(), "scenario": scenario.id, "agent": scenario.agent,
            "target": safe_target(target or default_target(scenario)), "seed": seed, "trial": trial}
    run_row = {**keys, "type": scenario.type, "status": "error", "stop_reason": "error", "goal_completed": None,
               "n_messages": 0, "duration_s": None, "error": error, "attempt": 1, "superseded": False}
    if isinstance(scenario, ScriptedScenario):
        score = score_scripted_conversation(run_row, [], [])
    else:
        score = score_conversation(run_row, [], [], [], [])
    return ConversationResult(rows={"runs": [run_row], "scores": [score], "transcripts": [], "rubric": [],
                                    "holistic": [], "turns": [], "assertions": []})


def _with_failed_attempts(kept: ConversationResult, failed: list[ConversationResult]) -> ConversationResult:
    """The kept attempt's rows first (what ``run_id``, ``status`` and a job's score read), then the failed attempts'
    runs, transcripts and assertions, marked ``superseded``; a failed attempt has no score row: the job has one."""
    if not failed:
        return kept
    rows = {name: list(found) for name, found in kept.rows.items()}
    for attempt in failed:
        rows["runs"].extend({**run, "superseded": True} for run in attempt.rows["runs"])
        for name in ("transcripts", "assertions"):
            rows.setdefault(name, []).extend(attempt.rows.get(name) or [])
    return ConversationResult(rows=rows, calls=kept.calls)
