"""A scripted fake chat model for unit tests and examples: a queue of replies and a history of calls.

``FakeChatModel`` is a real LangChain ``BaseChatModel``, so it works everywhere a ``ChatOpenAI`` does: directly
(``invoke`` / ``ainvoke``), with ``bind_tools`` / ``with_structured_output``, and through
``convoeval.llm.acall_model`` (``schema=`` included). It never touches the network and answers in microseconds.

Example:
    >>> from convoeval.testing import FakeChatModel
    >>> model = FakeChatModel(replies=["Oi, quero pagar minha fatura.", {"verdict": "pass"}])
    >>> model.invoke("hello").content
    'Oi, quero pagar minha fatura.'
    >>> len(model.calls)
    1
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, PrivateAttr

from convoeval.errors import ConvoevalError
from convoeval.llm import ModelInfo

__all__ = ["FakeCall", "FakeChatModel", "ScriptExhaustedError"]

#: A scripted reply: text, a JSON-able mapping or pydantic object (a structured answer), a full ``AIMessage``, or an
#: exception instance that the call raises (e.g. ``openai.RateLimitError`` to exercise retries).
Reply = str | dict | BaseModel | AIMessage | BaseException
#: Called when the queue is empty, with the messages and call kwargs; returns a ``Reply``.
Responder = Callable[[list[BaseMessage], dict[str, Any]], Reply]


class ScriptExhaustedError(ConvoevalError, AssertionError):
    """The fake model was called more times than replies were scripted.

    An ``AssertionError`` on purpose: it is a bug in the test, so the LLM layer never retries it or turns it into a
    conversation marked ``error``.
    """


@dataclass(frozen=True)
class FakeCall:
    """One call the fake model received.

    Attributes:
        messages: The messages, as LangChain messages.
        kwargs: Every keyword the call carried (``seed``, ``temperature``, ``tools``, ``tool_choice``, ...).
    """

    messages: list[BaseMessage]
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """All message contents joined by newlines, handy for ``assert "..." in call.text``."""
        return "\n".join(_content_text(m.content) for m in self.messages)

    @property
    def last(self) -> str:
        """The text of the last message."""
        return _content_text(self.messages[-1].content) if self.messages else ""


class FakeChatModel(BaseChatModel):
    """A chat model that answers from a script.

    Each call pops the next reply. A ``str`` is returned as the message text; a ``dict`` or pydantic object is a
    structured answer (returned as a tool call when the call bound tools, else as JSON text); an ``AIMessage`` is
    returned as is; an exception instance is raised. When the queue is empty, ``responder`` (if given) produces the
    reply, otherwise ``ScriptExhaustedError`` is raised.

    Token usage is a deterministic word count, so accounting code has numbers to add up.

    Args:
        replies: The initial script.
        responder: Optional fallback producing replies once the script runs out (e.g. for long examples).
        model_name: The name reported in results and cache keys.
        max_concurrency: Concurrent ``acall_model`` calls allowed against this fake.

    Example:
        >>> model = FakeChatModel(replies=["first"])
        >>> model = model.enqueue("second", ValueError("boom"))   # returns the model itself
        >>> [model.invoke("x").content for _ in range(2)]
        ['first', 'second']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_name: str = "fake-chat"
    responder: Responder | None = None
    max_concurrency: int = 64

    _queue: deque = PrivateAttr(default_factory=deque)
    _calls: list[FakeCall] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, replies: Iterable[Reply] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._queue.extend(replies)

    # -- script -----------------------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> FakeChatModel:
        """Append replies to the script; returns the model so calls can be chained."""
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def calls(self) -> list[FakeCall]:
        """Every call received so far, oldest first."""
        return self._calls

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._queue)

    def convoeval_model_info(self) -> ModelInfo:
        """How ``convoeval.llm.acall_model`` records this model: provider ``fake``, tool-calling structured output."""

        return ModelInfo(provider="fake", model=self.model_name, max_concurrency=self.max_concurrency)

    # -- BaseChatModel ----------------------------------------------------------------------------------------

    @property
    def _llm_type(self) -> str:
        return "convoeval-fake"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._answer(messages, kwargs)
        finish = "tool_calls" if message.tool_calls else "stop"
        return ChatResult(generations=[ChatGeneration(message=message, generation_info={"finish_reason": finish})])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The default runs _generate in a thread pool; the fake never blocks, so answer inline.
        return self._generate(messages, stop, **kwargs)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | Any],
        *,
        tool_choice: str | dict | None = None,
        **kwargs: Any,
    ) -> Runnable:
        """Bind tools like ``ChatOpenAI.bind_tools``; a structured reply then comes back as a tool call."""
        formatted = [convert_to_openai_tool(t) for t in tools]
        if tool_choice not in (None, "auto", "none", "any", "required") and isinstance(tool_choice, str):
            tool_choice = {"type": "function", "function": {"name": tool_choice}}
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    # -- internals --------------------------------------------------------------------------------------------

    def _answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        with self._lock:
            number = len(self._calls) + 1
            self._calls.append(FakeCall(messages=list(messages), kwargs=dict(kwargs)))
            reply = self._queue.popleft() if self._queue else None
        if reply is None:
            if self.responder is None:
                last = _content_text(messages[-1].content)[:120] if messages else ""
                raise ScriptExhaustedError(
                    f"FakeChatModel({self.model_name!r}) script ran out: call #{number} has no scripted reply "
                    f"(add more with .enqueue(...) or pass responder=...). Last message: {last!r}"
                )
            reply = self.responder(list(messages), dict(kwargs))
        if isinstance(reply, BaseException):
            raise reply
        message = _to_message(reply, kwargs, number)
        if message.usage_metadata is None:
            prompt = sum(_count(_content_text(m.content)) for m in messages)
            completion = _count(_content_text(message.content)) + sum(
                _count(json.dumps(tc["args"])) for tc in message.tool_calls
            )
            message.usage_metadata = {
                "input_tokens": prompt,
                "output_tokens": completion,
                "total_tokens": prompt + completion,
            }
        message.response_metadata.setdefault("model_name", self.model_name)
        message.response_metadata.setdefault("finish_reason", "tool_calls" if message.tool_calls else "stop")
        return message


def _to_message(reply: Reply, kwargs: dict[str, Any], number: int) -> AIMessage:
    """Turn a scripted reply into the ``AIMessage`` a real OpenAI-compatible server would have produced."""
    if isinstance(reply, AIMessage):
        return reply.model_copy(deep=True)
    args: Any = None
    if isinstance(reply, BaseModel):
        args = reply.model_dump(mode="json")
    elif isinstance(reply, dict):
        args = reply
    elif isinstance(reply, str):
        if kwargs.get("tools"):
            # A JSON string scripted for a tool-calling request is the tool call's arguments, as a server sends them.
            try:
                parsed = json.loads(reply)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                args = parsed
        if args is None:
            return AIMessage(content=reply)
    else:
        raise TypeError(f"FakeChatModel cannot reply with a {type(reply).__name__}: use str, dict, BaseModel, "
                        "AIMessage or an exception instance")
    tool = _tool_name(kwargs)
    if tool is None:
        return AIMessage(content=json.dumps(args, ensure_ascii=False))
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args, "id": f"call_{number}", "type": "tool_call"}])


def _tool_name(kwargs: dict[str, Any]) -> str | None:
    """The tool a structured reply answers: the forced ``tool_choice`` if any, else the first bound tool."""
    choice = kwargs.get("tool_choice")
    if isinstance(choice, dict):
        name: str | None = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return name
    elif isinstance(choice, str) and choice not in ("auto", "none", "any", "required"):
        return choice
    tools = kwargs.get("tools") or []
    if not tools:
        return None
    first = tools[0]
    if isinstance(first, dict):
        return (first.get("function") or {}).get("name") or first.get("name")
    return getattr(first, "__name__", None) or getattr(first, "name", None)


def _content_text(content: Any) -> str:
    """Plain text of a message content (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def _count(text: str) -> int:
    return len(text.split())
