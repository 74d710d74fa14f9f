"""``Conversation``: the engine's one state object — one attempt at one job, from its run id to its last row.

It is built once from a ``Job`` (what to run: the scenario, the seed, the trial, a patient to replay, a target of its
own, an observer) and the batch's ``RunOptions`` (how: the agents, the models, the store, the gate's settings). Every
step of the exchange (``convoeval.pipeline.talk``, ``convoeval.pipeline.channel_talk``) and of the scoring
(``convoeval.pipeline.conversation``) reads what it needs from it and writes what happened to it: the replay, the
observer, the simulator-failure gate and the WhatsApp channel are its attributes, never parameters handed from
function to function.

Its life: ``Conversation(job, options, attempt=k)`` mints the run id and names the conversation (``keys``, ``label``)
before anything can fail, so a conversation that fails before its fixtures exist keeps its identity; ``start`` is
given the seeded fixtures, the store and the agent, and builds the agent's session, the gate and the channel; the
exchange adds rows; ``finish`` checks the database assertions; the outcome (``stop_reason``, ``goal_completed``,
``assertion_rows``, ``error``) is what the score is built from.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypedDict

from convoeval.agents import safe_target
from convoeval.agents.base import Agent, AgentError, AgentReply, AgentSession
from convoeval.channel import Part, parts_as_dicts
from convoeval.pathcheck import check_checkpoints, check_path, check_whatsapp_limits
from convoeval.pathcheck.channel import check_channel
from convoeval.pipeline.channel_state import ChannelState
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import Log, RunOptions
from convoeval.scenarios import ConversationalScenario, ScriptedScenario
from convoeval.simulator.gate import SimulatorFailure, SimulatorGate
from convoeval.store import Store
from convoeval.store.assertions import AssertionResult, check_assertions
from convoeval.store.conversations import ensure_conversation, record_message
from convoeval.store.fixtures import SeededRun, finish_run, new_run_id

if TYPE_CHECKING:
    from convoeval.llm.types import LLMResult
    from convoeval.pipeline.observe import TurnObserver
    from convoeval.pipeline.replay import PatientReplay

__all__ = ["Conversation", "RunKeys"]


class RunKeys(TypedDict):
    """The columns that name a conversation in every row it writes (transcripts, runs, assertions, judges)."""

    run_id: str
    scenario: str
    agent: str
    target: str
    seed: int | None
    trial: int


class Conversation:
    """One attempt at one job as it runs: what it runs with, what it talks through, what it has said so far.

    Attributes:
        job, options, attempt: what it was built from (attempt k > 1 is a re-simulation after the gate stopped one).
        scenario, seed, trial, label: the job's, with ``seed`` the scenario's own when the job gives none.
        replay: the recorded patient turns to send first (``Job.replay``), or ``None``.
        observer: this attempt's per-turn observer, made by the job's factory (``Job.observe``), or ``None``.
        gate: the simulator-failure gate (a conversational scenario with the gate on), built by ``start``.
        channel: the WhatsApp channel's state (a scenario that talks through it), built by ``start``.
        run_id, keys: the conversation's identity in every row it writes (the target without credentials).
        seeded, session, store, agent: its fixtures' rows, the agent's session, the store and the agent under
            test, from ``start`` on.
        rows: the transcript so far, one dict per message.
        stop_reason, goal_completed, assertion_rows, error: how it ended.
    """

    seeded: SeededRun
    session: AgentSession
    store: Store
    agent: Agent

    def __init__(self, job: Job, options: RunOptions, *, attempt: int = 1) -> None:
        scenario = job.scenario
        self.job = job
        self.options = options
        self.attempt = attempt
        self.scenario = scenario
        self.seed = job.seed if job.seed is not None or not isinstance(scenario, ConversationalScenario) \
            else scenario.seed
        self.trial = job.trial
        self.label = job.label
        self.judged = job.judged
        self.replay: PatientReplay | None = job.replay
        self.observer: TurnObserver | None = job.observe() if job.observe is not None else None
        self.gate: SimulatorGate | None = None
        self.channel: ChannelState | None = None
        self.log = _prefixed(options.verbose, self.label)
        # The run id exists before anything can fail, so a run that fails before seeding keeps its identity in every
        # frame and in report.json. Frames record the target without webhook credentials.
        self.run_id = new_run_id()
        self.keys: RunKeys = {"run_id": self.run_id, "scenario": scenario.id, "agent": scenario.agent,
                              "target": safe_target(options.target_for(job)), "seed": self.seed, "trial": self.trial}
        self.rows: list[dict[str, Any]] = []
        self.conversation_id: str | None = None
        self._ensured: str | None = None  # the conversation id whose row is known to exist
        self.check_failures: dict[int, list[str]] = {}  # scripted runs: turn -> failed expectations
        self.pending: list[tuple[str | None, int, str, str, list[str]]] = []  # messages not yet in the store
        self.replayed_turns = 0  # patient turns taken from a recording (PatientReplay)
        self.divergence_turn: int | None = None  # the first turn whose agent reply differed from the recording
        self.simulator_failure: SimulatorFailure | None = None  # why the gate stopped the run
        self.simulated_claim: int | None = None  # the turn of a [GOAL_COMPLETE] the simulator (not a replay) wrote
        self.stop_reason = "error"
        self.goal_completed = False
        self.assertion_rows: list[dict[str, Any]] = []
        self.error: str | None = None

    def start(self, seeded: SeededRun, store: Store, agent: Agent) -> None:
        """The fixtures are seeded: the agent's session, the gate and the channel for the exchange."""
        scenario = self.scenario
        self.seeded, self.store, self.agent = seeded, store, agent
        self.session = AgentSession(run_id=seeded.run_id, clinic_id=seeded.clinic_id, patient_id=seeded.patient_id,
                                    patient_phone=scenario.persona.phone, patient_name=scenario.persona.name,
                                    locale=scenario.locale, agent=scenario.agent, store=store)
        gate = self.options.gate
        if isinstance(scenario, ConversationalScenario):
            self.gate = SimulatorGate(scenario, gate) if gate is not None and gate.checks else None
            self.channel = ChannelState(scenario.channel) if scenario.channel is not None else None
        elif isinstance(scenario, ScriptedScenario) and scenario.uses_channel:
            self.channel = ChannelState(scenario.channel)

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The transcript so far (what the simulated patient and the judges read)."""
        return self.rows

    async def add_patient(self, turn: int, text: str, *, signal: str | None = None, result: LLMResult | None = None,
                          prompt_version: str | None = None, voice: str | None = None, act: str | None = None,
                          parts: list[Part] | None = None, channel: dict[str, str] | None = None) -> None:
        """Record a patient message (with the simulator's call, its prompt version, voice and act when simulated)."""
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
        """Record an agent reply (its messages, parts and tool calls)."""
        if reply.conversation_id:
            self.session.conversation_id = reply.conversation_id
        self.rows.append({
            **self.keys, "turn": turn, "role": "agent", "text": reply.text, "bubbles": list(reply.bubbles),
            "parts": parts_as_dicts(reply.parts), "tools": reply.tool_names,
            "tool_calls": [{"name": t.name, "arguments": t.arguments, "result": t.result} for t in reply.tool_calls],
            "latency_s": latency_s, **(channel or {}),
        })
        await self._log(turn, "agent", reply.text, reply.tool_names)

    async def ask(self, call: Awaitable[object]) -> tuple[AgentReply, float]:
        """Await one call into the agent (``agent.respond(...)`` or ``agent.idle(...)``): its reply and its seconds.

        Raises:
            AgentError: the agent returned something that is not an ``AgentReply``, or its code raised a
                ``BaseException`` such as ``SystemExit`` (it ends this conversation, never the run's loop).
        """
        started = time.perf_counter()
        try:
            reply = await call
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise  # the user (or the run) stops: not this agent's failure
        except Exception:
            raise
        except BaseException as exc:  # e.g. sys.exit() in agent code: ends this conversation, never the run's loop
            name = getattr(self.agent, "name", type(self.agent).__name__)
            raise AgentError(f"agent {name!r} raised {type(exc).__name__}({exc}); only this conversation ended"
                             ) from None
        if not isinstance(reply, AgentReply):
            raise AgentError(f"agent {getattr(self.agent, 'name', self.agent)!r} returned {type(reply).__name__}, "
                             "not an AgentReply")
        return reply, time.perf_counter() - started

    async def answer(self, turn: int, message: str) -> AgentReply:
        """The agent's reply to the patient's ``message`` (without the channel): asked, recorded, observed."""
        reply, latency = await self.ask(self.agent.respond(message, self.session))
        await self.add_agent(turn, reply, latency)
        await self.observe(turn, message, reply)
        return reply

    def forget(self) -> None:
        """Let the agent drop its state for this finished conversation (``forget``, where it has one).

        A batch shares one agent object across all its runs, so state an agent keeps per conversation would otherwise
        grow with the sweep (the scale benchmark's 5,000 conversations).
        """
        agent_forget = getattr(self.agent, "forget", None)
        if self.session.conversation_id and callable(agent_forget):
            agent_forget(self.session.conversation_id)

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

    def finish(self) -> list[AssertionResult]:
        """After the last turn: write the messages, check the database assertions, mark the run finished.

        The messages go to the store only for the assertions (``tools_called`` reads them); the cleanup deletes them
        right after. A scenario without assertions skips that transaction.
        """
        assertions = self.scenario.assertions
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


def _prefixed(log: Log | None, label: str) -> Callable[[str], None] | None:
    """Verbose lines of concurrent conversations interleave: each carries its conversation's label."""
    if log is None:
        return None
    return lambda line: log(f"[{label}] {line.strip()}")
