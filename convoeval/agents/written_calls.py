"""Tool calls a model wrote into its message text instead of calling them: read back, with the prose around them.

Small local models served without a function-calling chat format (llama-cpp-python's server with the model's own
template) write a call as text — bare JSON, Qwen's ``<tool_call>`` tags, a fenced json block, an XML-like
``<function>`` element — instead of returning ``tool_calls``. The ``openai-chat`` adapter runs such calls
(``agents/openai_chat.py``) and shows them back to the model: in Qwen's ``<tool_call>`` form during the turn, and as
one plain note (``call_line``, ``plain_value``) in the round that must answer. The red team's observer
(``redteam/observer.is_message``) reads a reply with the same two functions: a reply that is only calls, or a call
the model failed to write, answered nobody.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["TOOL_RESULT_CHARS", "call_line", "looks_like_a_call", "plain_value", "result_text", "text_tool_calls"]


#: Markup around a written call: Qwen's ``<tool_call>`` tags (when the server leaves them in), a ``<tools>`` wrapper
#: and markdown fences.
_MARKUP = re.compile(r"</?tool_call>|</?tools>|```[a-z_]*", re.IGNORECASE)
#: A call written as an XML-like element, the name an attribute and the arguments an attribute or the body:
#: ``<function name="list_appointments" arguments='{"status": "scheduled"}'/>`` (Qwen2.5-Coder-1.5B wrote this),
#: ``<function name="x">{...}</function>``, ``<function=x>{...}</function>``.
_ELEMENT = re.compile(
    r"""<function(?:\s+name\s*=\s*(?P<q>["'])(?P<name>[^"'<>]+)(?P=q)|=(?P<bare>[\w.-]+))\s*"""
    r"""(?:arguments\s*=\s*(?P<aq>["'])(?P<attr>.*?)(?P=aq)\s*(?:/>|>\s*</function>)|>(?P<body>.*?)</function>)""",
    re.IGNORECASE | re.DOTALL,
)
#: Keys a call object may carry. With a bound tool's name any other keys are tolerated; an unknown name counts as a
#: call only with these keys alone, so JSON about a person (``{"name": "Ana", "phone": ...}``) stays text.
_ARGUMENT_KEYS = ("arguments", "parameters", "args")
_CALL_KEYS = {"name", "type", "id", *_ARGUMENT_KEYS}


def text_tool_calls(text: str, names: Collection[str]) -> tuple[list[dict[str, Any]], str]:
    """The tool calls a model wrote into its message text, and the prose left around them.

    A call is a JSON object ``{"name": ..., "arguments": {...}}`` (also ``"parameters"``/``"args"``, arguments as a
    JSON string, or OpenAI's ``{"type": "function", "function": {...}}``), bare, inside ``<tool_call>`` tags or a
    fenced json block, or an XML-like ``<function name="..." arguments='{...}'/>`` element (in ``<tools>`` or not),
    several in a row, or missing its last closing braces (small models stop one short). Its name must be one of
    ``names``, or the object must hold nothing but a call's keys (a call to a tool that does not exist, which the
    tool then reports back as an error).

    Args:
        text: The message text.
        names: The names of the tools bound to the model.

    Returns:
        ``(calls, rest)``: LangChain tool-call dicts (``name``, ``args``, ``id``, ``type``) in order, and the text
        with the calls and their markup removed (stripped). No call found: ``([], text)`` unchanged.

    Example:
        >>> calls, rest = text_tool_calls('<tool_call>{"name": "get_patient", "arguments": {}}</tool_call>',
        ...                               ["get_patient"])
        >>> [(c["name"], c["args"]) for c in calls], rest
        ([('get_patient', {})], '')
    """
    if "{" not in text:
        return [], text
    plain = _MARKUP.sub("\n", _ELEMENT.sub(_element_as_json, text))
    calls: list[dict[str, Any]] = []
    prose: list[str] = []
    start = 0
    at = plain.find("{")
    while at >= 0:
        value, end = _json_at(plain, at)
        call = _as_call(value, names)
        if call is not None:
            calls.append(call)
            prose.append(plain[start:at])
            start = end
            at = plain.find("{", end)
        else:
            at = plain.find("{", at + 1)
    if not calls:
        return [], text
    prose.append(plain[start:])
    return calls, "".join(prose).strip()


#: The opening of a call a model began to write: ``{"name": ...`` (after a fence), ``<tool_call>``, ``<function``.
_JSON_START = re.compile(r"""\A\s*(?:```[a-z_]*\s*)?\{\s*"(?:name|type|function)"\s*:""", re.IGNORECASE)
_TAG_START = re.compile(r"\A\s*(?:```[a-z_]*\s*)?<(?:tool_call|function\b|tools)", re.IGNORECASE)
_ARGUMENTS = re.compile(r'"(?:arguments|parameters|args)"\s*:')


def looks_like_a_call(text: str, names: Collection[str]) -> bool:
    """Whether ``text`` opens as a tool call that ``text_tool_calls`` could not read (arguments that are not an
    object, brackets that do not match): a call the model failed to write, not a message. JSON that opens with
    ``"name"`` counts only with an arguments key or a bound tool's name in it (``{"name": "Ana", ...}`` is not one).

    Example:
        >>> looks_like_a_call('{"name": "list_appointments", "arguments": ["x"]]', ["list_appointments"])
        True
        >>> looks_like_a_call('{"name": "Ana Souza", "phone": "+55 11 99999-0000"}', ["list_appointments"])
        False
    """
    if _TAG_START.match(text):
        return True
    if not _JSON_START.match(text):
        return False
    return bool(_ARGUMENTS.search(text)) or any(f'"{name}"' in text for name in names)


def _element_as_json(match: re.Match[str]) -> str:
    """An XML-like call as the JSON object the scanner reads (unchanged when its arguments are not a JSON object)."""
    name = match["name"] or match["bare"]
    raw = html.unescape(match["attr"] if match["attr"] is not None else match["body"]).strip() or "{}"
    try:
        args = json.loads(raw)
    except ValueError:
        return match[0]
    if not isinstance(args, dict):
        return match[0]
    return json.dumps({"name": name.strip(), "arguments": args}, ensure_ascii=False)


def _json_at(text: str, at: int) -> tuple[Any, int]:
    """The JSON value starting at ``text[at]`` and where it ends; one short of its closing brackets is mended.

    Returns:
        ``(value, end)``, or ``(None, at)`` when no JSON value starts there.
    """
    decoder = json.JSONDecoder()
    try:
        return decoder.raw_decode(text, at)
    except ValueError:
        pass
    # Mend only a value that runs to the end of the text with brackets left open: the model stopped early.
    rest = text[at:].rstrip()
    closers = _open_brackets(rest)
    if not closers:
        return None, at
    try:
        return json.loads(rest + closers), len(text)
    except ValueError:
        return None, at


def _open_brackets(fragment: str) -> str:
    """The closing brackets a JSON fragment lacks ("" when it closes itself, or is inside an unfinished string)."""
    stack: list[str] = []
    in_string = escaped = False
    for char in fragment:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack:
                return ""
            stack.pop()
            if not stack:
                return ""  # balanced before the end: broken for another reason, not cut short
    return "" if in_string else "".join(reversed(stack))


def _as_call(item: Any, names: Collection[str]) -> dict[str, Any] | None:
    """``item`` as a LangChain tool-call dict, or ``None`` when it is not a call (see ``text_tool_calls``)."""
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict) and "name" not in item:  # OpenAI's {"type": "function", "function":}
        item = item["function"]
    name = item.get("name")
    key = next((k for k in _ARGUMENT_KEYS if k in item), None)
    if not isinstance(name, str) or not name or key is None:
        return None
    if name not in names and not set(item) <= _CALL_KEYS:
        return None
    args = item[key]
    if isinstance(args, str):  # the OpenAI wire form: arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return None
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def plain_value(value: object, *, limit: int = 1200) -> str:
    """A tool result as plain text for a model that copies JSON: ``key: value`` pairs, one line per list item.

    A model that writes its calls as text imitates the ``{...}`` it sees; a note written this way has no call shape
    to imitate. Long results are cut at ``limit`` characters (a small model's context is short).

    Example:
        >>> plain_value([{"id": "inv-1", "amount": 350.0}, {"id": "inv-2", "amount": 90}])
        '- id: inv-1, amount: 350.0\\n- id: inv-2, amount: 90'
    """
    if isinstance(value, dict):
        if set(value) == {"error"}:
            text = f"failed: {value['error']}"
        else:
            text = ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    elif isinstance(value, list):
        text = "\n".join(f"- {plain_value(item, limit=limit)}" for item in value) if value else "nothing found"
    else:
        text = _scalar(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scalar(value: object) -> str:
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list):
        return "[" + "; ".join(_scalar(v) for v in value) + "]"
    return "none" if value is None else str(value)


def call_line(name: str, args: Mapping[str, Any]) -> str:
    """A call as one plain line, ``list_invoices(status=pending)``: what was looked up, with no JSON to copy."""
    return f"{name}(" + ", ".join(f"{k}={_scalar(v)}" for k, v in args.items()) + ")"


#: How much of one tool result an LLM agent's history keeps (characters of its JSON): a small local model's context
#: is 8,192 tokens, and one agenda listing with every row filled a turn past it (RESULTS, issue #35).
TOOL_RESULT_CHARS = 4000


def result_text(value: object, *, limit: int | None = None) -> str:
    """A tool result as the JSON the model reads, cut at ``limit`` characters (default ``TOOL_RESULT_CHARS``) with a
    line saying how much was left. The call's recorded result (the transcript's) stays whole.

    Example:
        >>> result_text({"ok": True})
        '{"ok": true}'
        >>> result_text(list(range(1000)), limit=20)
        '[0, 1, 2, 3, 4, 5, 6… [4870 more characters not shown: ask with narrower arguments]'
    """
    limit = TOOL_RESULT_CHARS if limit is None else limit
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters not shown: ask with narrower arguments]"
