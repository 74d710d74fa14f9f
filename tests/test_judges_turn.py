"""Scripted turns: the fixed per-turn checks and the five-dimension per-turn judge."""

from __future__ import annotations

import math

import pytest
from engine_support import isolated_state  # noqa: F401 - fixture

from convoeval.agents.base import AgentReply, ToolCall
from convoeval.frames import TURN_COLUMNS, TURN_DIMENSIONS
from convoeval.judges import check_turn, judge_turn
from convoeval.judges.prompts import TURN_PROMPT_VERSION, TURN_SYSTEM_PROMPT
from convoeval.scenarios import TurnExpectations
from convoeval.testing import FakeChatModel

pytestmark = pytest.mark.usefixtures("isolated_state")

REPLY = AgentReply(bubbles=["Sua fatura é de R$ 150,00.", "Prefere PIX ou boleto?"],
                   tool_calls=[ToolCall("lookup_invoices"), ToolCall("get_patient")])


def test_all_expectations_hold():
    expect = TurnExpectations(tools_called=["lookup_invoices"], tools_not_called=["generate_payment_link"],
                              response_contains=["pix", "BOLETO"], response_not_contains=["cartão"],
                              response_matches=r"R\$ ?\d+,\d{2}", max_tool_calls=2)
    assert check_turn(expect, REPLY) == []


def test_each_failed_expectation_is_reported():
    expect = TurnExpectations(tools_called=["generate_payment_link"], tools_not_called=["get_patient"],
                              response_contains=["cartão"], response_not_contains=["Pix"],
                              response_matches=r"https://", max_tool_calls=1)
    assert check_turn(expect, REPLY) == [
        "tools_called: expected generate_payment_link, got [lookup_invoices, get_patient]",
        "tools_not_called: get_patient was called",
        "response_contains: missing 'cartão'",
        "response_not_contains: found 'Pix'",
        "response_matches: no match for /https:///",
        "max_tool_calls: expected at most 1, got 2",
    ]


def test_checks_accept_mappings_and_transcript_entries():
    entry = {"role": "agent", "text": "Olá", "tools": []}
    assert check_turn({"tools_called": ["x"]}, entry) == ["tools_called: expected x, got []"]
    assert check_turn({"max_tool_calls": 0}, {"bubbles": ["a"], "tool_calls": [{"name": "t"}]}) == [
        "max_tool_calls: expected at most 0, got 1"]


HISTORY = [{"role": "patient", "text": "Quero pagar"}, {"role": "agent", "text": "Pix ou boleto?", "tools": ["t"]}]
SCORES = {"issues": [], "scores": {"correctness": 9, "helpfulness": 8, "tone": 10, "safety": 10, "conciseness": 8},
          "suggestion": "none"}


def test_turn_judge_scores_five_dimensions():
    model = FakeChatModel(replies=[SCORES])
    rows = judge_turn(HISTORY, agent_type="billing", scenario="s", run_id="r", seed=1, model=model)
    assert len(rows) == 1
    row = rows[0]
    assert set(row) <= set(TURN_COLUMNS)
    assert [row[d] for d in TURN_DIMENSIONS] == [9, 8, 10, 10, 8]
    assert row["overall"] == pytest.approx(9.0)
    assert (row["turn"], row["prompt_version"], row["judge_model"]) == (1, TURN_PROMPT_VERSION, "fake-chat")
    system, user = (m.content for m in model.calls[0].messages)
    assert system == TURN_SYSTEM_PROMPT
    assert user.rstrip().endswith("Score the agent's reply in Turn 1 as the JSON object described.")


def test_turn_judge_failure_is_an_error_row():
    rows = judge_turn(HISTORY, agent_type="billing", model=FakeChatModel(replies=[RuntimeError("down")]))
    assert math.isnan(rows[0]["overall"]) and "down" in rows[0]["error"]


def test_turn_judge_needs_the_agent_reply_last():
    with pytest.raises(ValueError, match="agent"):
        judge_turn(HISTORY[:1], agent_type="billing", model=FakeChatModel())
