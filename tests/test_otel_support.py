"""What a run's frames say its traces must hold, and what a set of spans does hold, in one shape to compare.

Used by tests/test_otel.py (spans caught in memory) and tests/test_otel_phoenix.py (spans read back from a real
Phoenix). The expected side reads only the saved frames, never convoeval.telemetry, so a mistake in the export
cannot hide itself.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd


def _num(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return round(float(value), 6)


def _int_sum(values: Iterable[Any]) -> int:
    return int(sum(0 if _num(v) is None else v for v in values))


def expected_traces(frames: Any) -> dict[str, dict[str, Any]]:
    """run_id -> what its trace must hold, from a run's frames (``EvalResult.frames``)."""
    out: dict[str, dict[str, Any]] = {}
    runs = frames.runs[~frames.runs["superseded"].fillna(False).astype(bool)]
    for run in runs.to_dict("records"):
        rid = run["run_id"]
        key = (run["scenario"], run["seed"], run["trial"])
        calls = frames.calls[(frames.calls["scenario"] == key[0]) & (frames.calls["seed"] == key[1])
                             & (frames.calls["trial"] == key[2])]
        transcript = frames.transcripts[frames.transcripts["run_id"] == rid]
        score = frames.scores[frames.scores["run_id"] == rid].iloc[0]
        judges = calls[calls["role"] == "judge"]
        evaluations = [_num(score["score"])]
        for name in ("rubric", "assertions"):
            part = getattr(frames, name)
            evaluations += [None if p is pd.NA or p is None else float(bool(p))
                            for p in part[part["run_id"] == rid]["passed"]]
        for name in ("holistic", "turns"):
            part = getattr(frames, name)
            evaluations += [_num(v) for v in part[part["run_id"] == rid]["overall"]]
        out[rid] = {
            "status": score["status"], "score": _num(score["score"]),
            "turns": transcript["turn"].nunique(),
            "llm_calls": len(calls),
            "input_tokens": _int_sum(calls["prompt_tokens"]), "output_tokens": _int_sum(calls["completion_tokens"]),
            "tools": sum(len(t) for t in transcript["tool_calls"] if t is not None and not isinstance(t, float)),
            "judges": len({(e, None if _num(t) is None else int(t), int(s))
                           for e, t, s in zip(judges["extra"], judges["turn"], judges["sample"], strict=True)}),
            "evaluations": sorted(Counter(evaluations).items(), key=repr),
        }
    return out


def observed_traces(spans: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """trace id -> what its spans hold. Each span: ``trace_id``, ``span_id``, ``parent_id``, ``name``, ``kind`` (the
    OpenInference kind), ``attributes`` (flat) and ``events`` (``name`` and ``attributes``)."""
    by_trace: dict[str, list[Mapping[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(span["trace_id"], []).append(span)
    out: dict[str, dict[str, Any]] = {}
    for trace_id, group in by_trace.items():
        roots = [s for s in group if not s["parent_id"]]
        assert len(roots) == 1, (trace_id, [s["name"] for s in roots])
        root = roots[0]
        ids = {s["span_id"] for s in group}
        assert all(s["parent_id"] in ids for s in group if s is not root), "a span's parent is not in its trace"
        kinds = Counter(s["kind"] for s in group)
        llm = [s for s in group if s["kind"] == "LLM"]
        events = [e for e in root["events"] if e["name"] == "gen_ai.evaluation.result"]
        out[trace_id] = {
            "status": root["attributes"].get("convoeval.status"), "score": _num(root["attributes"].get("convoeval.score")),
            "turns": sum(1 for s in group if s["name"].startswith("turn ")),
            "llm_calls": kinds["LLM"],
            "input_tokens": _int_sum(s["attributes"].get("gen_ai.usage.input_tokens") for s in llm),
            "output_tokens": _int_sum(s["attributes"].get("gen_ai.usage.output_tokens") for s in llm),
            "tools": kinds["TOOL"], "judges": kinds["EVALUATOR"],
            "evaluations": sorted(Counter(_num(e["attributes"].get("gen_ai.evaluation.score.value"))
                                          for e in events).items(), key=repr),
        }
    return out
