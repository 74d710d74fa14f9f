"""One way to call a chat model: cached, retried, accounted. Every LLM call in convoeval goes through ``call_model``.

CONTRACT (implemented by the models layer; the engine codes against exactly this):

    identity = SampleIdentity(scenario="billing-conv-happy-payment", seed=42, trial=1, role="simulator", turn=3)
    result = await call_model(model, messages, identity=identity)                  # plain text
    result = await call_model(model, messages, identity=identity, schema=Verdicts) # validated pydantic object

* ``model`` is what ``convoeval.models.get_model(role, spec)`` returns (a LangChain chat model, normally a
  ``ChatOpenAI``), or ``convoeval.testing.FakeChatModel`` in unit tests.
* ``messages``: LangChain messages or ``(role, text)`` tuples.
* ``seed`` / ``temperature`` / ``max_tokens``: generation parameters for this call (``None`` = the model's own).
* With ``schema``, the result's ``parsed`` is a validated instance; a reply that cannot be validated after one
  retry raises ``StructuredOutputError`` (never a default object).
* Transient failures (timeouts, 429 honouring Retry-After, 5xx, connection errors) are retried inside this call
  with exponential backoff and jitter; after the last attempt ``LLMCallError`` is raised.
* The response cache key covers provider, model, every generation parameter, the messages, the schema and the
  ``identity``; so a replay is exact while a new trial is a fresh sample.
* Every call (hit or miss) is recorded with role, model, tokens, latency, cache hit and estimated cost
  (see ``CallRecord`` and ``convoeval.models`` accounting helpers).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from pydantic import BaseModel, ValidationError

__all__ = [
    "CacheMissError",
    "LLMCallError",
    "LLMError",
    "LLMResult",
    "ModelInfo",
    "RetryPolicy",
    "SampleIdentity",
    "StructuredOutputError",
    "call_model",
    "call_model_sync",
    "describe_error",
    "model_info",
    "redact",
    "register_model",
]


class LLMError(RuntimeError):
    """Base of every LLM-layer failure; runners turn it into a conversation marked ``error`` with ``str(exc)``."""


class LLMCallError(LLMError):
    """The call failed after its retries (or failed permanently, e.g. 401/400)."""


class StructuredOutputError(LLMError):
    """The model's reply could not be validated against the requested schema (after one retry)."""


class CacheMissError(LLMError):
    """Replay-only cache mode and this call was never recorded. The message says how to re-record."""


@dataclass(frozen=True)
class SampleIdentity:
    """Which sample a call belongs to. Part of the cache key: trial 2 is a new sample, not a replay of trial 1."""

    scenario: str
    seed: int | None
    trial: int
    role: str  # simulator | judge | agent
    turn: int | None = None
    sample: int = 0  # judge sample index when asking the same judge N times
    extra: str = ""  # free-form discriminator (e.g. "rubric" vs "holistic", a probe name)


# ---------------------------------------------------------------------------------------------------------------
# Which model is this? (provider, name, endpoint, how to ask it for structured output)
# ---------------------------------------------------------------------------------------------------------------

STRUCTURED_METHODS = ("function_calling", "json_schema", "json_mode")


@dataclass(frozen=True)
class ModelInfo:
    """What a result row records about the model that produced it. Never holds a secret.

    Attributes:
        provider: ``openai``, ``openai-compatible``, ``local`` (the embedded model) or ``fake``.
        model: The model name sent to the server.
        base_url: The endpoint (``None`` for OpenAI's default endpoint and for fakes).
        role: ``simulator``, ``judge`` or ``agent``.
        is_local_demo: True for the embedded small local model, whose numbers only show the pipeline works.
        structured_method: How ``call_model(schema=...)`` asks this provider for structured output.
        max_concurrency: Async calls in flight at once against this endpoint (per event loop; models of one endpoint
            configured with the same limit share it).
    """

    provider: str
    model: str
    base_url: str | None = None
    role: str = "agent"
    is_local_demo: bool = False
    structured_method: str = "function_calling"
    max_concurrency: int = 8

    @property
    def endpoint(self) -> str:
        """The key of the concurrency limit: one budget per server."""
        return self.base_url or self.provider

    def as_row(self) -> dict[str, Any]:
        """The columns a result row carries: ``llm_provider``, ``llm_model``, ``llm_base_url``, ``llm_local_demo``."""
        return {
            "llm_provider": self.provider,
            "llm_model": self.model,
            "llm_base_url": self.base_url,
            "llm_local_demo": self.is_local_demo,
        }


# id(model) -> ModelInfo. LangChain models are unhashable pydantic objects, so a WeakKeyDictionary cannot hold them;
# a finalizer drops the entry when the model dies, so a recycled id never inherits a stale ModelInfo.
_INFOS: dict[int, ModelInfo] = {}


def register_model(model: Any, info: ModelInfo) -> None:
    """Attach ``info`` to ``model`` so every call made with it records the right provider and limits."""
    key = id(model)
    if key not in _INFOS:
        weakref.finalize(model, _INFOS.pop, key, None)
    _INFOS[key] = info


def model_info(model: Any, role: str | None = None) -> ModelInfo:
    """The ``ModelInfo`` of a model: registered by ``get_model``, declared by the model, or inferred.

    A ``ChatOpenAI`` the user built by hand is inferred from its ``model_name`` and ``openai_api_base``.
    """
    info = _INFOS.get(id(model))
    if info is None:
        declared = getattr(model, "convoeval_model_info", None)
        info = declared() if callable(declared) else _infer_info(model)
    if role is not None and info.role != role:
        info = ModelInfo(**{**asdict(info), "role": role})
    return info


def _infer_info(model: Any) -> ModelInfo:
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    base_url = getattr(model, "openai_api_base", None)
    if base_url is None and type(model).__name__ not in ("ChatOpenAI", "AzureChatOpenAI"):
        return ModelInfo(provider=type(model).__name__, model=name)
    if base_url:
        return ModelInfo(provider="openai-compatible", model=name, base_url=str(base_url))
    return ModelInfo(provider="openai", model=name, structured_method="json_schema")


# ---------------------------------------------------------------------------------------------------------------
# Results and retry policy
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class LLMResult:
    """What ``call_model`` returns.

    Attributes:
        text: The reply text (for structured calls: the JSON of the validated object).
        parsed: The validated pydantic object when ``schema`` was given, else ``None``.
        info: The model that answered.
        identity: The sample this call belongs to.
        prompt_tokens: Input tokens reported by the server (``None`` if it reported none).
        completion_tokens: Output tokens reported by the server.
        latency_s: Wall time of the call, retries included.
        cache_hit: Whether the reply came from the response cache.
        finish_reason: The server's finish reason (``stop``, ``tool_calls``, ``length``, ...).
        attempts: HTTP attempts made (0 on a cache hit).
        cost_usd: Estimated cost from the price table (0 for local and cached calls).
    """

    text: str
    parsed: BaseModel | None
    info: ModelInfo
    identity: SampleIdentity
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cache_hit: bool = False
    finish_reason: str | None = None
    attempts: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried inside one call.

    Attributes:
        attempts: Total HTTP attempts per call (``CONVOEVAL_LLM_ATTEMPTS``, default 4).
        initial_wait: First backoff in seconds; doubles each attempt, with full jitter.
        max_wait: Cap of one backoff.
        retry_after_cap: Cap of a server's ``Retry-After``, so a hostile header cannot park a sweep.
        sleep: The async sleep used between attempts (tests inject one that records the waits).
    """

    attempts: int = 4
    initial_wait: float = 0.5
    max_wait: float = 20.0
    retry_after_cap: float = 60.0
    sleep: Callable[[float], Awaitable[Any]] | None = field(default=None, compare=False)

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The default policy, with ``CONVOEVAL_LLM_ATTEMPTS`` applied."""
        raw = os.environ.get("CONVOEVAL_LLM_ATTEMPTS")
        return cls(attempts=max(1, int(raw))) if raw else cls()


def _default_policy() -> RetryPolicy:
    raw = os.environ.get("CONVOEVAL_LLM_ATTEMPTS", "")
    policy = _POLICIES.get(raw)
    if policy is None:
        policy = _POLICIES[raw] = RetryPolicy.from_env()
    return policy


_POLICIES: dict[str, RetryPolicy] = {}


# ---------------------------------------------------------------------------------------------------------------
# call_model
# ---------------------------------------------------------------------------------------------------------------


async def call_model(
    model: Any,
    messages: Sequence[Any],
    *,
    identity: SampleIdentity | None = None,
    schema: type[BaseModel] | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    params: Mapping[str, Any] | None = None,
    cache: Any = None,
    retry: RetryPolicy | None = None,
) -> LLMResult:
    """Call a chat model once: cached, retried on transient failures, validated against ``schema``, accounted.

    Args:
        model: A LangChain chat model, normally from ``convoeval.models.get_model``.
        messages: LangChain messages or ``(role, text)`` tuples.
        identity: The sample this call belongs to (part of the cache key); defaults to an ad-hoc identity.
        schema: A pydantic model class; the reply must validate against it.
        seed: Generation seed for this call (``None`` = the model's own).
        temperature: Sampling temperature for this call (``None`` = the model's own).
        max_tokens: Output token limit for this call (``None`` = the model's own).
        params: Any other generation parameters for the server (``top_p``, ``stop``, ``extra_body`` ...).
        cache: A ``convoeval.cache.ResponseCache``, a mode (``"rw"``, ``"replay"``, ``"off"``), or ``None`` for the
            cache of ``use_cache(...)`` / the default one (``CONVOEVAL_CACHE``). Fake models are uncached unless
            a cache is given.
        retry: Retry policy; defaults to ``RetryPolicy.from_env()``.

    Returns:
        An ``LLMResult`` with ``text``, ``parsed`` (when ``schema``), usage, latency and cache status.

    Raises:
        LLMCallError: The call failed permanently or after its retries.
        StructuredOutputError: Two replies in a row did not validate against ``schema``.
        CacheMissError: Replay-only cache and this call was never recorded.

    Example:
        >>> identity = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=1)
        >>> result = await call_model(get_model("simulator"), [("user", "Oi")], identity=identity)
        >>> result.text, result.cache_hit, result.prompt_tokens
    """
    from convoeval import accounting
    from convoeval.cache import cache_key, resolve_cache

    info = model_info(model, identity.role if identity is not None else None)
    identity = identity or SampleIdentity(scenario="", seed=seed, trial=0, role=info.role)
    msgs = convert_to_messages(messages)
    kwargs = _generation_kwargs(seed, temperature, max_tokens, params)
    started = time.perf_counter()
    store = resolve_cache(cache, info)
    key = None
    try:
        if store is not None:
            key = cache_key(info, _model_params(model), kwargs, msgs, identity, schema_json(schema) if schema else None)
            stored = store.get(key)
            if stored is not None:
                result = _from_cache(stored, schema, info, identity, started)
                if result is not None:
                    _account(result, accounting)
                    return result
            if store.mode == "replay":
                raise store.miss(info, identity)
        async with _limit(info):
            if schema is None:
                try:
                    message, attempts = await _invoke_with_retries(model, msgs, kwargs, info, retry)
                except _BadReply as bad:  # only when the caller asked for a response_format through params
                    raise LLMCallError(f"{info.provider}/{info.model} ({info.role}): {bad.reason}") from bad
                text, parsed = _text(message), None
            else:
                message, parsed, attempts = await _structured(model, msgs, kwargs, schema, info, retry)
                text = parsed.model_dump_json()
    except LLMError as exc:
        _account_failure(info, identity, started, exc, accounting)
        raise

    usage = message.usage_metadata or {}
    result = LLMResult(
        text=text,
        parsed=parsed,
        info=info,
        identity=identity,
        prompt_tokens=usage.get("input_tokens"),
        completion_tokens=usage.get("output_tokens"),
        latency_s=time.perf_counter() - started,
        cache_hit=False,
        finish_reason=message.response_metadata.get("finish_reason"),
        attempts=attempts,
    )
    cached_tokens = (usage.get("input_token_details") or {}).get("cache_read")
    result.cost_usd = accounting.estimate_cost(
        info.provider, info.model, result.prompt_tokens, result.completion_tokens, cached_tokens
    )
    if store is not None and key is not None:
        store.put(key, _to_cache(result), info, identity, schema.__name__ if schema else None)
    _account(result, accounting, cached_tokens)
    return result


def _model_params(model: Any) -> dict[str, Any]:
    """The model's own generation parameters (temperature, max_tokens, extra_body ...) for the cache key."""
    params = getattr(model, "_default_params", None)
    if not isinstance(params, dict):
        params = getattr(model, "_identifying_params", None) or {}
    return {k: v for k, v in params.items() if k != "stream"}


def _to_cache(result: LLMResult) -> dict[str, Any]:
    return {
        "text": result.text,
        "parsed": result.parsed.model_dump(mode="json") if result.parsed is not None else None,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "finish_reason": result.finish_reason,
    }


def _from_cache(
    stored: dict[str, Any], schema: type[BaseModel] | None, info: ModelInfo, identity: SampleIdentity, started: float
) -> LLMResult | None:
    parsed = None
    if schema is not None:
        try:
            parsed = schema.model_validate(stored.get("parsed"))
        except ValidationError:
            return None  # recorded under a schema with the same JSON schema but other validators: ask again
    return LLMResult(
        text=stored.get("text") or "",
        parsed=parsed,
        info=info,
        identity=identity,
        prompt_tokens=stored.get("prompt_tokens"),
        completion_tokens=stored.get("completion_tokens"),
        latency_s=time.perf_counter() - started,
        cache_hit=True,
        finish_reason=stored.get("finish_reason"),
        attempts=0,
        cost_usd=0.0,
    )


def _account(result: LLMResult, accounting: Any, cached_tokens: int | None = None) -> None:
    identity, info = result.identity, result.info
    accounting.emit(
        accounting.CallRecord(
            role=identity.role or info.role,
            provider=info.provider,
            model=info.model,
            scenario=identity.scenario,
            seed=identity.seed,
            trial=identity.trial,
            turn=identity.turn,
            sample=identity.sample,
            extra=identity.extra,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cached_prompt_tokens=cached_tokens,
            latency_s=result.latency_s,
            cache_hit=result.cache_hit,
            cost_usd=result.cost_usd,
            attempts=result.attempts,
            finish_reason=result.finish_reason,
            is_local_demo=info.is_local_demo,
        )
    )


def _account_failure(
    info: ModelInfo, identity: SampleIdentity, started: float, exc: LLMError, accounting: Any
) -> None:
    accounting.emit(
        accounting.CallRecord(
            role=identity.role or info.role,
            provider=info.provider,
            model=info.model,
            scenario=identity.scenario,
            seed=identity.seed,
            trial=identity.trial,
            turn=identity.turn,
            sample=identity.sample,
            extra=identity.extra,
            latency_s=time.perf_counter() - started,
            attempts=getattr(exc, "attempts", 0),
            is_local_demo=info.is_local_demo,
            error=f"{type(exc).__name__}: {exc}"[:500],
        )
    )


def call_model_sync(model: Any, messages: Sequence[Any], **kwargs: Any) -> LLMResult:
    """``call_model`` for code without an event loop (scripts); in notebooks ``await call_model(...)`` instead.

    Runs on convoeval's one background loop (``convoeval._aio``), not a fresh ``asyncio.run`` per call: the HTTP
    client LangChain shares per endpoint keeps connections bound to the loop that opened them, so a second
    ``asyncio.run`` failed every call with "Event loop is closed".
    """
    from convoeval._aio import run_sync

    return run_sync(call_model(model, messages, **kwargs))


def _generation_kwargs(
    seed: int | None, temperature: float | None, max_tokens: int | None, params: Mapping[str, Any] | None
) -> dict[str, Any]:
    kwargs = dict(params or {})
    for name, value in (("seed", seed), ("temperature", temperature), ("max_tokens", max_tokens)):
        if value is not None:
            kwargs[name] = value
    return kwargs


# -- concurrency ------------------------------------------------------------------------------------------------

# One semaphore per (event loop, endpoint, limit): asyncio primitives belong to the loop that first waits on them, and
# a notebook kernel and pytest each run their own loops. The limit is part of the key: keyed by endpoint alone, the
# first limit seen on a long-lived loop (a notebook's, convoeval's background loop) stayed in force after the
# configuration changed, e.g. a benchmark asking for 1,024 calls in flight got 8 (benchmarks/RESULTS.md).
_SEMAPHORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# A run on n worker processes gives each 1/n of every endpoint's budget, so the budget stays global.
_BUDGET_SHARES = 1


def set_budget_share(shares: int) -> None:
    """Let this process use ``1/shares`` of every endpoint's call budget (one of ``shares`` worker processes)."""
    global _BUDGET_SHARES
    if shares < 1:
        raise ValueError(f"budget shares must be at least 1, got {shares}")
    _BUDGET_SHARES = shares


def _limit(info: ModelInfo) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    per_loop = _SEMAPHORES.setdefault(loop, {})
    key = (info.endpoint, max(1, info.max_concurrency // _BUDGET_SHARES))
    semaphore = per_loop.get(key)
    if semaphore is None:
        semaphore = per_loop[key] = asyncio.Semaphore(key[1])
    return semaphore


# -- structured output ------------------------------------------------------------------------------------------

_FEEDBACK = (
    "Your previous reply could not be used: {reason}. Answer again with only the requested result, following the "
    "required format exactly and keeping every text field short."
)


async def _structured(
    model: Any,
    msgs: list[BaseMessage],
    kwargs: dict[str, Any],
    schema: type[BaseModel],
    info: ModelInfo,
    policy: RetryPolicy | None,
) -> tuple[AIMessage, BaseModel, int]:
    """Ask for ``schema``; one retry with the validation error as feedback, then ``StructuredOutputError``."""
    request = {**kwargs, **structured_kwargs(schema, info.structured_method)}
    if info.structured_method == "json_mode":
        msgs = [*msgs, HumanMessage(json_mode_instruction(schema))]
    attempts_total = 0
    reason = ""
    spent = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for attempt in range(2):
        try:
            message, attempts = await _invoke_with_retries(model, msgs, request, info, policy)
        except _BadReply as bad:
            attempts_total += bad.attempts
            reason = bad.reason
        else:
            attempts_total += attempts
            usage = message.usage_metadata or {}
            for name in spent:
                spent[name] += usage.get(name) or 0
            parsed, reason = parse_structured(message, schema)
            if parsed is not None:
                if attempt and message.usage_metadata:  # a retried answer costs both replies
                    message.usage_metadata = {**message.usage_metadata, **spent}
                return message, parsed, attempts_total
        if attempt == 0:
            msgs = [*msgs, HumanMessage(_FEEDBACK.format(reason=reason))]
    error = StructuredOutputError(
        f"{info.provider}/{info.model} ({info.role}) gave no valid {schema.__name__} after 2 replies: {reason}"
    )
    error.attempts = attempts_total  # type: ignore[attr-defined]
    raise error


@lru_cache(maxsize=256)
def structured_kwargs(schema: type[BaseModel], method: str) -> dict[str, Any]:
    """The request keywords that ask for ``schema`` with ``method``; built once per schema class."""
    if method == "function_calling":
        from langchain_core.utils.function_calling import convert_to_openai_tool

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

    return strict(schema.model_json_schema())


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


# -- retries ----------------------------------------------------------------------------------------------------


class _BadReply(Exception):
    """A reply that arrived but cannot be a structured answer (e.g. cut off at max_tokens)."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


async def _invoke_with_retries(
    model: Any, msgs: list[BaseMessage], kwargs: dict[str, Any], info: ModelInfo, policy: RetryPolicy | None
) -> tuple[AIMessage, int]:
    """One model call; transient failures retried with backoff (honouring Retry-After), others raised at once."""
    import tenacity

    policy = policy or _default_policy()

    retrying = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(max(1, policy.attempts)),
        wait=_Wait(policy),
        retry=tenacity.retry_if_exception(_is_transient),
        sleep=policy.sleep or asyncio.sleep,
        reraise=True,
    )
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                message = await model.ainvoke(msgs, **kwargs)
    except LLMError:
        raise
    except AssertionError:
        raise  # a broken test script (e.g. FakeChatModel ran out), never an LLM failure
    except Exception as exc:
        bad = _bad_reply_reason(exc)
        if bad is not None:
            raise _BadReply(bad, attempts) from exc
        reason = describe_error(exc)
        if info.provider == "local" and "connection error" in reason:
            reason += "; is the local model server running? (convoeval llm status)"
        what = f"after {attempts} attempts" if _is_transient(exc) else "(not retryable)"
        error = LLMCallError(f"{info.provider}/{info.model} ({info.role}) call failed {what}: {reason}")
        error.attempts = attempts  # type: ignore[attr-defined]
        raise error from exc
    return message, attempts


class _Wait:
    """Exponential backoff with full jitter, or the server's ``Retry-After`` (capped) when it sent one."""

    def __init__(self, policy: RetryPolicy) -> None:
        import tenacity

        self._policy = policy
        self._backoff = tenacity.wait_random_exponential(multiplier=policy.initial_wait, max=policy.max_wait)

    def __call__(self, state: Any) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = retry_after_seconds(exc)
        if after is not None:
            return min(after, self._policy.retry_after_cap)
        return self._backoff(state)


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """The ``Retry-After`` of an HTTP error, in seconds (``retry-after-ms`` too), or ``None``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        if headers.get("retry-after"):
            return max(0.0, float(headers["retry-after"]))
    except ValueError:
        return None  # an HTTP date; rare from LLM APIs, so fall back to our own backoff
    return None


_TRANSIENT_STATUS = {408, 409, 425, 429}


def _is_transient(exc: BaseException) -> bool:
    """Timeouts, 429, 5xx, dropped connections and garbled bodies: worth another attempt."""
    import httpx
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, asyncio.TimeoutError, httpx.TransportError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500
    if isinstance(exc, ValidationError):
        return False  # a structured reply that does not validate: handled as a bad reply, not retried here
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError)):
        return True
    # langchain-openai raises plain KeyError/TypeError/ValueError for a 200 whose body is not a chat completion
    # (no "choices", null choices, an "error" field): a garbled reply from a struggling server.
    return _raised_by_client(exc) and isinstance(exc, (KeyError, TypeError, ValueError))


def _raised_by_client(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return module.startswith(("langchain_openai", "openai", "httpx"))


def _bad_reply_reason(exc: BaseException) -> str | None:
    """Why a reply that did arrive cannot be a structured answer, or ``None`` if ``exc`` is not about the reply."""
    import openai

    if isinstance(exc, openai.LengthFinishReasonError):
        return "the reply hit max_tokens before the structured answer was complete"
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return "the reply was stopped by the provider's content filter"
    if isinstance(exc, ValidationError):  # the OpenAI SDK validates json_schema replies itself
        return _short_validation_error(exc)
    return None


_SECRETISH = re.compile(r"(sk-[A-Za-z0-9_\-\*]{6,}|Bearer\s+\S+|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-\.]+)")


def describe_error(exc: BaseException) -> str:
    """A one-line, secret-free description of a failed call: HTTP status and a short reason."""
    import openai

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        text = "timed out"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        text = f"connection error ({type(cause).__name__ if cause else 'no response'})"
    elif isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = body.get("message") or (body.get("error") or {}).get("message") if body else None
        text = f"HTTP {status} {type(exc).__name__}" + (f": {detail}" if detail else "")
    else:
        text = f"{type(exc).__name__}: {exc}"
    return redact(" ".join(text.split()))[:300]


def redact(text: str) -> str:
    """Remove API keys from a text: every secret-looking environment value, and key/bearer patterns."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and name.upper().endswith(("KEY", "TOKEN", "SECRET", "PASSWORD")):
            text = text.replace(value, "***")
    return _SECRETISH.sub("***", text)
