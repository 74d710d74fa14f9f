"""The openai-chat adapter runs tool calls a model writes as text (issue #35).

Small local models served without a function-calling chat format (Qwen2.5 behind llama-cpp-python's GGUF template)
write their tool calls into the message text — ``{"name": ..., "arguments": {...}}``, inside ``<tool_call>`` tags or
a fenced json block — so the server returns them as content with no ``tool_calls``. The adapter must run such a call
and let the model answer the caller, never hand the JSON to the caller as the agent's message.
"""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from openai_chat_support import said, seeded  # noqa: F401 - seeded is a fixture

from convoeval.agents import AgentError, get_agent
from convoeval.agents.tools import TOOL_NAMES
from convoeval.agents.written_calls import text_tool_calls
from convoeval.testing import FakeChatModel

# The forms the embedded Qwen2.5 model (and others) write a call in, all for the same call.
WRITTEN_CALLS = {
    "bare json": '{"name": "list_invoices", "arguments": {"status": "pending"}}',
    "tool_call tags": '<tool_call>\n{"name": "list_invoices", "arguments": {"status": "pending"}}\n</tool_call>',
    "fenced json": 'Let me check.\n```json\n{"name": "list_invoices", "arguments": {"status": "pending"}}\n```',
    "arguments as a json string": '{"name": "list_invoices", "arguments": "{\\"status\\": \\"pending\\"}"}',
    "parameters key": '{"name": "list_invoices", "parameters": {"status": "pending"}}',
    "unclosed (the model stopped one brace short)": '{"name": "list_invoices", "arguments": {"status": "pending"}',
    "openai function shape": '{"type": "function", "function": {"name": "list_invoices", '
    '"arguments": {"status": "pending"}}}',
    # Qwen2.5-Coder-1.5B on the same server wrote its calls as XML-like elements (#35).
    "function element in tools": '<tools>\n  <function name="list_invoices" arguments=\'{"status": "pending"}\'/>\n'
    '</tools>',
    "function element with a body": '<function name="list_invoices">{"status": "pending"}</function>',
    "function=name element": '<function=list_invoices>{"status": "pending"}</function>',
}


#: How the adapter shows the model its call in the next request (Qwen's training format, arguments as an object).
CANONICAL = '<tool_call>\n{"name": "list_invoices", "arguments": {"status": "pending"}}\n</tool_call>'


@pytest.mark.parametrize("written", WRITTEN_CALLS.values(), ids=WRITTEN_CALLS.keys())
async def test_a_call_written_as_text_is_run_and_the_caller_gets_the_answer(seeded, written):
    model = FakeChatModel(said(written, "You have one open invoice of R$ 350.00."))
    reply = await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)

    assert reply.bubbles == ["You have one open invoice of R$ 350.00."]
    assert reply.tool_names == ["list_invoices"]
    assert reply.tool_calls[0].arguments == {"status": "pending"}
    invoices = reply.tool_calls[0].result
    assert isinstance(invoices, list) and invoices and "error" not in invoices[0]  # really ran on the store
    # The model's second call saw its call in Qwen's own form, then the tool's result: not an answer to the caller.
    second = model.calls[1].messages
    assert isinstance(second[-2], AIMessage) and str(second[-2].content).endswith(CANONICAL)
    assert isinstance(second[-1], ToolMessage) and invoices[0]["id"] in str(second[-1].content)


async def test_a_long_tool_result_is_cut_for_the_model_and_kept_whole_in_the_transcript(seeded, monkeypatch):
    from convoeval.agents import written_calls  # noqa: PLC0415

    monkeypatch.setattr(written_calls, "TOOL_RESULT_CHARS", 40)  # a small model's context, in miniature
    model = FakeChatModel(said('{"name": "list_invoices", "arguments": {}}', "One invoice."))
    reply = await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)
    shown = str(model.calls[1].messages[-1].content)
    whole = json.dumps(reply.tool_calls[0].result, ensure_ascii=False, default=str)
    assert len(whole) > 40 and shown.startswith(whole[:40]) and "more characters not shown" in shown
    assert reply.tool_calls[0].result and "error" not in reply.tool_calls[0].result[0]


async def test_two_tagged_calls_in_one_message_both_run(seeded):
    written = ('<tool_call>\n{"name": "get_patient", "arguments": {}}\n</tool_call>\n'
               '<tool_call>\n{"name": "list_invoices", "arguments": {}}\n</tool_call>')  # fmt: skip
    model = FakeChatModel(said(written, "Done."))
    reply = await get_agent("openai-chat", model=model).respond("hi", seeded)
    assert reply.tool_names == ["get_patient", "list_invoices"]
    assert reply.bubbles == ["Done."]


async def test_the_call_and_its_result_stay_in_the_next_turns_history(seeded):
    model = FakeChatModel(said('{"name": "list_invoices", "arguments": {}}', "One invoice.", "Bye!"))
    agent = get_agent("openai-chat", model=model)
    await agent.respond("What do I owe?", seeded)
    await agent.respond("Thanks", seeded)
    history = model.calls[2].messages
    ais = [m for m in history if isinstance(m, AIMessage)]
    assert [m.content for m in ais] == ['<tool_call>\n{"name": "list_invoices", "arguments": {}}\n</tool_call>',
                                        "One invoice."]  # fmt: skip
    assert isinstance(history[history.index(ais[0]) + 1], ToolMessage)


async def test_a_call_to_a_tool_that_does_not_exist_is_reported_back_not_shown_to_the_caller(seeded):
    model = FakeChatModel(said('{"name": "get_patient_info", "arguments": {"patient": "Ana"}}', "Sorry, I can't."))
    reply = await get_agent("openai-chat", model=model).respond("Who is Ana?", seeded)
    assert reply.bubbles == ["Sorry, I can't."]
    assert reply.tool_names == ["get_patient_info"]
    assert "unknown tool 'get_patient_info'" in reply.tool_calls[0].result["error"]


@pytest.mark.parametrize(
    "text",
    [
        "Your invoice is R$ 350.00, due on March 3.",
        '{"name": "Ana Souza", "phone": "+55 11 99999-0000"}',  # JSON about a person, not a call
        "Use the format {name} {arguments} when you write to us.",
        'The tool is called "list_invoices", with {"status": "pending"}.',  # prose that names a tool
    ],
)
async def test_text_that_is_not_a_call_is_the_answer(seeded, text):
    model = FakeChatModel(said(text))
    reply = await get_agent("openai-chat", model=model).respond("hi", seeded)
    assert reply.bubbles == [text]
    assert reply.tool_calls == []


async def test_a_model_that_keeps_writing_calls_still_hits_the_round_limit(seeded):
    model = FakeChatModel(said(*['{"name": "get_patient", "arguments": {}}'] * 3))
    agent = get_agent("openai-chat", model=model, max_tool_rounds=2)
    with pytest.raises(AgentError, match="still calling tools after 2 rounds"):
        await agent.respond("hi", seeded)


def test_text_tool_calls_leaves_the_prose_around_a_call():
    calls, rest = text_tool_calls('Sure!\n<tool_call>\n{"name": "get_patient", "arguments": {}}\n</tool_call>',
                                  TOOL_NAMES)  # fmt: skip
    assert [(c["name"], c["args"]) for c in calls] == [("get_patient", {})]
    assert rest == "Sure!"
    assert text_tool_calls("no call here", TOOL_NAMES) == ([], "no call here")


async def test_the_requests_after_a_written_call_pass_the_local_servers_validation(seeded):
    """End to end over HTTP: what the adapter sends after a written call is a request llama-cpp-python's server
    accepts (it refused ``"content": null`` on the assistant message with HTTP 500), and it shows the model its
    call in Qwen's own ``<tool_call>`` form followed by the tool's result."""
    server_types = pytest.importorskip("llama_cpp.server.types")
    from langchain_openai import ChatOpenAI

    from convoeval.testing import FakeOpenAIServer

    with FakeOpenAIServer(['{"name": "list_invoices", "arguments": {"status": "pending"}}', "One open invoice.",
                           "You're welcome!"]) as server:  # fmt: skip
        model = ChatOpenAI(base_url=server.base_url, api_key="x", model=server.model, max_retries=0)
        agent = get_agent("openai-chat", model=model)
        first = await agent.respond("What do I owe?", seeded)
        second = await agent.respond("Thanks", seeded)

    assert first.bubbles == ["One open invoice."] and first.tool_names == ["list_invoices"]
    assert second.bubbles == ["You're welcome!"]
    for body in server.requests:
        server_types.CreateChatCompletionRequest.model_validate(body)  # raises as the server's HTTP 500 did
    roles = [m["role"] for m in server.requests[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    call = server.requests[2]["messages"][2]["content"]
    assert call.startswith("<tool_call>\n") and call.endswith("\n</tool_call>")
    assert json.loads(call.split("\n")[1]) == {"name": "list_invoices", "arguments": {"status": "pending"}}


async def test_at_the_round_limit_the_model_is_asked_to_answer_without_tools(seeded):
    """A small model that keeps writing calls is asked once more with no tools bound, and that answer is the reply."""
    model = FakeChatModel(said('{"name": "get_patient", "arguments": {}}', '{"name": "list_invoices", "arguments": {}}',
                               "You have one open invoice."))  # fmt: skip
    reply = await get_agent("openai-chat", model=model, max_tool_rounds=2).respond("hi", seeded)
    assert reply.bubbles == ["You have one open invoice."]
    assert reply.tool_names == ["get_patient", "list_invoices"]
    assert [bool(call.kwargs.get("tools")) for call in model.calls] == [True, True, False]


async def test_a_call_repeated_with_the_same_arguments_is_not_run_again(seeded):
    """The result is already in front of the model: it is asked to answer, without tools, instead."""
    call = '{"name": "list_invoices", "arguments": {"status": "pending"}}'
    model = FakeChatModel(said(call, call, "One open invoice."))
    reply = await get_agent("openai-chat", model=model).respond("What do I owe?", seeded)
    assert reply.tool_names == ["list_invoices"]
    assert reply.bubbles == ["One open invoice."]
    assert [bool(c.kwargs.get("tools")) for c in model.calls] == [True, True, False]
    assert str(model.calls[2].messages[-1].content) != call  # the repeat is not shown to the model as its last word


def test_the_prompt_tells_the_model_the_tools_act_for_the_caller(seeded):
    """Qwen2.5-0.5B invented a patient_id for the caller and every call failed (#35)."""
    from convoeval.agents.openai_chat import system_prompt

    assert "leave patient_id out" in system_prompt(seeded)


async def test_the_answer_round_tells_the_model_to_write_to_the_patient_now(seeded):
    """Qwen2.5-0.5B, asked with no tools bound, still imitated the calls in its history (3 of 4 red-team cases
    ended in an error): the answer round says what is wanted, for that request only (the plain note and its
    instruction are in ``test_openai_chat_answer_round.py``)."""
    call = '{"name": "list_invoices", "arguments": {}}'
    model = FakeChatModel(said(call, call, "One open invoice.", "Bye!"))
    agent = get_agent("openai-chat", model=model)
    await agent.respond("What do I owe?", seeded)
    nudge = str(model.calls[2].messages[-1].content)
    assert "Now write your reply to the patient in English" in nudge and "Do not write any tool call" in nudge
    await agent.respond("Thanks", seeded)
    assert not any("Now write your reply" in str(m.content) for m in model.calls[3].messages)  # not kept


# Calls too broken to run, as Qwen2.5-Coder-0.5B wrote them in the red team (#35) and close forms: none is a message.
UNREADABLE_CALLS = {
    "arguments as a list": '{"name": "list_appointments", "arguments":\n["find_patient", "1234567890123456"]]\n',
    "cut short": '{"name": "list_invoices"',
    "extra keys on an unknown tool": '{"name": "some_tool", "arguments": {}, "note": "extra keys"}',
    "element with arguments that are not json": '<function name="list_invoices" arguments="not json"/> {',
    "fenced": '```json\n{"name": "list_invoices", "arguments": [1]}\n```',
}


@pytest.mark.parametrize("broken", UNREADABLE_CALLS.values(), ids=UNREADABLE_CALLS.keys())
async def test_a_call_too_broken_to_run_is_never_the_callers_message(seeded, broken):
    """The model is asked to answer instead (no tools, the plain note); its answer is the reply."""
    model = FakeChatModel(said(broken, "Sorry, I could not look that up."))
    reply = await get_agent("openai-chat", model=model).respond("When is my appointment?", seeded)
    assert reply.bubbles == ["Sorry, I could not look that up."]
    assert reply.tool_calls == []
    assert not model.calls[1].kwargs.get("tools") and "Now write your reply" in model.calls[1].messages[-1].content


async def test_a_call_too_broken_to_run_in_the_answer_round_is_an_error(seeded):
    broken = UNREADABLE_CALLS["arguments as a list"]
    model = FakeChatModel(said(broken, broken))
    with pytest.raises(AgentError, match="wrote an unreadable tool call instead of answering"):
        await get_agent("openai-chat", model=model).respond("When is my appointment?", seeded)
