"""Run one scenario against an agent: ``run_conversation`` (conversational), ``run_scripted``, and ``run_any``.

A run seeds the scenario's fixtures under a fresh ``run_id``, talks to the agent, checks the database
assertions, cleans up its rows in a ``finally`` and then judges the transcript (the judges need no database).
Whatever fails — the agent, an LLM call after its retries, a judge's parse — ends that run with status ``error``
and the reason; it never raises out of ``run_any`` and never turns into a pass or a default score.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from convoeval._aio import run_sync
from convoeval.agents import get_agent, safe_target
from convoeval.agents.base import Agent, AgentError, AgentReply, AgentSession
from convoeval.frames import (
    ASSERTION_SCHEMA,
    HOLISTIC_SCHEMA,
    RUBRIC_SCHEMA,
    RUN_SCHEMA,
    TRANSCRIPT_SCHEMA,
    TURN_SCHEMA,
    empty_frame,
    typed_frame,
)
from convoeval.judges.scoring import score_frame, score_scripted
from convoeval.llm import LLMError, model_info
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario
from convoeval.store import Store, open_store
from convoeval.store.assertions import AssertionResult, check_assertions
from convoeval.store.base import StoreError
from convoeval.store.conversations import ensure_conversation, record_message
from convoeval.store.fixtures import (
    SeededRun,
    cleanup_run,
    finish_run,
    new_run_id,
    seed_run,
)

#: Called with one line per event when a run is verbose (the seed's ``--verbose`` lines).
Log = Callable[[str], None]


_EMPTY: dict[int, tuple[Mapping[str, str], pd.DataFrame]] = {}


def _empty(schema: Mapping[str, str]) -> pd.DataFrame:
    """``empty_frame(schema)``, built once per contract and copied: a copy costs ~0.1 ms where building one costs
    2–5 ms, and every run needs three or four (benchmarks/RESULTS.md, overhead)."""
    cached = _EMPTY.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _EMPTY[id(schema)] = (schema, empty_frame(schema))
    return cached[1].copy()


def default_target(scenario: Scenario) -> str:
    """The reference clinic agent for the scenario's agent type, e.g. ``clinic:billing``."""
    return f"clinic:{scenario.agent}"


@dataclass
class RunResult:
    """Everything one run produced, as tidy frames that concatenate across runs.

    Attributes:
        run: one row (``RUN_SCHEMA``): how the conversation ended.
        transcript: one row per message (``TRANSCRIPT_SCHEMA``).
        rubric: one row per criterion × judge sample (conversational runs).
        holistic: one row per judge sample (conversational runs).
        turns: one row per scripted turn × judge sample (scripted runs).
        assertions: one row per database assertion.
        score: one row (``SCORE_SCHEMA``): the composite beside its components.
        calls: one record per LLM call made for this run.
    """

    run: pd.DataFrame
    transcript: pd.DataFrame
    rubric: pd.DataFrame
    holistic: pd.DataFrame
    turns: pd.DataFrame
    assertions: pd.DataFrame
    score: pd.DataFrame
    calls: list[Any] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return str(self.run["run_id"].iloc[0])

    @property
    def status(self) -> str:
        return str(self.score["status"].iloc[0])

    @property
    def error(self) -> str | None:
        value = self.score["error"].iloc[0]
        return None if pd.isna(value) else str(value)

    def frames(self) -> dict[str, pd.DataFrame]:
        """The frames by name, as saved to disk."""
        return {
            "runs": self.run,
            "transcripts": self.transcript,
            "rubric": self.rubric,
            "holistic": self.holistic,
            "turns": self.turns,
            "assertions": self.assertions,
            "scores": self.score,
        }


@dataclass
class RunOptions:
    """How to run: which agent, which models, how many judge samples. Shared by every run of a batch."""

    target: str | None = None
    simulator_model: Any = None
    judge_model: Any = None
    judge_samples: int = 1
    verbose: Log | None = None
    store: Store | None = None
    agents: dict[str, Agent] = field(default_factory=dict)

    def agent_for(self, scenario: Scenario) -> tuple[str, Agent]:
        target = self.target or default_target(scenario)
        if target not in self.agents:
            self.agents[target] = get_agent(target)
        return target, self.agents[target]


class _Conversation:
    """The mutable state of one run while it talks: messages so far, the session, the store rows."""

    def __init__(self, scenario: Scenario, seeded: SeededRun, store: Store, target: str, seed: int | None, trial: int):
        self.scenario = scenario
        self.seeded = seeded
        self.store = store
        self.keys = {
            "run_id": seeded.run_id,
            "scenario": scenario.id,
            "agent": scenario.agent,
            "target": target,
            "seed": seed,
            "trial": trial,
        }
        self.session = AgentSession(
            run_id=seeded.run_id,
            clinic_id=seeded.clinic_id,
            patient_id=seeded.patient_id,
            patient_phone=scenario.persona.phone,
            patient_name=scenario.persona.name,
            locale=scenario.locale,
            agent=scenario.agent,
            store=store,
        )
        self.rows: list[dict[str, Any]] = []
        self.conversation_id: str | None = None
        self._ensured: str | None = None  # the conversation id whose row is known to exist
        self.check_failures: dict[int, list[str]] = {}  # scripted runs: turn -> failed expectations

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.rows

    async def add_patient(self, turn: int, text: str, *, signal: str | None = None, result: Any = None) -> None:
        row = {**self.keys, "turn": turn, "role": "patient", "text": text, "bubbles": [text], "tools": [],
               "tool_calls": [], "signal": signal}
        if result is not None:
            row.update(latency_s=result.latency_s, prompt_tokens=result.prompt_tokens,
                       completion_tokens=result.completion_tokens, model=result.info.model,
                       cache_hit=result.cache_hit)
        self.rows.append(row)
        await self._log(turn, "patient", text, [])

    async def add_agent(self, turn: int, reply: AgentReply, latency_s: float) -> None:
        if reply.conversation_id:
            self.session.conversation_id = reply.conversation_id
        self.rows.append({
            **self.keys, "turn": turn, "role": "agent", "text": reply.text, "bubbles": list(reply.bubbles),
            "tools": reply.tool_names,
            "tool_calls": [{"name": t.name, "arguments": t.arguments, "result": t.result} for t in reply.tool_calls],
            "latency_s": latency_s,
        })
        await self._log(turn, "agent", reply.text, reply.tool_names)

    async def _log(self, turn: int, role: str, text: str, tools: list[str]) -> None:
        # Every message goes to the store's messages table: tools_called assertions are database queries.
        def write() -> None:
            wanted = self.session.conversation_id or self.conversation_id
            # Checked (and created) once per id: looking it up again for every message was a third of the store's
            # queries per run, and nothing else writes this run's conversation meanwhile.
            if wanted is None or wanted != self._ensured:
                self._ensured = ensure_conversation(self.store, self.seeded, self.scenario.agent, wanted)
            self.conversation_id = self._ensured
            self.session.conversation_id = self.conversation_id
            record_message(self.store, self.seeded, self.conversation_id, role, text, tools, turn)

        await asyncio.to_thread(write)

    def transcript(self) -> pd.DataFrame:
        return typed_frame(self.rows, TRANSCRIPT_SCHEMA) if self.rows else _empty(TRANSCRIPT_SCHEMA)


async def _ask_agent(agent: Agent, message: str, session: AgentSession) -> tuple[AgentReply, float]:
    started = time.perf_counter()
    reply = await agent.respond(message, session)
    if not isinstance(reply, AgentReply):
        raise AgentError(f"agent {getattr(agent, 'name', agent)!r} returned {type(reply).__name__}, not an AgentReply")
    return reply, time.perf_counter() - started


def _describe(exc: BaseException) -> str:
    kind = {AgentError: "agent error", LLMError: "LLM error", StoreError: "store error"}
    for cls, label in kind.items():
        if isinstance(exc, cls):
            return f"{label}: {exc}"
    return f"{type(exc).__name__}: {exc}"


async def _talk_conversational(conv: _Conversation, agent: Agent, opts: RunOptions, seed: int | None,
                               trial: int) -> tuple[str, bool]:
    """The simulator ↔ agent loop. Returns (stop_reason, goal_completed)."""
    from convoeval.simulator import asimulate

    scenario = conv.scenario
    assert isinstance(scenario, ConversationalScenario)
    log = opts.verbose
    for i in range(scenario.max_turns):
        turn = i + 1
        sim = await asimulate(conv.entries, scenario=scenario, model=opts.simulator_model, seed=seed, turn=i,
                              trial=trial)
        await conv.add_patient(turn, sim.message, signal=sim.signal, result=getattr(sim, "result", None))
        if log:
            log(f"    [Turn {turn}] Patient: {sim.message!r}")
        # Only the simulator's stop signals end a conversation; an agent writing one changes nothing.
        if sim.signal == "GOAL_COMPLETE":
            if log:
                log(f"    [Turn {turn}] >> GOAL_COMPLETE")
            return "GOAL_COMPLETE", True
        if sim.signal == "STUCK":
            if log:
                log(f"    [Turn {turn}] >> STUCK")
            return "STUCK", False
        reply, latency = await _ask_agent(agent, sim.message, conv.session)
        await conv.add_agent(turn, reply, latency)
        if log:
            log(f"    [Turn {turn}] Agent: {reply.text[:120]!r}")
            log(f"    [Turn {turn}] Tools: [{', '.join(reply.tool_names)}]")
    return "max_turns", False


async def _talk_scripted(conv: _Conversation, agent: Agent, opts: RunOptions) -> tuple[str, bool]:
    from convoeval.judges.turn import check_turn

    scenario = conv.scenario
    assert isinstance(scenario, ScriptedScenario)
    for i, step in enumerate(scenario.turns):
        turn = i + 1
        await conv.add_patient(turn, step.user)
        reply, latency = await _ask_agent(agent, step.user, conv.session)
        await conv.add_agent(turn, reply, latency)
        conv.check_failures[turn] = check_turn(step.expect, reply)
        if opts.verbose:
            opts.verbose(f"    [Turn {turn}] User: {step.user!r} | Agent: {reply.text[:100]!r} "
                         f"| Tools: [{', '.join(reply.tool_names)}] | checks: {conv.check_failures[turn] or 'ok'}")
    return "script_end", False


def _forget(agent: Agent, conversation_id: str | None) -> None:
    """Let the agent drop its state for a finished conversation (``forget``, where it has one).

    A batch shares one agent object across all its runs, so state an agent keeps per conversation would otherwise
    grow with the sweep (the scale benchmark's 5,000 conversations).
    """
    forget = getattr(agent, "forget", None)
    if conversation_id and callable(forget):
        forget(conversation_id)


def _assertion_rows(keys: dict[str, Any], results: list[AssertionResult]) -> list[dict[str, Any]]:
    return [
        {"run_id": keys["run_id"], "scenario": keys["scenario"], "assertion": r.key, "expected": r.expected,
         "actual": r.actual, "passed": r.passed, "message": r.detail}
        for r in results
    ]


async def arun_any(scenario: Scenario, *, seed: int | None = None, trial: int = 1,
                   options: RunOptions | None = None) -> RunResult:
    """Run one scenario of either type; never raises for a failure of the agent, an LLM or a judge.

    Args:
        scenario: a loaded scenario.
        seed: the simulator seed (default: the scenario's ``seed``); seeded runs are deterministic.
        trial: the trial number (part of every LLM call's sample identity: trial 2 is a fresh sample).
        options: target agent, models, judge samples, store, verbose log.

    Returns:
        A ``RunResult`` whose ``score`` row has status pass / warn / fail / error.
    """
    opts = options or RunOptions()
    store = opts.store or open_store()
    if seed is None and isinstance(scenario, ConversationalScenario):
        seed = scenario.seed
    started = time.perf_counter()
    stop_reason, goal_completed, error = "error", False, None
    assertion_rows: list[dict[str, Any]] = []
    conv: _Conversation | None = None
    # The run id exists before anything can fail, so a run that fails before seeding keeps its identity in every
    # frame and in report.json. Frames record the target without webhook credentials.
    run_id = new_run_id()
    target = safe_target(opts.target or default_target(scenario))
    try:
        agent = opts.agent_for(scenario)[1]
        seeded = await asyncio.to_thread(seed_run, store, scenario, run_id)
        conv = _Conversation(scenario, seeded, store, target, seed, trial)
        try:
            if isinstance(scenario, ConversationalScenario):
                stop_reason, goal_completed = await _talk_conversational(conv, agent, opts, seed, trial)
            else:
                stop_reason, goal_completed = await _talk_scripted(conv, agent, opts)
            results = await asyncio.to_thread(check_assertions, store, scenario.assertions, seeded)
            assertion_rows = _assertion_rows(conv.keys, results)
            await asyncio.to_thread(finish_run, store, seeded.run_id)
        finally:
            _forget(agent, conv.session.conversation_id)
            await asyncio.to_thread(cleanup_run, store, seeded.run_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes this run's error, never a crash of the sweep
        error = _describe(exc)
        stop_reason = "error"
    keys = conv.keys if conv else {"run_id": run_id, "scenario": scenario.id, "agent": scenario.agent,
                                   "target": target, "seed": seed, "trial": trial}
    transcript = conv.transcript() if conv else _empty(TRANSCRIPT_SCHEMA)
    run_row = {**keys, "type": scenario.type, "status": "error" if error else "completed",
               "stop_reason": stop_reason, "goal_completed": goal_completed if not error else None,
               "n_messages": len(transcript), "duration_s": time.perf_counter() - started, "error": error}
    rubric, holistic, turns = _empty(RUBRIC_SCHEMA), _empty(HOLISTIC_SCHEMA), _empty(TURN_SCHEMA)
    if error is None and conv is not None:
        try:
            rubric, holistic, turns = await _judge(conv, transcript, opts)
        except Exception as exc:  # noqa: BLE001 - a judge that cannot even start is this run's error
            error = _describe(exc)
    assertions = typed_frame(assertion_rows, ASSERTION_SCHEMA) if assertion_rows else _empty(ASSERTION_SCHEMA)
    run_frame = typed_frame([run_row], RUN_SCHEMA)
    if isinstance(scenario, ScriptedScenario):
        score = score_scripted(run_frame, turns, assertions, error=error)
    else:
        score = score_frame(rubric, holistic, assertions, transcripts=transcript, runs=run_frame)
        if error is not None and run_row["error"] is None:
            score = score.assign(status="error", score=float("nan"), error=error)
    if opts.verbose:
        opts.verbose(f"  {scenario.id}: {score['status'].iloc[0]} {score['score'].iloc[0]}")
    return RunResult(run=run_frame, transcript=transcript, rubric=rubric, holistic=holistic, turns=turns,
                     assertions=assertions, score=score)


async def _judge(conv: _Conversation, transcript: pd.DataFrame, opts: RunOptions
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Judge a finished conversation. Judge failures come back as error rows, not exceptions."""
    from convoeval.judges.holistic import ajudge_holistic
    from convoeval.judges.rubric import ajudge_rubric

    scenario = conv.scenario
    if isinstance(scenario, ConversationalScenario):
        rubric, holistic = await asyncio.gather(
            ajudge_rubric(transcript, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
            ajudge_holistic(transcript, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
        )
        return rubric, holistic, _empty(TURN_SCHEMA)
    return _empty(RUBRIC_SCHEMA), _empty(HOLISTIC_SCHEMA), await _judge_turns(conv, opts)


async def _judge_turns(conv: _Conversation, opts: RunOptions) -> pd.DataFrame:
    """Scripted runs: each turn's check failures, plus the per-turn judge where the scenario asks for it."""
    from convoeval.judges.turn import ajudge_turn

    scenario = conv.scenario
    assert isinstance(scenario, ScriptedScenario)
    keys = {k: conv.keys[k] for k in ("run_id", "scenario", "agent", "seed", "trial")}

    async def one(turn: int, judged: bool) -> list[dict[str, Any]]:
        checks = {"check_failures": conv.check_failures.get(turn, [])}
        if not judged:
            return [{**keys, "turn": turn, **checks}]
        rows = await ajudge_turn(conv.entries[: 2 * turn], agent_type=scenario.agent, model=opts.judge_model,
                                 samples=opts.judge_samples, run_id=keys["run_id"], scenario=scenario.id,
                                 seed=keys["seed"], trial=keys["trial"])
        return [{**row, **checks} for row in rows]

    per_turn = await asyncio.gather(*(one(i + 1, step.judge) for i, step in enumerate(scenario.turns)))
    rows = [row for turn_rows in per_turn for row in turn_rows]
    return typed_frame(rows, TURN_SCHEMA) if rows else _empty(TURN_SCHEMA)


def run_any(scenario: Scenario, **kwargs: Any) -> RunResult:
    """Synchronous ``arun_any`` for scripts (in a notebook, ``await arun_any(...)``)."""
    return run_sync(arun_any(scenario, **kwargs))


async def arun_conversation(scenario: ConversationalScenario, *, target: str | None = None, seed: int | None = None,
                            trial: int = 1, simulator_model: Any = None, judge_model: Any = None,
                            judge_samples: int = 1, store: Store | None = None,
                            verbose: Log | None = None) -> RunResult:
    """Run one conversational scenario: simulate the patient against the agent, check, clean up, judge.

    Args:
        scenario: a conversational scenario.
        target: the agent under test (default ``clinic:<scenario.agent>``).
        seed: the simulator seed (default: the scenario's).
        trial: the trial number.
        simulator_model / judge_model: chat models (default ``get_model("simulator")`` / ``get_model("judge")``).
        judge_samples: independent samples per judge.
        store: the fixtures store (default ``open_store()``).
        verbose: a function receiving the seed's turn-by-turn lines.

    Returns:
        A ``RunResult`` (frames: run, transcript, rubric, holistic, assertions, score).

    Example:
        >>> result = run_conversation(load_scenarios(scenario="billing-conv-happy-payment")[0], seed=42)
        >>> result.score[["status", "score", "rubric_score", "holistic_overall"]]
    """
    if not isinstance(scenario, ConversationalScenario):
        raise TypeError(f"{scenario.id} is a scripted scenario; use run_scripted or run_any")
    options = RunOptions(target=target, simulator_model=simulator_model, judge_model=judge_model,
                         judge_samples=judge_samples, store=store, verbose=verbose)
    return await arun_any(scenario, seed=seed, trial=trial, options=options)


def run_conversation(scenario: ConversationalScenario, **kwargs: Any) -> RunResult:
    """Synchronous ``arun_conversation``."""
    return run_sync(arun_conversation(scenario, **kwargs))


def model_label(model: Any) -> str:
    """``provider/model`` of a chat model, for reports."""
    info = model_info(model)
    return f"{info.provider}/{info.model}"
