"""The composite score: worked examples (6.5 with a failed assertion is fail) and score frames."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from convoeval.frames import (
    ASSERTION_SCHEMA,
    HOLISTIC_SCHEMA,
    RUBRIC_SCHEMA,
    RUN_SCHEMA,
    SCORE_COLUMNS,
    TURN_SCHEMA,
    typed_frame,
)
from convoeval.judges.scoring import calculate_score, score_frame, score_scripted

# ── calculate_score: worked examples ──


def test_uses_min_of_rubric_and_judge_minus_penalty():
    score = calculate_score(2, 2, 8, 0)  # rubric 10, judge 8
    assert (score.overall, score.status) == (8.0, "pass")


def test_penalizes_assertion_failures_and_fails_on_them():
    score = calculate_score(1, 1, 8, ["invoice_status: expected paid, got pending"])
    assert score.overall == 6.5  # min(10, 8) - 1.5
    # A failed database assertion fails the scenario, whatever the judges' scores (not warn).
    assert score.status == "fail"
    assert score.assertion_failures == 1 and score.penalty == 1.5


def test_fails_when_rubric_mostly_fails():
    score = calculate_score(1, 3, 8, 0)  # rubric 3.33
    assert score.overall == 3.3
    assert score.status == "fail"
    assert score.rubric_score == pytest.approx(10 / 3)


# ── The rest of the rule ──


def test_a_failed_criterion_warns_even_with_a_high_score():
    score = calculate_score(9, 10, 10, 0)  # rubric 9.0
    assert (score.overall, score.status) == (9.0, "warn")


def test_below_seven_warns_and_seven_passes():
    assert calculate_score(1, 1, 6.9, 0).status == "warn"
    assert calculate_score(1, 1, 7.0, 0).status == "pass"


def test_rounding_is_half_up_like_math_round():
    assert calculate_score(1, 1, 6.25, 0).overall == 6.3  # Python's round() would give 6.2
    assert calculate_score(1, 1, 4.95, 0).overall == 5.0
    assert calculate_score(1, 1, 4.95, 0).status == "warn"


def test_clamped_to_zero():
    score = calculate_score(0, 2, 3, 5)
    assert score.overall == 0.0 and score.status == "fail"


def test_no_criteria_scores_ten_as_the_seed():
    assert calculate_score(0, 0, 8, 0).rubric_score == 10


def test_any_error_makes_the_status_error_and_no_score():
    score = calculate_score(3, 3, 9, 0, errors=["rubric judge: criterion 2 missing"])
    assert score.status == "error" and math.isnan(score.overall)
    assert score.error == "rubric judge: criterion 2 missing"
    assert score.rubric_score == 10  # components stay visible


def test_missing_holistic_score_is_an_error_not_a_default():
    score = calculate_score(3, 3, float("nan"), 0)
    assert score.status == "error" and "holistic" in score.error
    assert calculate_score(3, 3, None, 0).status == "error"


# ── score_frame ──


def _rubric(run_id, *passed, errors=None, sample=0):
    errors = errors or {}
    return [{"run_id": run_id, "scenario": "s", "agent": "billing", "seed": 1, "trial": 1, "criterion_index": i,
             "criterion": f"c{i}", "passed": p, "error": errors.get(i), "sample": sample}
            for i, p in enumerate(passed)]


def _holistic(run_id, overall, error=None, sample=0):
    return {"run_id": run_id, "scenario": "s", "overall": overall, "error": error, "sample": sample}


def test_score_frame_keeps_components_beside_the_composite():
    rubric = typed_frame(_rubric("r1", True, True) + _rubric("r2", True, False, None, errors={2: "missing"}),
                         RUBRIC_SCHEMA)
    holistic = typed_frame([_holistic("r1", 8.0), _holistic("r2", 9.0)], HOLISTIC_SCHEMA)
    assertions = typed_frame([
        {"run_id": "r1", "scenario": "s", "assertion": "payment_link_created", "passed": False,
         "message": "payment_link_created: expected true, got false"},
        {"run_id": "r1", "scenario": "s", "assertion": "invoice_status", "passed": True},
    ], ASSERTION_SCHEMA)
    transcripts = pd.DataFrame({"run_id": ["r1", "r1", "r2"], "signal": [None, "GOAL_COMPLETE", None]})
    df = score_frame(rubric, holistic, assertions, transcripts=transcripts)
    assert list(df.columns) == list(SCORE_COLUMNS)
    r1, r2 = df.iloc[0], df.iloc[1]
    assert (r1["status"], r1["score"], r1["rubric_score"], r1["holistic_overall"], r1["assertion_failures"]) == (
        "fail", 6.5, 10.0, 8.0, 1)
    assert (r1["rubric_passed"], r1["rubric_total"], r1["agent"], r1["seed"]) == (2, 2, "billing", 1)
    assert bool(r1["goal_completed"]) is True
    assert r2["status"] == "error" and math.isnan(r2["score"]) and "missing" in r2["error"]
    assert (r2["rubric_passed"], r2["rubric_total"]) == (1, 3)
    assert bool(r2["goal_completed"]) is False


def test_samples_vote_by_strict_majority_and_holistic_is_averaged():
    rubric = typed_frame(
        _rubric("r", True, True, sample=0) + _rubric("r", True, False, sample=1) + _rubric("r", False, False, sample=2),
        RUBRIC_SCHEMA)
    holistic = typed_frame([_holistic("r", 8.0, sample=0), _holistic("r", 9.0, sample=1)], HOLISTIC_SCHEMA)
    row = score_frame(rubric, holistic).iloc[0]
    assert (row["rubric_passed"], row["rubric_total"]) == (1, 2)  # criterion 0: 2 of 3; criterion 1: 1 of 3
    assert row["holistic_overall"] == pytest.approx(8.5)
    assert (row["score"], row["status"]) == (5.0, "warn")  # min(5.0, 8.5); 5 is not below 5


def test_holistic_error_and_missing_judges_are_errors():
    rubric = typed_frame(_rubric("r1", True) + _rubric("r2", True), RUBRIC_SCHEMA)
    holistic = typed_frame([_holistic("r1", float("nan"), error="StructuredOutputError: bad")], HOLISTIC_SCHEMA)
    df = score_frame(rubric, holistic)
    assert df["status"].tolist() == ["error", "error"]
    assert "holistic judge: StructuredOutputError" in df["error"].iloc[0]
    assert "no holistic score" in df["error"].iloc[1]


def test_failed_conversation_and_unchecked_assertion_are_errors():
    runs = typed_frame([{"run_id": "r1", "scenario": "s", "status": "error", "error": "AgentError: agent down"},
                        {"run_id": "r2", "scenario": "s", "status": "completed", "goal_completed": True}], RUN_SCHEMA)
    rubric = typed_frame(_rubric("r2", True), RUBRIC_SCHEMA)
    holistic = typed_frame([_holistic("r2", 9.0)], HOLISTIC_SCHEMA)
    assertions = typed_frame([{"run_id": "r2", "assertion": "invoice_status", "passed": None,
                               "error": "StoreError: connection refused"}], ASSERTION_SCHEMA)
    df = score_frame(rubric, holistic, assertions, runs=runs)
    assert df["run_id"].tolist() == ["r1", "r2"]
    assert df["error"].iloc[0].startswith("conversation: AgentError: agent down")
    assert "assertion: StoreError" in df["error"].iloc[1]
    assert bool(df["goal_completed"].iloc[1]) is True


def test_a_run_that_failed_before_getting_an_id_still_scores_error():
    runs = typed_frame([{"run_id": None, "scenario": "s", "status": "error", "error": "store error: down"}], RUN_SCHEMA)
    df = score_frame(typed_frame([], RUBRIC_SCHEMA), typed_frame([], HOLISTIC_SCHEMA), runs=runs)
    assert len(df) == 1
    assert df["status"].iloc[0] == "error"
    assert df["error"].iloc[0] == "conversation: store error: down"  # not also "no rubric verdicts"


# ── score_scripted ──


def _turn(turn, overall=None, failures=(), error=None, sample=0, judged=True):
    row = {"run_id": "r", "scenario": "s", "agent": "billing", "turn": turn, "check_failures": list(failures)}
    if judged:
        row.update(overall=overall, error=error, sample=sample, prompt_version="turn-v1")
    return row


def _runs(status="completed", error=None):
    return typed_frame([{"run_id": "r", "scenario": "s", "agent": "billing", "status": status, "error": error}],
                       RUN_SCHEMA)


def test_scripted_turns_count_as_criteria_and_the_turn_judge_as_holistic():
    turns = typed_frame([_turn(1, 9.0), _turn(1, 7.0, sample=1), _turn(2, 8.0, failures=["response_contains: x"]),
                         _turn(3, judged=False)], TURN_SCHEMA)
    row = score_scripted(_runs(), turns).iloc[0]
    assert (row["rubric_passed"], row["rubric_total"]) == (2, 3)
    assert row["holistic_overall"] == pytest.approx(8.0)  # mean of turn 1 (8.0 over samples) and turn 2 (8.0)
    assert row["score"] == 6.7  # min(6.67, 8.0)
    assert row["status"] == "warn"


def test_scripted_assertion_failure_fails_and_judge_error_errors():
    turns = typed_frame([_turn(1, 9.0)], TURN_SCHEMA)
    assertions = typed_frame([{"run_id": "r", "assertion": "invoice_status", "passed": False}], ASSERTION_SCHEMA)
    row = score_scripted(_runs(), turns, assertions).iloc[0]
    assert (row["score"], row["status"], row["assertion_failures"]) == (7.5, "fail", 1)
    broken = typed_frame([_turn(1, None, error="LLMCallError: down")], TURN_SCHEMA)
    row = score_scripted(_runs(), broken).iloc[0]
    assert row["status"] == "error" and "turn judge: LLMCallError: down" in row["error"]


def test_scripted_without_judged_turns_scores_on_checks_alone():
    turns = typed_frame([_turn(1, judged=False), _turn(2, judged=False)], TURN_SCHEMA)
    row = score_scripted(_runs(), turns).iloc[0]
    assert (row["score"], row["status"], row["holistic_overall"]) == (10.0, "pass", 10.0)


def test_scripted_run_error_is_reported_once():
    row = score_scripted(_runs("error", "agent error: down"), typed_frame([], TURN_SCHEMA),
                         error="agent error: down").iloc[0]
    assert (row["status"], row["error"]) == ("error", "conversation: agent error: down")
