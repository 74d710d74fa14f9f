"""``RunFrames``: a run's frames as one typed object (convoeval/frames/run_frames.py), and the one loader over it."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from report_support import conversation, merge, write_run_folder

from convoeval import load_results
from convoeval.frames import FRAME_NAMES, FRAME_SCHEMAS, RunFrames, UnknownFrameError
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.pipeline import EvalResult


def _payloads() -> list[dict]:
    return [conversation("r1"), conversation("r2", seed=7, status="fail", score=3.0)]


def test_built_from_payloads_every_frame_is_an_attribute_typed_by_its_contract():
    frames = RunFrames.from_payloads(_payloads())
    assert list(frames.scores["run_id"]) == ["r1", "r2"]
    assert list(frames.scores["status"]) == ["pass", "fail"]
    assert len(frames.transcripts) == 6 and len(frames.calls) == 2
    for name, schema in FRAME_SCHEMAS.items():
        frame = getattr(frames, name)
        assert list(frame.columns) == list(schema), name
        assert {c: str(t) for c, t in frame.dtypes.items()} == schema, name
    assert frames.scores["seed"].dtype == "Int64" and frames.rubric["passed"].dtype == "boolean"


def test_an_empty_run_gives_typed_empty_frames():
    frames = RunFrames.from_payloads([], call_columns=CALL_COLUMNS)
    for name, schema in FRAME_SCHEMAS.items():
        frame = frames.frame(name)
        assert len(frame) == 0 and {c: str(t) for c, t in frame.dtypes.items()} == schema, name
    assert frames.calls.empty and list(frames.calls.columns) == list(CALL_COLUMNS)
    assert frames.scores["score"].dtype == "float64"  # an empty mean is NaN, not an object-column error
    assert RunFrames.empty().scores["status"].value_counts().to_dict() == {}


def test_items_iterates_name_and_frame_in_a_fixed_order():
    frames = RunFrames.from_payloads(_payloads())
    names = [name for name, _ in frames.items()]
    assert names == list(FRAME_NAMES) == [*FRAME_SCHEMAS, "calls"]
    assert all(frame is getattr(frames, name) for name, frame in frames.items())
    assert frames.as_dict().keys() == set(FRAME_NAMES)


def test_an_unknown_frame_name_is_a_clear_error_naming_the_valid_ones():
    frames = RunFrames.empty()
    with pytest.raises(UnknownFrameError, match=r"unknown frame name\(s\) \['score'\].*'scores'"):
        frames.frame("score")
    with pytest.raises(UnknownFrameError, match="'rubrics'"):
        RunFrames.from_frames({"rubrics": pd.DataFrame()})
    with pytest.raises(UnknownFrameError, match="'transcript'"):
        RunFrames.from_rows({"transcript": []})
    with pytest.raises(UnknownFrameError, match="'score'"):
        frames.replace(score=pd.DataFrame())
    with pytest.raises(AttributeError, match="score"):
        frames.score  # noqa: B018 - the attribute access is what is tested
    with pytest.raises(TypeError, match="not subscriptable"):
        frames["scores"]  # type: ignore[index]  # library code reads attributes; a string look-up fails loudly


def test_a_row_with_an_undeclared_column_is_refused():
    with pytest.raises(ValueError, match="unknown column"):
        RunFrames.from_rows({"scores": [{"run_id": "r1", "scroe": 3.0}]})


def test_it_is_frozen_and_replace_returns_a_new_object():
    frames = RunFrames.from_payloads(_payloads())
    with pytest.raises(dataclasses.FrozenInstanceError):
        frames.scores = frames.scores.iloc[0:0]  # type: ignore[misc]
    fewer = frames.replace(scores=frames.scores.iloc[:1])
    assert len(fewer.scores) == 1 and len(frames.scores) == 2 and fewer.runs is frames.runs


def test_without_and_only_filter_every_frame_with_a_run_id_and_keep_the_calls():
    frames = RunFrames.from_payloads(_payloads())
    kept = frames.without({"r2"})
    assert set(kept.transcripts["run_id"]) == set(kept.rubric["run_id"]) == set(kept.scores["run_id"]) == {"r1"}
    assert list(kept.scores.index) == [0] and len(kept.calls) == 2  # calls carry no run_id
    assert set(frames.only({"r2"}).runs["run_id"]) == {"r2"}
    assert frames.without(set()) is frames


def test_merge_concatenates_frame_by_frame_and_keeps_empty_ones_typed():
    a = RunFrames.from_payloads([conversation("r1")])
    b = RunFrames.from_payloads([conversation("r2", seed=7)])
    merged = RunFrames.merge([a, b, RunFrames.empty()])
    assert list(merged.runs["run_id"]) == ["r1", "r2"] and list(merged.runs.index) == [0, 1]
    assert merged.turns.empty and list(merged.turns.columns) == list(FRAME_SCHEMAS["turns"])
    assert merged.scores["seed"].dtype == "Int64"


def test_load_results_is_the_one_loader_and_returns_an_eval_result(tmp_path):
    folder = write_run_folder(tmp_path / "run", merge(conversation("a1"), conversation("a2", seed=7)),
                              meta={"local_demo": True})
    run = load_results(folder)
    assert isinstance(run, EvalResult) and isinstance(run.frames, RunFrames)
    assert sorted(run.frames.scores["seed"]) == [7, 42] and run.scores is run.frames.scores
    assert run.meta == {"local_demo": True}
    with pytest.raises(FileNotFoundError, match="no finished conversation"):
        load_results(tmp_path / "nothing")


def test_an_eval_result_wants_run_frames_not_a_dict(tmp_path):
    with pytest.raises(TypeError, match="RunFrames.from_frames"):
        EvalResult(out_dir=tmp_path, frames={"scores": pd.DataFrame()})  # type: ignore[arg-type]
    empty = EvalResult(out_dir=tmp_path, frames=RunFrames.empty())
    assert list(empty.frames.calls.columns) == list(CALL_COLUMNS)  # typed even when no call was made
    assert empty.status_counts()["pass"] == 0


def test_repr_gives_the_sizes_not_the_frames():
    assert repr(RunFrames.from_payloads(_payloads())) == (
        "RunFrames(runs=2, scores=2, transcripts=6, rubric=4, holistic=2, turns=0, assertions=2, leaks=0, attacks=0, "
        "calls=2)")
