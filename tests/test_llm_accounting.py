"""Accounting: every call (hit, miss, failure) leaves a CallRecord with tokens, latency and an estimated cost."""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage

from convoeval.llm import LLMCallError, ModelInfo, RetryPolicy, SampleIdentity, acall_model, register_model
from convoeval.llm.accounting import (
    CALL_COLUMNS,
    add_sink,
    calls_frame,
    estimate_cost,
    price_table,
    record_calls,
    remove_sink,
    usage_summary,
)
from convoeval.llm.cache import ResponseCache
from convoeval.testing import FakeChatModel, FakeOpenAIServer

IDENTITY = SampleIdentity(scenario="billing", seed=3, trial=1, role="judge", turn=None, extra="rubric")


def test_cost_from_the_price_table():
    # gpt-5-mini: $0.25 / 1M input, $2.00 / 1M output
    assert estimate_cost("openai", "gpt-5-mini", 1_000_000, 0) == pytest.approx(0.25)
    assert estimate_cost("openai", "gpt-5-mini", 2000, 500) == pytest.approx((2000 * 0.25 + 500 * 2.0) / 1e6)


def test_dated_model_names_use_their_base_price_and_cached_input_is_cheaper():
    full = estimate_cost("openai", "gpt-5-mini-2025-08-07", 1000, 0)
    cached = estimate_cost("openai", "gpt-5-mini-2025-08-07", 1000, 0, cached_prompt_tokens=1000)
    assert full == pytest.approx(0.00025) and cached < full


def test_local_and_fake_are_free_and_unknown_models_have_no_cost():
    assert estimate_cost("local", "qwen", 100, 100) == 0.0
    assert estimate_cost("fake", "fake-chat", 100, 100) == 0.0
    assert estimate_cost("openai-compatible", "my-vllm-model", 100, 100) is None
    assert estimate_cost("openai", "gpt-5-mini", None, 10) is None


def test_price_table_is_overridable_by_a_json_file(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-vllm-model": {"input": 1.0, "output": 3.0}, "gpt-5-mini": {"input": 9,
                                                                                                 "output": 9}}))
    monkeypatch.setenv("CONVOEVAL_PRICES", str(prices))
    assert price_table()["gpt-5-nano"].input == 0.05  # untouched entries stay
    assert estimate_cost("openai-compatible", "my-vllm-model", 1_000_000, 1_000_000) == pytest.approx(4.0)
    assert estimate_cost("openai", "gpt-5-mini", 1_000_000, 0) == pytest.approx(9.0)
    prices.write_text("{not json")
    import os

    os.utime(prices, (1, 1))  # a new mtime: the table is re-read
    with pytest.raises(ValueError, match="CONVOEVAL_PRICES"):
        price_table()


async def test_records_for_miss_hit_and_failure(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = FakeChatModel(replies=["verdict text", LLMCallError("boom")], model_name="judge-fake")
    with record_calls() as calls:
        await acall_model(model, [("user", "judge")], identity=IDENTITY, cache=cache)
        await acall_model(model, [("user", "judge")], identity=IDENTITY, cache=cache)
        with pytest.raises(LLMCallError):
            await acall_model(model, [("user", "judge")], identity=replace(IDENTITY, trial=2), cache=cache)
    assert [c.cache_hit for c in calls] == [False, True, False]
    miss, hit, failed = calls
    assert (miss.role, miss.provider, miss.model, miss.scenario, miss.trial, miss.extra) == (
        "judge", "fake", "judge-fake", "billing", 1, "rubric")
    assert miss.prompt_tokens == 1 and miss.completion_tokens == 2
    assert miss.cost_usd == 0.0 and miss.latency_s >= 0
    assert hit.prompt_tokens == miss.prompt_tokens and hit.cost_usd == 0.0 and hit.attempts == 0
    assert failed.error.startswith("LLMCallError: boom") and failed.prompt_tokens is None and failed.trial == 2


async def test_usage_and_cost_recorded_from_an_openai_compatible_server(monkeypatch):
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    from langchain_openai import ChatOpenAI

    with FakeOpenAIServer(model="gpt-5-mini", usage=(1000, 200)) as server:
        model = ChatOpenAI(model="gpt-5-mini", base_url=server.base_url, api_key="sk-test-x", max_retries=0,
                           use_responses_api=False)
        register_model(model, ModelInfo("openai", "gpt-5-mini", server.base_url, role="judge"))
        with record_calls() as calls:
            result = await acall_model(model, [("user", "hi")], identity=IDENTITY)
    expected = (1000 * 0.25 + 200 * 2.0) / 1e6
    assert result.cost_usd == pytest.approx(expected)
    assert (calls[0].prompt_tokens, calls[0].completion_tokens) == (1000, 200)
    assert calls[0].cost_usd == pytest.approx(expected)


class _SlowWhenAsked(FakeChatModel):
    """Answers a message containing "slow" 0.2 s later than the others."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        if "slow" in messages[-1].content:
            await asyncio.sleep(0.2)
        return self._generate(messages, stop=stop, **kwargs)


async def test_calls_made_side_by_side_are_recorded_in_the_order_they_started():
    # The rubric and holistic judges run together and finish in whichever order the server answers: the calls
    # frame must not depend on it (results of the same seeds read the same), so records come in start order.
    model = _SlowWhenAsked(replies=["a", "b"])
    with record_calls() as calls:
        await asyncio.gather(
            acall_model(model, [("user", "slow")], identity=IDENTITY, cache="off"),
            acall_model(model, [("user", "fast")], identity=replace(IDENTITY, extra="holistic"), cache="off"))
    assert [c.extra for c in calls] == ["rubric", "holistic"]  # the slow one started first, finished last
    first, second = calls
    assert first.started_at < second.started_at < first.started_at + first.latency_s
    assert time.time() - 60 < first.started_at < time.time()


async def test_nested_collectors_and_sinks_both_see_records():
    model = FakeChatModel(replies=["a", "b"])
    streamed = []
    sink = add_sink(streamed.append)
    try:
        with record_calls() as outer:
            await acall_model(model, [("user", "x")], identity=IDENTITY)
            with record_calls() as inner:
                await acall_model(model, [("user", "y")], identity=IDENTITY)
    finally:
        remove_sink(sink)
    assert (len(outer), len(inner), len(streamed)) == (2, 1, 2)
    await acall_model(FakeChatModel(replies=["c"]), [("user", "z")], identity=IDENTITY)
    assert len(streamed) == 2  # removed sinks get nothing


async def test_a_failing_sink_never_fails_the_call():
    def broken(record):
        raise OSError("disk full")

    sink = add_sink(broken)
    try:
        result = await acall_model(FakeChatModel(replies=["fine"]), [("user", "x")], identity=IDENTITY)
    finally:
        remove_sink(sink)
    assert result.text == "fine"


async def test_calls_frame_and_summary():
    model = FakeChatModel(replies=["a b", AIMessage(content="c", usage_metadata={
        "input_tokens": 10, "output_tokens": 5, "total_tokens": 15})])
    with record_calls() as calls:
        await acall_model(model, [("user", "x")], identity=IDENTITY)
        await acall_model(model, [("user", "y")], identity=replace(IDENTITY, role="simulator"))
    frame = calls_frame(calls)
    assert list(frame.columns) == list(CALL_COLUMNS) and len(frame) == 2
    assert list(calls_frame([]).columns) == list(CALL_COLUMNS)
    summary = usage_summary(calls).set_index("role")
    assert summary.loc["simulator", "prompt_tokens"] == 10
    assert summary.loc["judge", "calls"] == 1
    assert not math.isnan(summary.loc["judge", "cost_usd"])


async def test_overhead_per_cached_call_is_small(tmp_path):
    """Not a timing assertion of the machine: a loose bound that catches per-call client or schema building."""
    import time

    cache = ResponseCache(tmp_path / "c.sqlite")
    model = FakeChatModel(responder=lambda m, k: "reply")
    identities = [replace(IDENTITY, trial=t) for t in range(200)]
    for identity in identities:
        await acall_model(model, [("user", "x" * 2000)], identity=identity, cache=cache)
    # CPU time of this process, not the wall clock: on a loaded CI machine the wall clock measures the neighbours.
    started = time.process_time()
    for identity in identities:
        await acall_model(model, [("user", "x" * 2000)], identity=identity, cache=cache)
    per_call = (time.process_time() - started) / len(identities)
    assert per_call < 0.005, f"{per_call * 1000:.2f} ms of CPU per cached call"
    assert RetryPolicy().attempts == 4
