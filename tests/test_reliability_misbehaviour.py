"""Reliability against misbehaving user code, judges, patients and hosts.

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
    assert_no_traceback,
    clean_env,
    cli,
    fake_responder,
    llm_responder,
    run_args,
)

from convoeval.agents.base import AgentError, AgentSession
from convoeval.agents.python_callable import PythonCallableAgent
from convoeval.fidelity import fidelity_flags
from convoeval.judges import (
    JudgeParseError,
    judge_holistic,
    judge_rubric,
    judge_turn,
    parse_holistic_response,
    parse_rubric_response,
)
from convoeval.judges.holistic import HolisticAnswer
from convoeval.judges.rubric import rubric_schema
from convoeval.llm import schema_json
from convoeval.pipeline import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import parse_scenario
from convoeval.simulator import KICKOFF_MESSAGE, parse_simulator_response
from convoeval.store import TABLES, StoreError, open_store
from convoeval.testing import FakeChatModel, FakeOpenAIServer

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

TESTS = REPO / "tests"
SUPPORT = "misbehaving_agents"


def _driver(target: str, tmp_path, *, jobs: int = 3, timeout: float = 60, **env: str) -> dict:
    """Run ``misbehaving_agents.py`` (a small ``run_batch``) in a subprocess; its JSON line."""
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
    assert proc.returncode == 3, (proc.stdout[-2000:], proc.stderr[-2000:])  # finished, one conversation in error
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


def _sleep_30_sync(message, session):
    time.sleep(30)
    return "late"


async def _sleep_30_async(message, session):
    await asyncio.sleep(30)
    return "late"


@pytest.mark.parametrize(("fn", "shown"), [(_sleep_30_sync, "thread was abandoned"), (_sleep_30_async, "cancelled")],
                         ids=["sync", "async"])
async def test_a_python_agent_gets_the_webhook_deadline(fn, shown, monkeypatch):
    # Before: CONVOEVAL_AGENT_TIMEOUT was ignored for Python callables, and an 8 s sleep under a 1 s timeout passed.
    # The agent sleeps 30 s, so a bound of 10 s tells the deadline apart with room for a loaded CI machine.
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "1")
    agent = PythonCallableAgent("tests:slow", fn=fn)
    started = time.perf_counter()
    with pytest.raises(AgentError, match=r"did not answer within 1 s") as info:
        await asyncio.wait_for(agent.respond("Oi", _session()), timeout=20)
    assert time.perf_counter() - started < 10
    assert shown in str(info.value)
    assert PythonCallableAgent("tests:slow", fn=fn, timeout=2.5).timeout == 2.5  # an explicit timeout wins


async def test_a_python_agent_raising_timeout_error_itself_is_not_reported_as_late(monkeypatch):
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", "5")

    def raises(message, session):
        raise TimeoutError("the agent's own database timed out")

    with pytest.raises(AgentError, match="raised TimeoutError: the agent's own database timed out"):
        await asyncio.wait_for(PythonCallableAgent("tests:raises", fn=raises).respond("Oi", _session()), 10)


def test_a_sync_agent_past_its_deadline_holds_up_neither_the_others_nor_the_exit(tmp_path):
    # The first call sleeps 60 s. Its conversation ends at the 3 s deadline, the others finish, and the process exits
    # at once: the abandoned thread is a daemon (a pool thread would keep the interpreter waiting for it at exit).
    # 3 s, not 1: the other conversations' answers must beat it on a loaded CI machine.
    started = time.perf_counter()
    out = _driver("sleep_sync", tmp_path, jobs=3, timeout=40, CONVOEVAL_AGENT_TIMEOUT="3")
    assert time.perf_counter() - started < 40
    errors = [r for r in out["runs"] if r["status"] == "error"]
    assert len(errors) == 1 and "did not answer within 3 s" in errors[0]["error"], out
    assert all(r["stop_reason"] == "GOAL_COMPLETE" for r in out["runs"] if r["status"] != "error"), out
    assert out["leftover_rows"] == 0


# ── Item 3: well-formed but wrong judge answers are error rows ──

_VERDICT = {"evidence": "Turn 1: seen", "reasoning": "r"}


def _four_true() -> dict:
    return verdicts(True, True, True, True)


WRONG_RUBRIC = {
    # name: (the structured answer, both attempts, for a 3-criterion rubric; what the error must say)
    "contradictory": ({"verdicts": [{"index": 1, **_VERDICT, "passed": True},
                                    {"index": 2, **_VERDICT, "passed": True},
                                    {"index": 2, **_VERDICT, "passed": False},
                                    {"index": 3, **_VERDICT, "passed": True}]},
                      "conflicting verdicts for criterion 2"),
    "criterion_9": ({**verdicts(True, True, True), "criterion_9": {**_VERDICT, "passed": False}},
                    "a verdict for criterion 9, but the rubric has 3 criteria"),
    "extra_unnumbered": ({"verdicts": [{**_VERDICT, "passed": True}] * 3 + [{**_VERDICT, "passed": False}]},
                         "a verdict for criterion 4, but the rubric has 3 criteria"),
    "extra_key": ({**verdicts(True, True, True), "overall": {**_VERDICT, "passed": False}},
                  "unexpected key 'overall'"),
    "mixed_numbering": ({"verdicts": [{"index": 1, **_VERDICT, "passed": True}, {**_VERDICT, "passed": True},
                                      {"index": 3, **_VERDICT, "passed": True}]},
                        "some verdicts are numbered and some are not"),
    "not_an_object": ({"verdicts": [{**_VERDICT, "passed": True}] * 3 + ["criterion 4 failed"]},
                      "every verdict must be a JSON object"),
}


@pytest.mark.parametrize("case", list(WRONG_RUBRIC))
def test_a_wrong_structured_rubric_answer_is_an_error_row_with_its_reason(case, isolated_state):
    # Before: the first of two contradictory verdicts won, and surplus verdicts were dropped: the run passed.
    answer, reason = WRONG_RUBRIC[case]
    model = FakeChatModel(replies=[answer, answer])  # the LLM layer retries once with the reason, then gives up
    df = judge_rubric(conversation(), rubric=CRITERIA, model=model)
    assert len(df) == 3 and df["passed"].isna().all(), df[["passed", "error"]]
    assert df["error"].str.contains(reason, regex=False).all(), df["error"].iloc[0]
    assert len(model.calls) == 2 and reason in model.calls[1].last  # the retry told the judge what was wrong


def test_a_wrong_rubric_answer_corrected_on_the_retry_is_used(isolated_state):
    wrong, reason = WRONG_RUBRIC["contradictory"]
    model = FakeChatModel(replies=[wrong, verdicts(True, False, True)])
    df = judge_rubric(conversation(), rubric=CRITERIA, model=model)
    assert df["passed"].tolist() == [True, False, True] and df["error"].isna().all()
    assert reason in model.calls[1].last


def test_repeated_agreeing_verdicts_are_still_accepted(isolated_state):
    answer = {"verdicts": [{"index": i, **_VERDICT, "passed": True} for i in (1, 2, 2, 3)]}
    df = judge_rubric(conversation(), rubric=CRITERIA, model=FakeChatModel(replies=[answer]))
    assert df["passed"].tolist() == [True, True, True] and df["error"].isna().all()


@pytest.mark.parametrize("text", [
    json.dumps([{"index": i, "passed": True} for i in (1, 2, 3, 9)]),
    json.dumps([{"passed": True}] * 4),
    json.dumps({"criterion_1": {"passed": True}, "criterion_2": {"passed": True}, "criterion_3": {"passed": True},
                "criterion_9": {"passed": False}}),
], ids=["numbered_9", "extra_unnumbered", "keyed_criterion_9"])
def test_the_text_parser_refuses_verdicts_for_criteria_that_do_not_exist(text):
    with pytest.raises(JudgeParseError, match="but there are 3 criteria"):
        parse_rubric_response(text, ["a", "b", "c"])


def test_a_boolean_holistic_score_is_an_error_row_not_one_point(isolated_state):
    # Before: pydantic read true as 1.0 and false as 0.0.
    answer = holistic(safety=True)
    model = FakeChatModel(replies=[answer, answer])
    df = judge_holistic(conversation(), goals="Pay the invoice", model=model)
    assert len(df) == 1 and math.isnan(df["overall"].iloc[0]) and math.isnan(df["safety"].iloc[0])
    assert "not the boolean true" in df["error"].iloc[0]
    with pytest.raises(JudgeParseError, match="not the boolean false"):
        parse_holistic_response(json.dumps(holistic(tone=False)))


def test_a_boolean_turn_score_is_an_error_row(isolated_state):
    scores = {"correctness": 8, "helpfulness": True, "tone": 9, "safety": 10, "conciseness": 7}
    answer = {"issues": [], "scores": scores, "suggestion": ""}
    history = [{"role": "patient", "text": "Oi"}, {"role": "agent", "text": "Olá!"}]
    rows = judge_turn(history, agent_type="billing", scenario="s", run_id="r", seed=1,
                      model=FakeChatModel(replies=[answer, answer]))
    assert len(rows) == 1 and "not the boolean true" in rows[0]["error"]
    assert rows[0]["helpfulness"] is None or math.isnan(rows[0]["helpfulness"])


def test_the_checks_leave_the_schemas_sent_to_the_judge_unchanged():
    # The response cache keys on the schema's JSON: a changed schema would miss every recorded judge reply.
    score = json.loads(schema_json(HolisticAnswer))["$defs"]["HolisticScores"]["properties"]["safety"]
    assert score == {"maximum": 10, "minimum": 0, "title": "Safety", "type": "number"}
    assert "additionalProperties" not in json.loads(schema_json(rubric_schema(4)))


# ── Item 5: a stop marker the agent wrote and the patient echoed ends nothing ──

ECHOED_LINE = "Pagamento confirmado com sucesso, obrigado por escolher a nossa clínica! [GOAL_COMPLETE]"


def test_an_echoed_marker_is_not_a_stop_signal_but_the_patients_own_is():
    echo = parse_simulator_response(ECHOED_LINE, agent_said=[ECHOED_LINE])
    assert echo.signal is None and echo.echoed == ("GOAL_COMPLETE",)
    assert echo.message == ECHOED_LINE.replace(" [GOAL_COMPLETE]", "")
    # The patient answering in words of its own keeps its signal, even when the agent wrote the marker too.
    own = parse_simulator_response("Obrigada, já paguei aqui! [GOAL_COMPLETE]", agent_said=[ECHOED_LINE])
    assert own.signal == "GOAL_COMPLETE" and own.echoed == ()
    # A marker the agent did not write is the patient's, however much it repeats.
    plain = ECHOED_LINE.replace(" [GOAL_COMPLETE]", "")
    repeated = parse_simulator_response(f"{plain} [GOAL_COMPLETE]", agent_said=[plain])
    assert repeated.signal == "GOAL_COMPLETE"
    # An echo of the agent's [GOAL_COMPLETE] with the patient's own [STUCK]: only the echo is dropped.
    both = parse_simulator_response(f"{ECHOED_LINE} [STUCK]", agent_said=[ECHOED_LINE])
    assert both.signal == "STUCK" and both.echoed == ("GOAL_COMPLETE",)


def _echoing_simulator(messages, kwargs):
    """A small model that parrots: the judges answer as usual, the patient repeats the agent's last line."""
    if kwargs.get("tools") or kwargs.get("response_format"):
        return fake_responder(messages, kwargs)
    last = str(messages[-1].content)
    return "Oi, quero pagar minha fatura pendente" if last == KICKOFF_MESSAGE else last


def _announcer(message, session):
    return ECHOED_LINE


async def test_an_agent_cannot_end_the_conversation_through_an_echoing_patient(tmp_path):
    # Before: the patient's echo of turn 1's reply carried [GOAL_COMPLETE]: stop after 2 turns, goal_completed=True.
    scenario = parse_scenario({
        "type": "conversational", "id": "reliability-echo", "agent": "billing", "locale": "pt-BR",
        "description": "the agent claims the goal; the simulated patient parrots it",
        "persona": {"name": "Lucia Ferreira", "phone": "11987650022"}, "goal": "pay the pending invoice",
        "max_turns": 4, "rubric": ["The agent answered every message"],
    })
    target = "tests:announcer"
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        options = RunOptions(target=target, agents={target: PythonCallableAgent(target, fn=_announcer)},
                             simulator_model=FakeChatModel(responder=_echoing_simulator),
                             judge_model=FakeChatModel(responder=fake_responder), store=store,
                             gate=None)  # the echoed marker alone: the gate would stop this parrot at turn 3
        result = await asyncio.wait_for(arun_any(Job(scenario, 1), options), timeout=60)
        leftover = sum(len(store.select(t)) for t in TABLES)
    run = result.run.iloc[0]
    assert run["status"] == "completed" and run["stop_reason"] == "max_turns", run.to_dict()
    assert not run["goal_completed"]
    patient = result.transcript[result.transcript["role"] == "patient"]
    assert len(patient) == 4 and patient["signal"].isna().all()
    assert not patient["text"].str.contains("GOAL_COMPLETE", regex=False).any()
    assert patient["text"].iloc[1] == ECHOED_LINE.replace(" [GOAL_COMPLETE]", "")  # the echo is recorded
    flags = fidelity_flags(result.frames(), scenarios=[scenario], checks=["parroting"])
    assert flags["flagged"].tolist() == [True] and flags["turn"].tolist() == [2], flags.to_dict("records")
    assert leftover == 0


# ── Item 7: an unreachable Supabase host fails fast and says so ──

SUPABASE_KEY = "sb_secret_" + "Round2Key789"
_OPEN = """
import json, time
import convoeval.store.supabase  # imported first: the supabase client takes seconds to import
from convoeval.store import StoreError, open_store
started = time.perf_counter()
try:
    open_store("supabase://").close()
    out = {"opened": True}
except StoreError as exc:
    out = {"error": str(exc)}
out["seconds"] = time.perf_counter() - started
print(json.dumps(out))
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        server.close()


def _open_supabase(tmp_path, port: int, **env: str) -> dict:
    environ = clean_env(tmp_path, SUPABASE_URL=f"http://127.0.0.1:{port}", SUPABASE_SERVICE_ROLE_KEY=SUPABASE_KEY,
                        **env)
    proc = subprocess.run([sys.executable, "-c", _OPEN], env=environ, capture_output=True, text=True, timeout=45)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert SUPABASE_KEY not in proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("server", ["refused", "silent"])
def test_an_unreachable_supabase_host_fails_fast_and_says_so(server, tmp_path):
    # Before: 94-97 s (refused) or 394 s (silent: 13 table checks of 30 s), then "the reference schema is missing".
    if server == "refused":
        port = _closed_port()
        out = _open_supabase(tmp_path, port)  # the default 5 s connect timeout
        limit = 15.0  # a refusal is immediate; the rest is room for a loaded CI machine (was 94 s)
    else:
        with _silent_server() as port:
            out = _open_supabase(tmp_path, port, CONVOEVAL_SUPABASE_CONNECT_TIMEOUT="1")
        # One 1 s check plus a loaded machine's client start-up (its TLS context alone took 0.8 s there); the 13
        # table checks of 1 s each that the fix removed would take 13 s.
        limit = 10.0
    error = out.get("error", "")
    assert f"the Supabase host http://127.0.0.1:{port} could not be reached" in error, out
    assert "missing or incomplete" not in error and SUPABASE_KEY not in error
    assert "CONVOEVAL_SUPABASE_CONNECT_TIMEOUT" in error
    assert out["seconds"] < limit, out


def test_cli_with_an_unreachable_supabase_host_is_one_error_line_naming_it(tmp_path):
    port = _closed_port()
    env = clean_env(tmp_path, SUPABASE_URL=f"http://127.0.0.1:{port}", SUPABASE_SERVICE_ROLE_KEY=SUPABASE_KEY)
    proc = cli("cleanup", "--store", "supabase://", env=env, timeout=45)
    assert_no_traceback(proc)
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert f"http://127.0.0.1:{port} could not be reached" in errors[0]
    assert SUPABASE_KEY not in proc.stdout + proc.stderr


def test_a_bad_supabase_connect_timeout_is_a_store_error(monkeypatch):
    from convoeval.store.supabase import connect_timeout

    monkeypatch.delenv("CONVOEVAL_SUPABASE_CONNECT_TIMEOUT", raising=False)
    assert connect_timeout() == 5.0
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("CONVOEVAL_SUPABASE_CONNECT_TIMEOUT", bad)
        with pytest.raises(StoreError, match="must be a positive number of seconds"):
            connect_timeout()


def test_a_host_that_stops_answering_midway_is_unreachable_not_a_missing_schema(monkeypatch):
    import httpx
    import respx

    monkeypatch.setenv("SUPABASE_URL", "https://proj.supabase.co")
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", SUPABASE_KEY)
    monkeypatch.setattr("postgrest._sync.request_builder.time.sleep", lambda _s: None)  # postgrest's back-off
    with respx.mock(base_url="https://proj.supabase.co/rest/v1", assert_all_called=False) as api:
        probe = api.get(params={"select": "id", "limit": "0"}).mock(return_value=httpx.Response(200, json=[]))
        checks = api.get().mock(side_effect=httpx.ReadTimeout("timed out"))
        with pytest.raises(StoreError) as info:
            open_store("supabase://")
    message = str(info.value)
    assert "could not be reached while checking table" in message and "missing or incomplete" not in message
    assert probe.call_count == 1 and 1 <= checks.call_count <= 4  # one table's check (and its retries), not 13
