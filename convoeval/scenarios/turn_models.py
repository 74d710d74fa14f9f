"""A scripted scenario's turns: what the patient sends (text, a burst, media, a tap, a silence) and what the agent's
reply must show (docs/scenarios.md, docs/whatsapp.md)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, StrictInt, field_validator, model_validator

from convoeval.channel.parts import MediaPart, Part, ReplyPart, TextPart
from convoeval.channel.settings import parse_duration
from convoeval.scenarios.strict import NonEmptyStr, StrictModel

__all__ = ["ScriptedTurn", "TurnExpectations"]


class TurnExpectations(StrictModel):
    """Per-turn checks of a scripted scenario."""

    tools_called: list[NonEmptyStr] = Field(default_factory=list)
    tools_not_called: list[NonEmptyStr] = Field(default_factory=list)
    response_contains: list[NonEmptyStr] = Field(default_factory=list)
    response_not_contains: list[NonEmptyStr] = Field(default_factory=list)
    response_matches: str | None = Field(default=None, description="A regular expression (Python syntax).")
    max_tool_calls: Annotated[StrictInt, Field(ge=0)] | None = None

    @field_validator("response_matches")
    @classmethod
    def _valid_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from None
        return value


Duration = Annotated[float, Field(ge=0)]


class ScriptedTurn(StrictModel):
    """One user turn of a scripted scenario and what the agent's reply must show.

    The turn sends its ``user`` text (a list is a burst: several WhatsApp messages in a row), then its ``media``,
    then its ``tap``; ``after`` makes the patient send it that long after the agent's last message, and a turn with
    ``after`` alone is the patient staying silent (the agent may follow up). See docs/whatsapp.md.
    """

    user: NonEmptyStr | Annotated[list[NonEmptyStr], Field(min_length=1)] | None = None
    media: MediaPart | None = Field(
        default=None, description="A photo, audio note or document the patient sends (a file under evals/media/).")
    tap: NonEmptyStr | None = Field(
        default=None, description="The id of a reply button or list row of the agent's last message the patient taps.")
    after: Duration | None = Field(
        default=None, description="How long after the agent's last message the patient sends this turn ('26h', "
        "'90s', seconds); alone, the patient stays silent that long.")
    redeliver: bool = Field(
        default=False, description="The channel delivers this turn's messages a second time, same ids, after the "
        "agent answered (a webhook retry), whatever the channel block's redeliver chance.")
    reorder: bool = Field(
        default=False, description="The channel delivers this turn's first two messages in the opposite order to the "
        "one they were sent in (their sent_at keep the true order), whatever the channel block's reorder chance.")
    expect: TurnExpectations = Field(default_factory=TurnExpectations)
    judge: bool = True

    @field_validator("after", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return None if value is None else parse_duration(value)

    @model_validator(mode="after")
    def _says_or_waits(self) -> ScriptedTurn:
        if self.user is None and self.media is None and self.tap is None and self.after is None:
            raise ValueError("a turn needs 'user' (text, or a list for a burst), 'media', 'tap' or 'after'")
        return self

    @property
    def texts(self) -> list[str]:
        """The turn's text messages, in order (one, several for a burst, or none)."""
        if self.user is None:
            return []
        return [self.user] if isinstance(self.user, str) else list(self.user)

    @property
    def uses_channel(self) -> bool:
        """Whether the turn needs the WhatsApp channel (a burst, media, a tap or a delay): plain text does not."""
        return (isinstance(self.user, list) or self.media is not None or self.tap is not None
                or self.after is not None or self.redeliver or self.reorder)

    def messages(self, tap_title: str | None = None) -> list[list[Part]]:
        """The WhatsApp messages the turn sends: one per text, then the media, then the tap (with its title)."""
        out: list[list[Part]] = [[TextPart(text=t)] for t in self.texts]
        if self.media is not None:
            out.append([self.media])
        if self.tap is not None:
            out.append([ReplyPart(id=self.tap, title=tap_title)])
        return out
