"""One conversation from start to score: ``arun_any`` (either scenario type) and ``run_conversation``.

A conversation seeds the scenario's fixtures under a fresh ``run_id``, talks to the agent, checks the database
assertions, cleans up its rows in a ``finally`` and then judges the transcript (the judges need no database).
Whatever fails — the agent, an LLM call after its retries, a judge's parse — ends that conversation with status
``error`` and the reason; it never raises out of ``arun_any`` and never turns into a pass or a default score.

While it runs, a conversation keeps plain rows (dicts), and it is judged and scored from them: building typed
DataFrames per conversation cost more CPU than everything else convoeval does for it, so frames are built once
per batch (``convoeval.pipeline.results``), or when an analyst reads one from a ``ConversationResult``.
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
    SCORE_SCHEMA,
    SIMULATOR_FAILURE,
    TRANSCRIPT_SCHEMA,
    TURN_SCHEMA,
    empty_frame,
    plain,
    typed_frame,
)
from convoeval.gate import RESIMULATION_TEMPERATURE, GateSettings, SimulatorFailure, SimulatorGate
from convoeval.judges.scoring import score_conversation, score_scripted_conversation
from convoeval.llm import LLMError, SampleIdentity, model_info
from convoeval.pipeline.replay import PatientReplay, same_reply
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

#: Called with one line per event when a run is verbose (``--verbose``).
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


#: Frame name -> column contract, in the order results are saved and reports use them.
FRAME_SCHEMAS: dict[str, dict[str, str]] = {
    "runs": RUN_SCHEMA,
    "scores": SCORE_SCHEMA,
    "transcripts": TRANSCRIPT_SCHEMA,
    "rubric": RUBRIC_SCHEMA,
    "holistic": HOLISTIC_SCHEMA,
    "turns": TURN_SCHEMA,
    "assertions": ASSERTION_SCHEMA,
}


def _frame_property(name: str, doc: str) -> Any:
    """A read-only attribute that builds (once) and returns one of a result's frames."""
    return property(lambda self: self.frame(name), doc=doc)


@dataclass
class ConversationResult:
    """Everything one conversation produced, as plain rows; typed frames are built only when read.

    Attributes:
        rows: frame name (``FRAME_SCHEMAS``) -> its rows as dicts: ``runs`` and ``scores`` one row each,
            ``transcripts`` one per message, ``rubric`` one per criterion × judge sample, ``holistic`` one per
            judge sample, ``turns`` one per scripted turn × sample, ``assertions`` one per database assertion.
        calls: one record per LLM call made for this conversation (filled by the batch runner).

    The frames are properties: ``result.transcript``, ``result.score``, ``result.rubric``, … (``frames()`` all
    of them), each built once and kept.
    """

    rows: dict[str, list[dict[str, Any]]]
    calls: list[dict[str, Any]] = field(default_factory=list)
    _frames: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    def frame(self, name: str) -> pd.DataFrame:
        """One frame by name (``runs``, ``scores``, ``transcripts``, …), typed by its contract."""
        if name not in self._frames:
            rows = self.rows.get(name) or []
            self._frames[name] = typed_frame(rows, FRAME_SCHEMAS[name]) if rows else _empty(FRAME_SCHEMAS[name])
        return self._frames[name]

    def frames(self) -> dict[str, pd.DataFrame]:
        """The frames by name, as saved to disk."""
        return {name: self.frame(name) for name in FRAME_SCHEMAS}

    run = _frame_property("runs", "One row (``RUN_SCHEMA``): how the conversation ended.")
    transcript = _frame_property("transcripts", "One row per message (``TRANSCRIPT_SCHEMA``).")
    rubric = _frame_property("rubric", "One row per criterion × judge sample (conversational runs).")
    holistic = _frame_property("holistic", "One row per judge sample (conversational runs).")
    turns = _frame_property("turns", "One row per scripted turn × judge sample (scripted runs).")
    assertions = _frame_property("assertions", "One row per database assertion.")
    score = _frame_property("scores", "One row (``SCORE_SCHEMA``): the composite beside its components.")

    @property
    def run_id(self) -> str:
        return str(self.rows["runs"][0]["run_id"])

    @property
    def status(self) -> str:
        return str(self.rows["scores"][0]["status"])

    @property
    def error(self) -> str | None:
        value = self.rows["scores"][0].get("error")
        return None if value is None else str(value)

    def payload(self) -> dict[str, Any]:
        """The rows and calls as JSON-ready values, as saved per conversation.

        Every row carries every column of its contract, missing values as ``None`` (never NaN or ``"<NA>"``).

        Raises:
            ValueError: a row carries a column its contract does not declare.
        """
        out: dict[str, Any] = {}
        for name, schema in FRAME_SCHEMAS.items():
            rows = self.rows.get(name) or []
            for row in rows:
                if not row.keys() <= schema.keys():
                    raise ValueError(f"unknown {name} column(s) {sorted(row.keys() - schema.keys())}")
            out[name] = [{c: plain(row.get(c)) for c in schema} for row in rows]
        out["calls"] = self.calls
        return out

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> ConversationResult:
        """The result a ``payload()`` was made from (what a worker sends back, what a results folder holds)."""
        return cls(rows={name: list(payload.get(name) or []) for name in FRAME_SCHEMAS},
                   calls=list(payload.get("calls") or []))


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
    #: Called with (conversation label, turn) as each turn starts: the run's progress display.
    on_turn: Callable[[str, int], None] | None = None
    #: The simulator-failure gate's checks and thresholds (``convoeval.gate``); ``None`` switches it off.
    gate: GateSettings | None = field(default_factory=GateSettings)
    #: A conversation the gate stopped is simulated again with the next seed, sampled, up to this many times.
    resimulate: int = 0

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
        self.pending: list[tuple[str | None, int, str, str, list[str]]] = []  # messages not yet in the store
        self.replayed_turns = 0  # patient turns taken from a recording (PatientReplay)
        self.divergence_turn: int | None = None  # the first turn whose agent reply differed from the recording
        self.gate: SimulatorGate | None = None  # conversational runs with the gate on
        self.simulator_failure: SimulatorFailure | None = None  # why the gate stopped the run
        self.simulated_claim: int | None = None  # the turn of a [GOAL_COMPLETE] the simulator (not a replay) wrote

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.rows

    async def add_patient(self, turn: int, text: str, *, signal: str | None = None, result: Any = None,
                          prompt_version: str | None = None) -> None:
        row = {**self.keys, "turn": turn, "role": "patient", "text": text, "bubbles": [text], "tools": [],
               "tool_calls": [], "signal": signal, "prompt_version": prompt_version}
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
        # Every message goes to the store's messages table (tools_called assertions are database queries), but not
        # one commit per message: they are kept here and written in one transaction before the assertions run
        # (``flush``). No agent reads the messages table while it talks.
        self.pending.append((self.session.conversation_id, turn, role, text, tools))

    def flush(self) -> None:
        """Write the kept messages (and their conversation rows) in one transaction. Runs in a worker thread."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        # The first patient message is logged before the agent names its conversation: it belongs to the first id
        # the agent gives (or to one made here when it gives none).
        first_known = next((agent_id for agent_id, *_ in pending if agent_id), None)
        with self.store.transaction():
            for agent_id, turn, role, text, tools in pending:
                wanted = agent_id or self.conversation_id or first_known
                # Checked (and created) once per id: nothing else writes this run's conversation meanwhile.
                if wanted is None or wanted != self._ensured:
                    self._ensured = ensure_conversation(self.store, self.seeded, self.scenario.agent, wanted)
                self.conversation_id = self._ensured
                record_message(self.store, self.seeded, self.conversation_id, role, text, tools, turn)
        self.session.conversation_id = self.session.conversation_id or self.conversation_id

    def finish(self, assertions: Any) -> list[AssertionResult]:
        """After the last turn: write the messages, check the database assertions, mark the run finished.

        The messages go to the store only for the assertions (``tools_called`` reads them); the cleanup deletes them
        right after. A scenario without assertions skips that transaction.
        """
        if assertions:
            self.flush()
        results = check_assertions(self.store, assertions, self.seeded)
        finish_run(self.store, self.seeded.run_id)
        return results


async def _ask_agent(agent: Agent, message: str, session: AgentSession) -> tuple[AgentReply, float]:
    started = time.perf_counter()
    try:
        reply = await agent.respond(message, session)
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise  # the user (or the run) stops: not this agent's failure
    except Exception:
        raise
    except BaseException as exc:  # e.g. sys.exit() in agent code: ends this conversation, never the run's loop
        name = getattr(agent, "name", type(agent).__name__)
        raise AgentError(f"agent {name!r} raised {type(exc).__name__}({exc}); only this conversation ended") from None
    if not isinstance(reply, AgentReply):
        raise AgentError(f"agent {getattr(agent, 'name', agent)!r} returned {type(reply).__name__}, not an AgentReply")
    return reply, time.perf_counter() - started


def _describe(exc: BaseException) -> str:
    kind = {AgentError: "agent error", LLMError: "LLM error", StoreError: "store error"}
    for cls, label in kind.items():
        if isinstance(exc, cls):
            return f"{label}: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _prefixed(log: Log | None, label: str) -> Log | None:
    """Verbose lines of concurrent conversations interleave: each carries its conversation's label."""
    if log is None:
        return None
    return lambda line: log(f"[{label}] {line.strip()}")


async def _talk_conversational(conv: _Conversation, agent: Agent, opts: RunOptions, seed: int | None,
                               trial: int, label: str, replay: PatientReplay | None = None, attempt: int = 1
                               ) -> tuple[str, bool]:
    """The simulator ↔ agent loop. Returns (stop_reason, goal_completed).

    With a ``replay``, the recorded patient messages are sent first (see ``convoeval.pipeline.replay``). With the
    gate on, every simulated patient message is checked before the agent sees it; a broken patient stops the loop
    with ``simulator_failure`` (the reason in ``conv.simulator_failure``). Attempt k > 1 is a re-simulation: the
    simulator samples with seed + k - 1 (``convoeval.gate``).
    """
    from convoeval.simulator import DEFAULT_FRAMING, asimulate

    scenario = conv.scenario
    assert isinstance(scenario, ConversationalScenario)
    log = _prefixed(opts.verbose, label)
    if log:
        traits = ", ".join(scenario.persona.traits) or "none"
        log(f"goal: {' '.join(scenario.goal.split())} | traits: {traits} | max turns: {scenario.max_turns}")
    gate = conv.gate = SimulatorGate(scenario, opts.gate) if opts.gate is not None and opts.gate.checks else None
    for i in range(scenario.max_turns):
        turn = i + 1
        if opts.on_turn:
            opts.on_turn(label, turn)
        recorded = replay.message(turn) if replay is not None and conv.divergence_turn is None else None
        if recorded is not None:
            sim = _Replayed(*recorded)
            conv.replayed_turns = turn
        elif attempt == 1:
            sim = await asimulate(conv.entries, scenario=scenario, model=opts.simulator_model, seed=seed, turn=i,
                                  trial=trial)
        else:
            sim_seed = None if seed is None else seed + attempt - 1
            # Its own sample identity: an unseeded re-simulation must not replay the first attempt from the cache.
            identity = SampleIdentity(scenario=scenario.id, seed=sim_seed, trial=trial, role="simulator", turn=i,
                                      extra=f"{DEFAULT_FRAMING}/attempt-{attempt}")
            sim = await asimulate(conv.entries, scenario=scenario, model=opts.simulator_model, seed=sim_seed, turn=i,
                                  trial=trial, identity=identity, temperature=RESIMULATION_TEMPERATURE)
        await conv.add_patient(turn, sim.message, signal=sim.signal, result=getattr(sim, "result", None),
                               prompt_version=getattr(sim, "prompt_version", None))
        if log:
            log(f"    [Turn {turn}] Patient: {sim.message!r}")
        failure = gate.patient(turn, sim.message, recorded=recorded is not None) if gate else None
        if failure is not None:
            conv.simulator_failure = failure
            if log:
                log(f"    [Turn {turn}] >> simulator failure ({failure.check}): {failure.detail}")
            return SIMULATOR_FAILURE, False
        # Only the simulator's stop signals end a conversation; an agent writing one changes nothing.
        if sim.signal == "GOAL_COMPLETE":
            if log:
                log(f"    [Turn {turn}] >> GOAL_COMPLETE")
            conv.simulated_claim = turn if recorded is None else None
            return "GOAL_COMPLETE", True
        if sim.signal == "STUCK":
            if log:
                log(f"    [Turn {turn}] >> STUCK")
            return "STUCK", False
        reply, latency = await _ask_agent(agent, sim.message, conv.session)
        await conv.add_agent(turn, reply, latency)
        if gate:
            gate.agent(reply.text)
        if log:
            log(f"    [Turn {turn}] Agent: {reply.text[:120]!r}")
            log(f"    [Turn {turn}] Tools: [{', '.join(reply.tool_names)}]")
        expected = replay.reply(turn) if recorded is not None and replay is not None else None
        if expected is not None and not same_reply(expected, reply.text, reply.tool_names):
            conv.divergence_turn = turn  # the simulator takes over from the next turn, with the same seed
            if log:
                log(f"    [Turn {turn}] >> the agent's reply differs from the recording: the simulator takes over")
    return "max_turns", False


@dataclass(frozen=True)
class _Replayed:
    """A recorded patient message standing in for a simulator turn (no LLM call, so no call result)."""

    message: str
    signal: str | None


async def _talk_scripted(conv: _Conversation, agent: Agent, opts: RunOptions, label: str) -> tuple[str, bool]:
    from convoeval.judges.turn import check_turn

    scenario = conv.scenario
    assert isinstance(scenario, ScriptedScenario)
    log = _prefixed(opts.verbose, label)
    for i, step in enumerate(scenario.turns):
        turn = i + 1
        if opts.on_turn:
            opts.on_turn(label, turn)
        await conv.add_patient(turn, step.user)
        reply, latency = await _ask_agent(agent, step.user, conv.session)
        await conv.add_agent(turn, reply, latency)
        conv.check_failures[turn] = check_turn(step.expect, reply)
        if log:
            log(f"[Turn {turn}] User: {step.user!r} | Agent: {reply.text[:100]!r} "
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


def failed_result(scenario: Scenario, seed: int | None, trial: int, target: str | None, error: str
                  ) -> ConversationResult:
    """The result of a conversation that could not run at all (its worker died twice, its worker had no store…).

    It carries the same keys as any conversation's rows and scores ``error`` with the reason, never a default.
    """
    if seed is None and isinstance(scenario, ConversationalScenario):
        seed = scenario.seed
    keys = {"run_id": new_run_id(), "scenario": scenario.id, "agent": scenario.agent,
            "target": safe_target(target or default_target(scenario)), "seed": seed, "trial": trial}
    run_row = {**keys, "type": scenario.type, "status": "error", "stop_reason": "error", "goal_completed": None,
               "n_messages": 0, "duration_s": None, "error": error, "attempt": 1, "superseded": False}
    if isinstance(scenario, ScriptedScenario):
        score = score_scripted_conversation(run_row, [], [])
    else:
        score = score_conversation(run_row, [], [], [], [])
    return ConversationResult(rows={"runs": [run_row], "scores": [score], "transcripts": [], "rubric": [],
                                    "holistic": [], "turns": [], "assertions": []})


async def arun_any(scenario: Scenario, *, seed: int | None = None, trial: int = 1,
                   options: RunOptions | None = None, label: str | None = None,
                   replay: PatientReplay | None = None) -> ConversationResult:
    """Run one scenario of either type; never raises for a failure of the agent, an LLM or a judge.

    A conversational run whose simulated patient breaks is stopped by the gate (``options.gate``) and ends
    ``simulator_failure``, unjudged; with ``options.resimulate`` it is simulated again with the next seed, sampled,
    up to that many times, and the last attempt is the one kept (``rows[...][0]``), the failed ones following it
    in ``runs``, ``transcripts`` and ``assertions`` with ``superseded`` set (``convoeval.gate``).

    Args:
        scenario: a loaded scenario.
        seed: the simulator seed (default: the scenario's ``seed``); seeded runs are deterministic.
        trial: the trial number (part of every LLM call's sample identity: trial 2 is a fresh sample).
        options: target agent, models, judge samples, store, verbose log, gate and re-simulations.
        label: how verbose and progress lines name this conversation (default ``<scenario> s<seed> t<trial>``).
        replay: recorded patient messages to send before the simulator takes over (conversational scenarios;
            ``convoeval.pipeline.replay``).

    Returns:
        A ``ConversationResult`` whose ``score`` row has status pass / warn / fail / error / simulator_failure.
    """
    opts = options or RunOptions()
    if seed is None and isinstance(scenario, ConversationalScenario):
        seed = scenario.seed
    label = label or f"{scenario.id} s{'-' if seed is None else seed} t{trial}"
    result = await _arun_attempt(scenario, seed, trial, opts, label, replay, attempt=1)
    failed: list[ConversationResult] = []
    while result.status == SIMULATOR_FAILURE and len(failed) < opts.resimulate:
        failed.append(result)
        if opts.verbose:
            opts.verbose(f"[{label}] simulator failure: re-simulating (attempt {len(failed) + 1} of "
                         f"{opts.resimulate + 1})")
        result = await _arun_attempt(scenario, seed, trial, opts, label, replay, attempt=len(failed) + 1)
    return _with_failed_attempts(result, failed)


def _with_failed_attempts(kept: ConversationResult, failed: list[ConversationResult]) -> ConversationResult:
    """The kept attempt's rows first (what ``run_id``, ``status`` and a job's score read), then the failed attempts'
    runs, transcripts and assertions, marked ``superseded``; a failed attempt has no score row: the job has one."""
    if not failed:
        return kept
    rows = {name: list(found) for name, found in kept.rows.items()}
    for attempt in failed:
        rows["runs"].extend({**run, "superseded": True} for run in attempt.rows["runs"])
        for name in ("transcripts", "assertions"):
            rows.setdefault(name, []).extend(attempt.rows.get(name) or [])
    return ConversationResult(rows=rows, calls=kept.calls)


async def _arun_attempt(scenario: Scenario, seed: int | None, trial: int, opts: RunOptions, label: str,
                        replay: PatientReplay | None, *, attempt: int) -> ConversationResult:
    """One attempt at a conversation: seed the store, talk, assert, clean up, then judge unless the gate stopped it."""
    store = opts.store or open_store()
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
                stop_reason, goal_completed = await _talk_conversational(conv, agent, opts, seed, trial, label,
                                                                         replay, attempt)
            else:
                stop_reason, goal_completed = await _talk_scripted(conv, agent, opts, label)
            results = await asyncio.to_thread(conv.finish, scenario.assertions)
            assertion_rows = _assertion_rows(conv.keys, results)
        finally:
            _forget(agent, conv.session.conversation_id)
            await asyncio.to_thread(cleanup_run, store, seeded.run_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes this run's error, never a crash of the sweep
        error = _describe(exc)
        stop_reason = "error"
    if error is None and conv is not None and conv.gate is not None and conv.simulated_claim is not None:
        # A claimed goal is checked against the database only now, after the assertions.
        conv.simulator_failure = conv.gate.goal_claim(conv.simulated_claim, assertion_rows)
        stop_reason = SIMULATOR_FAILURE if conv.simulator_failure else stop_reason
    keys = conv.keys if conv else {"run_id": run_id, "scenario": scenario.id, "agent": scenario.agent,
                                   "target": target, "seed": seed, "trial": trial}
    transcript = conv.rows if conv else []
    broke = conv.simulator_failure if conv is not None and error is None else None
    status = "error" if error else SIMULATOR_FAILURE if broke else "completed"
    run_row = {**keys, "type": scenario.type, "status": status,
               "stop_reason": stop_reason, "goal_completed": goal_completed if not error else None,
               "n_messages": len(transcript), "duration_s": time.perf_counter() - started, "error": error,
               "replayed_turns": conv.replayed_turns if conv else 0,
               "divergence_turn": conv.divergence_turn if conv else None,
               **(broke.run_fields() if broke else {}), "attempt": attempt, "superseded": False}
    rubric: list[dict[str, Any]] = []
    holistic: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    if error is None and conv is not None and broke is None:  # a broken patient's conversation is not judged
        try:
            rubric, holistic, turns = await _judge(conv, opts)
        except Exception as exc:  # noqa: BLE001 - a judge that cannot even start is this run's error
            error = _describe(exc)
    if isinstance(scenario, ScriptedScenario):
        score = score_scripted_conversation(run_row, turns, assertion_rows, error=error)
    else:
        score = score_conversation(run_row, rubric, holistic, assertion_rows, transcript)
        if error is not None and run_row["error"] is None:
            score.update(status="error", score=float("nan"), error=error)
    if opts.verbose:
        opts.verbose(f"[{label}] {score['status']} {score['score']}")
    return ConversationResult(rows={"runs": [run_row], "scores": [score], "transcripts": transcript,
                                    "rubric": rubric, "holistic": holistic, "turns": turns,
                                    "assertions": assertion_rows})


async def _judge(conv: _Conversation, opts: RunOptions
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Judge a finished conversation from its rows. Judge failures come back as error rows, not exceptions."""
    from convoeval.judges.holistic import aholistic_rows
    from convoeval.judges.rubric import arubric_rows

    scenario = conv.scenario
    if isinstance(scenario, ConversationalScenario):
        conversation = [(conv.keys, conv.rows)]
        rubric, holistic = await asyncio.gather(
            arubric_rows(conversation, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
            aholistic_rows(conversation, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
        )
        return rubric, holistic, []
    return [], [], await _judge_turns(conv, opts)


async def _judge_turns(conv: _Conversation, opts: RunOptions) -> list[dict[str, Any]]:
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
    return [row for turn_rows in per_turn for row in turn_rows]


def run_any(scenario: Scenario, *, seed: int | None = None, trial: int = 1, options: RunOptions | None = None,
            label: str | None = None) -> ConversationResult:
    """Synchronous ``arun_any`` for scripts (in a notebook, ``await arun_any(...)``)."""
    return run_sync(arun_any(scenario, seed=seed, trial=trial, options=options, label=label))


def _scenario(scenario: str | Scenario) -> Scenario:
    """A scenario object, or the project's scenario with this id (``load_scenarios``' default folder)."""
    if not isinstance(scenario, str):
        return scenario
    from convoeval.scenarios import load_scenarios

    found = load_scenarios(scenario=scenario)
    if not found:
        raise ValueError(f"no scenario with id {scenario!r} in the project's scenarios (convoeval validate lists them)")
    return found[0]


async def arun_conversation(
    scenario: str | Scenario,
    *,
    target: str | None = None,
    seed: int | None = None,
    trial: int = 1,
    simulator_model: Any = None,
    judge_model: Any = None,
    judge_samples: int = 1,
    store: Store | None = None,
    verbose: Log | None = None,
    simulator_gate: bool | Mapping[str, Any] | GateSettings = True,
) -> ConversationResult:
    """Async ``run_conversation``; the same arguments."""
    from convoeval.gate import gate_settings
    from convoeval.llm.accounting import record_calls
    from convoeval.llm.models import as_chat_model

    resolved = _scenario(scenario)
    options = RunOptions(target=target, simulator_model=as_chat_model("simulator", simulator_model),
                         judge_model=as_chat_model("judge", judge_model), judge_samples=judge_samples, store=store,
                         verbose=verbose, gate=gate_settings(simulator_gate))
    with record_calls() as records:
        result = await arun_any(resolved, seed=seed, trial=trial, options=options)
    result.calls = [r.to_dict() for r in records]
    return result


def run_conversation(
    scenario: str | Scenario,
    *,
    target: str | None = None,
    seed: int | None = None,
    trial: int = 1,
    simulator_model: Any = None,
    judge_model: Any = None,
    judge_samples: int = 1,
    store: Store | None = None,
    verbose: Log | None = None,
    simulator_gate: bool | Mapping[str, Any] | GateSettings = True,
) -> ConversationResult:
    """Run one scenario: simulate the patient against the agent (or play a scripted one), check, clean up, judge.

    Args:
        scenario: a scenario object, or the id of one of the project's scenarios.
        target: the agent under test (default ``clinic:<scenario.agent>``).
        seed: the simulator seed (default: the scenario's).
        trial: the trial number (part of every call's sample identity: trial 2 is a new sample).
        simulator_model: a model name, ``"local"``, a mapping of settings or a chat model (default: the
            environment's simulator model).
        judge_model: the same, for the judges.
        judge_samples: independent samples per judge.
        store: the fixtures store (default ``open_store()``).
        verbose: a function receiving every turn as a line (e.g. ``print``).
        simulator_gate: stop the conversation when the simulated patient breaks (``simulator_failure``, not
            judged; ``convoeval.gate``): ``True``, ``False`` or a mapping of ``GateSettings`` thresholds.

    Returns:
        A ``ConversationResult``: ``.transcript``, ``.rubric``, ``.holistic``, ``.assertions``, ``.score`` (DataFrames
        built when read) and ``.calls`` (one record per LLM call).

    Example:
        >>> result = run_conversation("billing-conv-happy-payment", seed=42)  # doctest: +SKIP
        >>> result.score[["status", "score", "rubric_score", "holistic_overall"]]  # doctest: +SKIP
    """
    return run_sync(arun_conversation(scenario, target=target, seed=seed, trial=trial, simulator_model=simulator_model,
                                      judge_model=judge_model, judge_samples=judge_samples, store=store,
                                      verbose=verbose, simulator_gate=simulator_gate))


def model_label(model: Any) -> str:
    """``provider/model`` of a chat model, for reports."""
    info = model_info(model)
    return f"{info.provider}/{info.model}"
