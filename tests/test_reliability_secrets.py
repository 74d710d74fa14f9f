"""Secrets never leak: a ``convoeval run`` made with fake secrets leaves none of them in any artifact.

Fake values, each carrying one random marker, are set the way a user sets real ones: ``OPENAI_API_KEY`` (sent to
the fake LLM server), ``SUPABASE_SERVICE_ROLE_KEY``, ``CONVOEVAL_AGENT_AUTH_HEADER`` (sent to the webhook agent),
a Postgres password in the store URL. Then every byte the run left behind is searched for the marker: the output
folder recursively (JSON, CSV, the decoded Parquet cells), the response cache, the state folder (SQLite store), and
everything printed (stdout, stderr, DEBUG logging of every library). The runs include failures whose error bodies
echo the credentials back (an agent's 500 page, an LLM's 401), since error messages are where secrets slip out.

Executed notebooks (papermill records parameters) are covered by the notebook tests: secrets are never parameters.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from store_support import PG_URL, require_postgres
from test_reliability_support import (
    FaultyAgent,
    assert_no_traceback,
    clean_env,
    llm_responder,
    run_args,
)

from convoeval.testing import FakeOpenAIServer

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

#: The CLI with every library's logging on at DEBUG, so a secret in any log record would be printed.
CLI_WITH_DEBUG_LOGS = ("import logging, sys; logging.basicConfig(level=logging.DEBUG); "
                       "from convoeval.cli import main; sys.exit(main(sys.argv[1:]))")


class Secrets:
    """Fake credentials sharing one random marker: finding the marker anywhere means a secret leaked."""

    def __init__(self) -> None:
        self.marker = uuid.uuid4().hex
        self.openai_key = f"sk-test-SECRET{self.marker}"
        self.service_role_key = f"eyJhbGciOiJIUzI1NiJ9.SECRET{self.marker}.c2lnbmF0dXJl"
        self.agent_token = f"SECRET-agent-{self.marker}"

    def env(self) -> dict[str, str]:
        return {
            "OPENAI_API_KEY": self.openai_key,
            "SUPABASE_URL": "http://127.0.0.1:9",
            "SUPABASE_SERVICE_ROLE_KEY": self.service_role_key,
            "CONVOEVAL_AGENT_AUTH_HEADER": f"Authorization: Bearer {self.agent_token}",
        }


def run_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLI_WITH_DEBUG_LOGS, *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def leaks(marker: str, *folders: Path, printed: str = "") -> list[str]:
    """Where ``marker`` appears: files (raw bytes, and Parquet cells decoded), and the printed output."""
    found = []
    if marker in printed:
        found.append("stdout/stderr: " + next(line for line in printed.splitlines() if marker in line)[:200])
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if marker.encode() in path.read_bytes():
                found.append(str(path))
            elif path.suffix == ".parquet":  # compressed: look at the values, not the bytes
                if marker in pd.read_parquet(path).to_csv(index=False):
                    found.append(f"{path} (decoded)")
    return found


class EchoAuth401:
    """An OpenAI-compatible endpoint that refuses every call with a 401 quoting the key it got (a careless proxy)."""

    def __enter__(self) -> EchoAuth401:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}. You can find your "
                                             f"API key at https://example.invalid/keys?key={key}",
                                             "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"


def test_no_secret_reaches_any_artifact_of_a_run(tmp_path):
    secrets = Secrets()
    cache = tmp_path / "cache" / "cache.sqlite"
    state = tmp_path / "state"
    outs = [tmp_path / "out-healthy", tmp_path / "out-401"]
    printed = ""
    # 1. A working run: the LLM gets the key, the webhook agent the auth header; one agent reply is a 500 page
    #    quoting the header back.
    with FakeOpenAIServer(responder=llm_responder) as llm, \
            FaultyAgent([{2: ["500"]}, {}, {1: ["401"]}], echo_auth=True) as agent:
        env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_CACHE="rw",
                        CONVOEVAL_CACHE_PATH=str(cache), **secrets.env())
        proc = run_cli(run_args(outs[0], "--seed", "1,2,3", "--target", agent.url, "--verbose", "--allow-errors"), env)
        printed += proc.stdout + proc.stderr
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr[-2000:]  # the agent's 500 and 401 are errors of two conversations
        assert agent.auth_seen == {f"Bearer {secrets.agent_token}"}  # the secret was really in play
        report = json.loads((outs[0] / "report.json").read_text())
        errors = [s["error"] for s in report["scores"] if s["status"] == "error"]
        assert any("answered HTTP 500" in e and "***" in e for e in errors), errors  # the echo, redacted
    # 2. Every LLM call refused by an endpoint that quotes the key in its error.
    with EchoAuth401() as llm:
        env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, CONVOEVAL_CACHE="rw",
                        CONVOEVAL_CACHE_PATH=str(cache), **secrets.env())
        proc = run_cli(run_args(outs[1], "--type", "conversational", "--fail-threshold", "5"), env)
        printed += proc.stdout + proc.stderr
        assert_no_traceback(proc)
        assert proc.returncode == 3  # every conversation in error (the 401 LLM)
        report = json.loads((outs[1] / "report.json").read_text())
        assert report["scores"] and all("401" in s["error"] for s in report["scores"]), report["scores"]
    assert cache.exists()
    assert leaks(secrets.marker, *outs, cache.parent, state, printed=printed) == []


@pytest.fixture
def postgres_role():
    """A throw-away Postgres login with a secret password (dropped afterwards), member of the test role."""
    require_postgres()
    import psycopg
    from sqlalchemy.engine import make_url

    admin = make_url(PG_URL)
    name, password = f"convoeval_secret_{uuid.uuid4().hex[:12]}", f"pw-SECRET-{uuid.uuid4().hex}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{name}" LOGIN PASSWORD \'{password}\' IN ROLE "{admin.username}"')
    try:
        yield admin.set(username=name, password=password).render_as_string(hide_password=False), password
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f'DROP ROLE IF EXISTS "{name}"')


def _run_against_store(tmp_path: Path, store_args: list[str], extra_env: dict[str, str]) -> Path:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=llm_responder) as llm:
        env = clean_env(tmp_path, OPENAI_BASE_URL=llm.base_url, **extra_env)
        proc = run_cli(run_args(out, "--scenario", "billing-conv-happy-payment", *store_args, "--verbose"), env)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (tmp_path / "printed.txt").write_text(proc.stdout + proc.stderr)
    return out


@pytest.mark.postgres
def test_a_store_password_from_the_environment_reaches_no_artifact(postgres_role, tmp_path):
    url, password = postgres_role
    out = _run_against_store(tmp_path, [], {"CONVOEVAL_STORE_URL": url})
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["store"].startswith("postgresql") and "***" in report["meta"]["store"]
    assert leaks(password, tmp_path) == []


@pytest.mark.postgres
def test_a_store_password_given_with_store_reaches_no_artifact(postgres_role, tmp_path):
    url, password = postgres_role
    _run_against_store(tmp_path, ["--store", url], {})
    assert leaks(password, tmp_path) == []


def test_a_password_in_the_llm_base_url_reaches_no_artifact(tmp_path):
    password = f"pw-SECRET-{uuid.uuid4().hex}"
    cache = tmp_path / "cache" / "cache.sqlite"
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=llm_responder) as llm:
        base_url = llm.base_url.replace("http://", f"http://proxyuser:{password}@")
        env = clean_env(tmp_path, OPENAI_BASE_URL=base_url, CONVOEVAL_CACHE="rw", CONVOEVAL_CACHE_PATH=str(cache))
        proc = run_cli(run_args(out, "--scenario", "billing-conv-happy-payment"), env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert leaks(password, tmp_path, printed=proc.stdout + proc.stderr) == []


def test_a_webhook_token_reaches_no_frame(tmp_path):
    """A webhook target carrying a password and a query token: every frame records it without them."""
    import asyncio

    from convoeval.pipeline import plan
    from convoeval.pipeline.batch import arun_batch
    from convoeval.pipeline.conversation import RunOptions
    from convoeval.scenarios import load_scenarios
    from convoeval.store import open_store
    from convoeval.testing import FakeChatModel

    token = f"tok-SECRET-{uuid.uuid4().hex}"
    scenarios = load_scenarios(Path(__file__).resolve().parents[1] / "evals" / "scenarios",
                               scenario="billing-scripted-pix-en")
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        target = f"http://bot:{token}@127.0.0.1:9/hook?key={token}"  # nobody listens: every run ends in error
        options = RunOptions(target=target, simulator_model=FakeChatModel(), judge_model=FakeChatModel(),
                             store=store)
        batch = asyncio.run(arun_batch(plan(scenarios), options=options, out_dir=tmp_path / "out", progress=False))
    finally:
        store.close()
    frames = batch.frames()
    assert (frames.runs["status"] == "error").all()
    assert frames.runs["target"].tolist() == ["http://127.0.0.1:9/hook?…"]
    assert leaks(token, tmp_path / "out") == []
