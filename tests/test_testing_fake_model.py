"""The scripted fake chat model: replies in order, records calls, structured answers, clear failure when it runs out."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from convoeval.llm import SampleIdentity, StructuredOutputError, acall_model
from convoeval.testing import FakeChatModel, ScriptExhaustedError


class Verdict(BaseModel):
    verdict: str = Field(max_length=10)
    score: int


IDENTITY = SampleIdentity(scenario="s", seed=1, trial=1, role="judge")


def test_replies_come_in_order_and_calls_are_recorded():
    model = FakeChatModel(replies=["one", "two"])
    assert model.invoke([HumanMessage("hi")]).content == "one"
    assert model.invoke([SystemMessage("sys"), HumanMessage("again")], seed=3).content == "two"
    assert [c.last for c in model.calls] == ["hi", "again"]
    assert model.calls[1].kwargs["seed"] == 3
    assert "sys" in model.calls[1].text
    assert model.remaining == 0


async def test_async_invoke_and_enqueue_chain():
    model = FakeChatModel().enqueue("a").enqueue("b")
    assert (await model.ainvoke("x")).content == "a"
    assert (await model.ainvoke("y")).content == "b"


def test_exception_reply_is_raised():
    model = FakeChatModel(replies=[ValueError("boom"), "after"])
    with pytest.raises(ValueError, match="boom"):
        model.invoke("x")
    assert model.invoke("x").content == "after"


def test_empty_script_says_it_ran_out():
    model = FakeChatModel(replies=["only"], model_name="patient")
    model.invoke("x")
    with pytest.raises(ScriptExhaustedError, match=r"script ran out: call #2.*'patient'|'patient'.*call #2"):
        model.invoke("what now?")


def test_responder_fills_in_when_script_is_empty():
    model = FakeChatModel(responder=lambda messages, kwargs: f"echo: {messages[-1].content}")
    assert model.invoke("ping").content == "echo: ping"


def test_usage_is_a_word_count():
    model = FakeChatModel(replies=["three words here"])
    message = model.invoke("one two")
    assert message.usage_metadata["input_tokens"] == 2
    assert message.usage_metadata["output_tokens"] == 3


def test_dict_reply_becomes_tool_call_when_tools_are_bound():
    model = FakeChatModel(replies=[{"verdict": "pass", "score": 3}])
    message = model.bind_tools([Verdict], tool_choice="Verdict").invoke("judge")
    assert message.tool_calls[0]["name"] == "Verdict"
    assert message.tool_calls[0]["args"] == {"verdict": "pass", "score": 3}


def test_with_structured_output_works_on_the_fake():
    model = FakeChatModel(replies=[Verdict(verdict="fail", score=1)])
    result = model.with_structured_output(Verdict).invoke("judge")
    assert result == Verdict(verdict="fail", score=1)


def test_aimessage_reply_is_returned_as_is():
    model = FakeChatModel(replies=[AIMessage(content="raw", response_metadata={"finish_reason": "length"})])
    message = model.invoke("x")
    assert message.content == "raw"
    assert message.response_metadata["finish_reason"] == "length"


async def test_call_model_plain_text_through_fake():
    model = FakeChatModel(replies=["Oi!"])
    result = await acall_model(model, [("user", "hello")], identity=IDENTITY, seed=7, temperature=0.0)
    assert result.text == "Oi!"
    assert result.parsed is None
    assert result.info.provider == "fake"
    assert model.calls[0].kwargs == {"seed": 7, "temperature": 0.0}


@pytest.mark.parametrize(
    "reply",
    [{"verdict": "pass", "score": 2}, '{"verdict": "pass", "score": 2}', Verdict(verdict="pass", score=2)],
    ids=["dict", "json-string", "pydantic"],
)
async def test_call_model_structured_reply_forms(reply):
    model = FakeChatModel(replies=[reply])
    result = await acall_model(model, [("user", "judge this")], identity=IDENTITY, schema=Verdict)
    assert result.parsed == Verdict(verdict="pass", score=2)
    assert model.calls[0].kwargs["tool_choice"]["function"]["name"] == "Verdict"


async def test_call_model_retries_once_on_invalid_structured_reply():
    model = FakeChatModel(replies=[{"verdict": "pass"}, {"verdict": "fail", "score": 0}])
    result = await acall_model(model, [("user", "judge")], identity=IDENTITY, schema=Verdict)
    assert result.parsed == Verdict(verdict="fail", score=0)
    assert len(model.calls) == 2
    assert "could not be used" in model.calls[1].last and "score" in model.calls[1].last


async def test_call_model_gives_up_after_two_bad_structured_replies():
    model = FakeChatModel(replies=["not json at all", {"verdict": "far too long a verdict", "score": 1}, "unused"])
    with pytest.raises(StructuredOutputError, match="Verdict"):
        await acall_model(model, [("user", "judge")], identity=IDENTITY, schema=Verdict)
    assert model.remaining == 1


async def test_a_retried_structured_answer_accounts_for_both_replies():
    usage = lambda i, o: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}  # noqa: E731
    model = FakeChatModel(replies=[
        AIMessage(content="not json", usage_metadata=usage(10, 5)),
        AIMessage(content="", tool_calls=[{"name": "Verdict", "args": {"verdict": "ok", "score": 1}, "id": "c1"}],
                  usage_metadata=usage(20, 7)),
    ])  # fmt: skip
    result = await acall_model(model, [("user", "judge")], identity=IDENTITY, schema=Verdict)
    assert result.parsed == Verdict(verdict="ok", score=1)
    assert (result.prompt_tokens, result.completion_tokens, result.attempts) == (30, 12, 2)
