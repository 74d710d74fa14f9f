"""How a scenario's WhatsApp channel behaves: the ``channel:`` block, and durations written as people write them.

A scenario without the block talks as it always did (one text each way, no message ids, no clock). With it, every
patient message travels through ``convoeval.channel.delivery``: it gets an id and a time, a burst's fragments arrive
one by one, and the channel may misbehave as the block says, seeded by the run's seed so a run is reproducible.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator

from convoeval.channel.parts import MediaPart

__all__ = ["DEFAULT_QUIET_S", "ChannelSettings", "PatientMedia", "parse_duration"]

#: Seconds the patient stays quiet after a burst before the channel tells the agent so (its debounce timer fires).
DEFAULT_QUIET_S = 10.0

_Probability = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1)]
_Seconds = Annotated[StrictFloat | StrictInt, Field(ge=0)]


class PatientMedia(MediaPart):
    """A file a simulated patient sends when the agent asks for it: ``when`` holds words of the agent's message
    (any one, case and accents ignored: ``comprovante``, ``receipt``) that make it due; sent once."""

    when: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class ChannelSettings(BaseModel):
    """A scenario's ``channel:`` block (docs/whatsapp.md). Every value is optional; the defaults misbehave never.

    Attributes:
        redeliver: the chance that a patient message is delivered a second time, with the same id, after the agent
            answered it (a webhook retried at least once); seeded per message.
        reorder: the chance that two consecutive fragments of a burst arrive in the opposite order to the one they
            were sent in (their ``sent_at`` times keep the true order).
        delay_s: the largest network delay, in seconds, added to each message's arrival (seeded, uniform from 0).
        fragment_gap_s: seconds between the fragments of a burst as the patient types them.
        quiet_s: seconds the patient stays quiet after a burst before the channel tells the agent (``idle``).
        bursts: conversational scenarios: the chance that a simulated patient's message of several sentences goes
            out as a burst of them (at least 0.5 for a persona whose traits say impatient, anxious, hurried;
            ``convoeval.channel.patient``). A short message naming one offered button is always a tap.
        later: conversational scenarios: patient turn (1-based) -> how long after the agent's last message the
            simulated patient writes it (``{3: 26h}``); the agent gets the silence first (a follow-up).
        media: conversational scenarios: files the simulated patient sends, each when the agent's message names one
            of its ``when`` words (a receipt photo when asked for the receipt), before its words of that turn.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    redeliver: _Probability = 0.0
    reorder: _Probability = 0.0
    delay_s: _Seconds = 0.0
    fragment_gap_s: _Seconds = 3.0
    quiet_s: Annotated[StrictFloat | StrictInt, Field(gt=0)] = DEFAULT_QUIET_S
    bursts: _Probability = 0.0
    media: list[PatientMedia] = Field(default_factory=list)
    later: dict[Annotated[StrictInt, Field(gt=0)], float] = Field(default_factory=dict)

    @field_validator("later", mode="before")
    @classmethod
    def _durations(cls, value: object) -> object:
        if isinstance(value, dict):
            return {turn: parse_duration(after) for turn, after in value.items()}
        return value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)\s*$",
                       re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> float:
    """Seconds in a duration: a number of seconds, or text such as ``"90s"``, ``"15 min"``, ``"26h"``, ``"2d"``.

    Raises:
        ValueError: naming the value and the forms it accepts.

    Example:
        >>> parse_duration("26h"), parse_duration("90 s"), parse_duration(45)
        (93600.0, 90.0, 45.0)
    """
    if isinstance(value, bool):
        raise ValueError(f"a duration is a number of seconds or text like '26h', got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"a duration cannot be negative, got {value!r}")
        return float(value)
    match = _DURATION.match(str(value))
    if match is None:
        raise ValueError(f"not a duration: {value!r} (write seconds, or e.g. '90s', '15m', '26h', '2d')")
    number, unit = match.groups()
    return float(number) * _UNIT_S[unit[0].lower()]
