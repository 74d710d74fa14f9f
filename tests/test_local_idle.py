"""The embedded local server stops itself when idle, says so, and the next call starts it again.

The watchdog's clock is tested with a fake clock; the whole path (launcher, state file, lock, exit, restart) with a
stand-in server process that runs convoeval's real middleware around a tiny app, so no model is needed; one test
marked local_llm does it with the real server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import anyio
import pytest

from convoeval.cli import main
from convoeval.llm import local as local_llm
from convoeval.llm.local import LocalModelError
from convoeval.llm.local import server as local_server_mod
from convoeval.local_server import idle as local_idle

# -- the setting and what a person reads ----------------------------------------------------------------------------


def test_the_idle_timeout_setting():
    assert local_idle.parse_idle_timeout(None) == local_idle.parse_idle_timeout("") == 600.0
    assert local_idle.parse_idle_timeout("0") == 0.0 and local_idle.parse_idle_timeout("1.5") == 1.5
    for bad in ("ten minutes", "-1", "nan", "inf"):
        with pytest.raises(ValueError, match=r"CONVOEVAL_LOCAL_IDLE_TIMEOUT\) must be a number of seconds ≥ 0"):
            local_idle.parse_idle_timeout(bad)


def test_a_bad_idle_timeout_fails_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    monkeypatch.setenv("CONVOEVAL_LOCAL_IDLE_TIMEOUT", "10m")
    monkeypatch.setattr(local_server_mod, "ensure_model", lambda progress=True: pytest.fail("went on"))
    with pytest.raises(LocalModelError, match=r"must be a number of seconds ≥ 0 \(0 = never stop\), got '10m'"):
        local_llm.ensure_server(progress=False)


def test_the_status_line():
    note = local_idle.idle_note
    assert note({"idle_timeout_s": 600, "in_flight": 0, "idle_s": 120, "last_request_s_ago": 120}) == (
        "stops itself after 10 min idle; last request 2 min ago; stops in about 8 min")
    assert note({"idle_timeout_s": 600, "in_flight": 0, "idle_s": 5, "last_request_s_ago": None}) == (
        "stops itself after 10 min idle; no request yet; stops in about 10 min")
    assert note({"idle_timeout_s": 5400, "in_flight": 1, "idle_s": None, "last_request_s_ago": 3}) == (
        "stops itself after 1 h 30 min idle; busy: 1 request(s) in flight")
    assert note({"idle_timeout_s": 0, "in_flight": 0, "idle_s": 9, "last_request_s_ago": 9}).startswith(
        "never stops itself (idle timeout 0); stop it with: convoeval llm stop; last request 9 s")
    assert "older convoeval" in note({"idle_timeout_s": None})


# -- the watchdog's clock (fake clock, no thread) -------------------------------------------------------------------


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


async def _post(watchdog, path="/v1/chat/completions", body=b"{}", method="POST"):
    """One request through the middleware; returns (status, body)."""
    sent = []
    messages = iter([{"type": "http.request", "body": body, "more_body": False}])

    async def receive():
        try:
            return next(messages)
        except StopIteration:
            await anyio.sleep_forever()

    async def send(message):
        sent.append(message)

    await watchdog({"type": "http", "method": method, "path": path}, receive, send)
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


async def _ok_app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def test_the_idle_clock_runs_from_the_last_request_and_never_during_one():
    clock, stops = _Clock(), []
    release = anyio.Event()

    async def slow_app(scope, receive, send):
        if scope["path"] == "/slow":
            await release.wait()
        await _ok_app(scope, receive, send)

    watchdog = local_idle.IdleWatchdog(slow_app, 60, on_idle=lambda w: stops.append(w) or True, clock=clock,
                                      watch=False)
    clock.now += 59
    assert not watchdog.check() and watchdog.remaining() == 1.0
    assert await _post(watchdog) == (200, b"ok")  # a request restarts the clock
    clock.now += 59
    assert not watchdog.check()
    for _ in range(3):  # health checks and model lists do not count, or `convoeval llm status` would keep it up
        await _post(watchdog, path="/v1/models", method="GET")
    clock.now += 1
    assert watchdog.due() and watchdog.check() and len(stops) == 1

    async with anyio.create_task_group() as tasks:  # a generation far longer than the timeout is never cut
        tasks.start_soon(_post, watchdog, "/slow")
        await anyio.sleep(0.05)
        clock.now += 3600
        assert watchdog.report()["in_flight"] == 1 and watchdog.remaining() is None and not watchdog.check()
        release.set()
    assert watchdog.report() == {"idle_timeout_s": 60.0, "in_flight": 0, "requests": 2, "idle_s": 0.0,
                                 "last_request_s_ago": 0.0}
    clock.now += 60
    assert watchdog.check() and len(stops) == 2


async def test_a_timeout_of_0_never_stops_and_the_timeout_can_be_changed_on_a_running_server():
    clock = _Clock()
    watchdog = local_idle.IdleWatchdog(_ok_app, 0, on_idle=lambda w: pytest.fail("stopped"), clock=clock,
                                      watch=False)
    clock.now += 10**7
    assert watchdog.remaining() is None and not watchdog.check()
    status, body = await _post(watchdog, path=local_idle.IDLE_PATH, body=b'{"idle_timeout_s": 30}')
    assert status == 200 and json.loads(body)["idle_timeout_s"] == 30.0
    assert watchdog.remaining() == 30.0  # counted from the change, not from start-up
    status, body = await _post(watchdog, path=local_idle.IDLE_PATH, body=b'{"idle_timeout_s": -5}')
    assert status == 400 and "must be a number of seconds" in json.loads(body)["error"]
    status, body = await _post(watchdog, path=local_idle.IDLE_PATH, method="GET")
    assert status == 200 and json.loads(body)["requests"] == 0  # control requests are not use either


async def test_the_watchdog_thread_calls_on_idle_once_due_and_looks_again_when_declined():
    calls = []

    def on_idle(watchdog):
        calls.append(time.monotonic())
        return len(calls) == 2  # the first time a caller holds the lock: decline

    started = time.monotonic()
    local_idle.IdleWatchdog(_ok_app, 0.2, on_idle=on_idle)
    deadline = time.monotonic() + 10
    while len(calls) < 2 and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    assert len(calls) == 2
    assert calls[0] - started >= 0.2 and calls[1] - calls[0] >= 0.9  # looked again a second later
    await anyio.sleep(0.3)
    assert len(calls) == 2  # stopped: the thread is done


# -- the whole path with a stand-in server process (convoeval's middleware, a tiny app) -----------------------------

_STAND_IN = """\
import json, sys, uvicorn  # convoeval.local_server stand-in: the real middleware around a tiny OpenAI-like app
from convoeval.local_server import wrap_app

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"].endswith("/models"):
        body = {"data": [{"id": "stand-in", "object": "model"}]}
    else:
        body = {"id": "c", "object": "chat.completion", "created": 0, "model": "stand-in",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "reply from the stand-in"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})

uvicorn.run(wrap_app(app), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", lifespan="off")
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """``ensure_server`` starts the stand-in instead of llama.cpp; yields the pids it started, in order."""
    from convoeval.llm.models import clear_model_cache

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "CONVOEVAL_JUDGE_MODEL",
                 "CONVOEVAL_JUDGE_BASE_URL", "CONVOEVAL_LOCAL_MODEL", "CONVOEVAL_LOCAL_IDLE_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_LOCAL_STARTUP_TIMEOUT", "60")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(Path(__file__).resolve().parents[1]), *sys.path]))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(local_server_mod, "ensure_model", lambda progress=True: model)
    monkeypatch.setattr(local_server_mod, "_launch_command",
                        lambda settings, port: [sys.executable, "-c", _STAND_IN, str(port)])
    if "llama_cpp" not in sys.modules:  # _start only checks that it can be imported
        monkeypatch.setitem(sys.modules, "llama_cpp", types.ModuleType("llama_cpp"))
    started = []
    real_start = local_server_mod._start

    def start(settings, idle_timeout):
        url = real_start(settings, idle_timeout)
        started.append(local_server_mod._read_state()["pid"])
        return url

    monkeypatch.setattr(local_server_mod, "_start", start)
    clear_model_cache()
    yield started
    clear_model_cache()
    local_llm.stop_server()


def _wait_gone(pid: int, timeout: float) -> bool:
    """True once ``pid`` has exited (a zombie of ours counts: it no longer runs anything)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


async def test_an_idle_server_stops_itself_and_the_next_call_starts_it_again(stand_in, monkeypatch):
    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.models import get_model

    # 5 s, not 2: the status below must be read before the server stops itself, which on a loaded CI machine (the
    # status is an HTTP request to a process that also waits for a core) could take longer than 2 s.
    monkeypatch.setenv("CONVOEVAL_LOCAL_IDLE_TIMEOUT", "5")
    judge, identity = get_model("judge"), SampleIdentity(scenario="idle", seed=1, trial=1, role="judge")
    first = await acall_model(judge, [("user", "hi")], identity=identity, cache="off")
    assert first.text == "reply from the stand-in" and len(stand_in) == 1
    status = local_llm.server_status()
    assert status["idle_timeout_s"] == 5.0 and status["idle"].startswith("stops itself after 5 s idle; last request")

    assert await anyio.to_thread.run_sync(_wait_gone, stand_in[0], 30)
    state = Path(os.environ["CONVOEVAL_HOME"]) / "llm"
    assert not (state / "server.json").exists()  # removed first, so no caller is sent to a server on its way out
    log = (state / "server.log").read_text()
    assert "stops itself after 5 s without a request; the next call starts it again" in log
    assert "no request for 5 s: stopping itself (CONVOEVAL_LOCAL_IDLE_TIMEOUT=5; 0 = never)" in log
    assert local_llm.server_status()["idle"] == "not running: the next call that needs the local model starts it"

    monkeypatch.delenv("CONVOEVAL_LOCAL_IDLE_TIMEOUT")  # the default for the next one
    again = await acall_model(judge, [("user", "hi again")], identity=identity, cache="off")
    assert again.text == "reply from the stand-in" and again.attempts == 1  # no failed attempt on the way
    assert len(stand_in) == 2 and stand_in[1] != stand_in[0]
    status = local_llm.server_status()
    assert status["running"] and status["pid"] == stand_in[1]
    assert status["idle"].startswith("stops itself after 10 min idle; last request")



async def test_a_caller_that_read_the_port_just_before_the_server_stopped_is_healed_by_its_retry(stand_in):
    # The race the state file cannot close: a caller read server.json, then the server stopped itself before the
    # request arrived. The connection is refused; the retry asks ensure_server again, which starts a new server.
    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.models import get_model
    from convoeval.testing import FakeOpenAIServer

    urls = [f"http://127.0.0.1:{local_server_mod._free_port()}/v1"]  # nothing listens there any more
    with FakeOpenAIServer(["from the new server"]) as new_server:
        urls.append(new_server.base_url)
        handed_out = iter(urls)
        local_llm_ensure = lambda progress=True: next(handed_out)  # noqa: E731
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(local_llm, "ensure_server", local_llm_ensure)
            result = await acall_model(get_model("judge"), [("user", "hi")], cache="off",
                                      identity=SampleIdentity(scenario="race", seed=1, trial=1, role="judge"))
    assert result.text == "from the new server" and result.attempts == 2

def test_serve_sets_a_running_server_s_idle_timeout(stand_in, capsys):
    url = local_llm.ensure_server(progress=False)
    assert local_llm.server_status()["idle_timeout_s"] == 600.0
    assert main(["llm", "serve", "--idle-timeout", "0"]) == 0
    assert capsys.readouterr().out.startswith(f"local model server running at {url}; never stops itself")
    status = local_llm.server_status()
    assert status["idle_timeout_s"] == 0.0 and len(stand_in) == 1  # told, not replaced
    assert json.loads(Path(status["state_file"]).read_text())["idle_timeout_s"] == 0.0

    with pytest.raises(SystemExit) as exit_info:
        main(["llm", "serve", "--idle-timeout", "-3"])
    assert exit_info.value.code == 2
    assert "must be a number of seconds ≥ 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["llm", "status", "--idle-timeout", "5"])
    assert exit_info.value.code == 2
    assert "--idle-timeout goes with: convoeval llm serve" in capsys.readouterr().err


def test_the_llm_help_says_the_server_stops_itself():
    help_text = subprocess.run([sys.executable, "-m", "convoeval.cli", "llm", "--help"], capture_output=True,
                               text=True, timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    assert "stops itself after 10 minutes without a request" in " ".join(help_text.split())


# -- the real server ------------------------------------------------------------------------------------------------


@pytest.mark.local_llm
def test_the_real_server_stops_itself_when_idle_and_starts_again(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    import openai

    try:
        weights = local_llm.ensure_model(progress=False)  # the machine's weights, before the state folder moves
    except LocalModelError:
        pytest.skip("the local model's weights are not installed")
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))  # a server of its own: the shared one stays
    monkeypatch.setenv("CONVOEVAL_LOCAL_MODEL", str(weights))
    monkeypatch.setenv("CONVOEVAL_LOCAL_IDLE_TIMEOUT", "3")
    try:
        url = local_llm.ensure_server(progress=False)
        pid = local_llm.server_status()["pid"]
        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=300)
        reply = client.chat.completions.create(model=local_llm.local_model_name(), max_tokens=3, temperature=0,
                                               messages=[{"role": "user", "content": "Say OK."}])
        assert reply.choices[0].message.content is not None
        # The server books the request's end just after it sends the reply, and under load it may already have
        # stopped itself (3 s idle) before we ask: either way it saw the request.
        status = local_llm.server_status()
        for _ in range(20):
            if status["last_request_s_ago"] is not None or not status["running"]:
                break
            time.sleep(0.1)
            status = local_llm.server_status()
        assert status["last_request_s_ago"] is not None or not status["running"], status
        assert _wait_gone(pid, 60)
        log = Path(tmp_path / "state" / "llm" / "server.log").read_text()
        assert "no request for 3 s: stopping itself" in log
        assert local_llm.server_status()["running"] is False
        local_llm.ensure_server(progress=False)
        assert local_llm.server_status()["pid"] not in (None, pid)
    finally:
        local_llm.stop_server()
