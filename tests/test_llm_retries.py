"""acall_model against the fault-injecting local server: what is retried, what fails at once, what the error says."""

from __future__ import annotations

import random

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from convoeval.llm import (
    LLMCallError,
    ModelInfo,
    RetryPolicy,
    SampleIdentity,
    StructuredOutputError,
    acall_model,
    register_model,
)
from convoeval.llm.retries import _wait_s
from convoeval.testing import FakeOpenAIServer, ServerFault

FAKE_KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
IDENTITY = SampleIdentity(scenario="billing", seed=1, trial=1, role="simulator", turn=1)


class Verdict(BaseModel):
    passed: bool
    reason: str = Field(max_length=40)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def make_model(server: FakeOpenAIServer, *, timeout: float = 5.0, method: str = "function_calling") -> ChatOpenAI:
    model = ChatOpenAI(
        model=server.model, base_url=server.base_url, api_key=FAKE_KEY, max_retries=0, timeout=timeout,
        use_responses_api=False,
    )  # fmt: skip
    register_model(
        model,
        ModelInfo(provider="openai-compatible", model=server.model, base_url=server.base_url, role="simulator",
                  structured_method=method),
    )
    return model


class Sleeps:
    """An injected sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def policy(sleeps: Sleeps, attempts: int = 4, cap: float = 60.0) -> RetryPolicy:
    return RetryPolicy(attempts=attempts, initial_wait=0.01, max_wait=0.05, retry_after_cap=cap, sleep=sleeps)


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop", "malformed", "truncated"])
async def test_transient_fault_is_retried_then_succeeds(server, fault):
    server.fail_next(fault).enqueue("recovered")
    sleeps = Sleeps()
    result = await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(sleeps))
    assert result.text == "recovered"
    assert result.attempts == 2
    assert server.stats["faults"][fault] == 1
    assert len(sleeps.waits) == 1


async def test_timeout_is_retried(server):
    # 2 s, not 0.3: the retry's healthy answer must beat the same timeout, on a loaded CI machine too.
    server.fail_next(ServerFault("timeout", hang_s=30)).enqueue("after timeout")
    sleeps = Sleeps()
    result = await acall_model(make_model(server, timeout=2), [("user", "hi")], identity=IDENTITY,
                              retry=policy(sleeps))
    assert result.text == "after timeout"
    assert result.attempts == 2


async def test_retry_after_is_honoured_and_capped(server):
    server.fail_next(ServerFault("429", retry_after=7), ServerFault("429", retry_after=500)).enqueue("ok")
    sleeps = Sleeps()
    result = await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(sleeps, cap=30))
    assert result.text == "ok"
    assert sleeps.waits == [7.0, 30.0]


async def test_backoff_without_retry_after_grows_within_bounds(server):
    server.fail_next("500", "500", "500").enqueue("ok")
    sleeps = Sleeps()
    await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(sleeps))
    assert len(sleeps.waits) == 3
    assert all(0 <= w <= 0.05 for w in sleeps.waits)


@pytest.mark.parametrize("fault,status", [("400", "400"), ("401", "401")])
async def test_permanent_errors_fail_at_once(server, fault, status):
    server.fail_next(fault).enqueue("never used")
    sleeps = Sleeps()
    with pytest.raises(LLMCallError) as caught:
        await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(sleeps))
    message = str(caught.value)
    assert f"HTTP {status}" in message and "not retryable" in message
    assert "openai-compatible/fake-model" in message
    assert FAKE_KEY not in message and "\n" not in message
    assert server.stats["requests"] == 1 and sleeps.waits == []


async def test_gives_up_after_the_last_attempt_with_a_one_line_reason(server):
    server.fail_next(*["503"] * 5)
    sleeps = Sleeps()
    with pytest.raises(LLMCallError, match=r"after 3 attempts: HTTP 503") as caught:
        await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(sleeps, attempts=3))
    assert server.stats["requests"] == 3
    assert FAKE_KEY not in str(caught.value)


async def test_a_key_echoed_by_the_server_is_redacted(server):
    server.fail_next("401")
    with pytest.raises(LLMCallError) as caught:
        await acall_model(make_model(server), [("user", f"my key is {FAKE_KEY}")], identity=IDENTITY,
                         retry=policy(Sleeps()))
    assert FAKE_KEY not in str(caught.value)
    from convoeval.llm import redact

    assert redact(f"Incorrect API key provided: {FAKE_KEY}") == "Incorrect API key provided: ***"


# -- structured output over HTTP --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
async def test_structured_output_per_method(server, method):
    server.enqueue({"passed": True, "reason": "amount stated"})
    result = await acall_model(make_model(server, method=method), [("user", "judge")], identity=IDENTITY,
                              schema=Verdict, retry=policy(Sleeps()))
    assert result.parsed == Verdict(passed=True, reason="amount stated")
    request = server.requests[0]
    if method == "function_calling":
        assert request["tool_choice"]["function"]["name"] == "Verdict"
    elif method == "json_schema":
        sent = request["response_format"]["json_schema"]
        assert sent["strict"] is True and sent["schema"]["additionalProperties"] is False
        assert "maxLength" not in str(sent)  # strict mode rejects it; our own validation still enforces it
    else:
        assert request["response_format"] == {"type": "json_object"}
        assert "JSON schema" in request["messages"][-1]["content"]


@pytest.mark.parametrize("bad", ["empty", "refusal"])
async def test_a_bad_structured_reply_gets_one_retry(server, bad):
    server.fail_next(bad).enqueue({"passed": False, "reason": "no amount"})
    result = await acall_model(make_model(server), [("user", "judge")], identity=IDENTITY, schema=Verdict,
                              retry=policy(Sleeps()))
    assert result.parsed.passed is False
    assert server.stats["requests"] == 2
    assert "could not be used" in server.requests[1]["messages"][-1]["content"]


async def test_two_invalid_structured_replies_raise(server):
    server.enqueue({"passed": "maybe", "reason": "x"}, {"passed": True, "reason": "y" * 100})
    with pytest.raises(StructuredOutputError, match=r"no valid Verdict after 2 replies: reason"):
        await acall_model(make_model(server), [("user", "judge")], identity=IDENTITY, schema=Verdict,
                         retry=policy(Sleeps()))


async def test_json_schema_validation_failure_is_a_bad_reply_not_a_crash(server):
    server.enqueue({"passed": "maybe"}, {"passed": True, "reason": "fine"})
    result = await acall_model(make_model(server, method="json_schema"), [("user", "judge")], identity=IDENTITY,
                              schema=Verdict, retry=policy(Sleeps()))
    assert result.parsed == Verdict(passed=True, reason="fine")


async def test_usage_comes_from_the_server(server):
    server.usage = (123, 45)
    result = await acall_model(make_model(server), [("user", "hi")], identity=IDENTITY, retry=policy(Sleeps()))
    assert (result.prompt_tokens, result.completion_tokens) == (123, 45)


async def test_concurrency_is_bounded_per_endpoint(server):
    import asyncio

    server.latency = 0.05
    model = make_model(server)
    register_model(model, ModelInfo(provider="openai-compatible", model=server.model, base_url=server.base_url,
                                    max_concurrency=3))
    await asyncio.gather(*[
        acall_model(model, [("user", f"hi {i}")], identity=IDENTITY, retry=policy(Sleeps())) for i in range(12)
    ])  # fmt: skip
    assert server.stats["requests"] == 12
    assert 1 < server.stats["max_in_flight"] <= 3


async def test_a_changed_limit_takes_effect_on_the_same_event_loop(server):
    import asyncio

    server.latency = 0.05
    model = make_model(server)

    async def burst(limit: int) -> int:
        register_model(model, ModelInfo(provider="openai-compatible", model=server.model, base_url=server.base_url,
                                        max_concurrency=limit))
        server.stats["max_in_flight"] = 0
        await asyncio.gather(*[
            acall_model(model, [("user", f"hi {i}")], identity=IDENTITY, retry=policy(Sleeps())) for i in range(10)
        ])  # fmt: skip
        return server.stats["max_in_flight"]

    assert await burst(2) <= 2
    assert 2 < await burst(10) <= 10  # a first limit of 2 on this loop no longer caps the endpoint


async def test_a_dead_local_server_points_at_the_status_command():
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = ChatOpenAI(model="qwen", base_url=f"http://127.0.0.1:{port}/v1", api_key="EMPTY", max_retries=0,
                       use_responses_api=False)
    register_model(model, ModelInfo("local", "qwen", f"http://127.0.0.1:{port}/v1", role="judge"))
    with pytest.raises(LLMCallError, match=r"local/qwen \(simulator\) call failed after 2 attempts: connection error.*"
                                           r"convoeval llm status"):
        await acall_model(model, [("user", "hi")], identity=IDENTITY, retry=policy(Sleeps(), attempts=2))


def test_backoff_is_full_jitter_exponential_capped_as_tenacity_computed_it():
    random.seed(7)
    policy = RetryPolicy(attempts=9, initial_wait=0.5, max_wait=3.0)
    plain = ValueError("no response, no Retry-After")
    for attempt, high in ((1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (8, 3.0), (5000, 3.0)):
        waits = [_wait_s(policy, attempt, plain) for _ in range(400)]
        assert all(0.0 <= w <= high for w in waits), attempt
        assert max(waits) > 0.9 * high and min(waits) < 0.1 * high, attempt  # spread over the whole range
