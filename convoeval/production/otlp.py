"""OpenTelemetry spans as OTLP JSON: the traces convoeval exports, a Phoenix's, any GenAI-instrumented agent's.

Accepted files: an OTLP JSON export (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, one document or
one per line as the collector's file exporter writes them; camelCase or snake_case keys; ids in hex or base64) and
Phoenix's span search (``GET /v1/projects/<project>/spans/otlpv1``: ``{"data": [...], "next_cursor"}``, pages one
per line or as a list). Conversations are rebuilt two ways:

* **convoeval's own traces** (``convoeval.telemetry.spans``): a ``conversation <scenario>`` span with
  ``convoeval.run_id`` and a ``turn N`` span per turn (``input.value`` the patient's message, ``output.value`` the
  agent's reply, ``execute_tool`` children for the agent's tool calls): the same conversation, same run id;
* **any other GenAI trace**: the top-most spans that carry a turn (``gen_ai.input.messages`` and
  ``gen_ai.output.messages``, OpenInference's ``llm.input_messages``/``llm.output_messages``, or ``input.value`` and
  ``output.value``), grouped by ``gen_ai.conversation.id`` or ``session.id`` (else one conversation per trace).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from convoeval.production.messages import ImportedConversation, ImportedMessage, ReadResult, SkippedLine, stable_id
from convoeval.production.settings import ImportSettings

__all__ = ["looks_like_otlp", "read_otlp"]

FORMAT = "otlp"
_TURN = re.compile(r"^turn (\d+)$")


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    line: int
    children: list[_Span] = field(default_factory=list)


def looks_like_otlp(first: Mapping[str, Any]) -> bool:
    """Whether a file's first JSON object is an OTLP export or a Phoenix span page."""
    if "resourceSpans" in first or "resource_spans" in first:
        return True
    data = first.get("data")
    return isinstance(data, list) and (not data or (isinstance(data[0], Mapping) and "span_id" in data[0]))


def _get(value: Mapping[str, Any], snake: str) -> Any:
    if snake in value:
        return value[snake]
    head, *rest = snake.split("_")
    return value.get(head + "".join(w.title() for w in rest))


def _any_value(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    for key in ("string_value", "bool_value", "double_value"):
        found = _get(value, key)
        if found is not None:
            return found
    number = _get(value, "int_value")
    if number is not None:
        return int(number)
    array = _get(value, "array_value")
    if array is not None:
        return [_any_value(v) for v in (array.get("values") or [])]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):  # already a mapping (a hand-written file)
        return dict(items)
    out: dict[str, Any] = {}
    for item in items or []:
        out[str(item["key"])] = _any_value(item.get("value"))
    # Phoenix flattens lists into numbered keys (convoeval.tools.0, .1): put them back together.
    for key in [k for k in out if re.search(r"\.\d+$", k)]:
        base, index = key.rsplit(".", 1)
        if base not in out or isinstance(out[base], list):
            listed = out.setdefault(base, [])
            while len(listed) <= int(index):
                listed.append(None)
            listed[int(index)] = out[key]
    return out


def _hex(value: Any) -> str:
    text = str(value or "")
    if re.fullmatch(r"[0-9a-fA-F]+", text) and len(text) in (16, 32):
        return text.lower()
    try:
        return base64.b64decode(text).hex()
    except (ValueError, TypeError):
        return text


def _spans_of(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    resources = _get(document, "resource_spans")
    if resources is not None:
        for resource in resources:
            for scope in _get(resource, "scope_spans") or _get(resource, "instrumentation_library_spans") or []:
                yield from scope.get("spans") or []
        return
    data = document.get("data")
    if isinstance(data, list):
        yield from data
        return
    raise ValueError("neither resourceSpans nor a Phoenix page's data")


def _documents(path: Path, skipped: list[SkippedLine]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, Mapping):
        yield 1, whole
        return
    if isinstance(whole, list):
        for item in whole:
            if isinstance(item, Mapping):
                yield 1, item
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            skipped.append(SkippedLine(str(path), number, f"not JSON: {exc}"))
            continue
        if isinstance(value, Mapping):
            yield number, value
        else:
            skipped.append(SkippedLine(str(path), number, "not a JSON object"))


def read_otlp(path: Path, settings: ImportSettings) -> ReadResult:
    """Read one file of OTLP JSON spans (or Phoenix span pages) into conversations."""
    result = ReadResult()
    spans: dict[str, _Span] = {}
    for line, document in _documents(path, result.skipped):
        try:
            raw_spans = list(_spans_of(document))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            result.skipped.append(SkippedLine(str(path), line, f"unreadable OTLP record: {exc}"))
            continue
        for raw in raw_spans:
            try:
                span = _span(raw, line)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                result.skipped.append(SkippedLine(str(path), line, f"unreadable span: {exc}"))
                continue
            spans[span.span_id] = span
    for span in spans.values():
        parent = spans.get(span.parent_id or "")
        if parent is not None:
            parent.children.append(span)
    roots = [s for s in spans.values() if s.parent_id is None or s.parent_id not in spans]
    own = [r for r in roots if r.attributes.get("convoeval.run_id") and r.name.startswith("conversation")]
    for root in sorted(own, key=lambda s: s.start):
        result.conversations.append(_convoeval_conversation(root, path))
    others = [r for r in roots if r not in own]
    result.conversations.extend(_generic_conversations(others, path))
    return result


def _span(raw: Mapping[str, Any], line: int) -> _Span:
    parent = _get(raw, "parent_span_id") or raw.get("parent_id")
    return _Span(trace_id=_hex(_get(raw, "trace_id") or (raw.get("context") or {}).get("trace_id")),
                 span_id=_hex(_get(raw, "span_id") or (raw.get("context") or {}).get("span_id")),
                 parent_id=_hex(parent) if parent else None, name=str(raw.get("name") or ""),
                 start=int(_get(raw, "start_time_unix_nano") or 0), end=int(_get(raw, "end_time_unix_nano") or 0),
                 attributes=_attributes(raw.get("attributes")), line=line)


def _time(nanos: int) -> datetime | None:
    return datetime.fromtimestamp(nanos / 1e9, tz=timezone.utc) if nanos else None


def _text_part(text: str) -> tuple[dict[str, Any], ...]:
    return ({"type": "text", "text": text},)


def _convoeval_conversation(root: _Span, path: Path) -> ImportedConversation:
    run_id = str(root.attributes["convoeval.run_id"])
    messages: list[ImportedMessage] = []
    turns = sorted((s for s in root.children if _TURN.match(s.name)), key=lambda s: int(_TURN.match(s.name).group(1)))  # type: ignore[union-attr]
    for turn in turns:
        said, answer = turn.attributes.get("input.value"), turn.attributes.get("output.value")
        if isinstance(said, str) and said:
            messages.append(ImportedMessage("patient", said, _time(turn.start), _text_part(said),
                                            delivery="delivered", line=turn.line))
        if isinstance(answer, str) and answer:
            tools = tuple(_tool_call(t) for t in sorted(turn.children, key=lambda s: s.start)
                          if t.attributes.get("openinference.span.kind") == "TOOL")
            messages.append(ImportedMessage("agent", answer, _time(turn.end), _text_part(answer), delivery="reply",
                                            tool_calls=tools, line=turn.line))
    keep = ("scenario", "agent", "target", "seed", "trial", "type", "status", "stop_reason")
    attributes = {k: root.attributes[f"convoeval.{k}"] for k in keep if root.attributes.get(f"convoeval.{k}") is not None}
    return ImportedConversation(key=f"ot-{run_id[:12]}", format=FORMAT, source_file=str(path), source_id=run_id,
                                messages=tuple(messages), attributes={**attributes, "run_id": run_id})


def _tool_call(span: _Span) -> dict[str, Any]:
    arguments: Any = span.attributes.get("tool.parameters") or span.attributes.get("input.value") or "{}"
    try:
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        pass
    result: Any = span.attributes.get("output.value")
    try:
        result = json.loads(result) if isinstance(result, str) else result
    except ValueError:
        pass
    return {"name": str(span.attributes.get("tool.name") or span.attributes.get("gen_ai.tool.name") or span.name),
            "arguments": arguments, "result": result}


def _message_texts(value: Any, role: str) -> list[str]:
    """The texts of a GenAI message list's ``role`` messages (``gen_ai.*.messages``: JSON with parts)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    texts = []
    for message in value if isinstance(value, list) else []:
        if not isinstance(message, Mapping) or message.get("role") not in _SAME[role]:
            continue
        if isinstance(message.get("content"), str):
            texts.append(message["content"])
        for part in message.get("parts") or []:
            if isinstance(part, Mapping) and part.get("type") == "text" and part.get("content"):
                texts.append(str(part["content"]))
    return texts


_SAME = {"user": ("user", "human"), "assistant": ("assistant", "ai", "model")}


def _openinference(attributes: Mapping[str, Any], prefix: str, role: str) -> list[str]:
    texts, index = [], 0
    while f"{prefix}.{index}.message.role" in attributes:
        if attributes[f"{prefix}.{index}.message.role"] in _SAME[role]:
            content = attributes.get(f"{prefix}.{index}.message.content")
            if content:
                texts.append(str(content))
        index += 1
    return texts


def _turn_of(span: _Span) -> tuple[str, str] | None:
    a = span.attributes
    said = _message_texts(a.get("gen_ai.input.messages"), "user") or _openinference(a, "llm.input_messages", "user")
    answer = (_message_texts(a.get("gen_ai.output.messages"), "assistant")
              or _openinference(a, "llm.output_messages", "assistant"))
    if said and answer:
        return said[-1], "\n".join(answer)
    if isinstance(a.get("input.value"), str) and isinstance(a.get("output.value"), str):
        return a["input.value"], a["output.value"]
    return None


def _top_turns(span: _Span) -> Iterator[tuple[_Span, tuple[str, str]]]:
    turn = _turn_of(span)
    if turn is not None:
        yield span, turn
        return
    for child in sorted(span.children, key=lambda s: s.start):
        yield from _top_turns(child)


def _generic_conversations(roots: list[_Span], path: Path) -> list[ImportedConversation]:
    groups: dict[str, list[tuple[_Span, tuple[str, str]]]] = {}
    for root in roots:
        for span, turn in _top_turns(root):
            group = str(span.attributes.get("gen_ai.conversation.id") or span.attributes.get("session.id")
                        or root.attributes.get("gen_ai.conversation.id") or root.attributes.get("session.id")
                        or span.trace_id)
            groups.setdefault(group, []).append((span, turn))
    conversations = []
    for group, turns in groups.items():
        messages: list[ImportedMessage] = []
        for span, (said, answer) in sorted(turns, key=lambda t: t[0].start):
            messages.append(ImportedMessage("patient", said, _time(span.start), _text_part(said),
                                            delivery="delivered", line=span.line))
            messages.append(ImportedMessage("agent", answer, _time(span.end), _text_part(answer), delivery="reply",
                                            line=span.line))
        conversations.append(ImportedConversation(key=f"ot-{stable_id(FORMAT, path.name, group)[:12]}", format=FORMAT,
                                                  source_file=str(path), source_id=group, messages=tuple(messages)))
    return conversations
