"""How a simulated patient's message goes out on WhatsApp: split into a burst, or a tap on a button it names.

The simulated patient (agenda or LLM) writes one message per turn. Through the channel, a WhatsApp user often sends
it as several messages in a row, and answers a message with reply buttons by tapping one. ``patient_messages`` does
both, deterministically from a seeded generator: how often a message becomes a burst is the scenario's
``channel.bursts`` chance, raised for a persona whose traits say they type in pieces (impatient, anxious, hurried).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from convoeval.channel.parts import MediaPart, Part, ReplyPart, TextPart
from convoeval.channel.settings import PatientMedia
from convoeval.textread.folding import fold

__all__ = ["BURSTY_TRAITS", "burst_chance", "due_media", "patient_messages"]

#: Trait words (folded, any language) of a patient who types in pieces: the burst chance is at least 0.5.
BURSTY_TRAITS = ("impatient", "impaciente", "anxious", "ansios", "hurr", "pressa", "prisa", "apressad", "fragment")
_PIECES = re.compile(r"(?<=[.!?,;])\s+")
_MAX_TAP_WORDS = 4


def burst_chance(chance: float, traits: Sequence[str]) -> float:
    """The chance a patient message becomes a burst: the scenario's, at least 0.5 for a bursty persona."""
    folded = " ".join(t.casefold() for t in traits)
    return max(chance, 0.5) if any(cue in folded for cue in BURSTY_TRAITS) else chance


def _tap(text: str, offered: Mapping[str, str]) -> ReplyPart | None:
    words = text.casefold().strip(" .!?").split()
    if not offered or not words or len(words) > _MAX_TAP_WORDS:
        return None
    said = " ".join(words)
    hits = [(i, t) for i, t in offered.items() if t.casefold() == said or t.casefold() in said.split(" ")
            or said in t.casefold()]
    return ReplyPart(id=hits[0][0], title=hits[0][1]) if len(hits) == 1 else None


def due_media(media: Sequence[PatientMedia], agent_text: str, sent: set[str]) -> list[MediaPart]:
    """The files due now: not sent yet (``sent`` holds their paths) and named by the agent's last message."""
    said = fold(agent_text)
    due = [m for m in media if m.path not in sent and any(fold(w) in said for w in m.when)]
    return [MediaPart(kind=m.kind, path=m.path, caption=m.caption, transcript=m.transcript) for m in due]


def patient_messages(text: str, *, offered: Mapping[str, str], chance: float, rng: random.Random
                     ) -> list[list[Part]]:
    """The WhatsApp messages for one simulated patient message.

    A short message naming exactly one of the buttons the agent just offered (``offered``: id -> title) is a tap on
    it; otherwise, with probability ``chance``, a message of several sentences or clauses goes out as a burst of them
    (at most three); else one text message.

    Example:
        >>> patient_messages("Pix", offered={"pix": "Pix", "boleto": "Boleto"}, chance=0, rng=random.Random(0))
        [[ReplyPart(type='reply', id='pix', title='Pix')]]
        >>> [m[0].text for m in patient_messages("Oi! Quero pagar, pode ser no pix?", offered={}, chance=1,
        ...                                      rng=random.Random(0))]
        ['Oi!', 'Quero pagar,', 'pode ser no pix?']
    """
    tap = _tap(text, offered)
    if tap is not None:
        return [[tap]]
    pieces = [p for p in _PIECES.split(text.strip()) if p]
    if len(pieces) < 2 or not chance or rng.random() >= chance:
        return [[TextPart(text=text)]]
    if len(pieces) > 3:
        pieces = [*pieces[:2], " ".join(pieces[2:])]
    return [[TextPart(text=p)] for p in pieces]
