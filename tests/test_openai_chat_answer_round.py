"""The openai-chat adapter's way out of a tool loop (issue #35): the answer round and invented tool names.

Qwen2.5-Coder-0.5B behind llama-cpp-python writes its calls as text, loops on them (invented tool names, the same
call again) and, asked to answer with no tool bound, copied its own ``<tool_call>`` lines from the request. So for a
model that writes calls as text the answer round shows the turn's calls and results as one plain note, with no call
to copy; a model with real ``tool_calls`` keeps its structured history (tools defined, ``tool_choice="none"``).
"""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from openai_chat_support import said, seeded  # noqa: F401 - seeded is a fixture

from convoeval.agents import AgentError, get_agent
from convoeval.agents.written_calls import call_line, plain_value
from convoeval.testing import FakeChatModel

LIST = '{"name": "list_invoices", "arguments": {"status": "pending"}}'


def called(name: str, args: dict[str, object], call_id: str = "call_1") -> AIMessage:
    """A reply of a model with real function calling (a hosted API): ``tool_calls``, no text."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])




def texts(messages) -> str:
    return "\n".join(str(m.content) for m in messages)


async def test_a_looping_text_model_answers_from_one_plain_note_with_no_call_to_copy(seeded):
    """The model repeats its call: the answer round's request holds no ``<tool_call>``, no JSON of the call and no
    tool message, only the patient's message with one note of the call and its result in words, and it ends with
    the patient's message (a small model copies a note that comes last)."""
    model = FakeChatModel(said(LIST, LIST, "You have one open invoice."))
    reply = await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)

    assert reply.bubbles == ["You have one open invoice."]
    answer = model.calls[2]
    assert not answer.kwargs.get("tools")
    assert "<tool_call>" not in answer.text and '"arguments"' not in answer.text
    assert [type(m).__name__ for m in answer.messages] == ["SystemMessage", "HumanMessage"]
    asked = answer.messages[-1].content
    assert asked.startswith("What do I owe?\n\n(Results of the lookups")
    assert "list_invoices(status=pending)" in asked
    invoice = reply.tool_calls[0].result[0]
    assert f"id: {invoice['id']}" in asked  # the result itself, in words
    assert "plain text" in asked and "English" in asked and asked.endswith(")")


async def test_the_earlier_turns_are_plain_too_in_the_answer_round(seeded):
    """A call of an earlier turn is also a note in that turn's message, before that turn's answer."""
    model = FakeChatModel(said(LIST, "One open invoice.", '{"name": "get_patient", "arguments": {}}',
                               '{"name": "get_patient", "arguments": {}}', "You're Ana."))  # fmt: skip
    agent = get_agent("openai-chat", model=model)
    await agent.respond("What do I owe?", seeded)
    reply = await agent.respond("And who am I?", seeded)

    assert reply.bubbles == ["You're Ana."]
    answer = model.calls[4]
    assert "<tool_call>" not in answer.text
    kinds = [type(m).__name__ for m in answer.messages]
    assert kinds == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    earlier = answer.messages[1].content
    assert earlier.startswith("What do I owe?") and "list_invoices(status=pending)" in earlier
    assert "Now write your reply" not in earlier  # said once, for the message being answered
    assert answer.messages[2].content == "One open invoice."
    assert "get_patient()" in answer.messages[-1].content and "Now write your reply" in answer.messages[-1].content
    # The turn's own rounds (not the answer round) still show the model its calls in Qwen's form.
    assert '<tool_call>\n{"name": "get_patient", "arguments": {}}\n</tool_call>' in model.calls[3].text


async def test_a_text_model_that_loops_on_new_calls_answers_at_the_round_limit_from_the_note(seeded):
    """Different calls every round (never a repeat): at the limit, the plain answer round all the same."""
    model = FakeChatModel(said('{"name": "get_patient", "arguments": {}}', LIST, "Done."))
    reply = await get_agent("openai-chat", model=model, max_tool_rounds=2).respond("hi", seeded)
    assert reply.bubbles == ["Done."] and reply.tool_names == ["get_patient", "list_invoices"]
    note = model.calls[2].messages[-1].content
    assert "get_patient()" in note and "list_invoices(status=pending)" in note and "<tool_call>" not in note


async def test_an_invented_tool_is_answered_with_the_real_ones_once_then_the_model_must_answer(seeded):
    """The first invented name runs (and fails with the list of real tools); a second invented name is not run:
    the next request is the answer round, whose note says the first call failed."""
    model = FakeChatModel(said('{"name": "check_ana", "arguments": {"patient_id": "Ana"}}',
                               '{"name": "check_ana_invoices", "arguments": {"patient_id": "Ana"}}',
                               "Sorry, I could not look that up."))  # fmt: skip
    reply = await get_agent("openai-chat", model=model).respond("Does Ana owe anything?", seeded)

    assert reply.bubbles == ["Sorry, I could not look that up."]
    assert reply.tool_names == ["check_ana"]  # the second invented call was not run
    assert "expected one of find_patient" in reply.tool_calls[0].result["error"]
    assert [bool(c.kwargs.get("tools")) for c in model.calls] == [True, True, False]
    assert "check_ana(patient_id=Ana): failed: ToolError: unknown tool 'check_ana'" in model.calls[2].messages[-1].content


async def test_a_text_model_that_still_writes_a_call_in_the_answer_round_is_an_error(seeded):
    """Nothing is handed to the caller as a call: the turn is an error with its reason."""
    model = FakeChatModel(said(LIST, LIST, LIST))
    with pytest.raises(AgentError, match="still calling tools after 2 rounds without answering"):
        await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)


async def test_a_real_tool_calling_model_keeps_its_structured_history_in_the_answer_round(seeded):
    """A hosted model with proper ``tool_calls``: the answer round keeps the tools defined with ``tool_choice``
    "none", its call as an ``AIMessage`` with ``tool_calls`` and the result as a ``ToolMessage`` (no plain note)."""
    model = FakeChatModel([called("list_invoices", {"status": "pending"}),
                           called("list_invoices", {"status": "pending"}, "call_2"), AIMessage(content="One invoice.")])  # fmt: skip
    reply = await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)

    assert reply.bubbles == ["One invoice."] and reply.tool_names == ["list_invoices"]
    answer = model.calls[2]
    assert answer.kwargs.get("tools") and answer.kwargs.get("tool_choice") == "none"
    ai = next(m for m in answer.messages if isinstance(m, AIMessage))
    assert ai.tool_calls and ai.tool_calls[0]["name"] == "list_invoices"
    assert any(isinstance(m, ToolMessage) for m in answer.messages)
    assert "Do not call any tool now" in answer.messages[-1].content
    assert "Results of the lookups" not in answer.text


async def test_a_real_tool_calling_model_that_invents_twice_is_asked_to_answer(seeded):
    model = FakeChatModel([called("check_ana", {}), called("check_ana_2", {}, "call_2"), AIMessage(content="Sorry.")])
    reply = await get_agent("openai-chat", model=model).respond("Does Ana owe anything?", seeded)
    assert reply.bubbles == ["Sorry."] and reply.tool_names == ["check_ana"]
    assert model.calls[2].kwargs.get("tool_choice") == "none"


def test_plain_value_has_no_braces_to_imitate():
    value = [{"id": "inv-1", "amount": 350.0, "items": [{"code": "A"}]}, {"id": "inv-2", "due": None}]
    text = plain_value(value)
    assert text == "- id: inv-1, amount: 350.0, items: [(code: A)]\n- id: inv-2, due: none"
    assert "{" not in text and "{" not in plain_value({"error": "boom"}) and plain_value([]) == "nothing found"
    assert call_line("list_invoices", {"status": "pending"}) == "list_invoices(status=pending)"
    assert plain_value("x" * 50, limit=10) == "x" * 9 + "…"
    json.dumps(value)  # the fixture is what a tool returns: JSON-able
