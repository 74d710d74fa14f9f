"""A refused run leaves no results folder.

Every check that can refuse a run (scenarios, agent target, call budgets, store) runs before the results folder is
created or locked, so a newcomer never finds an empty folder with a ``.lock`` that looks like a run. Each case runs
in a throw-away project (its ``reports/`` is where the default folder would go) against loopback only: closed ports,
and small fake servers in this file (a PostgreSQL that refuses the password, one that never answers, an HTTP server
answering 401). Nothing here reaches the network or starts a model.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from compare_support import patch_get_model
from test_reliability_support import SCENARIOS, assert_no_traceback, clean_env, cli

from convoeval.llm import LLMError
from convoeval.pipeline import ConfigError, EvalConfig, run_eval
from convoeval.pipeline.notebook import RunError, run_notebook_config
from convoeval.store import StoreError

SCENARIO = "billing-scripted-pix-en"  # one scripted scenario: nothing would be simulated even if the run started


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (its evals/scenarios links the repository's) as working directory; no model reachable."""
    root = tmp_path / "project"
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "scenarios").symlink_to(SCENARIOS)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")  # never called
    monkeypatch.setenv("OPENAI_MODEL", "never-called")
    monkeypatch.delenv("CONVOEVAL_STORE_URL", raising=False)
    monkeypatch.delenv("CONVOEVAL_DASK_SCHEDULER", raising=False)
    return root


def _folders(root: Path) -> list[str]:
    """Everything a run may have left in the project's reports/ (the default) and out/ (an explicit folder)."""
    return sorted(str(p.relative_to(root)) for base in ("reports", "out") if (root / base).exists()
                  for p in (root / base).rglob("*")) + [b for b in ("reports", "out") if (root / b).exists()]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _server(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A loopback TCP server calling ``handle`` on each connection in a thread; yields its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()


def _never_answers(conn: socket.socket) -> None:
    """A black hole: the connection is accepted and then nothing is ever sent."""


def _postgres_wrong_password(conn: socket.socket) -> None:
    """Speak just enough of PostgreSQL's protocol to refuse the password, as a real server does (SQLSTATE 28P01)."""
    with contextlib.suppress(OSError):
        while True:
            length = struct.unpack("!I", conn.recv(4))[0]
            body = conn.recv(length - 4)
            if body[:4] == struct.pack("!I", 80877103):  # SSLRequest: no TLS here, go on in plain text
                conn.sendall(b"N")
                continue
            if body[:4] == struct.pack("!I", 80877104):  # GSSENCRequest: no either
                conn.sendall(b"N")
                continue
            break
        fields = b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user \"ana\"\0\0"
        conn.sendall(b"E" + struct.pack("!I", len(fields) + 4) + fields)


def _http_401(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.settimeout(5)
        while True:  # answer every request on this keep-alive connection
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            body = b'{"message":"Invalid API key","hint":"check your key"}'
            conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)


# ── Bad agent targets ──

BAD_TARGETS = ["no_such_module:respond", "json:no_such_function", "http:///", "clinic:billing?faults=nope"]


@pytest.mark.parametrize("target", BAD_TARGETS)
@pytest.mark.parametrize("output_dir", [None, "out/run"])
def test_a_bad_target_is_refused_before_any_folder_exists(project, target, output_dir):
    config = EvalConfig.checked(scenario=SCENARIO, target=target, output_dir=output_dir)
    with pytest.raises(ConfigError, match="agent target|unknown fault"):
        run_eval(config, progress="off")
    assert _folders(project) == []


@pytest.mark.parametrize("target", BAD_TARGETS[:3])
def test_a_bad_target_through_the_notebook_leaves_no_folder(project, target):
    config = EvalConfig.from_notebook({"scenario": SCENARIO, "target": target,
                                       "PAPERMILL_OUTPUT_PATH": str(project / "reports" / "x.ipynb")})
    with pytest.raises(RunError, match="agent target"):
        run_notebook_config(config, progress="off")
    assert _folders(project) == []


def test_a_bad_target_with_local_workers_is_refused_before_a_folder_or_a_cluster(project):
    config = EvalConfig.checked(scenario=SCENARIO, target="no_such_module:respond", workers=2)
    with pytest.raises(ConfigError, match="cannot import module 'no_such_module'"):
        run_eval(config, progress="off")
    assert _folders(project) == []


# ── Scenarios and budgets ──


def test_a_selection_of_no_scenario_leaves_no_folder(project):
    with pytest.raises(ConfigError, match="no scenario in"):
        run_eval(EvalConfig.checked(scenario="no-such-scenario"), progress="off")
    assert _folders(project) == []


def test_call_budgets_too_small_for_the_workers_leave_no_folder(project, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_MAX_CONCURRENCY", "1")
    with pytest.raises(ConfigError, match="fewer than the 2 workers"):
        run_eval(EvalConfig.checked(scenario=SCENARIO, workers=2), progress="off")
    assert _folders(project) == []


def test_a_store_url_with_a_remote_cluster_leaves_no_folder(project):
    config = EvalConfig.checked(scenario=SCENARIO, cluster=f"tcp://127.0.0.1:{_closed_port()}")
    with pytest.raises(ConfigError, match="set it there instead of --store"):
        run_eval(config, store_url="sqlite:///x.db", progress="off")
    assert _folders(project) == []


# ── Bad store URLs ──


def _pg(port: int, query: str = "") -> str:
    return f"postgresql://ana:s3cr3t-pw@127.0.0.1:{port}/evals{query}"


STORES: dict[str, tuple[Callable[[socket.socket], None] | None, Callable[[int], str], dict[str, str]]] = {
    # name: (fake server or None for a closed port, URL for its port, environment)
    "postgres-refused": (None, _pg, {}),
    "postgres-wrong-password": (_postgres_wrong_password, _pg, {}),
    "postgres-black-holed": (_never_answers, lambda port: _pg(port, "?connect_timeout=1"), {}),
    "postgres-bad-port": (None, lambda port: "postgresql://ana:s3cr3t-pw@127.0.0.1:port/evals", {}),
    "unknown-scheme": (None, lambda port: "mysql://ana:s3cr3t-pw@127.0.0.1/evals", {}),
    "supabase-refused": (None, lambda port: "supabase://", {"SUPABASE_URL": "http://127.0.0.1:{port}"}),
    "supabase-black-holed": (_never_answers, lambda port: "supabase://",
                             {"SUPABASE_URL": "http://127.0.0.1:{port}", "CONVOEVAL_SUPABASE_CONNECT_TIMEOUT": "1"}),
    "supabase-401": (_http_401, lambda port: "supabase://", {"SUPABASE_URL": "http://127.0.0.1:{port}"}),
    "supabase-no-project-url": (None, lambda port: "supabase://", {}),
    "sqlite-unwritable": (None, lambda port: "sqlite:////proc/convoeval-no-such-dir/store.db", {}),
}


@pytest.mark.parametrize("case", list(STORES))
def test_a_store_that_cannot_be_opened_leaves_no_folder(project, monkeypatch, case):
    handler, url_for, env = STORES[case]
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", "service-role-key-never-shown")
    monkeypatch.delenv("SUPABASE_URL", raising=False)
    with _server(handler) if handler else contextlib.nullcontext(_closed_port()) as port:
        for name, value in env.items():
            monkeypatch.setenv(name, value.format(port=port))
        with pytest.raises(StoreError) as err:
            run_eval(EvalConfig.checked(scenario=SCENARIO), store_url=url_for(port), progress="off")
    message = str(err.value)
    assert "s3cr3t-pw" not in message and "service-role-key-never-shown" not in message, message
    assert _folders(project) == []


# ── A refusal that can only come once the folder exists ──


def test_a_refusal_after_the_folder_was_made_removes_it(project, monkeypatch):
    """A local model that cannot start is known only when the run starts it: the folder it made goes again."""

    def no_model(role, spec=None):
        raise LLMError(f"the {role} model cannot start (test)")

    patch_get_model(monkeypatch, no_model)
    with pytest.raises(LLMError, match="cannot start"):
        run_eval(EvalConfig.checked(scenario=SCENARIO), progress="off")
    assert _folders(project) == []


def test_a_refusal_never_removes_a_folder_it_did_not_make(project, monkeypatch):
    out = project / "out" / "run"
    (out / "runs").mkdir(parents=True)
    saved = out / "runs" / "kept.json"
    saved.write_text("{}", encoding="utf-8")

    def no_model(role, spec=None):
        raise LLMError("no model (test)")

    patch_get_model(monkeypatch, no_model)
    with pytest.raises(LLMError):
        run_eval(EvalConfig.checked(scenario=SCENARIO, output_dir=str(out)), progress="off")
    assert saved.read_text(encoding="utf-8") == "{}"


# ── The command line, as a newcomer meets it ──


@pytest.mark.parametrize("extra", [["--target", "no_such_module:respond"],
                                   ["--store", "postgresql://ana:pw@127.0.0.1:{port}/evals"]])
def test_convoeval_run_refused_leaves_nothing_in_reports(project, tmp_path, extra):
    extra = [arg.format(port=_closed_port()) for arg in extra]
    proc = cli("run", "--scenario", SCENARIO, "--no-progress", *extra,
               env=clean_env(tmp_path, OPENAI_BASE_URL=f"http://127.0.0.1:{_closed_port()}/v1"), cwd=project,
               timeout=90)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("convoeval: error:") == 1, proc.stderr
    assert _folders(project) == []
