"""Turn whatever an adapter got back (an ``AgentReply``, text, bubbles, a JSON mapping) into a checked ``AgentReply``.

Python callables and webhooks share this so both enforce the same protocol with the same messages: every problem
raises ``AgentError`` naming the agent and the exact field (``tool_calls[1].arguments``), never a late ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convoeval.agents.base import AgentError, AgentReply, ToolCall
from convoeval.channel import Part, PartError, ReplyPart, parse_parts, part_text


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


def _check_parts(agent: str, raw: Any, where: str) -> list[Part]:
    """The agent's messages as checked parts: the shape of each (not WhatsApp's limits: those are an assertion)."""
    try:
        parts = parse_parts(raw, name=where)
    except PartError as exc:
        raise _fail(agent, str(exc)) from None
    for i, part in enumerate(parts):
        if isinstance(part, ReplyPart):
            raise _fail(agent, f"{where}[{i}] is a 'reply' (the patient's tap on a button); an agent sends text, "
                               "buttons, list, media or template")
    if not parts:
        raise _fail(agent, f"{where} is empty (an agent must answer with at least one message)")
    _check_bubbles(agent, [part_text(p) for p in parts], where)
    return parts


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


def reply_from_mapping(agent: str, data: object, *, waiting: bool = False) -> AgentReply:
    """Validate a reply mapping ``{"bubbles" | "text" | "parts", "tool_calls"?, "conversation_id"?}``.

    With ``waiting`` (a message delivered through the WhatsApp channel, or its quiet moment: docs/whatsapp.md), an
    empty ``bubbles`` or ``parts`` array is allowed: the agent sent nothing yet (it waits for the rest of a burst).

    Unknown keys are ignored so a webhook may send extra debugging fields; giving two of ``bubbles``, ``text`` and
    ``parts`` is refused because it is ambiguous which one the patient saw. ``parts`` are WhatsApp messages of any
    type (``convoeval.channel.parts``): each is checked, and a wrong one is named with its field
    (``parts[1].buttons[0].title``).

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
    given = [key for key in ("bubbles", "text", "parts") if key in data]
    if len(given) > 1:
        raise _fail(agent, f"give one of 'bubbles', 'text' or 'parts', not {' and '.join(repr(k) for k in given)}")
    if not given:
        raise _fail(agent, "field 'bubbles' (array of strings), 'text' (string) or 'parts' (array of messages) is "
                           "missing")
    if waiting and data[given[0]] == []:
        return AgentReply(tool_calls=_check_tool_calls(agent, data.get("tool_calls")),
                          conversation_id=_check_conversation_id(agent, data.get("conversation_id")))
    if given == ["parts"]:
        return AgentReply(
            parts=_check_parts(agent, data["parts"], "parts"),
            tool_calls=_check_tool_calls(agent, data.get("tool_calls")),
            conversation_id=_check_conversation_id(agent, data.get("conversation_id")),
        )
    if given == ["text"]:
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


def coerce_reply(agent: str, value: object, *, waiting: bool = False) -> AgentReply:
    """Accept an ``AgentReply``, a ``str`` (one bubble), a ``list[str]`` (bubbles) or a reply mapping (with
    ``bubbles``, ``text`` or ``parts``: see ``reply_from_mapping``). With ``waiting`` (through the WhatsApp channel),
    an empty reply (``AgentReply()``, ``[]``, ``{"bubbles": []}``) is allowed: nothing sent yet.

    Args:
        agent: The agent's name, quoted in errors.
        value: What the agent returned.

    Returns:
        The checked reply (a returned ``AgentReply`` is checked too, not trusted).

    Raises:
        AgentError: naming what was wrong with the value.
    """
    if waiting and (value == [] or (isinstance(value, AgentReply) and not value.parts and not value.bubbles)):
        empty = value if isinstance(value, AgentReply) else AgentReply()
        return AgentReply(tool_calls=_check_tool_calls(agent, empty.tool_calls),
                          conversation_id=_check_conversation_id(agent, empty.conversation_id))
    if isinstance(value, AgentReply):
        if not value.parts:  # bubbles that could not become text parts: say what is wrong with them
            _check_bubbles(agent, value.bubbles, "AgentReply.bubbles")
        parts = _check_parts(agent, value.parts, "AgentReply.parts")
        shown = [part_text(p) for p in parts]
        bubbles = _check_bubbles(agent, value.bubbles, "AgentReply.bubbles") if value.bubbles else shown
        if shown != bubbles:
            n = next((i for i, (a, b) in enumerate(zip(bubbles, shown, strict=False)) if a != b), min(len(bubbles), len(shown)))
            raise _fail(agent, f"AgentReply.bubbles and AgentReply.parts disagree at message {n + 1}: give parts "
                               "alone (their bubbles are their texts) or bubbles alone")
        return AgentReply(bubbles=bubbles, parts=parts, tool_calls=_check_tool_calls(agent, value.tool_calls),
                          conversation_id=_check_conversation_id(agent, value.conversation_id))
    if isinstance(value, str):
        return AgentReply(bubbles=_check_bubbles(agent, [value], "the returned text"))
    if isinstance(value, list):
        return AgentReply(bubbles=_check_bubbles(agent, value, "the returned list"))
    if isinstance(value, Mapping):
        return reply_from_mapping(agent, value, waiting=waiting)
    raise _fail(
        agent,
        f"returned {_type_name(value)}; expected AgentReply, str, list[str] or a dict with 'bubbles', 'text' or "
        "'parts'",
    )
