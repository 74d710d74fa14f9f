"""The response cache: replay is exact, a new trial is a fresh sample, replay-only fails clearly, no secret stored."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import threading
from dataclasses import replace

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from convoeval.llm import CacheMissError, ModelInfo, SampleIdentity, acall_model, register_model
from convoeval.llm.cache import ResponseCache, cache_key, default_cache, resolve_cache, use_cache
from convoeval.testing import FakeChatModel, FakeOpenAIServer, ScriptExhaustedError

FAKE_KEY = "sk-test-CACHE-LEAK-CANARY-9f8e7d6c5b4a"
IDENTITY = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=2)
MESSAGES = [("system", "You are a patient."), ("user", "Clinic: how can I help?")]


class Verdict(BaseModel):
    passed: bool
    reason: str = Field(max_length=40)


@pytest.fixture
def cache(tmp_path):
    store = ResponseCache(tmp_path / "cache.sqlite", mode="rw")
    yield store
    store.close()


def key_for(**changes):
    info = changes.pop("info", ModelInfo(provider="openai", model="gpt-5-mini"))
    identity = changes.pop("identity", IDENTITY)
    params = changes.pop("params", {"seed": 42, "temperature": 0.0})
    messages = changes.pop("messages", MESSAGES)
    schema = changes.pop("schema", None)
    from langchain_core.messages import convert_to_messages

    return cache_key(info, {"model": info.model}, params, convert_to_messages(messages), identity, schema)


# -- the key --------------------------------------------------------------------------------------------------------


def test_key_is_deterministic_and_hex():
    assert key_for() == key_for()
    assert len(key_for()) == 64


def test_keys_are_those_recorded_by_earlier_versions():
    """Golden keys computed at b63d03e (before the key's speed-ups): every recorded cache must still replay."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    msgs = [SystemMessage("You are a patient. Run 0123456789abcdef0123456789abcdef."),
            HumanMessage("Link: https://pay.clinic.example/pix/7b08c2e5-1d2e-4c5a-b160-dec8baf93604 ok", name="clinic"),
            AIMessage("", tool_calls=[{"name": "lookup", "args": {"invoice_id": "61b2491cf3e04dc1849d5877c0fce6f9",
                                                                  "n": [1, "x"]}, "id": "call_1"}]),
            ToolMessage("found", tool_call_id="call_1"),
            HumanMessage("<transcript-0123456789ab>\nAgent: pay at 0123456789abcdef0123456789abcdef\n"
                         "</transcript-0123456789ab>")]
    judge = cache_key(ModelInfo("openai", "gpt-5-mini"), {"model": "gpt-5-mini", "temperature": 0.0}, {"seed": 42},
                      msgs, SampleIdentity("billing-happy", 42, 1, "judge", None, 2, "rubric"), '{"title": "Verdict"}')
    local = cache_key(ModelInfo("local", "qwen", "http://127.0.0.1:4321/v1", structured_method="json_schema"), {}, {},
                      msgs[:2], SampleIdentity("s", None, 3, "simulator", 4), None)
    assert judge == "4a078e5858b40252655b33c85390441bbc8bc0f2c87b7f10b6006564d35675f3"
    assert local == "db80aa347a64fb6fa094876f6fa966ba11126d9f8bca721745ab77befdce4548"


@pytest.mark.parametrize(
    "change",
    [
        {"identity": replace(IDENTITY, trial=2)},
        {"identity": replace(IDENTITY, seed=43)},
        {"identity": replace(IDENTITY, turn=3)},
        {"identity": replace(IDENTITY, role="judge")},
        {"identity": replace(IDENTITY, sample=1)},
        {"identity": replace(IDENTITY, scenario="other")},
        {"params": {"seed": 42, "temperature": 0.7}},
        {"params": {"seed": 42, "temperature": 0.0, "max_tokens": 10}},
        {"messages": [*MESSAGES[:-1], ("user", "Clinic: hello?")]},
        {"schema": '{"type":"object"}'},
        {"info": ModelInfo(provider="openai", model="gpt-5")},
        {"info": ModelInfo(provider="openai-compatible", model="gpt-5-mini", base_url="http://h/v1")},
    ],
    ids=["trial", "seed", "turn", "role", "sample", "scenario", "temperature", "max_tokens", "messages", "schema",
         "model", "endpoint"],
)
def test_key_changes_with_every_input(change):
    assert key_for(**change) != key_for()


def test_local_server_port_is_not_part_of_the_key():
    a = ModelInfo(provider="local", model="qwen", base_url="http://127.0.0.1:40001/v1")
    b = ModelInfo(provider="local", model="qwen", base_url="http://127.0.0.1:40777/v1")
    assert key_for(info=a) == key_for(info=b)


# -- replay, fresh samples, modes -----------------------------------------------------------------------------------


async def test_replay_is_a_cache_hit_without_calling_the_model(cache):
    model = FakeChatModel(replies=["Quero pagar a fatura."])
    first = await acall_model(model, MESSAGES, identity=IDENTITY, seed=42, cache=cache)
    again = await acall_model(model, MESSAGES, identity=IDENTITY, seed=42, cache=cache)  # script is empty now
    assert (first.cache_hit, again.cache_hit) == (False, True)
    assert again.text == first.text
    assert again.prompt_tokens == first.prompt_tokens
    assert len(model.calls) == 1


async def test_a_new_trial_is_a_fresh_sample_not_a_replay(cache):
    model = FakeChatModel(replies=["trial one reply", "trial two reply"])
    one = await acall_model(model, MESSAGES, identity=IDENTITY, cache=cache)
    two = await acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=2), cache=cache)
    assert not two.cache_hit
    assert (one.text, two.text) == ("trial one reply", "trial two reply")
    assert len(model.calls) == 2


async def test_structured_reply_replays_as_a_validated_object(cache):
    model = FakeChatModel(replies=[{"passed": True, "reason": "stated"}])
    first = await acall_model(model, MESSAGES, identity=IDENTITY, schema=Verdict, cache=cache)
    again = await acall_model(model, MESSAGES, identity=IDENTITY, schema=Verdict, cache=cache)
    assert again.cache_hit and isinstance(again.parsed, Verdict)
    assert again.parsed == first.parsed


async def test_replay_only_miss_names_the_call_and_how_to_record(tmp_path):
    replay = ResponseCache(tmp_path / "c.sqlite", mode="replay")
    model = FakeChatModel(replies=["unused"])
    with pytest.raises(CacheMissError) as caught:
        await acall_model(model, MESSAGES, identity=IDENTITY, cache=replay)
    message = str(caught.value)
    for part in ("simulator", "billing-happy", "seed=42", "trial=1", "turn=2", "fake/fake-chat",
                 "CONVOEVAL_CACHE=rw"):
        assert part in message
    assert model.calls == []


async def test_replay_only_hit_works_after_recording(tmp_path):
    path = tmp_path / "c.sqlite"
    await acall_model(FakeChatModel(replies=["recorded"]), MESSAGES, identity=IDENTITY, cache=ResponseCache(path))
    result = await acall_model(FakeChatModel(), MESSAGES, identity=IDENTITY, cache=ResponseCache(path, "replay"))
    assert result.text == "recorded" and result.cache_hit


async def test_replay_mode_never_writes(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", {"text": "x"}, ModelInfo("fake", "m"), IDENTITY)
    replay = ResponseCache(path, "replay")
    replay.put("other", {"text": "y"}, ModelInfo("fake", "m"), IDENTITY)
    assert len(replay) == 1


async def test_off_mode_always_calls(tmp_path):
    model = FakeChatModel(replies=["a", "b"])
    off = ResponseCache(tmp_path / "c.sqlite", "off")
    texts = [(await acall_model(model, MESSAGES, identity=IDENTITY, cache=off)).text for _ in range(2)]
    assert texts == ["a", "b"]


async def test_fake_models_are_uncached_by_default_but_use_cache_applies(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_CACHE_PATH", str(tmp_path / "default.sqlite"))
    model = FakeChatModel(replies=["a", "b"])
    assert resolve_cache(None, ModelInfo("fake", "m")) is None
    await acall_model(model, MESSAGES, identity=IDENTITY)
    await acall_model(model, MESSAGES, identity=IDENTITY)
    assert len(model.calls) == 2  # no cache: the script is consumed as written
    with use_cache(ResponseCache(tmp_path / "scoped.sqlite")):
        model.enqueue("c")
        first = await acall_model(model, MESSAGES, identity=IDENTITY)
        again = await acall_model(model, MESSAGES, identity=IDENTITY)
    assert (first.text, again.cache_hit) == ("c", True)


def test_env_selects_mode_and_path(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_CACHE_PATH", str(tmp_path / "env.sqlite"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "replay")
    cache = default_cache()
    assert cache.mode == "replay" and cache.path == tmp_path / "env.sqlite"
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    assert resolve_cache(None, ModelInfo("openai", "gpt-5-mini")) is None
    monkeypatch.setenv("CONVOEVAL_CACHE", "sometimes")
    with pytest.raises(ValueError, match="unknown cache mode 'sometimes'"):
        default_cache()


async def test_a_failed_call_is_not_cached(cache):
    model = FakeChatModel(replies=[{"passed": "?"}, {"passed": "?"}, {"passed": True, "reason": "ok"}])
    from convoeval.llm import StructuredOutputError

    with pytest.raises(StructuredOutputError):
        await acall_model(model, MESSAGES, identity=IDENTITY, schema=Verdict, cache=cache)
    assert len(cache) == 0
    result = await acall_model(model, MESSAGES, identity=IDENTITY, schema=Verdict, cache=cache)
    assert result.parsed.passed and not result.cache_hit


async def test_empty_script_still_raises_under_a_warm_cache_for_a_new_call(cache):
    model = FakeChatModel(replies=["one"])
    await acall_model(model, MESSAGES, identity=IDENTITY, cache=cache)
    with pytest.raises(ScriptExhaustedError):
        await acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=9), cache=cache)


# -- concurrency ----------------------------------------------------------------------------------------------------


def _writer(path: str, worker: int, count: int) -> None:
    cache = ResponseCache(path)
    info = ModelInfo("fake", "m")
    for i in range(count):
        # Half the keys are shared by every worker: INSERT OR IGNORE keeps the first and nobody fails.
        key = f"shared-{i}" if i % 2 else f"w{worker}-{i}"
        cache.put(key, {"text": f"{worker}:{i}"}, info, IDENTITY)
    cache.close()


def test_concurrent_writers_in_threads_and_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    warm = ResponseCache(path)
    warm.get("warm-up")  # create the schema once, as the first call of a run would
    warm.close()
    # fork (fast) before any thread starts; each worker opens its own connection
    ctx = multiprocessing.get_context("fork")
    processes = [ctx.Process(target=_writer, args=(path, 10 + w, 40)) for w in range(2)]
    threads = [threading.Thread(target=_writer, args=(path, w, 40)) for w in range(4)]
    for worker in [*processes, *threads]:
        worker.start()
    for worker in [*threads, *processes]:
        worker.join(60)
    assert all(p.exitcode == 0 for p in processes)
    # 6 workers x 20 private keys + 20 shared keys
    assert len(ResponseCache(path)) == 6 * 20 + 20


async def test_concurrent_calls_share_one_cache(cache):
    model = FakeChatModel(responder=lambda messages, kwargs: f"reply to {messages[-1].content}")
    identities = [replace(IDENTITY, trial=t) for t in range(20)]
    await asyncio.gather(*[acall_model(model, MESSAGES, identity=i, cache=cache) for i in identities])
    replays = await asyncio.gather(*[acall_model(model, MESSAGES, identity=i, cache=cache) for i in identities])
    assert all(r.cache_hit for r in replays)
    assert len(model.calls) == 20


async def test_replies_of_one_moment_share_one_commit_and_are_durable_when_handed_back(cache, monkeypatch):
    writes: list[int] = []
    original = cache._write
    monkeypatch.setattr(cache, "_write", lambda rows: (writes.append(len(rows)), original(rows)))
    model = FakeChatModel(responder=lambda messages, kwargs: "same moment")
    calls = [acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=t), cache=cache) for t in range(30)]

    async def read_by_another_connection(after: asyncio.Future) -> int:
        await after
        with sqlite3.connect(cache.path) as other:  # what a new process would find after a kill now
            return other.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    first = asyncio.ensure_future(calls[0])
    results, seen = await asyncio.gather(asyncio.gather(first, *calls[1:]), read_by_another_connection(first))
    assert writes == [30]  # one transaction for the 30 replies that arrived together
    assert seen == 30  # handed back only once committed
    assert not any(r.cache_hit for r in results)
    replays = await asyncio.gather(*[acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=t), cache=cache)
                                     for t in range(30)])
    assert all(r.cache_hit for r in replays) and writes == [30]


async def test_a_failed_group_commit_fails_every_call_of_the_group_and_stores_nothing(cache, monkeypatch):
    def broken(rows):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(cache, "_write", broken)
    model = FakeChatModel(responder=lambda messages, kwargs: "lost")
    outcomes = await asyncio.gather(*[acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=t), cache=cache)
                                      for t in range(3)], return_exceptions=True)
    assert [type(o) for o in outcomes] == [sqlite3.OperationalError] * 3
    monkeypatch.undo()
    assert len(cache) == 0


async def test_a_group_commit_keeps_the_first_writer_of_a_key(cache):
    info = ModelInfo("fake", "m")
    await asyncio.gather(cache.aput("k", {"text": "first"}, info, IDENTITY),
                         cache.aput("k", {"text": "second"}, info, IDENTITY))
    await cache.aput("k", {"text": "third"}, info, IDENTITY)
    assert cache.get("k") == {"text": "first"} and len(cache) == 1


async def test_a_group_commit_in_replay_or_off_mode_writes_nothing(tmp_path):
    for mode in ("replay", "off"):
        store = ResponseCache(tmp_path / f"{mode}.sqlite", mode)
        await store.aput("k", {"text": "x"}, ModelInfo("fake", "m"), IDENTITY)
        assert not (tmp_path / f"{mode}.sqlite").exists() or len(ResponseCache(tmp_path / f"{mode}.sqlite")) == 0


def _served_model(server: FakeOpenAIServer) -> ChatOpenAI:
    model = ChatOpenAI(model=server.model, base_url=server.base_url, api_key="x", max_retries=0,
                       use_responses_api=False)
    register_model(model, ModelInfo("openai-compatible", server.model, server.base_url))
    return model


async def test_the_same_call_made_side_by_side_asks_the_model_once(cache):
    # Targets run side by side share a patient's first turn: the twins wait for the first and read its reply.
    with FakeOpenAIServer(latency=0.2) as server:
        model = _served_model(server)
        results = await asyncio.gather(*[acall_model(model, MESSAGES, identity=IDENTITY, cache=cache) for _ in range(4)])
        assert server.stats["requests"] == 1
        assert sorted(r.cache_hit for r in results) == [False, True, True, True]
        assert len({r.text for r in results}) == 1
        # Other identities are other calls, side by side as before.
        await asyncio.gather(*[acall_model(model, MESSAGES, identity=replace(IDENTITY, trial=t), cache=cache)
                               for t in (5, 6)])
        assert server.stats["requests"] == 3 and server.stats["max_in_flight"] == 2


async def test_a_twin_of_a_failed_call_makes_its_own(cache):
    with FakeOpenAIServer(latency=0.2) as server:
        server.fail_next("400")  # not retried: the first call fails, its twin must not inherit a missing reply
        model = _served_model(server)
        first, twin = await asyncio.gather(acall_model(model, MESSAGES, identity=IDENTITY, cache=cache),
                                           acall_model(model, MESSAGES, identity=IDENTITY, cache=cache),
                                           return_exceptions=True)
        assert isinstance(first, Exception) and not isinstance(twin, Exception)
        assert not twin.cache_hit and server.stats["requests"] == 2


async def test_without_a_cache_twins_are_separate_calls(tmp_path):
    with FakeOpenAIServer(latency=0.1) as server:
        model = _served_model(server)
        off = ResponseCache(tmp_path / "off.sqlite", mode="off")
        await asyncio.gather(*[acall_model(model, MESSAGES, identity=IDENTITY, cache=off) for _ in range(3)])
        assert server.stats["requests"] == 3


# -- secrets --------------------------------------------------------------------------------------------------------


async def test_no_api_key_or_auth_header_in_the_cache_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    path = tmp_path / "secret-check.sqlite"
    with FakeOpenAIServer(replies=["hello", {"passed": True, "reason": "fine"}]) as server:
        model = ChatOpenAI(model=server.model, base_url=server.base_url, api_key=FAKE_KEY, max_retries=0,
                           use_responses_api=False, default_headers={"X-Api-Key": FAKE_KEY})
        register_model(model, ModelInfo("openai-compatible", server.model, server.base_url))
        cache = ResponseCache(path)
        await acall_model(model, MESSAGES, identity=IDENTITY, cache=cache)
        await acall_model(model, MESSAGES, identity=replace(IDENTITY, role="judge"), schema=Verdict, cache=cache)
        cache.close()
    assert len(ResponseCache(path)) == 2
    blobs = b"".join(p.read_bytes() for p in tmp_path.glob("secret-check.sqlite*"))
    assert FAKE_KEY.encode() not in blobs
    assert b"Bearer" not in blobs and b"Authorization" not in blobs.replace(b"authorization", b"")
    # and the table has no column that could hold one
    columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(responses)")]
    assert not any("key" in c and c != "key" for c in columns)


# -- ids minted per run do not break a replay ----------------------------------------------------------------------


def test_ids_minted_per_run_are_masked_in_the_key():
    def with_link(token: str, amount: str = "150,00") -> list[tuple[str, str]]:
        return [*MESSAGES[:-1], ("user", f"Link de R$ {amount}: https://pay.clinic.example/pix/{token}")]

    a, b = "05399431e7ba4fad9efe6e9c1921a4ed", "f44a4666682b4554929a235664ae6372"
    assert key_for(messages=with_link(a)) == key_for(messages=with_link(b))
    dashed = ("123e4567-e89b-12d3-a456-426614174000", "9f0c1b2a-3d4e-4f50-8a6b-7c8d9e0f1a2b")
    assert key_for(messages=with_link(dashed[0])) == key_for(messages=with_link(dashed[1]))
    assert key_for(messages=with_link(a)) != key_for(messages=with_link(b, amount="180,00"))  # the rest still counts
    assert key_for(messages=with_link(a)) != key_for(messages=with_link(a[:31]))  # not an id: kept as it is
    assert key_for(messages=with_link(a)) != key_for(messages=with_link(b), identity=replace(IDENTITY, trial=2))


def test_the_judges_transcript_tag_follows_the_masked_ids():
    from convoeval.judges.render import render_transcript

    def judged(token: str) -> list[tuple[str, str]]:
        entries = [{"role": "patient", "text": "Pix"}, {"role": "agent", "text": f"https://pay.example/{token}"}]
        return [("system", "Judge."), ("user", render_transcript(entries))]

    first, second = judged("a" * 32), judged("b" * 32)
    assert first != second  # the tag is a hash of the content, ids included
    assert key_for(messages=first) == key_for(messages=second)
    assert key_for(messages=first) != key_for(messages=judged("a" * 32 + " extra"))


async def test_a_rerun_whose_agent_quotes_new_ids_replays(tmp_path):
    recorder = ResponseCache(tmp_path / "c.sqlite", mode="rw")
    first = [("system", "You are a patient."), ("user", "Pay here: https://pay.clinic.example/pix/" + "a" * 32)]
    await acall_model(FakeChatModel(replies=["Paguei!"]), first, identity=IDENTITY, cache=recorder)
    recorder.close()
    replay = ResponseCache(tmp_path / "c.sqlite", mode="replay")
    again = [first[0], ("user", "Pay here: https://pay.clinic.example/pix/" + "b" * 32)]
    result = await acall_model(FakeChatModel(replies=[]), again, identity=IDENTITY, cache=replay)
    assert result.cache_hit and result.text == "Paguei!"
    replay.close()


def test_prompts_without_ids_keep_the_keys_they_were_recorded_under():
    from langchain_core.messages import convert_to_messages

    from convoeval.judges.render import render_transcript
    from convoeval.llm.cache import _canonical_message

    judged = render_transcript([{"role": "patient", "text": "Oi, tudo bem?"}])
    canonical = [_canonical_message(m) for m in convert_to_messages([("system", "Judge."), ("user", judged)])]
    # exactly what the key hashed before ids were masked: committed replay caches (nbval) still hit
    assert canonical == [{"role": "system", "content": "Judge."}, {"role": "human", "content": judged}]
