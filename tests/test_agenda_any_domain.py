"""The agenda patient is not a clinic patient: a shop's scenario, with its own agent written in its own words, runs
end to end (the acts are generic, the slots come from the scenario's ``knows`` and ``agenda``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from convoeval.agents import AgentReply, AgentSession, ToolCall
from convoeval.pipeline.conversation import arun_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import RunOptions
from convoeval.scenarios import register_agent_name
from convoeval.scenarios.models import ConversationalScenario
from convoeval.testing import FakeChatModel

_STATE: dict[str, dict[str, Any]] = {}


def kettle_shop(message: str, session: AgentSession) -> AgentReply:
    """A small shop bot with its own phrasing: size, then colour, then the delivery day, then a summary to accept."""
    key = f"{session.run_id}"
    state = _STATE.setdefault(key, {"step": "hello"})
    text = message.casefold()
    step = state["step"]
    if step == "hello":
        state["step"] = "size"
        return AgentReply(bubbles=["Hey there, welcome to Kettle & Co! Happy to sort out your order.",
                                   "Which size are you after: the 1 litre, the 1.7 litre or the 2 litre model?"])
    if step == "size":
        size = next((s for s in ("1.7", "2", "1") if s in text), None)
        if size is None:
            return AgentReply(bubbles=["Sorry, I missed that. We stock 1, 1.7 and 2 litres. Which one?"])
        state.update(step="colour", size=size)
        return AgentReply(bubbles=[f"Great, the {size} litre it is. What colour would you like it in?"])
    if step == "colour":
        state.update(step="day", colour=message.strip(" .!"))
        return AgentReply(bubbles=["Noted. We can deliver on these days:\n• Thursday morning\n• Friday afternoon\n"
                                   "• Saturday morning\nWhich one suits you?"])
    if step == "day":
        day = next((d for d in ("thursday", "friday", "saturday") if d in text), None)
        if day is None:
            return AgentReply(bubbles=["Which of those days works for you?"])
        state.update(step="confirm", day=day)
        return AgentReply(bubbles=[f"So that's a {state['size']} litre kettle, delivered {day.title()}. "
                                   "Want me to place the order?"])
    if step == "confirm" and any(w in text for w in ("yes", "sure", "go ahead", "please", "confirm")):
        state["step"] = "done"
        return AgentReply(bubbles=[f"Done! Your order has been booked for {state['day'].title()}. Order number "
                                   "KC-2291. Anything else?"],
                          tool_calls=[ToolCall("place_order", {"size": state["size"], "day": state["day"]},
                                               {"order": "KC-2291"})])
    return AgentReply(bubbles=["Is there anything else I can help you with?"])


@pytest.fixture
def shop_agent_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """"shop" as a registered agent name for this test only: a name left registered would change every later test's
    view of the registry (the shipped JSON Schema's agent list, for one)."""
    from convoeval.scenarios import agent_registry

    monkeypatch.setattr(agent_registry, "_NAMES", dict(agent_registry._NAMES))
    register_agent_name("shop")


def _shop_scenario() -> ConversationalScenario:
    return ConversationalScenario.model_validate({
        "type": "conversational", "id": "shop-kettle", "agent": "shop", "locale": "en",
        "description": "A customer orders a kettle for weekend delivery",
        "persona": {"name": "Nora Blake", "phone": "447700900123", "traits": ["friendly", "brief"],
                    "knows": {"colour": "matte black"}},
        "goal": "Order a 1.7 litre kettle in matte black, delivered on Saturday",
        "agenda": {"intent": "I'd like to order an electric kettle", "prefers": ["1.7 litre", "Saturday"],
                   "done_when": ["booked"]},
        "rubric": ["The agent confirmed the order details before placing it"],
        "assertions": {"path": [{"calls": "place_order", "exactly": 1}]}})


def _silent(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    return {"act": "other"} if kwargs.get("tools") or kwargs.get("response_format") else ""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_shop_scenario_with_its_own_agent_reaches_its_goal(seed: int, store: Any, shop_agent_name: None) -> None:
    from test_reliability_support import fake_responder

    options = RunOptions(target=kettle_shop, simulator_model=FakeChatModel(responder=_silent),
                         judge_model=FakeChatModel(responder=fake_responder), store=store, simulator="agenda")
    result = asyncio.run(arun_any(Job(_shop_scenario(), seed), options))
    tx = result.transcript
    patient = tx[tx["role"] == "patient"]["text"].tolist()
    assert tx[tx["role"] == "patient"]["signal"].dropna().tolist() == ["GOAL_COMPLETE"], patient
    assert any("1.7" in m for m in patient) and any("matte black" in m.casefold() for m in patient)
    assert any("Saturday" in m for m in patient)
    assert result.assertions["passed"].astype(bool).all()
