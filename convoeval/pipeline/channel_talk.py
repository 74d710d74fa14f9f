"""A patient turn through the WhatsApp channel: each message delivered with its id and time, the quiet after it.

Used by the exchange (``convoeval.pipeline.talk``) when a scenario talks through the channel (a ``channel:`` block,
or a scripted turn with a burst, media, a tap or ``after``). The plan of a turn (``convoeval.channel.delivery``:
fragments, a swap, a redelivery, the quiet) is played against the agent: ``respond`` per delivered message, and the
agent's ``idle`` at each quiet moment when it has one. Every delivery is a patient row and every message the agent
sends an agent row, with the channel's columns (``message_id``, ``sent_at``, ``delivery``), so the assertions and the
report see exactly what happened. An empty reply (a bot waiting for the rest of a burst) is no row: nothing was sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from convoeval.agents.base import AgentReply, idle_handler
from convoeval.channel import Part, parts_as_dicts
from convoeval.channel.delivery import Idle, InboundMessage, channel_rng, plan_turn
from convoeval.channel.patient import burst_chance, due_media, patient_messages
from convoeval.pipeline.conversation_state import Conversation

__all__ = ["deliver_turn", "merged_reply", "simulated_messages"]


async def deliver_turn(conv: Conversation, turn: int, messages: Sequence[Sequence[Part]], *,
                       after_s: float = 0.0, redeliver: float | None = None, reorder: float | None = None,
                       recorded: dict[str, object] | None = None) -> list[AgentReply]:
    """Play one patient turn through the conversation's channel (``conv.channel``) against its agent and return the
    replies in which the agent sent something.

    ``recorded`` is the patient row already written for the turn's first message (the simulated patient's, with its
    signal and tokens): its first delivery fills that row's channel columns instead of adding one.

    Raises:
        AgentError: the agent failed on a delivery (the conversation is an error, as for any agent failure).
    """
    state, agent, log = conv.channel, conv.agent, conv.log
    assert state is not None
    events = plan_turn(messages, turn=turn, conversation_key=conv.run_id, start=state.clock,
                       settings=state.settings, after_s=after_s, redeliver=redeliver, reorder=reorder,
                       rng=channel_rng(conv.scenario.id, conv.seed, conv.trial, turn))
    idle = idle_handler(agent)
    sent: list[AgentReply] = []
    for event in events:
        conv.session.now = event.at if isinstance(event, Idle) else event.arrived_at
        if isinstance(event, InboundMessage):
            conv.session.inbound = event
            if recorded is not None:  # the simulated patient's row: now the first message that went out
                recorded.update(_patient_columns(event), text=event.text, bubbles=[event.text],
                                parts=parts_as_dicts(event.parts))
                conv.rows.remove(recorded)  # after what the agent sent during the silence before it, if anything
                conv.rows.append(recorded)
                recorded = None
            else:
                await conv.add_patient(turn, event.text, parts=list(event.parts), channel=_patient_columns(event))
            if log:
                log(f"    [Turn {turn}] Patient ({event.delivery}, {event.id}): {event.text!r}")
            reply, latency = await conv.ask(agent.respond(event.text, conv.session))
            trigger, answered = "reply", event.id
        else:
            conv.session.inbound = None
            if idle is None:
                continue
            reply, latency = await conv.ask(idle(conv.session))
            trigger, answered = event.kind, None
        if reply.conversation_id:  # an agent that waits (an empty reply) still names its conversation
            conv.session.conversation_id = reply.conversation_id
        if reply.parts or reply.bubbles:
            await conv.add_agent(turn, reply, latency, channel={
                "message_id": answered, "sent_at": conv.session.now.isoformat(), "delivery": trigger})
            await conv.observe(turn, event.text if isinstance(event, InboundMessage) else "", reply)
            state.remember(reply)
            sent.append(reply)
            if log:
                log(f"    [Turn {turn}] Agent ({trigger}): {reply.text[:120]!r} | tools: {reply.tool_names}")
    conv.session.inbound = None
    state.clock = max(conv.session.now or state.clock, state.clock)
    return sent


def simulated_messages(conv: Conversation, turn: int, text: str) -> list[list[Part]]:
    """A simulated patient's message as it goes out on WhatsApp: a tap on a button it names, a burst, or one text
    (``convoeval.channel.patient``), seeded by the scenario, seed, trial and turn; bursts as often as the persona's
    traits make them."""
    state = conv.channel
    assert state is not None
    traits = conv.scenario.persona.traits or ()
    rng = channel_rng(f"{conv.scenario.id}/patient", conv.seed, conv.trial, turn)
    files = due_media(state.settings.media, state.last_agent_text, state.media_sent)
    state.media_sent |= {f.path for f in files}
    said = patient_messages(text, offered=state.offered, chance=burst_chance(state.settings.bursts, traits), rng=rng)
    sent: list[list[Part]] = [[f] for f in files]
    return [*sent, *said]


def merged_reply(replies: Sequence[AgentReply]) -> AgentReply:
    """Everything the agent sent in a turn as one reply (its messages and tool calls in order): what a scripted
    turn's expectations are checked against."""
    return AgentReply(parts=[p for r in replies for p in r.parts], bubbles=[b for r in replies for b in r.bubbles],
                      tool_calls=[t for r in replies for t in r.tool_calls])


def _patient_columns(message: InboundMessage) -> dict[str, str]:
    return {"message_id": message.id, "sent_at": message.sent_at.isoformat(), "delivery": message.delivery}

