"""The DataFrame column contracts: typed empty frames, strict row building, transcripts to frames and back."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from convoeval.frames import (
    HOLISTIC_COLUMNS,
    RUBRIC_COLUMNS,
    RUBRIC_SCHEMA,
    SCORE_COLUMNS,
    SCORE_SCHEMA,
    TRANSCRIPT_COLUMNS,
    TRANSCRIPT_SCHEMA,
    as_entries,
    conform,
    empty_frame,
    iter_conversations,
    transcript_frame,
    transcript_to_entries,
    typed_frame,
)


def test_contracts_hold_the_columns_the_engine_promises():
    for column in ("run_id", "scenario", "agent", "seed", "trial", "turn", "role", "text", "bubbles", "tools",
                   "tool_calls", "signal", "latency_s", "prompt_tokens", "completion_tokens", "model"):
        assert column in TRANSCRIPT_COLUMNS
    for column in ("criterion_index", "criterion", "passed", "evidence", "reasoning", "judge_model",
                   "judge_provider", "sample", "prompt_version", "error"):
        assert column in RUBRIC_COLUMNS
    for column in ("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion", "overall",
                   "issues", "suggestion"):
        assert column in HOLISTIC_COLUMNS
    assert SCORE_COLUMNS[:5] == ("run_id", "scenario", "agent", "seed", "trial")
    assert {"score", "rubric_score", "holistic_overall", "assertion_failures", "status", "error"} <= set(SCORE_COLUMNS)


def test_empty_frame_is_typed():
    df = empty_frame(RUBRIC_SCHEMA)
    assert list(df.columns) == list(RUBRIC_COLUMNS)
    assert len(df) == 0
    assert str(df["passed"].dtype) == "boolean"
    assert str(df["seed"].dtype) == "Int64"


def test_typed_frame_keeps_a_missing_verdict_missing():
    df = typed_frame([{"run_id": "r", "passed": True}, {"run_id": "r", "passed": None, "error": "judge failed"}],
                     RUBRIC_SCHEMA)
    assert bool(df["passed"].iloc[0]) is True
    assert df["passed"].iloc[1] is pd.NA
    assert df["passed"].sum() == 1  # NA is not counted as a pass
    assert pd.isna(df["evidence"].iloc[0])


def test_typed_frame_rejects_an_unknown_column():
    with pytest.raises(ValueError, match="passd"):
        typed_frame([{"run_id": "r", "passd": True}], RUBRIC_SCHEMA)


def test_float_columns_use_nan_for_unscored():
    df = typed_frame([{"run_id": "r", "score": None}], SCORE_SCHEMA)
    assert math.isnan(df["score"].iloc[0])
    assert df["score"].dtype == "float64"


def test_transcript_frame_from_seed_style_entries_and_back():
    entries = [
        {"role": "patient", "message": "Oi"},
        {"role": "agent", "message": "Olá!", "tools": ["lookup_invoices"]},
        {"role": "patient", "message": "Obrigado", "signal": "GOAL_COMPLETE"},
    ]
    df = transcript_frame(entries, run_id="r1", scenario="s", agent="billing", seed=7, trial=2)
    assert list(df.columns) == list(TRANSCRIPT_COLUMNS)
    assert df["turn"].tolist() == [1, 1, 2]
    assert df["text"].tolist() == ["Oi", "Olá!", "Obrigado"]
    assert df["tools"].tolist() == [[], ["lookup_invoices"], []]
    assert df["bubbles"].tolist() == [["Oi"], ["Olá!"], ["Obrigado"]]
    assert df["seed"].tolist() == [7, 7, 7]
    back = transcript_to_entries(df)
    assert [(e["role"], e["text"], e["signal"]) for e in back] == [
        ("patient", "Oi", None), ("agent", "Olá!", None), ("patient", "Obrigado", "GOAL_COMPLETE")]
    assert back[1]["tools"] == ["lookup_invoices"]


def test_transcript_frame_rejects_an_unknown_role():
    with pytest.raises(ValueError, match="role"):
        transcript_frame([{"role": "system", "text": "x"}])


def test_transcript_to_entries_wants_one_conversation():
    a = transcript_frame([{"role": "patient", "text": "a"}], run_id="r1")
    b = transcript_frame([{"role": "patient", "text": "b"}], run_id="r2")
    with pytest.raises(ValueError, match="2 conversations"):
        transcript_to_entries(pd.concat([a, b]))


def test_iter_conversations_splits_by_run_id_in_order():
    a = transcript_frame([{"role": "patient", "text": "a"}, {"role": "agent", "text": "b"}], run_id="r1",
                         scenario="s1", seed=1, trial=1)
    b = transcript_frame([{"role": "patient", "text": "c"}], run_id="r2", scenario="s2", trial=3)
    got = [(keys, rows["text"].tolist()) for keys, rows in iter_conversations(pd.concat([a, b], ignore_index=True))]
    assert [k["run_id"] for k, _ in got] == ["r1", "r2"]
    assert got[0][0]["seed"] == 1 and got[1][0]["seed"] is None
    assert got[1][0]["trial"] == 3
    assert [t for _, t in got] == [["a", "b"], ["c"]]


def test_as_entries_accepts_a_frame_or_a_list():
    df = transcript_frame([{"role": "patient", "text": "Oi"}], run_id="r")
    assert as_entries(df)[0]["text"] == as_entries([{"role": "patient", "message": "Oi"}])[0]["text"] == "Oi"


def test_conform_orders_types_and_keeps_extras():
    df = pd.DataFrame({"extra": [1], "text": ["x"], "role": ["agent"]})
    out = conform(df, TRANSCRIPT_SCHEMA)
    assert list(out.columns) == [*TRANSCRIPT_COLUMNS, "extra"]
    assert out["role"].iloc[0] == "agent"
    assert pd.isna(out["run_id"].iloc[0])


def test_parquet_round_trip_decodes_exactly_the_columns_it_encoded(tmp_path):
    import pandas as pd

    from convoeval.frames import JSON_COLUMNS, from_parquet, to_parquet

    frame = pd.DataFrame({"run_id": ["a", "b"], "tools": [["x"], []], "settings": [{"k": 1}, None],
                          "text": ['["not", "a", "list"]', "plain"]})
    assert "settings" not in JSON_COLUMNS  # decoded because the file says it was encoded, not by a second list
    to_parquet(frame, tmp_path / "f.parquet")
    back = from_parquet(tmp_path / "f.parquet")
    assert back["tools"].tolist() == [["x"], []]
    assert back["settings"].tolist() == [{"k": 1}, None]
    assert back["run_id"].tolist() == ["a", "b"]
    assert back["text"].tolist() == ['["not", "a", "list"]', "plain"]  # a string stays the string it was
