"""Turn whatever an adapter got back (an ``AgentReply``, text, bubbles, a JSON mapping) into a checked ``AgentReply``.

Python callables and webhooks share this so both enforce the same protocol with the same messages: every problem
raises ``AgentError`` naming the agent and the exact field (``tool_calls[1].arguments``), never a late ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convoeval.agents.base import AgentError, AgentReply, ToolCall


def _type_name(value: Any) -> str:
    """A JSON-ish name for a value's type, as users of the webhook contract would say it."""
    names = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _fail(agent: str, problem: str) -> AgentError:
    return AgentError(f"agent {agent!r} broke the reply protocol: {problem}")


def _check_bubbles(agent: str, bubbles: Any, where: str) -> list[str]:
    if not isinstance(bubbles, list):
        raise _fail(agent, f"{where} must be an array of strings, got {_type_name(bubbles)}")
    for i, bubble in enumerate(bubbles):
        if not isinstance(bubble, str):
            raise _fail(agent, f"{where}[{i}] must be a string, got {_type_name(bubble)}")
    # The protocol promises one or more bubbles; an empty answer is a broken agent, not a silent turn.
    if not any(b.strip() for b in bubbles):
        raise _fail(agent, f"{where} has no text (an agent must answer with at least one non-empty bubble)")
    return list(bubbles)


def _check_tool_call(agent: str, raw: Any, where: str) -> ToolCall:
    if isinstance(raw, ToolCall):
        raw = {"name": raw.name, "arguments": raw.arguments, "result": raw.result}
    if not isinstance(raw, Mapping):
        raise _fail(agent, f"{where} must be an object with 'name' and 'arguments', got {_type_name(raw)}")
    if "name" not in raw:
        raise _fail(agent, f"{where}.name is missing")
    name = raw["name"]
    if not isinstance(name, str) or not name.strip():
        raise _fail(agent, f"{where}.name must be a non-empty string, got {_type_name(name)}")
    arguments = raw.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise _fail(agent, f"{where}.arguments must be an object, got {_type_name(arguments)}")
    return ToolCall(name=name, arguments=dict(arguments), result=raw.get("result"))


def _check_tool_calls(agent: str, raw: Any) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _fail(agent, f"tool_calls must be an array, got {_type_name(raw)}")
    return [_check_tool_call(agent, item, f"tool_calls[{i}]") for i, item in enumerate(raw)]


def _check_conversation_id(agent: str, raw: Any) -> str | None:
    if raw is None or isinstance(raw, str):
        return raw
    raise _fail(agent, f"conversation_id must be a string or null, got {_type_name(raw)}")


def reply_from_mapping(agent: str, data: object) -> AgentReply:
    """Validate a reply mapping ``{"bubbles" | "text", "tool_calls"?, "conversation_id"?}``.

    Unknown keys are ignored so a webhook may send extra debugging fields; giving both ``bubbles`` and ``text``
    is refused because it is ambiguous which one the patient saw.

    Args:
        agent: The agent's name, quoted in errors.
        data: The decoded mapping.

    Returns:
        The checked reply.

    Raises:
        AgentError: naming the field that is missing or has the wrong type.
    """
    if not isinstance(data, Mapping):
        raise _fail(agent, f"the reply must be an object, got {_type_name(data)}")
    has_bubbles, has_text = "bubbles" in data, "text" in data
    if has_bubbles and has_text:
        raise _fail(agent, "give either 'bubbles' or 'text', not both")
    if not (has_bubbles or has_text):
        raise _fail(agent, "field 'bubbles' (array of strings) or 'text' (string) is missing")
    if has_text:
        if not isinstance(data["text"], str):
            raise _fail(agent, f"text must be a string, got {_type_name(data['text'])}")
        bubbles = _check_bubbles(agent, [data["text"]], "text")
    else:
        bubbles = _check_bubbles(agent, data["bubbles"], "bubbles")
    return AgentReply(
        bubbles=bubbles,
        tool_calls=_check_tool_calls(agent, data.get("tool_calls")),
        conversation_id=_check_conversation_id(agent, data.get("conversation_id")),
    )


def coerce_reply(agent: str, value: object) -> AgentReply:
    """Accept an ``AgentReply``, a ``str`` (one bubble), a ``list[str]`` (bubbles) or a reply mapping.

    Args:
        agent: The agent's name, quoted in errors.
        value: What the agent returned.

    Returns:
        The checked reply (a returned ``AgentReply`` is checked too, not trusted).

    Raises:
        AgentError: naming what was wrong with the value.
    """
    if isinstance(value, AgentReply):
        return AgentReply(
            bubbles=_check_bubbles(agent, value.bubbles, "AgentReply.bubbles"),
            tool_calls=_check_tool_calls(agent, value.tool_calls),
            conversation_id=_check_conversation_id(agent, value.conversation_id),
        )
    if isinstance(value, str):
        return AgentReply(bubbles=_check_bubbles(agent, [value], "the returned text"))
    if isinstance(value, list):
        return AgentReply(bubbles=_check_bubbles(agent, value, "the returned list"))
    if isinstance(value, Mapping):
        return reply_from_mapping(agent, value)
    raise _fail(
        agent,
        f"returned {_type_name(value)}; expected AgentReply, str, list[str] or a dict with 'bubbles' or 'text'",
    )
