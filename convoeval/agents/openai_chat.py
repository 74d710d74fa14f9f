"""The ``openai-chat`` / ``openai-chat:<model>`` adapter: an OpenAI-compatible chat model as the agent under test.

The model gets a clinic-assistant system prompt for the session's agent role and locale, the clinic tools
(``convoeval.agents.tools.TOOL_SPECS``) bound to it, and a tool loop: each tool call the model asks for is run with
``ClinicTools(session.store, session).call(name, args)`` and its result fed back, up to ``max_tool_rounds`` rounds.
The final text is the reply (one bubble) together with every tool call made.

A model served without a function-calling chat format writes its tool calls into the message text instead (the
embedded Qwen2.5 behind llama-cpp-python's GGUF template writes ``<tool_call>{"name": ..., "arguments": ...}``, and
the server hands it back as content). ``written_calls.text_tool_calls`` reads such a call (bare JSON, ``<tool_call>`` tags, a
fenced json block, one brace short) and the loop runs it like a real one, so the caller gets an answer rather than
the JSON. A model that keeps calling (or repeats a call it made) is asked once more with no tool to call.

The chat model comes from ``convoeval.llm.models.get_model("agent", spec)``, the one place models are built; pass
``model=`` to inject one (``convoeval.testing.FakeChatModel`` in tests). History is kept per conversation id inside
the adapter, so one adapter serves many concurrent conversations without cross-talk.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import textwrap
import uuid
from collections.abc import Collection
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from convoeval.agents.base import AgentError, AgentReply, AgentSession, ToolCall
from convoeval.agents.replies import coerce_reply
from convoeval.agents.tools import TOOL_NAMES, TOOL_SPECS, ClinicTools
from convoeval.agents.written_calls import call_line, looks_like_a_call, plain_value, result_text, text_tool_calls
from convoeval.llm import describe_error
from convoeval.llm.models import get_model

# v2 (#35): the tools act for the caller when patient_id is left out (Qwen2.5-0.5B invented one and every call failed).
# v3 (#35): no clinic id (no tool takes one; Qwen2.5-0.5B passed it as the patient_id and the call failed).
AGENT_PROMPT_VERSION = "agent-system-v3"

AGENT_SYSTEM_PROMPT = """\
You are the WhatsApp assistant of a medical clinic, working as its {agent_role} assistant: {role_description}
The patient writing to you is {patient_name} (phone {patient_phone}).
The tools act for this patient when you leave patient_id out: give a patient_id only for someone else.

Rules:
- Always answer in {language}, in short, friendly WhatsApp-style messages.
- Use the tools to read and change the clinic's records (invoices, payment links, slots, appointments, NPS,
  hand-offs). Never claim you did something unless a tool call did it.
- Never invent URLs, amounts, dates or ids: quote them only from tool results. If a tool fails, say so plainly.
- Ask before acting when the patient's choice is unclear (e.g. payment method, which appointment).
- Hand the conversation off to a human when the patient asks for one or when you cannot help.
"""

ROLE_DESCRIPTIONS: dict[str, str] = {
    "support": "answer general questions about the clinic and route the patient to the right service.",
    "scheduling": "check availability and book, reschedule or cancel appointments.",
    "confirmation": "confirm, reschedule or cancel upcoming appointments.",
    "nps": "ask how the patient's visit went and record their 0-10 NPS score and comment.",
    "billing": "help with invoices and create Pix or boleto payment links for open invoices.",
    "recall": "invite patients who are due for a return visit to book one.",
}

LANGUAGES: dict[str, str] = {"pt-BR": "Brazilian Portuguese", "en": "English", "es": "Spanish"}

DEFAULT_MAX_TOOL_ROUNDS = 6

#: Appended to the request of the round that must answer (as LangChain's agents do when their steps run out).
ANSWER_NOW = "Do not call any tool now. Write your reply to the patient in {language}, using the tool results above."

#: The answer round of a model that writes its calls as text: the turn's calls and results as this one note, in place
#: of its own ``<tool_call>`` lines and their JSON results, which Qwen2.5-0.5B copied back even with no tool bound (#35).
RESULTS_NOTE = "Results of the lookups for the patient's last message:\n{results}"
ANSWER_PLAIN = ("Now write your reply to the patient in {language}, in plain text, from these results. "
                "Do not write any tool call or JSON.")


def system_prompt(session: AgentSession) -> str:
    """The agent's system prompt for this session (role, locale, patient); in a domain other than the clinic, that
    domain's instructions (``AgentSession.tools``: τ²'s agent prompt and policy)."""
    if session.tools is not None:
        return str(session.tools.instructions)
    return AGENT_SYSTEM_PROMPT.format(
        agent_role=session.agent,
        role_description=ROLE_DESCRIPTIONS.get(session.agent, "help the patient with the clinic's services."),
        patient_name=session.patient_name,
        patient_phone=session.patient_phone,
        language=_language(session),
    )


def _language(session: AgentSession) -> str:
    return LANGUAGES.get(session.locale, session.locale)  # a locale with no name here is passed on as written


def _text_of(content: Any) -> str:
    """Text of a LangChain message content: a string, or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b if isinstance(b, str) else b.get("text", "") for b in content if isinstance(b, (str, dict))]
        return "".join(parts)
    return ""


def _jsonable(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class OpenAIChatAgent:
    """An ``Agent`` backed by a chat model with the clinic tools.

    Example:
        >>> agent = OpenAIChatAgent("gpt-4o-mini")  # doctest: +SKIP
        >>> reply = await agent.respond("Quero a segunda via do boleto", session)  # doctest: +SKIP
        >>> reply.tool_names  # doctest: +SKIP
        ['list_invoices', 'create_payment_link']
    """

    def __init__(
        self,
        spec: str | dict[str, Any] | None = None,
        *,
        model: Any = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    ):
        """Configure the adapter; the model is built on first use.

        Args:
            spec: Model name or ``{"model", "base_url", ...}`` for ``convoeval.llm.models.get_model("agent", spec)``;
                ``None`` = the configured agent model.
            model: A LangChain chat model to use as is (skips ``get_model``).
            max_tool_rounds: Most model turns that may end in tool calls; the next one is asked to answer with no
                tool to call (also as soon as the model repeats calls it already made in the turn).
        """
        if max_tool_rounds < 1:
            raise ValueError("max_tool_rounds must be at least 1")
        self.spec = spec
        label = spec.get("model") if isinstance(spec, dict) else spec
        self.name = f"openai-chat:{label}" if label else "openai-chat"
        self.max_tool_rounds = max_tool_rounds
        self._model = model
        self._bound: Any = None
        self._bound_domain: dict[int, Any] = {}  # a domain's tools bound to the model, by the specs list's id
        self._histories: dict[str, list[Any]] = {}
        self._ids: dict[tuple[str, ...], str] = {}

    def __repr__(self) -> str:
        return f"OpenAIChatAgent({self.name!r}, max_tool_rounds={self.max_tool_rounds})"

    def _chat_model(self, specs: list[dict[str, Any]] | None = None) -> Any:
        if specs is not None:  # a domain's own tools (AgentSession.tools), bound once per domain
            if id(specs) not in self._bound_domain:
                self._chat_model()
                try:
                    self._bound_domain[id(specs)] = self._model.bind_tools(specs)
                except NotImplementedError:
                    self._bound_domain[id(specs)] = self._model
            return self._bound_domain[id(specs)]
        if self._bound is None:
            if self._model is None:
                self._model = get_model("agent", self.spec)
            try:
                self._bound = self._model.bind_tools(list(TOOL_SPECS))
            except NotImplementedError:
                self._bound = self._model  # a fake that emits tool calls without binding
        return self._bound

    def _tool_names(self, specs: list[dict[str, Any]] | None = None) -> tuple[str, ...]:
        """The names of the tools bound to the model (read when called: tests swap ``TOOL_SPECS``)."""
        names = [spec.get("function", {}).get("name") for spec in (TOOL_SPECS if specs is None else specs)
                 if isinstance(spec, dict)]
        return tuple(n for n in names if isinstance(n, str)) or (TOOL_NAMES if specs is None else ())

    def conversation_id(self, session: AgentSession) -> str:
        """The id this adapter keeps for the session's conversation (the session's own when it has one)."""
        if session.conversation_id:
            return session.conversation_id
        key = (session.run_id, session.clinic_id, session.patient_id, session.agent)
        return self._ids.setdefault(key, f"openai-chat-{uuid.uuid4().hex[:12]}")

    def forget(self, conversation_id: str) -> None:
        """Drop a finished conversation's history (the runner may call this to bound memory)."""
        self._histories.pop(conversation_id, None)

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        """Run the model and its tool loop for one patient message.

        Raises:
            AgentError: the model failed, no store was given, or the model kept calling tools past the limit.
        """
        domain = session.tools  # a domain's own tools and data (convoeval.domains), else the clinic's on the store
        if session.store is None and domain is None:
            raise AgentError(f"agent {self.name!r} needs session.store to run its clinic tools")

        conv_id = self.conversation_id(session)
        history = self._histories.get(conv_id, [])
        turn: list[Any] = [HumanMessage(content=message)]
        tools = domain if domain is not None else ClinicTools(session.store, session)  # type: ignore[arg-type]
        specs = list(domain.specs) if domain is not None else None
        calls: list[ToolCall] = []
        model = self._chat_model(domain.specs if domain is not None else None)

        names = self._tool_names(specs)
        done: set[str] = set()  # the calls run in this turn, as (name, arguments) keys
        rounds = 0  # model turns that ended in tool calls
        answer_now = written = invented = False
        while True:
            # The last round asks for the answer. With calls written as text the server does no function calling
            # (the tools are only words in the prompt), so they are dropped and the calls shown as one plain note;
            # a real tool-calling API keeps them defined but forbids their use.
            final = answer_now or rounds == self.max_tool_rounds
            if final and written:
                messages = _plain_request(system_prompt(session), [*history, *turn], _language(session))
            else:
                messages = [SystemMessage(content=system_prompt(session)), *history, *turn]
                if final:  # said for this request only; a small model otherwise imitates the calls in its history
                    messages.append(SystemMessage(content=ANSWER_NOW.format(language=_language(session))))
            ai = await self._ask(self._answer_model(written, domain.specs if domain is not None else None)
                                 if final else model, messages)
            requests: list[dict[str, Any]] = [dict(call) for call in ai.tool_calls]
            if not requests:
                requests, ai = _written_calls(ai, names)
                written = written or bool(requests)
            if not requests and looks_like_a_call(_text_of(ai.content), names):
                # A call it could not write readably (a list for arguments, brackets that do not match): never the
                # caller's message. Asked once more to answer; in that round, the turn fails with the reason.
                if final:
                    raise AgentError(f"agent {self.name!r} wrote an unreadable tool call instead of answering")
                answer_now = written = True
                continue
            if not requests:
                turn.append(ai)
                break
            rounds += 1
            if final:
                raise AgentError(f"agent {self.name!r} still calling tools after {rounds - 1} rounds without answering")
            keys = [_jsonable([r["name"], r.get("args") or {}]) for r in requests]
            unknown = any(r["name"] not in names for r in requests)
            if all(key in done for key in keys) or (unknown and invented):
                # The same calls again: their results are already in front of the model, and running a write twice
                # would act twice (two payment links). A tool invented again after the real ones were listed: the
                # model will not find them. Either way, ask for the answer instead.
                answer_now = True
                continue
            invented = invented or unknown  # the first invented name is answered with the real ones (ClinicTools)
            turn.append(ai)
            for request, key in zip(requests, keys, strict=True):
                done.add(key)
                call = await self._run_tool(tools, request["name"], request.get("args") or {})
                calls.append(call)
                call_id = request.get("id") or uuid.uuid4().hex
                # The call rides along (not sent to the model) for the answer round's plain note.
                turn.append(ToolMessage(content=result_text(call.result), tool_call_id=call_id, artifact=call))

        reply = coerce_reply(self.name, _text_of(turn[-1].content))
        # Commit the turn only once it succeeded: a failed turn ends the conversation as ``error`` anyway.
        self._histories[conv_id] = [*history, *turn]
        return AgentReply(bubbles=reply.bubbles, tool_calls=calls, conversation_id=conv_id)

    async def _ask(self, model: Any, messages: list[Any]) -> AIMessage:
        """One model call, its failure an ``AgentError`` (secret-free), its answer an ``AIMessage``."""
        try:
            ai = await model.ainvoke(messages)
        except AssertionError:
            raise  # a broken test script (FakeChatModel ran out), not a failure of the agent under test
        except Exception as exc:  # the provider client's own retries are exhausted by now
            raise AgentError(f"agent {self.name!r}: model call failed ({describe_error(exc)})") from None
        return ai if isinstance(ai, AIMessage) else AIMessage(content=_text_of(getattr(ai, "content", ai)))

    def _answer_model(self, written: bool, specs: list[dict[str, Any]] | None = None) -> Any:
        """The model for the round that must answer: no tools when the calls were written as text, else tools
        defined but ``tool_choice="none"``."""
        bound = self._chat_model(specs)
        if written or bound is self._model:
            return self._model
        return self._model.bind_tools(list(TOOL_SPECS if specs is None else specs), tool_choice="none")

    async def _run_tool(self, tools: Any, name: str, args: dict[str, Any]) -> ToolCall:
        try:
            # Store calls are synchronous; a thread keeps them off the event loop other conversations share.
            result = await asyncio.to_thread(tools.call, name, dict(args))
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, ToolCall):  # ClinicTools.call records and returns the call itself
                result = result.result
        except Exception as exc:
            # A bad call is the model's mistake to recover from, as with a real API: report it back, don't crash.
            result = {"error": f"{type(exc).__name__}: {exc}"}
        return ToolCall(name=name, arguments=dict(args), result=result)


def _plain_request(system: str, messages: list[Any], language: str) -> list[Any]:
    """The answer round's request for a model that writes its calls as text: each turn's calls and their results as
    one plain note in brackets after the patient's message (no ``<tool_call>`` line, no JSON, no tool message), the
    last one saying to answer.

    In the patient's message rather than after it: Qwen2.5-Coder-0.5B, whatever request ends with a note of its
    own, copies that note (or the patient's message) back as its reply; with the note inside the message it answered
    from the results more often (benchmarks/RESULTS.md, #35).
    """
    out: list[Any] = [SystemMessage(content=system)]
    asked = -1  # where the patient's message of the turn being read is in ``out``
    results: list[str] = []

    def attach(extra: str = "") -> None:
        notes = [RESULTS_NOTE.format(results="\n".join(results))] if results else []
        notes += [extra] if extra else []
        if notes and asked >= 0:
            note = "\n".join(notes)
            out[asked] = HumanMessage(content=f"{_text_of(out[asked].content)}\n\n({note})")
        results.clear()

    for at, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            results.append(_result_line(message))
        elif isinstance(message, AIMessage) and at + 1 < len(messages) and isinstance(messages[at + 1], ToolMessage):
            continue  # the calls themselves: named in the note with their results
        else:
            attach()
            if isinstance(message, HumanMessage):
                asked = len(out)
            out.append(message)
    attach(ANSWER_PLAIN.format(language=language))
    return out


def _result_line(message: ToolMessage) -> str:
    """One call and its result for the plain note (the ``ToolCall`` rides along as the message's artifact)."""
    call = message.artifact
    if not isinstance(call, ToolCall):  # a result this adapter did not record (never expected): its text as it is
        return f"- {_text_of(message.content)}"
    value = plain_value(call.result)
    if isinstance(call.result, list):  # one item a line, under the call
        value = "\n" + textwrap.indent(value, "  ")
    return f"- {call_line(call.name, call.arguments)}: {value}"


def _written_calls(ai: AIMessage, names: Collection[str]) -> tuple[list[dict[str, Any]], AIMessage]:
    """The calls ``ai`` wrote in its text, and the message to keep in the history for it (``ai`` when none).

    The kept message is text, not an ``AIMessage`` with ``tool_calls``: LangChain sends the latter with
    ``"content": null``, which llama-cpp-python's server refuses (HTTP 500), and its text is the call in Qwen's own
    ``<tool_call>`` form with the arguments as an object, which is what the model was trained to see before the
    ``<tool_response>`` the chat template makes of the results.
    """
    calls, rest = text_tool_calls(_text_of(ai.content), names)
    if not calls:
        return [], ai
    blocks = [f"<tool_call>\n{_jsonable({'name': c['name'], 'arguments': c['args']})}\n</tool_call>" for c in calls]
    text = "\n".join([rest, *blocks] if rest else blocks)
    return calls, AIMessage(content=text, response_metadata=ai.response_metadata, id=ai.id)
