"""One way to call a chat model: cached, retried, accounted. Every LLM call in convoeval goes through ``acall_model``.

``acall_model`` is the coroutine; ``call_model = blocking(acall_model)`` its synchronous twin for scripts (the
project's one sync/async rule, checked by ``tests/test_sync_verbs.py``).

CONTRACT (implemented by the models layer; the engine codes against exactly this):

    identity = SampleIdentity(scenario="billing-conv-happy-payment", seed=42, trial=1, role="simulator", turn=3)
    result = await acall_model(model, messages, identity=identity)                  # plain text
    result = await acall_model(model, messages, identity=identity, schema=Verdicts) # validated pydantic object

* ``model`` is what ``convoeval.llm.models.get_model(role, spec)`` returns (a LangChain chat model, normally a
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
  (see ``CallRecord`` and ``convoeval.llm.models`` accounting helpers).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from pydantic import BaseModel, ValidationError

from convoeval._util.aio import blocking
from convoeval.llm import accounting
from convoeval.llm.cache import ResponseCache, cache_key, resolve_cache
from convoeval.llm.retries import _BadReply, _invoke_with_retries
from convoeval.llm.structured import _text, json_mode_instruction, parse_structured, schema_json, structured_kwargs
from convoeval.llm.types import (
    LLMCallError,
    LLMError,
    LLMResult,
    ModelInfo,
    RetryPolicy,
    SampleIdentity,
    StructuredOutputError,
    model_info,
)


class _Start(NamedTuple):
    """When a call started: ``clock`` (``time.perf_counter``) for its latency, ``wall`` (``time.time``) for its
    record, which is also the order a conversation's calls are listed in (``accounting.record_calls``)."""

    clock: float
    wall: float


async def acall_model(
    model: Any,
    messages: Sequence[Any],
    *,
    identity: SampleIdentity | None = None,
    schema: type[BaseModel] | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    params: Mapping[str, Any] | None = None,
    cache: ResponseCache | str | None = None,
    retry: RetryPolicy | None = None,
) -> LLMResult:
    """Call a chat model once: cached, retried on transient failures, validated against ``schema``, accounted.

    Args:
        model: A LangChain chat model, normally from ``convoeval.llm.models.get_model``.
        messages: LangChain messages or ``(role, text)`` tuples.
        identity: The sample this call belongs to (part of the cache key); defaults to an ad-hoc identity.
        schema: A pydantic model class; the reply must validate against it.
        seed: Generation seed for this call (``None`` = the model's own).
        temperature: Sampling temperature for this call (``None`` = the model's own).
        max_tokens: Output token limit for this call (``None`` = the model's own).
        params: Any other generation parameters for the server (``top_p``, ``stop``, ``extra_body`` ...).
        cache: A ``convoeval.llm.cache.ResponseCache``, a mode (``"rw"``, ``"replay"``, ``"off"``), or ``None`` for the
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
        ``await acall_model(...)`` in a coroutine or a notebook cell; ``call_model(...)`` blocks. With the fake model
        (``get_model("simulator")`` for a real one):

        >>> from convoeval.testing import FakeChatModel
        >>> identity = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=1)
        >>> result = call_model(FakeChatModel(replies=["Olá!"]), [("user", "Oi")], identity=identity, cache="off")
        >>> result.text, result.cache_hit, result.prompt_tokens
        ('Olá!', False, 1)
    """
    info = model_info(model, identity.role if identity is not None else None)
    identity = identity or SampleIdentity(scenario="", seed=seed, trial=0, role=info.role)
    msgs = convert_to_messages(messages)
    kwargs = _generation_kwargs(seed, temperature, max_tokens, params)
    started = _Start(time.perf_counter(), time.time())
    store = resolve_cache(cache, info)
    key = flight = None
    try:
        if store is not None:
            key = cache_key(info, _model_params(model), kwargs, msgs, identity, schema_json(schema) if schema else None)
            stored = store.get(key)
            if stored is None and (twin := _flight_of(key)) is not None:
                await asyncio.shield(twin)  # the same call is being made: its reply lands in the cache
                stored = store.get(key)
            if stored is not None:
                result = _from_cache(stored, schema, info, identity, started)
                if result is not None:
                    _account(result, accounting, started)
                    return result
            if store.mode == "replay":
                miss = store.miss(info, identity)
                _account_failure(info, identity, started, miss, accounting)  # a run's calls show which one missed
                raise miss
            flight = _take_off(key)
        return await _call_and_store(model, msgs, kwargs, schema, info, identity, retry, store, key, started)
    finally:
        if key is not None and flight is not None:
            _land(key, flight)


async def _call_and_store(model: Any, msgs: list[BaseMessage], kwargs: dict[str, Any], schema: Any, info: ModelInfo,
                          identity: SampleIdentity, retry: RetryPolicy | None, store: Any, key: str | None,
                          started: _Start) -> LLMResult:
    """Ask the model (retried, validated), store the reply under ``key`` and account for it."""
    try:
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

    usage: Mapping[str, Any] = message.usage_metadata or {}
    result = LLMResult(
        text=text,
        parsed=parsed,
        info=info,
        identity=identity,
        prompt_tokens=usage.get("input_tokens"),
        completion_tokens=usage.get("output_tokens"),
        latency_s=time.perf_counter() - started.clock,
        cache_hit=False,
        finish_reason=message.response_metadata.get("finish_reason"),
        attempts=attempts,
    )
    cached_tokens = (usage.get("input_token_details") or {}).get("cache_read")
    result.cost_usd = accounting.estimate_cost(
        info.provider, info.model, result.prompt_tokens, result.completion_tokens, cached_tokens
    )
    if store is not None and key is not None:
        await store.aput(key, _to_cache(result), info, identity, schema.__name__ if schema else None)
    _account(result, accounting, started, cached_tokens)
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
    stored: dict[str, Any], schema: type[BaseModel] | None, info: ModelInfo, identity: SampleIdentity, started: _Start
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
        latency_s=time.perf_counter() - started.clock,
        cache_hit=True,
        finish_reason=stored.get("finish_reason"),
        attempts=0,
        cost_usd=0.0,
    )


def _record_keys(info: ModelInfo, identity: SampleIdentity) -> dict[str, Any]:
    """The columns a call record takes from the model and the sample identity, whether the call succeeded or not."""
    return {"role": identity.role or info.role, "provider": info.provider, "model": info.model,
            "scenario": identity.scenario, "seed": identity.seed, "trial": identity.trial, "turn": identity.turn,
            "sample": identity.sample, "extra": identity.extra}


def _account(result: LLMResult, accounting: Any, started: _Start, cached_tokens: int | None = None) -> None:
    identity, info = result.identity, result.info
    accounting.emit(
        accounting.CallRecord(
            **_record_keys(info, identity),
            started_at=started.wall,
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
    info: ModelInfo, identity: SampleIdentity, started: _Start, exc: LLMError, accounting: Any
) -> None:
    accounting.emit(
        accounting.CallRecord(
            **_record_keys(info, identity),
            started_at=started.wall,
            latency_s=time.perf_counter() - started.clock,
            attempts=getattr(exc, "attempts", 0),
            is_local_demo=info.is_local_demo,
            error=f"{type(exc).__name__}: {exc}"[:500],
        )
    )


# Scripts without an event loop; runs on convoeval's one background loop (``convoeval._util.aio``), not a fresh
# ``asyncio.run`` per call: LangChain's HTTP client per endpoint keeps connections bound to the loop that opened them,
# so a second ``asyncio.run`` failed every call with "Event loop is closed". Notebooks ``await acall_model(...)``.
call_model = blocking(acall_model)


def _generation_kwargs(
    seed: int | None, temperature: float | None, max_tokens: int | None, params: Mapping[str, Any] | None
) -> dict[str, Any]:
    kwargs = dict(params or {})
    for name, value in (("seed", seed), ("temperature", temperature), ("max_tokens", max_tokens)):
        if value is not None:
            kwargs[name] = value
    return kwargs


# Calls being made, per event loop, by cache key. A call that finds its twin in flight waits for it and reads the
# reply from the cache, as it would have a moment later: runs side by side (the fault study's targets, a sweep's
# agents) share a patient's first turns, and asking the model again would cost a call and answer the same.
_FLIGHTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future[None]]] = (
    weakref.WeakKeyDictionary())


def _flight_of(key: str) -> asyncio.Future[None] | None:
    return _FLIGHTS.get(asyncio.get_running_loop(), {}).get(key)


def _take_off(key: str) -> asyncio.Future[None]:
    loop = asyncio.get_running_loop()
    flight: asyncio.Future[None] = loop.create_future()
    _FLIGHTS.setdefault(loop, {})[key] = flight
    return flight


def _land(key: str, flight: asyncio.Future[None]) -> None:
    # Landed whatever happened: a twin then finds the reply in the cache, or (after a failure) makes its own call.
    flights = _FLIGHTS.get(asyncio.get_running_loop(), {})
    if flights.get(key) is flight:
        del flights[key]
    if not flight.done():
        flight.set_result(None)


# One semaphore per (event loop, endpoint, limit): asyncio primitives belong to the loop that first waits on them, and
# a notebook kernel and pytest each run their own loops. The limit is part of the key: keyed by endpoint alone, the
# first limit seen on a long-lived loop (a notebook's, convoeval's background loop) stayed in force after the
# configuration changed, e.g. a benchmark asking for 1,024 calls in flight got 8 (benchmarks/RESULTS.md).
_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary())


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
            usage: Mapping[str, Any] = message.usage_metadata or {}
            for name in spent:
                spent[name] += usage.get(name) or 0
            parsed, reason = parse_structured(message, schema)
            if parsed is not None:
                if attempt and message.usage_metadata:  # a retried answer costs both replies
                    message.usage_metadata = {**message.usage_metadata, "input_tokens": spent["input_tokens"],
                                              "output_tokens": spent["output_tokens"],
                                              "total_tokens": spent["total_tokens"]}
                return message, parsed, attempts_total
        if attempt == 0:
            msgs = [*msgs, HumanMessage(_FEEDBACK.format(reason=reason))]
    error = StructuredOutputError(
        f"{info.provider}/{info.model} ({info.role}) gave no valid {schema.__name__} after 2 replies: {reason}"
    )
    error.attempts = attempts_total  # type: ignore[attr-defined]
    raise error
