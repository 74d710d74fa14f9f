"""Helpers shared by the reliability tests (``tests/test_reliability_*.py``); this module holds no tests itself.

* ``llm_responder`` / ``fake_responder``: a well-behaved simulator and judges for ``FakeOpenAIServer`` (HTTP) and
  ``FakeChatModel`` (in process): the patient pays an invoice in three messages then says ``[GOAL_COMPLETE]``; the
  rubric judge answers every criterion it was given; the holistic and turn judges give 9s.
* ``FaultyAgent``: an HTTP webhook agent (the documented protocol) on 127.0.0.1 that misbehaves on cue, per run
  (a plan of faults per turn) or always, and records what it served to whom.
* ``cli`` / ``clean_env``: run ``convoeval`` in a subprocess with a clean, test-only environment and a deadline.
* ``record_figures``: print the numbers a test measured, and append them to ``$CONVOEVAL_RELIABILITY_FIGURES``
  (docs/reliability.md quotes the last run's figures).

Everything listens on, and talks only to, 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "evals" / "scenarios"
FIGURES_ENV = "CONVOEVAL_RELIABILITY_FIGURES"
TRACEBACK = "Traceback (most recent call last)"

PATIENT_LINES = ("Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]")
HOLISTIC_DIMENSIONS = ("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion")
_CRITERIA_COUNT = re.compile(r"Criteria \((\d+)\)")


# ── A well-behaved simulator and judges ──


def answer(tool: str | None, text: str, patient_turns: int) -> str | dict[str, Any]:
    """The reply of a cooperative model to one request.

    Args:
        tool: the structured-output tool the request forces (``RubricAnswer``, ``HolisticAnswer``, ``TurnAnswer``),
            or ``None`` for the simulator's plain-text call.
        text: every message of the request, joined (the rubric prompt says how many criteria it holds).
        patient_turns: messages the patient (the simulator's ``assistant``) has already written.
    """
    if tool == "RubricAnswer":
        count = int(_CRITERIA_COUNT.search(text).group(1))  # type: ignore[union-attr]
        return {"verdicts": [{"index": i, "evidence": f"Turn {i}: seen", "reasoning": "met", "passed": True}
                             for i in range(1, count + 1)]}
    if tool == "HolisticAnswer":
        return {"issues": [], "scores": dict.fromkeys(HOLISTIC_DIMENSIONS, 9), "suggestion": "Keep it up"}
    if tool == "TurnAnswer":
        return {"issues": [], "scores": dict.fromkeys(HOLISTIC_DIMENSIONS[:5], 9), "suggestion": "Keep it up"}
    if tool is not None:
        raise AssertionError(f"unexpected structured-output tool {tool!r}")
    return PATIENT_LINES[min(patient_turns, len(PATIENT_LINES) - 1)]


def forced_tool(tools: Sequence[Any] | None, choice: Any) -> str | None:
    """The tool name a request forces (OpenAI request shape)."""
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or choice.get("name")
    if tools:
        first = tools[0]
        return (first.get("function") or {}).get("name") if isinstance(first, dict) else None
    return None


def llm_responder(request: dict[str, Any]) -> str | dict[str, Any]:
    """``FakeOpenAIServer`` responder: a cooperative simulator and judges (see ``answer``)."""
    messages = request.get("messages") or []
    text = "\n".join(str(m.get("content") or "") for m in messages)
    patient_turns = sum(1 for m in messages if m.get("role") == "assistant")
    return answer(forced_tool(request.get("tools"), request.get("tool_choice")), text, patient_turns)


def fake_responder(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> str | dict[str, Any]:
    """``FakeChatModel`` responder: the same cooperative simulator and judges, in process."""
    text = "\n".join(str(m.content) for m in messages)
    patient_turns = sum(1 for m in messages if m.type == "ai")
    return answer(forced_tool(kwargs.get("tools"), kwargs.get("tool_choice")), text, patient_turns)


# ── A webhook agent that misbehaves on cue ──

#: Faults the agent can serve. ``RETRYABLE`` ones are resent by the webhook adapter (the agent did not act).
AGENT_FAULTS = ("429", "503", "500", "401", "timeout", "drop", "malformed", "truncated", "missing_fields",
                "wrong_types", "huge", "huge_chunked", "empty", "not_utf8", "html", "drip")
RETRYABLE = frozenset({"429", "503"})
HUGE_BYTES = 10 * 1024 * 1024


class FaultyAgent:
    """A webhook agent following ``docs/agents-protocol.md`` that misbehaves on cue.

    Args:
        plans: One plan per new conversation, handed out in the order conversations first call: a mapping
            ``{turn: [fault, ...]}`` — the requests for that turn (1-based; a retried request is the same turn)
            get those faults in order, then a normal reply. Conversations beyond the plans get no faults.
        always: A fault served to every request (a permanently broken agent).
        retry_after: ``Retry-After`` seconds sent with a 429.
        hang_s: How long ``timeout`` and ``drip`` keep a request open (longer than the adapter's deadline).
        echo_auth: Put the ``Authorization`` header it received into its 5xx error bodies (a careless server).

    Attributes:
        served: ``(run_id, turn, outcome)`` for every request, ``outcome`` being a fault kind or ``"ok"``.
        plan_of: The plan each run got.
        auth_seen: Every ``Authorization`` header value received.
        replies: ``run_id -> [reply text, ...]`` of the normal replies.
    """

    def __init__(self, plans: Iterable[Mapping[int, Sequence[str]]] = (), *, always: str | None = None,
                 retry_after: float = 0.05, hang_s: float = 10.0, echo_auth: bool = False) -> None:
        for kind in [always] if always else []:
            assert kind in AGENT_FAULTS, kind
        self._plans = deque(dict(p) for p in plans)
        self.always = always
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.echo_auth = echo_auth
        self.served: list[tuple[str, int, str]] = []
        self.plan_of: dict[str, dict[int, list[str]]] = {}
        self.auth_seen: set[str] = set()
        self.replies: dict[str, list[str]] = defaultdict(list)
        self._turn: dict[str, int] = defaultdict(lambda: 1)
        self._pending: dict[tuple[str, int], deque[str]] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: _AgentServer | None = None

    def __enter__(self) -> FaultyAgent:
        handler = type("Handler", (_AgentHandler,), {"agent": self})
        self._httpd = _AgentServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/convoeval"

    def next_outcome(self, run_id: str) -> tuple[int, str]:
        """Which turn this request is for and what to serve (a fault kind or ``"ok"``)."""
        with self._lock:
            if run_id not in self.plan_of:
                self.plan_of[run_id] = {t: list(f) for t, f in (self._plans.popleft() if self._plans else {}).items()}
                for turn, faults in self.plan_of[run_id].items():
                    self._pending[(run_id, turn)] = deque(faults)
            turn = self._turn[run_id]
            pending = self._pending.get((run_id, turn))
            outcome = self.always or (pending.popleft() if pending else "ok")
            if outcome == "ok":
                self._turn[run_id] += 1
            self.served.append((run_id, turn, outcome))
            return turn, outcome

    def faults_served(self) -> int:
        return sum(1 for *_, outcome in self.served if outcome != "ok")


class _AgentServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops connection attempts when a sweep opens a dozen at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up on a fault is expected here, not an error of the test


class _AgentHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    agent: FaultyAgent

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization")
        if auth:
            with self.agent._lock:
                self.agent.auth_seen.add(auth)
        payload = json.loads(body)
        run_id = payload["session"]["run_id"]
        turn, outcome = self.agent.next_outcome(run_id)
        try:
            self._serve(outcome, run_id, turn, payload["message"], auth)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the adapter gave up on an oversized or slow body, as it should

    def _serve(self, outcome: str, run_id: str, turn: int, message: str, auth: str | None) -> None:
        agent = self.agent
        if outcome == "ok":
            text = f"[{run_id}] turn {turn}: you said {message!r}"
            with agent._lock:
                agent.replies[run_id].append(text)
            reply = {"bubbles": [text], "tool_calls": [{"name": "echo", "arguments": {"turn": turn}}],
                     "conversation_id": f"conv-{run_id}"}
            self._send(200, json.dumps(reply).encode())
        elif outcome in ("429", "503", "500", "401"):
            detail = f" (request had Authorization: {auth})" if agent.echo_auth and auth else ""
            headers = {"Retry-After": f"{agent.retry_after:g}"} if outcome == "429" else {}
            self._send(int(outcome), f'{{"error": "fault {outcome}{detail}"}}'.encode(), headers)
        elif outcome in ("timeout", "drip"):
            if outcome == "drip":  # a body that never ends: one byte at a time, well inside any per-read timeout
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.write(b'{"bubbles": ["')
                while not agent._closing.wait(0.05):
                    self.wfile.write(b"a")
                    self.wfile.flush()
            agent._closing.wait(agent.hang_s)
            self.close_connection = True
        elif outcome == "drop":
            self.close_connection = True
            self.connection.close()
        elif outcome == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "500")
            self.end_headers()
            self.wfile.write(b'{"bubbles": ["cut sh')
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()
        elif outcome == "huge":
            self._huge(chunked=False)
        elif outcome == "huge_chunked":
            self._huge(chunked=True)
        else:
            bodies = {
                "malformed": b'{"bubbles": ["unterminated',
                "missing_fields": b'{"reply": "hello", "tools": []}',
                "wrong_types": b'{"bubbles": "hello", "tool_calls": {"name": 1}}',
                "empty": b"",
                "not_utf8": '{"bubbles": ["Olá"]}'.encode("utf-16"),
                "html": b"<html><body>502 Bad Gateway</body></html>",
            }
            self._send(200, bodies[outcome])

    def _huge(self, *, chunked: bool) -> None:
        """A 10 MB reply: declared up front, or chunked so only counting the bytes read can stop it."""
        chunk = b'{"bubbles": ["' + b"x" * (64 * 1024 - 14)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        sent = 0
        while sent < HUGE_BYTES:
            piece = chunk if sent == 0 else b"x" * len(chunk)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


# ── Running the CLI ──


def clean_env(tmp_path: Path, **overrides: str | None) -> dict[str, str]:
    """A subprocess environment without the caller's keys, endpoints or state; ``None`` removes a variable."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "CONVOEVAL_", "SUPABASE_")) or k == "CONVOEVAL_TEST_POSTGRES_URL"}
    env.update({
        "CONVOEVAL_HOME": str(tmp_path / "state"),
        "CONVOEVAL_CACHE": "off",
        "CONVOEVAL_LLM_ATTEMPTS": "4",
        # Deadlines a healthy local answer cannot miss on a loaded 2-core CI machine (1 s and 2 s did: a fake agent's
        # HTTP 500 arrived "did not answer within 2 s"). A test of a hang sets its own, shorter deadline.
        "CONVOEVAL_LLM_TIMEOUT": "15",
        "CONVOEVAL_AGENT_TIMEOUT": "15",
        "OPENAI_MODEL": "fake-model",
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    })
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def cli(*args: str, env: Mapping[str, str], timeout: float = 120, cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``convoeval <args>`` in a subprocess, killed after ``timeout`` seconds."""
    return subprocess.run([sys.executable, "-m", "convoeval.cli", *args], env=dict(env), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def run_args(out: Path, *extra: str, agent: str = "billing") -> list[str]:
    """The arguments of a quiet ``convoeval run`` over the repository's scenarios into ``out``."""
    return ["run", "--agent", agent, "--scenarios-dir", str(SCENARIOS), "--out", str(out), "--no-progress", *extra]


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert TRACEBACK not in proc.stderr and TRACEBACK not in proc.stdout, proc.stderr[-3000:]


def run_files(out: Path) -> list[Path]:
    """Finished runs on disk (``runs/<key>.json``; hidden temporary files do not count)."""
    return sorted((out / "runs").glob("*.json"))


def read_runs(out: Path) -> dict[str, dict[str, Any]]:
    """``key -> payload`` of every finished run on disk."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in run_files(out)}


def record_figures(name: str, **figures: Any) -> None:
    """Print a test's measured figures and append them to ``$CONVOEVAL_RELIABILITY_FIGURES`` when it is set."""
    line = json.dumps({"test": name, **figures}, sort_keys=True, default=str)
    print(f"reliability figures: {line}")
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
