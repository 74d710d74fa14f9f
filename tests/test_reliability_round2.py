"""Reliability, round 2 (issue #14, items 2, 3, 5 and 7; issue #13's Supabase line).

* A Python agent's ``sys.exit()`` or other ``BaseException`` ends only its conversation; its ``KeyboardInterrupt``
  stops the run cleanly; Python agents get the webhook's deadline, and an abandoned sync thread holds nothing up.
* Judge answers that are well-formed but wrong (contradictory or surplus verdicts, a boolean score) are error rows.
* A stop marker the agent wrote and the simulated patient echoed ends nothing.
* An unreachable Supabase host fails within seconds and says so, naming the URL without its key.

Every test that could hang when its fix is missing runs under a deadline (a subprocess timeout or
``asyncio.wait_for``), so a regression fails the test instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from engine_support import CRITERIA, conversation, holistic, isolated_state, verdicts  # noqa: F401 - fixture
from test_reliability_support import (
    REPO,
    SCENARIOS,
    assert_no_traceback,
    clean_env,
    cli,
    fake_responder,
    llm_responder,
    run_args,
)

from convoeval.agents.base import AgentError, AgentSession
from convoeval.agents.python_callable import PythonCallableAgent
from convoeval.conversation import RunOptions, arun_any
from convoeval.fake_server import FakeOpenAIServer
from convoeval.fidelity import fidelity_flags
from convoeval.judges import JudgeParseError, judge_holistic, judge_rubric, judge_turn, parse_holistic_response
from convoeval.judges import parse_rubric_response
from convoeval.judges.holistic import HolisticAnswer
from convoeval.judges.rubric import rubric_schema
from convoeval.llm import schema_json
from convoeval.scenarios import parse_scenario
from convoeval.simulator import KICKOFF_MESSAGE, parse_simulator_response
from convoeval.store import TABLES, StoreError, open_store
from convoeval.testing import FakeChatModel

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

TESTS = REPO / "tests"
SUPPORT = "reliability_round2_support"


def _driver(target: str, tmp_path, *, jobs: int = 3, timeout: float = 60, **env: str) -> dict:
    """Run ``reliability_round2_support.py`` (a small ``run_batch``) in a subprocess; its JSON line."""
    environ = clean_env(tmp_path, PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]), **env)
    proc = subprocess.run([sys.executable, str(TESTS / f"{SUPPORT}.py"), f"{SUPPORT}:{target}", str(jobs),
                           f"sqlite:///{tmp_path / 'store.db'}"], env=environ, capture_output=True, text=True,
                          timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    return json.loads(lines[-1])


def _session() -> AgentSession:
    return AgentSession(run_id="run-1", clinic_id="c", patient_id="p", patient_phone="11987650021",
                        patient_name="Lucia", locale="pt-BR", agent="billing")


# ── Item 2: a Python agent's BaseException ends its conversation, not the run ──


BASE_EXCEPTIONS = {
    "exit_sync": "called sys.exit(3)",
    "exit_async": "called sys.exit(3)",
    "exit_bare_sync": "called sys.exit(None)",
    "base_error_sync": "raised AgentBaseError",
    "base_error_async": "raised AgentBaseError",
}


@pytest.mark.parametrize(("target", "reason"), list(BASE_EXCEPTIONS.items()), ids=list(BASE_EXCEPTIONS))
def test_a_python_agent_raising_a_base_exception_ends_only_its_conversation(target, reason, tmp_path):
    # Before: sys.exit() stopped convoeval's one event loop and the run waited forever (the deadline fires);
    # another BaseException ended the whole batch.
    out = _driver(target, tmp_path, jobs=3)
    errors = [r for r in out["runs"] if r["status"] == "error"]
    assert len(out["runs"]) == 3 and len(errors) == 1, out
    assert "agent error" in errors[0]["error"] and reason in errors[0]["error"], errors
    assert all(r["stop_reason"] == "GOAL_COMPLETE" for r in out["runs"] if r["status"] != "error"), out
    assert out["leftover_rows"] == 0


@pytest.mark.parametrize("target", ["interrupt_sync", "interrupt_async"])
def test_a_keyboard_interrupt_from_a_python_agent_stops_the_run_without_hanging(target, tmp_path):
    out = _driver(target, tmp_path, jobs=3, timeout=60)
    assert out.get("interrupted") is True, out
    assert out["seconds"] < 20


def test_cli_run_with_an_agent_calling_sys_exit_finishes_every_other_run(tmp_path):
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=llm_responder) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url,
                        PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
        proc = cli(*run_args(out, "--type", "conversational", "--seed", "1", "--concurrency", "3",
                             "--target", f"{SUPPORT}:exit_sync"), env=env, timeout=90)
    assert_no_traceback(proc)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    scores = json.loads((out / "report.json").read_text())["scores"]
    errors = [s for s in scores if s["status"] == "error"]
    assert len(scores) == 3 and len(errors) == 1, scores  # the three conversational billing scenarios
    assert "sys.exit(3)" in errors[0]["error"]


def test_cli_run_with_an_agent_raising_keyboard_interrupt_stops_cleanly(tmp_path):
    with FakeOpenAIServer(responder=llm_responder) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url,
                        PYTHONPATH=os.pathsep.join([str(REPO), str(TESTS)]))
        proc = cli(*run_args(tmp_path / "out", "--type", "conversational", "--seed", "1",
                             "--target", f"{SUPPORT}:interrupt_sync"), env=env, timeout=90)
    assert_no_traceback(proc)
    assert proc.returncode == 130 and "convoeval: interrupted" in proc.stderr, (proc.returncode, proc.stderr[-2000:])


def _sleep_8_sync(message, session):
    time.sleep(8)
    return "late"


async def _sleep_8_async(message, session):
    await asyncio.sleep(8)
    return "late"


@pytest.mark.parametrize(("fn", "shown"), [(_sleep_8_sync, "thread was abandoned"), (_sleep_8_async, "cancelled")],
                         ids=["sync", "async"])
async def test_a_python_agent_gets_the_webhook_deadline(fn, shown, monkeypatch):
    # Before: CONVOEVAL_AGENT_TIMEOUT was ignored for Python callables, and an 8 s sleep under a 1 s timeout passed.
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "1")
    agent = PythonCallableAgent("tests:slow", fn=fn)
    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"did not answer within 1 s") as info:
        await asyncio.wait_for(agent.respond("Oi", _session()), timeout=20)
    assert time.perf_counter() - started < 4
    assert shown in str(info.value)
    assert PythonCallableAgent("tests:slow", fn=fn, timeout=2.5).timeout == 2.5  # an explicit timeout wins


async def test_a_python_agent_raising_timeout_error_itself_is_not_reported_as_late(monkeypatch):
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "5")

    def raises(message, session):
        raise TimeoutError("the agent's own database timed out")

    with pytest.raises(AgentError, match="raised TimeoutError: the agent's own database timed out"):
        await asyncio.wait_for(PythonCallableAgent("tests:raises", fn=raises).respond("Oi", _session()), 10)


def test_a_sync_agent_past_its_deadline_holds_up_neither_the_others_nor_the_exit(tmp_path):
    # The first call sleeps 60 s. Its conversation ends at the 1 s deadline, the others finish, and the process exits
    # at once: the abandoned thread is a daemon (a pool thread would keep the interpreter waiting for it at exit).
    started = time.perf_counter()
    out = _driver("sleep_sync", tmp_path, jobs=3, timeout=40, CONVOEVAL_AGENT_TIMEOUT="1")
    assert time.perf_counter() - started < 40
    errors = [r for r in out["runs"] if r["status"] == "error"]
    assert len(errors) == 1 and "did not answer within 1 s" in errors[0]["error"], out
    assert all(r["stop_reason"] == "GOAL_COMPLETE" for r in out["runs"] if r["status"] != "error"), out
    assert out["leftover_rows"] == 0
