"""Structured output: a pydantic schema sent the way a provider takes it, and the reply validated against it."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

from convoeval.llm.types import STRUCTURED_METHODS


@lru_cache(maxsize=256)
def structured_kwargs(schema: type[BaseModel], method: str) -> dict[str, Any]:
    """The request keywords that ask for ``schema`` with ``method``; built once per schema class."""
    if method == "function_calling":
        from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: PLC0415 - start-up budget

        tool = convert_to_openai_tool(schema)
        name = tool["function"]["name"]
        return {"tools": [tool], "tool_choice": {"type": "function", "function": {"name": name}}}
    if method == "json_schema":
        strict = {"name": schema.__name__, "schema": strict_json_schema(schema), "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": strict}}
    if method == "json_mode":
        return {"response_format": {"type": "json_object"}}
    raise ValueError(f"unknown structured-output method {method!r}; expected one of {STRUCTURED_METHODS}")


# Keywords OpenAI's strict structured outputs reject. Our own pydantic validation still enforces them (a too-long
# string is a bad reply, retried once), so dropping them from what the server sees loses nothing.
_NOT_STRICT = frozenset({"minLength", "maxLength", "default", "examples", "uniqueItems", "patternProperties"})


@lru_cache(maxsize=256)
def strict_json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema`` in the form OpenAI's ``strict`` mode accepts.

    Every object closed (``additionalProperties: false``) with all its properties required (optional fields stay
    nullable), and keywords strict mode rejects removed.
    """

    def strict(node: Any) -> Any:
        if isinstance(node, list):
            return [strict(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:  # strict mode wants a bare $ref (pydantic adds siblings such as description)
            return {"$ref": node["$ref"]}
        out = {k: strict(v) for k, v in node.items() if k not in _NOT_STRICT}
        if "properties" in node:  # "properties" maps names to schemas; keep the names, strictify the schemas
            out["properties"] = {name: strict(sub) for name, sub in node["properties"].items()}
            out["required"] = list(node["properties"])
            out["additionalProperties"] = False
        return out

    closed: dict[str, Any] = strict(schema.model_json_schema())  # a dict in, a dict out
    return closed


@lru_cache(maxsize=256)
def schema_json(schema: type[BaseModel]) -> str:
    """Canonical JSON of a schema class's JSON schema; computed once per class (it is part of the cache key)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=256)
def json_mode_instruction(schema: type[BaseModel]) -> str:
    """The instruction appended in ``json_mode``, where the server only promises some JSON object."""
    return f"Reply with only a JSON object that validates against this JSON schema: {schema_json(schema)}"


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_structured(message: AIMessage, schema: type[BaseModel]) -> tuple[BaseModel | None, str]:
    """Validate a reply against ``schema`` from a tool call, a parsed SDK object, or JSON in the text.

    Small models asked for a tool call sometimes write the JSON as text (often in a ```json fence); that is
    accepted when it validates.

    Returns:
        ``(instance, "")`` or ``(None, reason)``.
    """
    candidates: list[Any] = [call.get("args") for call in message.tool_calls]
    if message.additional_kwargs.get("parsed") is not None:
        candidates.append(message.additional_kwargs["parsed"])
    text = _text(message)
    if text.strip():
        fenced = _FENCE.search(text)
        candidates.append(fenced.group(1) if fenced else text)
    if not candidates:
        if message.invalid_tool_calls:
            return None, f"malformed tool call arguments: {str(message.invalid_tool_calls[0].get('error'))[:200]}"
        refusal = message.additional_kwargs.get("refusal")
        return None, f"refusal: {refusal[:200]}" if refusal else "empty reply"
    reason = ""
    for candidate in candidates:
        try:
            if isinstance(candidate, schema):
                return candidate, ""
            if isinstance(candidate, BaseModel):
                candidate = candidate.model_dump()
            if isinstance(candidate, str):
                return schema.model_validate_json(_outer_json(candidate)), ""
            return schema.model_validate(candidate), ""
        except (ValidationError, ValueError) as exc:
            reason = _short_validation_error(exc)
    return None, reason


def _outer_json(text: str) -> str:
    """The outermost ``{...}`` of a text, so a sentence around the JSON does not fail the parse."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def _short_validation_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()[:3]
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in errors)
    return str(exc).splitlines()[0][:200]


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content or [] if b)
