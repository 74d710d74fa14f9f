"""What an import is told beyond its files: which side is the clinic, how to read dates, where a conversation ends."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from convoeval.channel.settings import parse_duration
from convoeval.errors import ConvoevalError

__all__ = ["DEFAULT_SPLIT_AFTER", "ImportSettingError", "ImportSettings", "parse_split_after"]

#: A silence longer than this starts a new conversation: WhatsApp's customer-service window is 24 hours, so a
#: message after it opens a new window (and, for the clinic, a new request).
DEFAULT_SPLIT_AFTER = timedelta(hours=24)


class ImportSettingError(ConvoevalError, ValueError):
    """An import asked for something that cannot work (no side named the clinic, a bad duration); one line."""


@dataclass(frozen=True)
class ImportSettings:
    """The settings every reader gets.

    Attributes:
        agent_name: the clinic's sender name in a chat export (``--agent-name``); matched ignoring case and accents.
        agent_phone: the clinic's phone number in a chat export or the Cloud API (``--agent-phone``), any format.
        agent: the agent family the conversations belong to (``billing``, ``scheduling``, …): the ``agent`` column,
            and the scenario rubric ``convoeval judge`` uses by default.
        target: what the ``target`` column names as the agent that spoke (default ``production``).
        date_order: ``dmy`` or ``mdy`` for exports whose dates cannot tell (every day ≤ 12); ``None``: guessed.
        split_after: a silence longer than this starts a new conversation.
    """

    agent_name: str | None = None
    agent_phone: str | None = None
    agent: str = "production"
    target: str = "production"
    date_order: str | None = None
    split_after: timedelta = DEFAULT_SPLIT_AFTER

    def __post_init__(self) -> None:
        if self.date_order not in (None, "dmy", "mdy"):
            raise ImportSettingError(f"--date-order takes dmy or mdy, got {self.date_order!r}")


def parse_split_after(text: str) -> timedelta:
    """``--split-after``: a duration as the channel's settings write one (``12h``, ``30m``, ``2d``).

    Raises:
        ImportSettingError: not a duration.
    """
    try:
        return timedelta(seconds=parse_duration(text))
    except ValueError as exc:
        raise ImportSettingError(f"--split-after: {exc}") from None
