"""The exchange itself: the patient (simulated, scripted or replayed) and the agent take turns, every message recorded."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from convoeval.agents.base import Agent, AgentError, AgentReply, AgentSession
from convoeval.channel import Part, parts_as_dicts
from convoeval.frames import (
    SIMULATOR_FAILURE,
)
from convoeval.judges.turn import check_turn
from convoeval.llm import LLMError, SampleIdentity
from convoeval.llm.models import as_chat_model
from convoeval.pathcheck import check_checkpoints, check_path, check_whatsapp_limits
from convoeval.pathcheck.channel import check_channel
from convoeval.pipeline.agent_call import call_agent
from convoeval.pipeline.channel_talk import (
    ChannelState,
    deliver_turn,
    merged_reply,
    offered_title,
    simulated_messages,
)
from convoeval.pipeline.options import Log, RunOptions
from convoeval.pipeline.replay import PatientReplay, same_reply
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario
from convoeval.scenarios.turn_models import ScriptedTurn
from convoeval.simulator.gate import RESIMULATION_TEMPERATURE, SimulatorFailure, SimulatorGate
from convoeval.store import Store
from convoeval.store.assertions import AssertionResult, check_assertions
from convoeval.store.base import StoreError
from convoeval.store.conversations import ensure_conversation, record_message
from convoeval.store.fixtures import (
    SeededRun,
    finish_run,
)

if TYPE_CHECKING:
    from convoeval.pipeline.observe import TurnObserver
    from convoeval.simulator.replies import SimulatorTurn


class RunKeys(TypedDict):
    """The columns that name a conversation in every row it writes (transcripts, runs, assertions, judges)."""

    run_id: str
    scenario: str
    agent: str
    target: str
    seed: int | None
    trial: int


class _Conversation:
    """The mutable state of one run while it talks: messages so far, the session, the store rows."""

    def __init__(self, scenario: Scenario, seeded: SeededRun, store: Store, target: str, seed: int | None, trial: int):
        self.scenario = scenario
        self.seeded = seeded
        self.store = store
        self.keys: RunKeys = {
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
        self.observer: TurnObserver | None = None  # a per-turn observer (``convoeval.pipeline.observe``), if any
        self.channel: ChannelState | None = None  # the WhatsApp channel, when the scenario talks through it

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.rows

    @property
    def run_id(self) -> str:
        return self.seeded.run_id

    @property
    def scenario_id(self) -> str:
        return self.scenario.id

    @property
    def seed_and_trial(self) -> tuple[int | None, int]:
        return self.keys["seed"], self.keys["trial"]

    async def add_patient(self, turn: int, text: str, *, signal: str | None = None, result: Any = None,
                          prompt_version: str | None = None, voice: str | None = None, act: str | None = None,
                          parts: list[Part] | None = None, channel: dict[str, str] | None = None) -> None:
        row = {**self.keys, "turn": turn, "role": "patient", "text": text, "bubbles": [text],
               "parts": parts_as_dicts(parts) if parts else [{"type": "text", "text": text}], "tools": [],
               "tool_calls": [], "signal": signal, "prompt_version": prompt_version, "voice": voice, "act": act,
               **(channel or {})}
        if result is not None:
            row.update(latency_s=result.latency_s, prompt_tokens=result.prompt_tokens,
                       completion_tokens=result.completion_tokens, model=result.info.model,
                       cache_hit=result.cache_hit)
        self.rows.append(row)
        await self._log(turn, "patient", text, [])

    async def add_agent(self, turn: int, reply: AgentReply, latency_s: float, *,
                        channel: dict[str, str | None] | None = None) -> None:
        if reply.conversation_id:
            self.session.conversation_id = reply.conversation_id
        self.rows.append({
            **self.keys, "turn": turn, "role": "agent", "text": reply.text, "bubbles": list(reply.bubbles),
            "parts": parts_as_dicts(reply.parts), "tools": reply.tool_names,
            "tool_calls": [{"name": t.name, "arguments": t.arguments, "result": t.result} for t in reply.tool_calls],
            "latency_s": latency_s, **(channel or {}),
        })
        await self._log(turn, "agent", reply.text, reply.tool_names)

    async def observe(self, turn: int, message: str, reply: AgentReply) -> None:
        """Hand the reply to the conversation's observer, in a worker thread (it may read the store, which blocks)."""
        if self.observer is not None:
            await asyncio.to_thread(self.observer.after_reply, turn, message, reply)

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
        # Path assertions and checkpoints read the recorded turns (tool arguments and results included), and the
        # store while the run's rows still exist.
        locale, store, seeded = self.scenario.locale, self.store, self.seeded
        results += check_path(self.rows, getattr(assertions, "path", None), locale=locale, store=store, seeded=seeded)
        results += check_checkpoints(self.rows, getattr(self.scenario, "checkpoints", None), locale=locale,
                                     store=store, seeded=seeded)
        results += check_whatsapp_limits(self.rows, getattr(assertions, "whatsapp_limits", None))
        results += check_channel(self.rows, assertions)
        finish_run(self.store, self.seeded.run_id)
        return results


async def _ask_agent(agent: Agent, message: str, session: AgentSession) -> tuple[AgentReply, float]:
    return await call_agent(agent, agent.respond(message, session))


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
    simulator samples with seed + k - 1 (``convoeval.simulator.gate``).
    """
    scenario = conv.scenario
    assert isinstance(scenario, ConversationalScenario)
    log = _prefixed(opts.verbose, label)
    if log:
        traits = ", ".join(scenario.persona.traits or ()) or "none"
        log(f"goal: {' '.join(scenario.goal.split())} | traits: {traits} | max turns: {scenario.max_turns}")
    conv.gate = SimulatorGate(scenario, opts.gate) if opts.gate is not None and opts.gate.checks else None
    conv.channel = ChannelState(scenario.channel) if scenario.channel is not None else None
    for i in range(scenario.max_turns):
        turn = i + 1
        if opts.on_turn:
            opts.on_turn(label, turn)
        sim, recorded = await _patient_says(conv, opts, replay, seed, trial, i, attempt)
        if log:
            log(f"    [Turn {turn}] Patient: {sim.message!r}")
        stop = _stop(conv, turn, sim, recorded, log)
        if stop is not None:
            return stop
        reply = await _agent_answers(conv, agent, turn, sim.message, log)
        expected = replay.reply(turn) if recorded and replay is not None else None
        if expected is not None and not same_reply(expected, reply.text, reply.tool_names):
            conv.divergence_turn = turn  # the simulator takes over from the next turn, with the same seed
            if log:
                log(f"    [Turn {turn}] >> the agent's reply differs from the recording: the simulator takes over")
    return "max_turns", False


async def _patient_says(conv: _Conversation, opts: RunOptions, replay: PatientReplay | None, seed: int | None,
                        trial: int, i: int, attempt: int) -> tuple[_Replayed | SimulatorTurn, bool]:
    """The patient's message at 0-based turn ``i`` (recorded while a replay lasts, else simulated), recorded in the
    conversation; and whether it came from the recording."""
    turn = i + 1
    recorded = replay.message(turn) if replay is not None and conv.divergence_turn is None else None
    sim: _Replayed | SimulatorTurn
    if recorded is not None:
        sim = _Replayed(*recorded)
        conv.replayed_turns = turn
    else:
        sim = await _simulated_turn(conv, opts, seed, trial, i, attempt)
    await conv.add_patient(turn, sim.message, signal=sim.signal, result=getattr(sim, "result", None),
                           prompt_version=getattr(sim, "prompt_version", None), voice=getattr(sim, "voice", None),
                           act=getattr(sim, "act", None) or None)
    return sim, recorded is not None


def _stop(conv: _Conversation, turn: int, sim: _Replayed | SimulatorTurn, recorded: bool, log: Log | None
          ) -> tuple[str, bool] | None:
    """How the conversation ends at this patient message, if it does: the gate's failure, or a stop signal."""
    # Checked before its stop signal counts: a broken message that would end the conversation is the
    # simulator's failure, never a goal the agent is scored on.
    gate = conv.gate
    failure = gate.patient(turn, sim.message, recorded=recorded,
                           final=sim.signal in ("GOAL_COMPLETE", "STUCK")) if gate else None
    if failure is not None:
        conv.simulator_failure = failure
        if log:
            log(f"    [Turn {turn}] >> simulator failure ({failure.check}): {failure.detail}")
        return SIMULATOR_FAILURE, False
    # Only the simulator's stop signals end a conversation; an agent writing one changes nothing.
    if sim.signal not in ("GOAL_COMPLETE", "STUCK"):
        return None
    if log:
        log(f"    [Turn {turn}] >> {sim.signal}")
    if sim.signal == "GOAL_COMPLETE":
        conv.simulated_claim = turn if not recorded else None
        return "GOAL_COMPLETE", True
    return "STUCK", False


async def _agent_answers(conv: _Conversation, agent: Agent, turn: int, message: str, log: Log | None) -> AgentReply:
    """The agent's reply to the patient's message, recorded, shown to the gate and to the observer (through the
    WhatsApp channel when the scenario has one: then everything the agent sent in the turn)."""
    if conv.channel is not None:
        messages = simulated_messages(conv, turn, message, conv.scenario.persona.traits or ())
        later = conv.channel.settings.later.get(turn, 0.0)
        replies = await deliver_turn(conv, agent, turn, messages, after_s=later, recorded=conv.rows[-1], log=log)
        reply = merged_reply(replies)
    else:
        reply, latency = await _ask_agent(agent, message, conv.session)
        await conv.add_agent(turn, reply, latency)
        await conv.observe(turn, message, reply)
    if conv.gate:
        conv.gate.agent(reply.text)
    if log:
        log(f"    [Turn {turn}] Agent: {reply.text[:120]!r}")
        log(f"    [Turn {turn}] Tools: [{', '.join(reply.tool_names)}]")
    return reply


async def _simulated_turn(conv: _Conversation, opts: RunOptions, seed: int | None, trial: int, i: int,
                          attempt: int) -> SimulatorTurn:
    """The simulated patient's message at 0-based turn ``i``: the agenda patient or the LLM patient, as the run's
    ``simulator`` says. Attempt k > 1 is a re-simulation with seed + k - 1 (the LLM patient samples)."""
    from convoeval.simulator.choice import resolve_simulator  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    scenario = conv.scenario
    assert isinstance(scenario, ConversationalScenario)
    sim_seed = seed if attempt == 1 or seed is None else seed + attempt - 1
    model = as_chat_model("simulator", opts.simulator_model)  # built once by the run; a chat model is returned as is
    if resolve_simulator(opts.simulator, model) == "agenda":
        from convoeval.simulator.agenda import aagenda_turn  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

        return await aagenda_turn(conv.entries, scenario=scenario, model=model, seed=sim_seed, turn=i, trial=trial)
    from convoeval.simulator.patient import apatient_turn  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)
    from convoeval.simulator.prompts import DEFAULT_FRAMING  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    if attempt == 1:
        return await apatient_turn(conv.entries, scenario=scenario, model=opts.simulator_model, seed=seed, turn=i,
                                   trial=trial)
    # Its own sample identity: an unseeded re-simulation must not replay the first attempt from the cache.
    identity = SampleIdentity(scenario=scenario.id, seed=sim_seed, trial=trial, role="simulator", turn=i,
                              extra=f"{DEFAULT_FRAMING}/attempt-{attempt}")
    return await apatient_turn(conv.entries, scenario=scenario, model=opts.simulator_model, seed=sim_seed, turn=i,
                               trial=trial, identity=identity, temperature=RESIMULATION_TEMPERATURE)


@dataclass(frozen=True)
class _Replayed:
    """A recorded patient message standing in for a simulator turn (no LLM call, so no call result)."""

    message: str
    signal: str | None


async def _talk_scripted(conv: _Conversation, agent: Agent, opts: RunOptions, label: str) -> tuple[str, bool]:
    """The scripted loop: each turn's message(s) to the agent, the reply checked against the turn's expectations.

    A scenario that talks through the WhatsApp channel (``ScriptedScenario.uses_channel``) sends each turn's messages
    through it (``convoeval.pipeline.channel_talk``); the turn's expectations read everything the agent sent in it.
    """
    scenario = conv.scenario
    assert isinstance(scenario, ScriptedScenario)
    log = _prefixed(opts.verbose, label)
    if scenario.uses_channel:
        conv.channel = ChannelState(scenario.channel)
    for i, step in enumerate(scenario.turns):
        turn = i + 1
        if opts.on_turn:
            opts.on_turn(label, turn)
        if conv.channel is not None:
            reply = await _scripted_channel_turn(conv, agent, turn, step, log)
        else:
            text = step.texts[0]
            await conv.add_patient(turn, text)
            reply, latency = await _ask_agent(agent, text, conv.session)
            await conv.add_agent(turn, reply, latency)
            await conv.observe(turn, text, reply)
        conv.check_failures.setdefault(turn, []).extend(check_turn(step.expect, reply))
        if log:
            log(f"[Turn {turn}] Agent: {reply.text[:100]!r} | Tools: [{', '.join(reply.tool_names)}] "
                f"| checks: {conv.check_failures[turn] or 'ok'}")
    return "script_end", False


async def _scripted_channel_turn(conv: _Conversation, agent: Agent, turn: int, step: ScriptedTurn,
                                 log: Log | None) -> AgentReply:
    """One scripted turn through the channel; a tap on a button the agent did not offer is a failed check."""
    assert conv.channel is not None
    title = offered_title(conv.channel, step.tap) if step.tap is not None else None
    conv.check_failures[turn] = []
    if step.tap is not None and title is None:
        offered = ", ".join(conv.channel.offered) or "none"
        conv.check_failures[turn].append(f"tap: {step.tap!r} was not offered by the agent's last message "
                                         f"(offered: {offered})")
    replies = await deliver_turn(conv, agent, turn, step.messages(title), after_s=step.after or 0.0,
                                 redeliver=1.0 if step.redeliver else None, reorder=1.0 if step.reorder else None,
                                 log=log)
    return merged_reply(replies)


def _forget(agent: Agent, conversation_id: str | None) -> None:
    """Let the agent drop its state for a finished conversation (``forget``, where it has one).

    A batch shares one agent object across all its runs, so state an agent keeps per conversation would otherwise
    grow with the sweep (the scale benchmark's 5,000 conversations).
    """
    forget = getattr(agent, "forget", None)
    if conversation_id and callable(forget):
        forget(conversation_id)
