"""Adapters chosen by target string: Python callables, webhooks, openai-chat, and target parsing."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import re
import socket
import sys
import threading
import time
import types
from pathlib import Path

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from convoeval.agents import (
    AgentError,
    AgentReply,
    AgentSession,
    AgentTarget,
    ToolCall,
    get_agent,
    parse_clinic_target,
    register_agent,
)
from convoeval.agents.webhook import AUTH_HEADER_ENV, WebhookAgent

SECRET = "s3cr3t-token-XYZ-0042"


@pytest.fixture
def session() -> AgentSession:
    return AgentSession(
        run_id="run-1",
        clinic_id="clinic-1",
        patient_id="patient-1",
        patient_phone="+5511999990000",
        patient_name="Ana Souza",
        locale="pt-BR",
        agent="billing",
        conversation_id="conv-1",
    )


@pytest.fixture
def fake_module(monkeypatch):
    """A throwaway importable module ``fake_agent_mod`` to hang agent functions on."""
    module = types.ModuleType("fake_agent_mod")
    monkeypatch.setitem(sys.modules, "fake_agent_mod", module)
    return module


# --------------------------------------------------------------------------------------------- python callables


async def test_sync_callable_runs_in_a_thread_and_returns_a_string(fake_module, session):
    seen = {}

    def respond(message, session):
        seen["thread"] = threading.current_thread()
        seen["args"] = (message, session.patient_name)
        return "Olá, Ana!"

    fake_module.respond = respond
    agent = get_agent("fake_agent_mod:respond")
    reply = await agent.respond("oi", session)
    assert reply.bubbles == ["Olá, Ana!"]
    assert seen["args"] == ("oi", "Ana Souza")
    assert seen["thread"] is not threading.main_thread()
    assert agent.name == "fake_agent_mod:respond"


async def test_async_callable_and_nested_attribute(fake_module, session):
    class Bot:
        @staticmethod
        async def answer(message, session):
            return ["primeira", "segunda"]

    fake_module.Bot = Bot
    reply = await get_agent("fake_agent_mod:Bot.answer").respond("oi", session)
    assert reply.bubbles == ["primeira", "segunda"]


async def test_callable_object_with_async_call(fake_module, session):
    class Bot:
        async def __call__(self, message, session):
            return {"text": message.upper()}

    fake_module.bot = Bot()
    reply = await get_agent("fake_agent_mod:bot").respond("oi", session)
    assert reply.bubbles == ["OI"]


@pytest.mark.parametrize(
    ("returned", "bubbles", "tools", "conv"),
    [
        ("one bubble", ["one bubble"], [], None),
        (["a", "b"], ["a", "b"], [], None),
        ({"text": "t"}, ["t"], [], None),
        (
            {
                "bubbles": ["x", "y"],
                "tool_calls": [{"name": "list_invoices", "arguments": {"cpf": "1"}}],
                "conversation_id": "c9",
            },
            ["x", "y"],
            [ToolCall("list_invoices", {"cpf": "1"})],
            "c9",
        ),
        ({"bubbles": ["x"], "tool_calls": [{"name": "handoff"}]}, ["x"], [ToolCall("handoff", {})], None),
        (
            AgentReply(
                bubbles=["r"], tool_calls=[ToolCall("book", {"slot": 3}, result={"ok": True})], conversation_id="c2"
            ),
            ["r"],
            [ToolCall("book", {"slot": 3}, result={"ok": True})],
            "c2",
        ),
    ],
)
async def test_each_return_shape(fake_module, session, returned, bubbles, tools, conv):
    fake_module.respond = lambda message, session: returned
    reply = await get_agent("fake_agent_mod:respond").respond("oi", session)
    assert reply.bubbles == bubbles
    assert reply.tool_calls == tools
    assert reply.conversation_id == conv


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        (None, "returned null"),
        (42, "returned number"),
        (["ok", 3], "the returned list[1] must be a string, got number"),
        ([], "has no text"),
        ("   ", "has no text"),
        ({"tool_calls": []}, "'bubbles' (array of strings), 'text' (string) or 'parts' (array of messages) is missing"),
        ({"bubbles": "hi"}, "bubbles must be an array of strings, got string"),
        ({"bubbles": ["a"], "text": "b"}, "one of 'bubbles', 'text' or 'parts', not 'bubbles' and 'text'"),
        ({"text": ["a"]}, "text must be a string, got array"),
        ({"bubbles": ["a"], "tool_calls": {"name": "x"}}, "tool_calls must be an array, got object"),
        ({"bubbles": ["a"], "tool_calls": [{"arguments": {}}]}, "tool_calls[0].name is missing"),
        (
            {"bubbles": ["a"], "tool_calls": [{"name": "x", "arguments": "{}"}]},
            "tool_calls[0].arguments must be an object, got string",
        ),
        ({"bubbles": ["a"], "conversation_id": 7}, "conversation_id must be a string or null, got number"),
        (AgentReply(bubbles="oops"), "AgentReply.bubbles must be an array of strings"),
    ],
)
async def test_wrong_shapes_raise_agent_error_naming_the_problem(fake_module, session, returned, problem):
    fake_module.respond = lambda message, session: returned
    with pytest.raises(AgentError) as info:
        await get_agent("fake_agent_mod:respond").respond("oi", session)
    assert problem in str(info.value)
    assert "fake_agent_mod:respond" in str(info.value)


async def test_exception_in_callable_becomes_agent_error(fake_module, session):
    def respond(message, session):
        raise KeyError("invoice")

    fake_module.respond = respond
    with pytest.raises(AgentError, match=r"'fake_agent_mod:respond' raised KeyError"):
        await get_agent("fake_agent_mod:respond").respond("oi", session)


@pytest.mark.parametrize(
    ("define", "message"),
    [
        (lambda m: setattr(m, "respond", lambda message: "x"), "must accept (message, session)"),
        (lambda m: setattr(m, "respond", lambda message, session, extra: "x"), "must accept (message, session)"),
        (lambda m: setattr(m, "respond", "not callable"), "is a str, not a callable"),
        (lambda m: None, "has no attribute 'respond'"),
    ],
)
def test_bad_callables_fail_at_get_agent_time(fake_module, define, message):
    define(fake_module)
    with pytest.raises(ValueError) as info:
        get_agent("fake_agent_mod:respond")
    assert message in str(info.value)
    assert "fake_agent_mod:respond" in str(info.value)


def test_flexible_signatures_are_accepted(fake_module):
    fake_module.star = lambda *args: "x"
    fake_module.defaults = lambda message, session=None, verbose=False: "x"
    assert get_agent("fake_agent_mod:star").name == "fake_agent_mod:star"
    assert get_agent("fake_agent_mod:defaults").name == "fake_agent_mod:defaults"


def test_missing_module_fails_at_get_agent_time():
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_for_convoeval'"):
        get_agent("no_such_module_for_convoeval:respond")


# ----------------------------------------------------------------------------------------------- target parsing


@pytest.mark.parametrize(
    ("rest", "name", "faults"),
    [
        ("billing", "billing", []),
        ("billing?faults=invented_url", "billing", ["invented_url"]),
        ("billing?faults=invented_url, rude_tone,,", "billing", ["invented_url", "rude_tone"]),
        ("nps?faults=a&faults=b", "nps", ["a", "b"]),
    ],
)
def test_parse_clinic_target(rest, name, faults):
    assert parse_clinic_target(rest) == (name, faults)


@pytest.mark.parametrize(
    ("rest", "message"),
    [("", "needs an agent name"), ("?faults=a", "needs an agent name"), ("billing?fault=a", "parameter(s) fault")],
)
def test_parse_clinic_target_errors(rest, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_clinic_target(rest)


def test_clinic_target_reaches_make_clinic_agent_with_name_and_faults(monkeypatch):
    made = []
    fake = types.ModuleType("convoeval.agents.clinic")
    fake.make_clinic_agent = lambda name, faults: made.append((name, faults)) or types.SimpleNamespace(name=name)
    monkeypatch.setitem(sys.modules, "convoeval.agents.clinic", fake)
    agent = get_agent("clinic:billing?faults=invented_url,wrong_amount")
    assert made == [("billing", ["invented_url", "wrong_amount"])]
    assert agent.name == "billing"


@pytest.mark.parametrize("target", ["", "   ", "ftp://user:pw@host/x", "just-words", "mod:fn extra", "mod:"])
def test_unknown_target_lists_accepted_forms(target):
    with pytest.raises(ValueError) as info:
        get_agent(target)
    text = str(info.value)
    for form in ("clinic:<agent>", "module:function", "https://", "openai-chat"):
        assert form in text
    assert "pw@" not in text


def test_registered_scheme_wins_and_gets_the_split_target():
    seen = []
    register_agent("fake-transport", lambda target, **options: seen.append((target, options)) or "agent")
    try:
        assert get_agent("fake-transport:abc:def", flag=1) == "agent"
    finally:
        from convoeval import agents

        agents._FACTORIES.pop("fake-transport")
    assert seen == [(AgentTarget(raw="fake-transport:abc:def", scheme="fake-transport", rest="abc:def"), {"flag": 1})]


def test_openai_chat_target_parses_model_name():
    assert get_agent("openai-chat").name == "openai-chat"
    assert get_agent("openai-chat:qwen2.5:7b").spec == "qwen2.5:7b"


# ------------------------------------------------------------------------------------------------------ webhook


@pytest.fixture(scope="module")
def threaded_server():
    """A server that serves each request in its own thread, so a hanging handler never stalls the next test."""
    server = HTTPServer(threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def clean_auth(monkeypatch):
    monkeypatch.delenv(AUTH_HEADER_ENV, raising=False)


async def test_webhook_happy_path_sends_message_and_session(httpserver, session, clean_auth):
    expected = {"message": "Oi, quero pagar", "session": session.to_json()}
    httpserver.expect_oneshot_request("/agent", method="POST", json=expected).respond_with_json(
        {"text": "Claro! Pix ou boleto?", "conversation_id": "wa-77"}
    )
    agent = get_agent(httpserver.url_for("/agent"))
    try:
        reply = await agent.respond("Oi, quero pagar", session)
    finally:
        await agent.aclose()
    httpserver.check_assertions()
    assert reply == AgentReply(bubbles=["Claro! Pix ou boleto?"], conversation_id="wa-77")


async def test_webhook_multiple_bubbles_and_tool_calls(httpserver, session, clean_auth):
    httpserver.expect_oneshot_request("/agent").respond_with_json(
        {
            "bubbles": ["Encontrei 1 fatura.", "Segue o link: https://pay.example/abc"],
            "tool_calls": [
                {"name": "list_invoices", "arguments": {"patient_id": "patient-1"}},
                {
                    "name": "create_payment_link",
                    "arguments": {"method": "pix"},
                    "result": {"url": "https://pay.example/abc"},
                },
            ],
            "debug": {"ignored": True},
        }
    )
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        reply = await agent.respond("pix", session)
    assert reply.bubbles == ["Encontrei 1 fatura.", "Segue o link: https://pay.example/abc"]
    assert reply.tool_names == ["list_invoices", "create_payment_link"]
    assert reply.tool_calls[1].result == {"url": "https://pay.example/abc"}


async def test_webhook_client_is_reused_across_calls(httpserver, session, clean_auth):
    httpserver.expect_request("/agent").respond_with_json({"text": "ok"})
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        await agent.respond("1", session)
        first = agent._client
        await agent.respond("2", session)
        assert agent._client is first


def test_webhook_survives_a_new_event_loop(httpserver, session, clean_auth):
    # Notebooks and scripts may call asyncio.run more than once with the same agent object.
    import asyncio

    httpserver.expect_request("/agent").respond_with_json({"text": "ok"})
    agent = WebhookAgent(httpserver.url_for("/agent"))
    assert asyncio.run(agent.respond("1", session)).bubbles == ["ok"]
    first = agent._client
    assert asyncio.run(agent.respond("2", session)).bubbles == ["ok"]
    assert agent._client is not first


async def test_webhook_non_2xx_gives_status_and_snippet(httpserver, session, clean_auth):
    httpserver.expect_oneshot_request("/agent").respond_with_data("Internal error: db down " + "x" * 5000, status=500)
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        with pytest.raises(AgentError) as info:
            await agent.respond("oi", session)
    text = str(info.value)
    assert "HTTP 500" in text and "Internal error: db down" in text
    assert len(text) < 400  # a snippet, not the whole page
    assert len(httpserver.log) == 1  # a 500 is not retried: the agent may already have acted


async def test_webhook_retries_429_with_retry_after(httpserver, session, clean_auth):
    httpserver.expect_ordered_request("/agent").respond_with_data("slow down", status=429, headers={"Retry-After": "0"})
    httpserver.expect_ordered_request("/agent").respond_with_json({"text": "ok"})
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        reply = await agent.respond("oi", session)
    assert reply.bubbles == ["ok"]
    assert len(httpserver.log) == 2


async def test_webhook_unreachable_is_agent_error(session, clean_auth):
    # Port 9 (discard) on localhost is closed in test environments: the connection is refused.
    async with WebhookAgent("http://127.0.0.1:9/agent", retries=0, timeout=5) as agent:
        with pytest.raises(AgentError, match="unreachable"):
            await agent.respond("oi", session)


async def test_webhook_unreachable_stays_unreachable_when_retries_outrun_the_deadline(session, clean_auth):
    # Before: a refused connection retried with backoff until the deadline left no room, then said "did not answer
    # within 2 s" (a loaded CI machine saw that wording instead of "unreachable"; the message depended on the load).
    # 3 s: room for the first attempt on a loaded machine (its first connection alone took 0.35 s there), too little
    # for the backoffs of ten retries (0.25, 0.5, 1, 2 s, ...).
    async with WebhookAgent("http://127.0.0.1:9/agent", retries=10, timeout=3) as agent:
        started = time.monotonic()
        with pytest.raises(AgentError, match="unreachable") as info:
            await agent.respond("oi", session)
    assert "did not answer" not in str(info.value)
    # Gave up at the deadline: without it, ten backoffs would sleep 0.25 × (2^10 - 1) s. The margin is for a loaded
    # CI machine, where an event loop can wait seconds for a core.
    assert time.monotonic() - started < 3 + 5


async def test_webhook_refused_then_starved_still_says_unreachable(session, clean_auth, monkeypatch):
    # A loaded machine can stall a retry until the deadline fires mid-try: the refusals seen so far are still the
    # reason (CI saw "did not answer within 2 s" for a port nobody listens on).
    tries = []

    async def refused_then_stalled(payload, headers, refusals):
        tries.append(1)
        if len(tries) == 1:
            raise httpx.ConnectError("refused")
        await asyncio.sleep(10)

    async with WebhookAgent("http://127.0.0.1:9/agent", retries=5, timeout=0.6) as agent:
        monkeypatch.setattr(agent, "_post_once", refused_then_stalled)
        with pytest.raises(AgentError, match=r"unreachable \(ConnectError\); gave up after 1 try within 0.6 s"):
            await agent.respond("oi", session)
    assert len(tries) == 2


async def test_webhook_answered_then_slow_is_a_timeout(session, clean_auth, monkeypatch):
    # The other side of the rule: once the agent answered (503), a later stall is a real timeout, not "unreachable".
    tries = []

    async def refused_busy_then_stalled(payload, headers, refusals):
        tries.append(1)
        if len(tries) == 1:
            raise httpx.ConnectError("refused")
        refusals.clear()  # what the real _post_once's trace hook does once the request's headers go out
        if len(tries) == 2:
            return 503, 0.0, b"busy"
        await asyncio.sleep(10)

    # 3 s, not 0.8: the first backoff (0.25 s) must end before the deadline, else the refusal is all there is to
    # report ("unreachable"); a loaded machine could stall the loop for 0.55 s. The stall (10 s) still outlasts it.
    async with WebhookAgent("http://127.0.0.1:9/agent", retries=5, timeout=3) as agent:
        monkeypatch.setattr(agent, "_post_once", refused_busy_then_stalled)
        with pytest.raises(AgentError, match=r"did not answer within 3 s"):
            await agent.respond("oi", session)
    assert len(tries) == 3


async def test_webhook_refused_then_received_but_unanswered_is_a_timeout_not_unreachable(session, clean_auth):
    # A refused first try, then a server that takes the POST and never answers: the agent has the message (it may
    # have booked or charged), so "unreachable" would be a lie; it is a timeout. Real sockets, no stubs.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: the first try is refused
    received: list[bytes] = []
    done = threading.Event()

    def listen_late() -> None:
        time.sleep(0.1)  # after the first try was refused
        with socket.socket() as server:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", port))
            server.listen()
            server.settimeout(10)
            conn, _ = server.accept()
            with conn:
                received.append(conn.recv(65536))
                done.wait(10)  # holds the connection without answering

    thread = threading.Thread(target=listen_late, daemon=True)
    thread.start()
    try:
        async with WebhookAgent(f"http://127.0.0.1:{port}/hook", retries=5, timeout=3) as agent:
            with pytest.raises(AgentError, match=r"did not answer within 3 s"):
                await agent.respond("oi", session)
    finally:
        done.set()
        thread.join(5)
    assert received and received[0].startswith(b"POST /hook")


async def test_webhook_retry_after_beyond_the_deadline_reports_the_status(httpserver, session, clean_auth):
    httpserver.expect_oneshot_request("/agent").respond_with_data("busy", status=503, headers={"Retry-After": "30"})
    async with WebhookAgent(httpserver.url_for("/agent"), timeout=1) as agent:
        with pytest.raises(AgentError, match=r"answered HTTP 503: 'busy'"):
            await agent.respond("oi", session)
    assert len(httpserver.log) == 1  # no wait for 30 s, no second try


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("{not json", "invalid JSON ("),  # then the json module's words, not ours to pin
        ("{not json", " at line 1 column 2); "),
        ("", "invalid JSON"),
        ("[1, 2]", "the reply must be an object, got array"),
        ('{"conversation_id": "x"}', "'bubbles' (array of strings), 'text' (string) or 'parts' (array of messages) is missing"),
        ('{"bubbles": [1]}', "bubbles[0] must be a string, got number"),
        ('{"text": 5}', "text must be a string, got number"),
        ('{"text": "x", "tool_calls": [{"name": 3}]}', "tool_calls[0].name must be a non-empty string, got number"),
        (
            '{"text": "x", "tool_calls": [{"name": "a", "arguments": [1]}]}',
            "tool_calls[0].arguments must be an object, got array",
        ),
    ],
)
async def test_webhook_protocol_violations_name_the_field(httpserver, session, clean_auth, body, problem):
    httpserver.expect_oneshot_request("/agent").respond_with_data(body, content_type="application/json")
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        with pytest.raises(AgentError) as info:
            await agent.respond("oi", session)
    assert problem in str(info.value)


async def test_webhook_non_utf8_body(httpserver, session, clean_auth):
    httpserver.expect_oneshot_request("/agent").respond_with_data(b"\xff\xfe\x00{", content_type="application/json")
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        with pytest.raises(AgentError, match="not UTF-8 JSON"):
            await agent.respond("oi", session)


async def test_webhook_slow_server_times_out(threaded_server, session, clean_auth):
    release = threading.Event()

    def hang(request: Request) -> Response:
        release.wait(10)  # released by the test as soon as the client gave up
        return Response('{"text": "too late"}', content_type="application/json")

    threaded_server.expect_oneshot_request("/slow").respond_with_handler(hang)
    try:
        async with WebhookAgent(threaded_server.url_for("/slow"), timeout=0.3) as agent:
            started = time.monotonic()
            with pytest.raises(AgentError, match=r"did not answer within 0.3 s"):
                await agent.respond("oi", session)
            assert time.monotonic() - started < 8  # the handler holds the reply 10 s: only the deadline ends it sooner
    finally:
        release.set()


def _stream_handler(total_bytes: int | None, sent: list[int]):
    def handler(request: Request) -> Response:
        def chunks():
            chunk = b'{"text": "' + b"a" * 65_526
            yield chunk
            while total_bytes is None or sent[0] < total_bytes:
                sent[0] += 65_536
                yield b"a" * 65_536

        # No Content-Length: the client cannot refuse up front and must stop reading by itself.
        return Response(chunks(), content_type="application/json")

    return handler


async def test_webhook_10mb_body_is_refused_without_reading_it(threaded_server, session, clean_auth):
    sent = [0]
    threaded_server.expect_oneshot_request("/huge").respond_with_handler(_stream_handler(10_000_000, sent))
    async with WebhookAgent(threaded_server.url_for("/huge"), timeout=10) as agent:
        started = time.monotonic()
        with pytest.raises(AgentError, match=r"more than 1,000,000 bytes, over the limit"):
            await agent.respond("oi", session)
        # The message shows it stopped at the limit; the time only has to stay well under the 10 s deadline (a
        # loaded CI machine streams a megabyte slowly).
        assert time.monotonic() - started < 8


async def test_webhook_endless_body_ends_on_the_size_limit_not_the_timeout(threaded_server, session, clean_auth):
    # An endless body could only end by the 10 s timeout if the adapter kept reading: it must stop at the limit.
    sent = [0]
    threaded_server.expect_oneshot_request("/endless").respond_with_handler(_stream_handler(None, sent))
    async with WebhookAgent(threaded_server.url_for("/endless"), timeout=10, max_body_bytes=200_000) as agent:
        with pytest.raises(AgentError, match="over the limit of 200,000 bytes"):
            await agent.respond("oi", session)


async def test_webhook_declared_oversize_body_is_refused_up_front(httpserver, session, clean_auth):
    httpserver.expect_oneshot_request("/big").respond_with_data(b"x" * 3_000_000, content_type="application/json")
    async with WebhookAgent(httpserver.url_for("/big")) as agent:
        with pytest.raises(AgentError, match=r"declares 3,000,000 bytes"):
            await agent.respond("oi", session)


async def test_webhook_auth_header_sent_but_never_shown(httpserver, session, monkeypatch, caplog):
    monkeypatch.setenv(AUTH_HEADER_ENV, f"Authorization: Bearer {SECRET}")
    caplog.set_level(logging.DEBUG)
    auth = {"Authorization": f"Bearer {SECRET}"}
    httpserver.expect_oneshot_request("/agent", headers=auth).respond_with_json({"text": "ok"})
    # A careless server echoes the credential back in its error page.
    httpserver.expect_oneshot_request("/agent").respond_with_data(f"bad token: Bearer {SECRET} ({SECRET})", status=401)
    agent = get_agent(httpserver.url_for("/agent") + "?key=" + SECRET)
    try:
        assert (await agent.respond("oi", session)).bubbles == ["ok"]
        with pytest.raises(AgentError) as info:
            await agent.respond("oi", session)
    finally:
        await agent.aclose()
    assert "HTTP 401" in str(info.value)
    # Our side's logs only: werkzeug's access log belongs to the test server.
    ours = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("werkzeug"))
    assert "HTTP Request: POST" in ours  # httpx did log the request, with the token blanked
    for text in (str(info.value), repr(info.value), repr(agent), agent.name, ours):
        assert SECRET not in text
    assert "Authorization: ***" in repr(agent)


def test_malformed_auth_header_env_is_refused_without_echoing_it(monkeypatch):
    monkeypatch.setenv(AUTH_HEADER_ENV, f"Bearer {SECRET}")
    with pytest.raises(ValueError) as info:
        WebhookAgent("http://localhost/agent")
    assert AUTH_HEADER_ENV in str(info.value)
    assert SECRET not in str(info.value)


def test_webhook_limits_from_env(monkeypatch, clean_auth):
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "2.5")
    monkeypatch.setenv("CONVOEVAL_AGENT_MAX_BYTES", "1234")
    agent = WebhookAgent("https://bot.example.com/hook")
    assert (agent.timeout, agent.max_body_bytes) == (2.5, 1234)
    assert WebhookAgent("https://bot.example.com/hook", timeout=7).timeout == 7
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="CONVOEVAL_AGENT_TIMEOUT"):
        WebhookAgent("https://bot.example.com/hook")


def test_webhook_name_hides_credentials_in_url(clean_auth):
    agent = get_agent("https://user:pa55word@bot.example.com:8443/hook?token=abc")
    assert agent.name == "https://bot.example.com:8443/hook?…"
    assert "pa55word" not in repr(agent) and "abc" not in repr(agent)


# -------------------------------------------------------------------------------------------------- openai-chat


class _ScriptedModel:
    """A minimal chat model stand-in: replies from a queue, remembers every call's messages."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = []
        self.bound_tools = None

    def bind_tools(self, tools):
        self.bound_tools = tools
        return self

    async def ainvoke(self, messages):
        self.calls.append(list(messages))
        return self.replies.pop(0)


@pytest.fixture
def fake_tools(monkeypatch):
    """Replace ``convoeval.agents.tools`` (written separately) with a recording stand-in."""
    calls = []

    class ClinicTools:
        def __init__(self, store, session):
            self.store, self.session = store, session

        def call(self, name, args):
            calls.append((name, args, self.session.run_id))
            if name == "explode":
                raise RuntimeError("no such invoice")
            return {"invoices": [{"id": "inv-1", "amount": 150.0}]}

    from convoeval.agents import openai_chat

    # The agent module imports the tools at its top: patch the names it holds.
    monkeypatch.setattr(openai_chat, "TOOL_SPECS",
                        [{"type": "function", "function": {"name": "list_invoices", "parameters": {"type": "object"}}}])
    monkeypatch.setattr(openai_chat, "ClinicTools", ClinicTools)
    return calls


def _ai(text="", tool_calls=()):
    from langchain_core.messages import AIMessage

    calls = [{"name": name, "args": args, "id": f"call-{i}"} for i, (name, args) in enumerate(tool_calls)]
    return AIMessage(content=text, tool_calls=calls)


async def test_openai_chat_tool_loop_and_history(session, fake_tools):
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

    model = _ScriptedModel(
        [
            _ai(tool_calls=[("list_invoices", {"patient_id": "patient-1"}), ("explode", {})]),
            _ai("Você tem uma fatura de R$ 150,00."),
            _ai("Pix, certo!"),
        ]
    )
    session.store = object()
    agent = get_agent("openai-chat:test-model", model=model)
    reply = await agent.respond("Quero pagar", session)

    assert reply.bubbles == ["Você tem uma fatura de R$ 150,00."]
    assert reply.tool_names == ["list_invoices", "explode"]
    assert reply.tool_calls[0].result == {"invoices": [{"id": "inv-1", "amount": 150.0}]}
    assert "no such invoice" in reply.tool_calls[1].result["error"]  # a failing tool is reported back, not fatal
    assert reply.conversation_id == "conv-1"
    assert [c[0] for c in fake_tools] == ["list_invoices", "explode"]
    assert model.bound_tools[0]["function"]["name"] == "list_invoices"

    first, second = model.calls
    assert isinstance(first[0], SystemMessage)
    assert "Brazilian Portuguese" in first[0].content and "billing" in first[0].content
    assert "Never invent URLs" in first[0].content
    assert [type(m) for m in second[-2:]] == [ToolMessage, ToolMessage]

    await agent.respond("Pix", session)
    third = model.calls[2]
    assert [m.content for m in third if isinstance(m, HumanMessage)] == ["Quero pagar", "Pix"]


async def test_openai_chat_keeps_conversations_apart(session, fake_tools):
    from langchain_core.messages import HumanMessage

    model = _ScriptedModel([_ai("a"), _ai("b"), _ai("c")])
    session.store = object()
    other = AgentSession(**{**session.__dict__, "conversation_id": "conv-2", "patient_name": "Bruno"})
    agent = get_agent("openai-chat", model=model)
    await agent.respond("from Ana", session)
    await agent.respond("from Bruno", other)
    await agent.respond("Ana again", session)
    humans = [[m.content for m in call if isinstance(m, HumanMessage)] for call in model.calls]
    assert humans == [["from Ana"], ["from Bruno"], ["from Ana", "Ana again"]]


async def test_openai_chat_tool_round_limit(session, fake_tools):
    model = _ScriptedModel([_ai(tool_calls=[("list_invoices", {})]) for _ in range(3)])
    session.store = object()
    agent = get_agent("openai-chat", model=model, max_tool_rounds=2)
    with pytest.raises(AgentError, match="still calling tools after 2 rounds"):
        await agent.respond("oi", session)


async def test_openai_chat_model_failure_is_agent_error_without_key(session, fake_tools):
    class Failing(_ScriptedModel):
        async def ainvoke(self, messages):
            raise RuntimeError("Incorrect API key provided: sk-abcdef1234567890")

    session.store = object()
    agent = get_agent("openai-chat", model=Failing([]))
    with pytest.raises(AgentError) as info:
        await agent.respond("oi", session)
    assert "model call failed" in str(info.value)
    assert "abcdef1234567890" not in str(info.value)


async def test_openai_chat_needs_a_store(session):
    agent = get_agent("openai-chat", model=_ScriptedModel([]))
    with pytest.raises(AgentError, match="needs session.store"):
        await agent.respond("oi", session)


_HAS_FAKE = importlib.util.find_spec("convoeval.testing") is not None


@pytest.mark.skipif(not _HAS_FAKE, reason="convoeval.testing (FakeChatModel) is not written yet")
async def test_openai_chat_with_project_fake_model(session, fake_tools):
    from convoeval.testing import FakeChatModel

    model = FakeChatModel([_ai(tool_calls=[("list_invoices", {})]), _ai("Uma fatura aberta.")])
    session.store = object()
    reply = await get_agent("openai-chat", model=model).respond("oi", session)
    assert reply.bubbles == ["Uma fatura aberta."]
    assert reply.tool_names == ["list_invoices"]
    assert len(model.calls) == 2


async def test_openai_chat_tools_write_to_a_real_store(tmp_path):
    """End to end on SQLite: the model's tool calls go through the real ClinicTools and land in the run's rows."""
    from convoeval.agents.tools import TOOL_NAMES
    from convoeval.scenarios import load_scenario_file
    from convoeval.store import open_store
    from convoeval.store.fixtures import cleanup_run, seed_run
    from convoeval.testing import FakeChatModel

    scenario = load_scenario_file(Path(__file__).parents[1] / "evals/scenarios/billing/conv-happy-payment.yaml")
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    seeded = seed_run(store, scenario)
    try:
        session = AgentSession(
            run_id=seeded.run_id,
            clinic_id=seeded.clinic_id,
            patient_id=seeded.patient_id,
            patient_phone=scenario.persona.phone,
            patient_name=scenario.persona.name,
            locale=scenario.locale,
            agent=scenario.agent,
            store=store,
        )
        model = FakeChatModel(
            [
                _ai(tool_calls=[("list_invoices", {})]),
                _ai(tool_calls=[("create_payment_link", {"invoice_id": "eval-inv-10", "method": "Pix"})]),
                _ai("Pronto! Seu link Pix foi gerado."),
            ]
        )
        agent = get_agent("openai-chat", model=model)
        reply = await agent.respond("Quero pagar por Pix", session)

        assert reply.tool_names == ["list_invoices", "create_payment_link"]
        links = store.select("payment_links", {"run_id": seeded.run_id})
        assert len(links) == 1 and links[0]["method"] == "pix"
        assert reply.tool_calls[1].result["url"] == links[0]["url"]
        bound = {t["function"]["name"] for t in model.calls[0].kwargs["tools"]}
        assert bound == set(TOOL_NAMES)
        assert reply.conversation_id  # the adapter keeps one when the runner gave none
    finally:
        cleanup_run(store, seeded.run_id)
        store.close()
