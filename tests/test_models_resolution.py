"""get_model / resolve_model: the precedence of spec, role env, OPENAI_BASE_URL, OPENAI_API_KEY and the local model."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI
from pydantic import ValidationError

from convoeval.llm import model_info
from convoeval.llm.models import ModelConfigError, clear_model_cache, get_model, resolve_model
from convoeval.testing import FakeOpenAIServer

FAKE_KEY = "sk-test-MODELS-LEAK-CANARY-abcdef012345"
ENV = [
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "CONVOEVAL_STRUCTURED_METHOD", "CONVOEVAL_LOCAL_MODEL",
    "CONVOEVAL_MAX_CONCURRENCY", "CONVOEVAL_LOCAL_CONCURRENCY", "CONVOEVAL_LLM_TIMEOUT",
    *[f"CONVOEVAL_{r}_{k}" for r in ("SIMULATOR", "JUDGE", "AGENT") for k in ("MODEL", "BASE_URL", "API_KEY_ENV")],
]  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    clear_model_cache()
    yield
    clear_model_cache()


def test_nothing_configured_means_the_local_model():
    resolved = resolve_model("judge")
    assert resolved.info.provider == "local"
    assert resolved.info.model == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert resolved.info.is_local_demo is True
    assert resolved.info.structured_method == "function_calling"
    assert resolved.info.max_concurrency == 1
    assert resolved.temperature == 0.0 and resolved.max_tokens == 768


def test_api_key_means_openai_gpt5_mini(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    info = resolve_model("simulator").info
    assert (info.provider, info.model, info.base_url) == ("openai", "gpt-5-mini", None)
    assert info.structured_method == "json_schema" and info.max_concurrency == 8 and not info.is_local_demo
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4.1-mini")
    assert resolve_model("simulator").info.model == "gpt-4.1-mini"


def test_base_url_wins_over_plain_openai(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm.internal:8000/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "qwen2.5-7b")
    resolved = resolve_model("judge")
    assert (resolved.info.provider, resolved.info.model) == ("openai-compatible", "qwen2.5-7b")
    assert resolved.info.base_url == "http://vllm.internal:8000/v1"
    assert resolved.info.structured_method == "function_calling"
    assert resolved.api_key_env == "OPENAI_API_KEY"
    monkeypatch.setenv("CONVOEVAL_STRUCTURED_METHOD", "json_schema")
    assert resolve_model("judge").info.structured_method == "json_schema"
    monkeypatch.setenv("CONVOEVAL_STRUCTURED_METHOD", "xml")
    with pytest.raises(ModelConfigError, match="CONVOEVAL_STRUCTURED_METHOD"):
        resolve_model("judge")


def test_role_env_overrides_only_that_role(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CONVOEVAL_JUDGE_MODEL", "gpt-5")
    monkeypatch.setenv("CONVOEVAL_SIMULATOR_MODEL", "local")
    assert resolve_model("judge").info.model == "gpt-5"
    assert resolve_model("simulator").info.provider == "local"
    assert resolve_model("agent").info.model == "gpt-5-mini"


def test_role_base_url_and_key_env(monkeypatch):
    monkeypatch.setenv("CONVOEVAL_JUDGE_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("CONVOEVAL_JUDGE_MODEL", "llama3.1:8b")
    monkeypatch.setenv("CONVOEVAL_JUDGE_API_KEY_ENV", "OLLAMA_KEY")
    resolved = resolve_model("judge")
    assert (resolved.info.provider, resolved.info.base_url, resolved.api_key_env) == (
        "openai-compatible", "http://localhost:11434/v1", "OLLAMA_KEY")
    assert resolve_model("simulator").info.provider == "local"


def test_explicit_spec_beats_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CONVOEVAL_JUDGE_MODEL", "gpt-5")
    assert resolve_model("judge", "gpt-4o-mini").info.model == "gpt-4o-mini"
    assert resolve_model("judge", "local").info.provider == "local"
    spec = {"model": "m", "base_url": "http://h:1/v1", "temperature": 0.3, "max_concurrency": 2,
            "structured_method": "json_mode"}
    resolved = resolve_model("judge", spec)
    assert (resolved.info.provider, resolved.info.model, resolved.temperature) == ("openai-compatible", "m", 0.3)
    assert (resolved.info.max_concurrency, resolved.info.structured_method) == (2, "json_mode")
    # a partial spec changes only what it names
    partial = resolve_model("judge", {"temperature": 0.5})
    assert (partial.info.model, partial.temperature) == ("gpt-5", 0.5)


def test_bad_specs_are_clear():
    with pytest.raises(ModelConfigError, match="unknown model role"):
        resolve_model("grader")
    with pytest.raises(ModelConfigError, match="needs an endpoint.*OPENAI_API_KEY"):
        resolve_model("judge", "gpt-4o")
    with pytest.raises(ValidationError) as info:  # pydantic's error, told apart by its type, not its wording
        resolve_model("judge", {"modle": "typo"})
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [("extra_forbidden", ("modle",))]


def test_concurrency_env(monkeypatch):
    monkeypatch.setenv("CONVOEVAL_LOCAL_CONCURRENCY", "2")
    assert resolve_model("judge").info.max_concurrency == 2
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CONVOEVAL_MAX_CONCURRENCY", "32")
    assert resolve_model("judge").info.max_concurrency == 32


def test_custom_gguf_is_not_flagged_as_demo(monkeypatch, tmp_path):
    gguf = tmp_path / "clinic-llama-8b.Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("CONVOEVAL_LOCAL_MODEL", str(gguf))
    info = resolve_model("judge").info
    assert (info.provider, info.model, info.is_local_demo) == ("local", "clinic-llama-8b.Q4_K_M", False)


def test_get_model_builds_once_with_our_retries_and_no_secret_in_sight(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    model = get_model("judge")
    assert isinstance(model, ChatOpenAI)
    assert model.max_retries == 0 and model.use_responses_api is False
    assert get_model("judge") is model  # clients are reused
    assert get_model("simulator") is not model  # another role, another ModelInfo
    info = model_info(model)
    assert (info.provider, info.model, info.role) == ("openai", "gpt-5-mini", "judge")
    for text in (repr(model), str(model), repr(info), str(info.as_row())):
        assert FAKE_KEY not in text


def test_changed_key_builds_a_new_client(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    first = get_model("agent")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY + "-rotated")
    assert get_model("agent") is not first


def test_base_url_without_model_asks_the_server(monkeypatch):
    with FakeOpenAIServer(model="served-model-7b") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        model = get_model("simulator")
        assert model_info(model).model == "served-model-7b"
        assert model.model_name == "served-model-7b"
        assert model.openai_api_base == server.base_url


def test_unreachable_server_without_model_name_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(ModelConfigError, match="set OPENAI_MODEL"):
        resolve_model("judge")


async def test_get_model_works_end_to_end_against_an_openai_compatible_server(monkeypatch):
    from convoeval.llm import SampleIdentity, acall_model

    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    with FakeOpenAIServer(replies=["Olá!"], model="m") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "m")
        result = await acall_model(get_model("simulator"), [("user", "oi")],
                                  identity=SampleIdentity("s", 1, 1, "simulator"))
    assert result.text == "Olá!" and result.info.provider == "openai-compatible"
    assert server.requests[0]["model"] == "m"


async def test_compatible_endpoints_get_the_output_limit_as_max_tokens():
    from convoeval.llm import SampleIdentity, acall_model

    with FakeOpenAIServer() as server:
        model = get_model("judge", {"model": server.model, "base_url": server.base_url, "max_tokens": 700})
        identity = SampleIdentity(scenario="s", seed=1, trial=1, role="judge")
        await acall_model(model, [("user", "hi")], identity=identity, max_tokens=48, cache="off")
        await acall_model(model, [("user", "hi")], identity=identity, cache="off")
    # llama.cpp's server ignores max_completion_tokens (ChatOpenAI's name for it): the cap must arrive as max_tokens
    assert [r.get("max_tokens") for r in server.requests] == [48, 700]
    assert not any("max_completion_tokens" in r for r in server.requests)
    assert isinstance(model, ChatOpenAI)


def test_openai_itself_keeps_max_completion_tokens(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    model = get_model("judge", {"max_tokens": 100})
    assert isinstance(model, ChatOpenAI) and type(model).__name__ == "LeanChatOpenAI"
    assert model._default_params.get("max_completion_tokens") == 100


async def test_requests_are_sent_unchanged_when_the_messages_skip_the_sdks_transform():
    """Messages and tools travel in extra_body (the SDK does not walk them): the body on the wire is what it was."""
    from pydantic import BaseModel as Schema

    from convoeval.llm import SampleIdentity, acall_model

    class Verdict(Schema):
        passed: bool

    with FakeOpenAIServer() as server:
        model = get_model("judge", {"model": server.model, "base_url": server.base_url, "extra_body": {"top_k": 3}})
        identity = SampleIdentity(scenario="s", seed=1, trial=1, role="judge")
        await acall_model(model, [("system", "be fair"), ("user", "hi")], identity=identity, cache="off")
        await acall_model(model.bind_tools([Verdict], tool_choice="Verdict"), [("user", "judge")], identity=identity,
                         cache="off")
    plain, with_tools = server.requests
    assert plain["messages"] == [{"role": "system", "content": "be fair"}, {"role": "user", "content": "hi"}]
    assert plain["top_k"] == 3  # the model's own extra_body is kept beside the moved messages
    assert with_tools["messages"] == [{"role": "user", "content": "judge"}]
    assert [t["function"]["name"] for t in with_tools["tools"]] == ["Verdict"]
    assert with_tools["tool_choice"]["function"]["name"] == "Verdict"


def test_one_model_serves_several_event_loops_over_aiohttp():
    """The cached model is used from convoeval's loop, a notebook's and a test's: each loop gets its own session."""
    import asyncio

    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.http_transport import aiohttp_available

    assert aiohttp_available()  # openai[aiohttp] is a dependency: the slower default client would be a regression
    with FakeOpenAIServer() as server:
        model = get_model("judge", {"model": server.model, "base_url": server.base_url})
        transport = model.root_async_client._client._transport
        assert type(transport).__name__ == "PerLoopTransport"
        identity = SampleIdentity(scenario="s", seed=1, trial=1, role="judge")
        for _ in range(3):  # a new loop each time: the first loop's session is closed with it
            asyncio.run(acall_model(model, [("user", "hi")], identity=identity, cache="off"))
        assert len(server.requests) == 3


async def test_an_endpoint_that_is_down_is_a_connection_error_not_a_timeout():
    """The vendored aiohttp transport calls a refused connection a ConnectTimeout; users must read 'connection'."""
    import socket

    import openai

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = get_model("judge", {"model": "m", "base_url": f"http://127.0.0.1:{port}/v1"})
    with pytest.raises(openai.APIConnectionError) as caught:
        await model.ainvoke("hi")
    assert not isinstance(caught.value, openai.APITimeoutError)
