"""The exchange itself: the patient (simulated, scripted or replayed) and the agent take turns, every message recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from convoeval.agents.base import AgentError, AgentReply
from convoeval.frames import SIMULATOR_FAILURE
from convoeval.judges.turn import check_turn
from convoeval.llm import LLMError, SampleIdentity
from convoeval.llm.models import as_chat_model
from convoeval.pipeline.channel_state import offered_title
from convoeval.pipeline.channel_talk import deliver_turn, merged_reply, simulated_messages
from convoeval.pipeline.conversation_state import Conversation
from convoeval.pipeline.replay import same_reply
from convoeval.scenarios import ConversationalScenario, ScriptedScenario
from convoeval.scenarios.turn_models import ScriptedTurn
from convoeval.simulator.gate import RESIMULATION_TEMPERATURE
from convoeval.store.base import StoreError

if TYPE_CHECKING:
    from convoeval.simulator.replies import SimulatorTurn


def describe(exc: BaseException) -> str:
    """A failure as the conversation's ``error``: its kind (agent, LLM, store) and its message."""
    kind = {AgentError: "agent error", LLMError: "LLM error", StoreError: "store error"}
    for cls, label in kind.items():
        if isinstance(exc, cls):
            return f"{label}: {exc}"
    return f"{type(exc).__name__}: {exc}"


async def talk_conversational(conv: Conversation) -> tuple[str, bool]:
    """The simulator ↔ agent loop. Returns (stop_reason, goal_completed).

    With a replay (``conv.replay``), the recorded patient messages are sent first (see ``convoeval.pipeline.replay``).
    With the gate on (``conv.gate``), every simulated patient message is checked before the agent sees it; a broken
    patient stops the loop with ``simulator_failure`` (the reason in ``conv.simulator_failure``). Attempt k > 1 is a
    re-simulation: the simulator samples with seed + k - 1 (``convoeval.simulator.gate``).
    """
    scenario = conv.scenario
    assert isinstance(scenario, ConversationalScenario)
    log, on_turn, replay = conv.log, conv.options.on_turn, conv.replay
    if log:
        traits = ", ".join(scenario.persona.traits or ()) or "none"
        log(f"goal: {' '.join(scenario.goal.split())} | traits: {traits} | max turns: {scenario.max_turns}")
    for i in range(scenario.max_turns):
        turn = i + 1
        if on_turn:
            on_turn(conv.label, turn)
        sim, recorded = await _patient_says(conv, i)
        if log:
            log(f"    [Turn {turn}] Patient: {sim.message!r}")
        stop = _stop(conv, turn, sim, recorded)
        if stop is not None:
            return stop
        reply = await _agent_answers(conv, turn, sim.message)
        expected = replay.reply(turn) if recorded and replay is not None else None
        if expected is not None and not same_reply(expected, reply.text, reply.tool_names):
            conv.divergence_turn = turn  # the simulator takes over from the next turn, with the same seed
            if log:
                log(f"    [Turn {turn}] >> the agent's reply differs from the recording: the simulator takes over")
    return "max_turns", False


async def _patient_says(conv: Conversation, i: int) -> tuple[_Replayed | SimulatorTurn, bool]:
    """The patient's message at 0-based turn ``i`` (recorded while a replay lasts, else simulated), recorded in the
    conversation; and whether it came from the recording."""
    turn = i + 1
    replay = conv.replay
    recorded = replay.message(turn) if replay is not None and conv.divergence_turn is None else None
    sim: _Replayed | SimulatorTurn
    if recorded is not None:
        sim = _Replayed(*recorded)
        conv.replayed_turns = turn
    else:
        sim = await _simulated_turn(conv, i)
    await conv.add_patient(turn, sim.message, signal=sim.signal, result=getattr(sim, "result", None),
                           prompt_version=getattr(sim, "prompt_version", None), voice=getattr(sim, "voice", None),
                           act=getattr(sim, "act", None) or None)
    return sim, recorded is not None


def _stop(conv: Conversation, turn: int, sim: _Replayed | SimulatorTurn, recorded: bool) -> tuple[str, bool] | None:
    """How the conversation ends at this patient message, if it does: the gate's failure, or a stop signal."""
    # Checked before its stop signal counts: a broken message that would end the conversation is the
    # simulator's failure, never a goal the agent is scored on.
    gate, log = conv.gate, conv.log
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


async def _agent_answers(conv: Conversation, turn: int, message: str) -> AgentReply:
    """The agent's reply to the patient's message, recorded, shown to the gate and to the observer (through the
    WhatsApp channel when the scenario has one: then everything the agent sent in the turn)."""
    log = conv.log
    if conv.channel is not None:
        messages = simulated_messages(conv, turn, message)
        later = conv.channel.settings.later.get(turn, 0.0)
        replies = await deliver_turn(conv, turn, messages, after_s=later, recorded=conv.rows[-1])
        reply = merged_reply(replies)
    else:
        reply = await conv.answer(turn, message)
    if conv.gate:
        conv.gate.agent(reply.text)
    if log:
        log(f"    [Turn {turn}] Agent: {reply.text[:120]!r}")
        log(f"    [Turn {turn}] Tools: [{', '.join(reply.tool_names)}]")
    return reply


async def _simulated_turn(conv: Conversation, i: int) -> SimulatorTurn:
    """The simulated patient's message at 0-based turn ``i``: the agenda patient or the LLM patient, as the run's
    ``simulator`` says. Attempt k > 1 is a re-simulation with seed + k - 1 (the LLM patient samples)."""
    from convoeval.simulator.choice import resolve_simulator  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    scenario, opts, seed, trial, attempt = conv.scenario, conv.options, conv.seed, conv.trial, conv.attempt
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


async def talk_scripted(conv: Conversation) -> tuple[str, bool]:
    """The scripted loop: each turn's message(s) to the agent, the reply checked against the turn's expectations.

    A scenario that talks through the WhatsApp channel (``ScriptedScenario.uses_channel``: ``conv.channel``) sends
    each turn's messages through it (``convoeval.pipeline.channel_talk``); the turn's expectations read everything
    the agent sent in it.
    """
    scenario = conv.scenario
    assert isinstance(scenario, ScriptedScenario)
    log, on_turn = conv.log, conv.options.on_turn
    for i, step in enumerate(scenario.turns):
        turn = i + 1
        if on_turn:
            on_turn(conv.label, turn)
        if conv.channel is not None:
            reply = await _scripted_channel_turn(conv, turn, step)
        else:
            text = step.texts[0]
            await conv.add_patient(turn, text)
            reply = await conv.answer(turn, text)
        conv.check_failures.setdefault(turn, []).extend(check_turn(step.expect, reply))
        if log:
            log(f"[Turn {turn}] Agent: {reply.text[:100]!r} | Tools: [{', '.join(reply.tool_names)}] "
                f"| checks: {conv.check_failures[turn] or 'ok'}")
    return "script_end", False


async def _scripted_channel_turn(conv: Conversation, turn: int, step: ScriptedTurn) -> AgentReply:
    """One scripted turn through the channel; a tap on a button the agent did not offer is a failed check."""
    assert conv.channel is not None
    title = offered_title(conv.channel, step.tap) if step.tap is not None else None
    conv.check_failures[turn] = []
    if step.tap is not None and title is None:
        offered = ", ".join(conv.channel.offered) or "none"
        conv.check_failures[turn].append(f"tap: {step.tap!r} was not offered by the agent's last message "
                                         f"(offered: {offered})")
    replies = await deliver_turn(conv, turn, step.messages(title), after_s=step.after or 0.0,
                                 redeliver=1.0 if step.redeliver else None, reorder=1.0 if step.reorder else None)
    return merged_reply(replies)
