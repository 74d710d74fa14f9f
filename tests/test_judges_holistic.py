"""The holistic judge: parsing (failing closed), our overall, error rows, samples, prompt layout."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from engine_support import CallRecorder, conversation, holistic, isolated_state, scenario  # noqa: F401 - fixture

import convoeval.judges.scored as scored_module
from convoeval.frames import HOLISTIC_COLUMNS, HOLISTIC_DIMENSIONS
from convoeval.judges import JudgeParseError, judge_holistic, parse_holistic_response
from convoeval.judges.prompts import HOLISTIC_PROMPT_VERSION, HOLISTIC_SYSTEM_PROMPT
from convoeval.testing import FakeChatModel

pytestmark = pytest.mark.usefixtures("isolated_state")

SEED_JSON = json.dumps({
    "scores": {"correctness": 8, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 7, "goal_completion": 9},
    "overall": 8.7,
    "issues": ["minor verbosity"],
    "suggestion": "be more concise",
})


def test_parses_valid_holistic_json_with_goal_completion():
    result = parse_holistic_response(SEED_JSON)
    assert result.scores["goal_completion"] == 9
    assert result.judge_overall == 8.7  # the judge's own overall, kept beside ours
    assert result.overall == pytest.approx(52 / 6)  # ours: the mean of the six scores
    assert result.issues == ["minor verbosity"] and result.suggestion == "be more concise"


def test_parse_failure_raises_instead_of_a_default_five():
    with pytest.raises(JudgeParseError):
        parse_holistic_response("broken")


@pytest.mark.parametrize("scores", [
    {"correctness": 8, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 7},  # goal_completion missing
    {"correctness": 8, "helpfulness": 9, "tone": 9, "safety": 11, "conciseness": 7, "goal_completion": 9},
    {"correctness": "high", "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 7, "goal_completion": 9},
])
def test_missing_or_out_of_range_scores_raise(scores):
    with pytest.raises(JudgeParseError):
        parse_holistic_response(json.dumps({"scores": scores}))


def test_missing_issues_and_suggestion_mean_none_as_the_seed():
    result = parse_holistic_response(json.dumps({"scores": json.loads(SEED_JSON)["scores"], "issues": "n/a"}))
    assert result.issues == [] and result.suggestion == "" and result.judge_overall is None


def test_one_row_with_six_scores_and_our_overall():
    model = FakeChatModel(replies=[holistic()], model_name="judge-y")
    df = judge_holistic(conversation(), scenarios=[scenario()], model=model)
    assert list(df.columns) == list(HOLISTIC_COLUMNS)
    row = df.iloc[0]
    assert [row[d] for d in HOLISTIC_DIMENSIONS] == [8, 9, 9, 10, 7, 9]
    assert row["overall"] == pytest.approx(52 / 6)
    assert row["issues"] == ["Turn 2: a bit long"] and row["suggestion"] == "Be more concise"
    assert (row["judge_model"], row["prompt_version"], row["sample"]) == ("judge-y", HOLISTIC_PROMPT_VERSION, 0)
    assert pd.isna(row["error"])


def test_judge_failure_is_nan_with_an_error_not_a_five():
    model = FakeChatModel(replies=["no idea", "still no idea"])
    df = judge_holistic(conversation(), goals="Pay the invoice", model=model)
    row = df.iloc[0]
    assert all(math.isnan(row[d]) for d in HOLISTIC_DIMENSIONS)
    assert math.isnan(row["overall"])
    assert "StructuredOutputError" in row["error"]


def test_out_of_range_structured_scores_are_rejected():
    model = FakeChatModel(replies=[holistic(safety=42), holistic(safety=42)])
    df = judge_holistic(conversation(), goals="Pay", model=model)
    assert math.isnan(df["overall"].iloc[0]) and df["error"].notna().all()


def test_samples_get_distinct_identities(monkeypatch):
    recorder = CallRecorder(monkeypatch, scored_module)  # the holistic judge calls the model there
    model = FakeChatModel(replies=[holistic(), holistic(tone=3)])
    df = judge_holistic(conversation(), goals="Pay", model=model, samples=2)
    assert df["sample"].tolist() == [0, 1]
    assert df["tone"].tolist() == [9, 3]
    assert len(set(recorder.identities)) == 2
    assert {i.extra for i in recorder.identities} == {"holistic"}


def test_prompt_layout_goal_and_agent_type():
    model = FakeChatModel(replies=[holistic()])
    judge_holistic(conversation(), scenarios=[scenario()], model=model)
    system, user = (m.content for m in model.calls[0].messages)
    assert system == HOLISTIC_SYSTEM_PROMPT
    assert user.startswith("Agent type: billing\nPatient goal: Patient pays a pending R$150 invoice using Pix\n")
    assert user.index("Conversation:\n<transcript-") > user.index("Patient goal")
    assert "8, 9, 9, 10, 7, 9" not in system and '"correctness": 8' not in system  # no scores to copy


def test_missing_goal_fails_before_any_call():
    model = FakeChatModel()
    unknown = conversation().assign(scenario="not-a-project-scenario")  # neither given nor in evals/scenarios
    with pytest.raises(ValueError, match="goal"):
        judge_holistic(unknown, model=model)
    assert model.calls == []


def test_without_scenarios_the_goal_comes_from_the_project_scenario_of_that_id():
    model = FakeChatModel(replies=[{"scores": dict.fromkeys(HOLISTIC_DIMENSIONS, 8), "issues": [], "suggestion": ""}])
    judge_holistic(conversation(), model=model)  # the transcript names billing-conv-happy-payment
    assert "Patient pays a pending R$150 invoice using Pix" in str(model.calls[0].messages[-1].content)
