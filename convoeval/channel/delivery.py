"""The channel between the patient and the agent: what arrives, when, and in which order, for one patient turn.

``plan_turn`` turns the messages a patient sends in one turn (one, or a burst of several) into the events the agent
sees: each message with its WhatsApp id and times, the quiet after the burst (``Idle``: the moment a debouncing bot's
timer fires), and, as the scenario's ``channel:`` block says, a message delivered again with the same id after it was
answered (webhooks are at-least-once), two fragments swapped, a network delay. Everything is decided by a seeded
``random.Random``, so a run is reproducible and every misbehaviour is recorded in the transcript.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from convoeval.channel.parts import Part, part_text
from convoeval.channel.settings import ChannelSettings

__all__ = ["WINDOW", "Idle", "InboundMessage", "channel_rng", "message_id", "plan_turn"]

#: WhatsApp's customer-service window: free-form messages only within 24 hours of the patient's last message.
WINDOW = dt.timedelta(hours=24)
#: How long the patient takes to read the agent's answer and start typing the next turn (fixed: a clock, not a mood).
_THINK = dt.timedelta(seconds=20)

Delivery = Literal["delivered", "redelivered", "reordered"]


@dataclass(frozen=True)
class InboundMessage:
    """One patient message as the agent receives it (WhatsApp's inbound webhook, flattened).

    Attributes:
        id: the WhatsApp message id; a redelivery has the same id as the first delivery.
        parts: what the message holds (normally one part: text, a tap, media).
        sent_at: when the patient sent it (the order they meant).
        arrived_at: when it reached the agent.
        delivery: ``delivered``; ``redelivered`` (the same id again, after it was answered); ``reordered`` (it
            arrived before a fragment the patient sent earlier).
        fragment: its 0-based position in its burst as sent.
        burst: how many messages the patient sent in this turn.
    """

    id: str
    parts: tuple[Part, ...]
    sent_at: dt.datetime
    arrived_at: dt.datetime
    delivery: Delivery = "delivered"
    fragment: int = 0
    burst: int = 1

    @property
    def text(self) -> str:
        """The message as text (a tap as the title tapped, media as its chip and caption): what ``respond`` gets."""
        return "\n".join(part_text(p) for p in self.parts)

    def to_json(self) -> dict[str, object]:
        """The message as a webhook agent receives it (``message`` in the request body)."""
        return {"id": self.id, "parts": [p.model_dump(exclude_none=True) for p in self.parts],
                "sent_at": self.sent_at.isoformat(), "arrived_at": self.arrived_at.isoformat(),
                "delivery": self.delivery, "fragment": self.fragment, "burst": self.burst}


@dataclass(frozen=True)
class Idle:
    """Time passed with no patient message: ``quiet`` after a burst (a debouncing bot answers now), or ``wait``
    (a scenario's ``after:`` with no message: the patient went silent, the agent may follow up)."""

    at: dt.datetime
    kind: Literal["quiet", "wait"]


def message_id(conversation_key: str, turn: int, index: int) -> str:
    """A WhatsApp-like message id, unique per conversation, turn and message (``wamid.<key>.<turn>.<index>``)."""
    key = hashlib.sha1(conversation_key.encode()).hexdigest()[:10]
    return f"wamid.{key}.{turn}.{index}"


def channel_rng(scenario: str, seed: int | None, trial: int, turn: int) -> random.Random:
    """The seeded generator of one turn's channel: the same scenario, seed, trial and turn misbehave the same way."""
    return random.Random(f"channel/{scenario}/{seed}/{trial}/{turn}")


def plan_turn(messages: Sequence[Sequence[Part]], *, turn: int, conversation_key: str, start: dt.datetime,
              settings: ChannelSettings, rng: random.Random, after_s: float = 0.0,
              redeliver: float | None = None, reorder: float | None = None) -> list[InboundMessage | Idle]:
    """The events of one patient turn, in the order the agent sees them.

    Args:
        messages: what the patient sends this turn, one entry per message (a burst has several); empty for a turn
            in which the patient only stays silent for ``after_s`` seconds.
        turn: the turn's number (for message ids).
        conversation_key: what makes ids unique across conversations (the run id).
        start: the clock when the turn begins (after the agent's last message).
        settings: the scenario's channel block.
        rng: the turn's seeded generator (``channel_rng``).
        after_s: seconds the patient waits before this turn (``after: 26h``).
        redeliver: this turn's chance of a redelivery, instead of ``settings.redeliver`` (a scripted turn's
            ``redeliver: true`` is 1).

    Returns:
        Messages and idle moments: with ``after_s``, the silence (``Idle("wait")``: the agent may follow up); the
        fragments (two swapped with ``settings.reorder``), then the quiet after them, then each message
        ``settings.redeliver`` picked delivered again with its quiet. A silent turn is its ``Idle("wait")`` alone.

    Example:
        >>> from convoeval.channel.parts import TextPart
        >>> t0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)
        >>> events = plan_turn([[TextPart(text="oi")], [TextPart(text="quero pagar")]], turn=1,
        ...                    conversation_key="run-1", start=t0, settings=ChannelSettings(), rng=random.Random(0))
        >>> [e.kind if isinstance(e, Idle) else e.id[-4:] for e in events]
        ['.1.0', '.1.1', 'quiet']
        >>> events[-1].at.strftime("%H:%M:%S")  # sent at 09:00:20 and :23, quiet 10 s after the last
        '09:00:33'
    """
    # A silence first gives the agent its moment (a follow-up), then the patient writes.
    silence: list[InboundMessage | Idle] = [Idle(at=start + dt.timedelta(seconds=after_s), kind="wait")] if after_s else []
    sent = start + (dt.timedelta(seconds=after_s) + _THINK if after_s else _THINK)
    if not messages:
        return silence
    gap = dt.timedelta(seconds=settings.fragment_gap_s)
    arrivals: list[InboundMessage] = []
    for index, parts in enumerate(messages):
        sent_at = sent + gap * index
        delay = dt.timedelta(seconds=rng.uniform(0, settings.delay_s)) if settings.delay_s else dt.timedelta(0)
        arrivals.append(InboundMessage(id=message_id(conversation_key, turn, index), parts=tuple(parts),
                                       sent_at=sent_at, arrived_at=sent_at + delay, fragment=index,
                                       burst=len(messages)))
    arrivals = _maybe_reorder(arrivals, settings.reorder if reorder is None else reorder, rng)
    quiet = dt.timedelta(seconds=settings.quiet_s)
    last = max(m.arrived_at for m in arrivals)
    events: list[InboundMessage | Idle] = [*silence, *arrivals, Idle(at=last + quiet, kind="quiet")]
    # A retry comes after the bot answered (the webhook timed out or the 200 was lost): the dangerous redelivery.
    chance = settings.redeliver if redeliver is None else redeliver
    again = [m for m in sorted(arrivals, key=lambda m: m.fragment) if chance and rng.random() < chance]
    clock = last + quiet
    for message in again:
        clock += dt.timedelta(seconds=5)
        events.append(InboundMessage(id=message.id, parts=message.parts, sent_at=message.sent_at, arrived_at=clock,
                                     delivery="redelivered", fragment=message.fragment, burst=message.burst))
        clock += quiet
        events.append(Idle(at=clock, kind="quiet"))
    return events


def _maybe_reorder(arrivals: list[InboundMessage], chance: float, rng: random.Random) -> list[InboundMessage]:
    """Swap adjacent fragments with probability ``chance`` each; a fragment that overtook an earlier one is marked
    ``reordered`` and takes the arrival time of the one it overtook (arrival times stay increasing)."""
    if len(arrivals) < 2 or not chance:
        return sorted(arrivals, key=lambda m: m.arrived_at)
    order = sorted(arrivals, key=lambda m: m.arrived_at)
    i = 0
    while i < len(order) - 1:
        if rng.random() < chance:
            first, second = order[i], order[i + 1]
            order[i] = _arrive(second, first.arrived_at, "reordered")
            order[i + 1] = _arrive(first, second.arrived_at, first.delivery)
            i += 2
        else:
            i += 1
    return order


def _arrive(message: InboundMessage, at: dt.datetime, delivery: Delivery) -> InboundMessage:
    return InboundMessage(id=message.id, parts=message.parts, sent_at=message.sent_at, arrived_at=at,
                          delivery=delivery, fragment=message.fragment, burst=message.burst)
