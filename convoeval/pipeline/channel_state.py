"""The WhatsApp channel's side of one conversation: its settings, its clock, and what the agent's last message
offered and said (``ChannelState``, an attribute of the ``Conversation``; played by ``pipeline.channel_talk``).
"""

from __future__ import annotations

import datetime as dt

from convoeval.agents.base import AgentReply
from convoeval.channel import ButtonsPart, ListPart
from convoeval.channel.settings import ChannelSettings

__all__ = ["CHANNEL_EPOCH", "ChannelState", "offered_title"]

#: The channel's clock at a conversation's start: fixed, so a run's times are reproducible (only their differences
#: matter: the quiet after a burst, the 24-hour window).
CHANNEL_EPOCH = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)


class ChannelState:
    """The channel's side of one conversation: its settings, its clock, and the last buttons the agent offered."""

    def __init__(self, settings: ChannelSettings | None):
        self.settings = settings or ChannelSettings()
        self.clock = CHANNEL_EPOCH
        self.offered: dict[str, str] = {}  # id -> title of the reply buttons / list rows of the agent's last message
        self.last_agent_text = ""  # what the agent's last message said (a simulated patient's media are due by it)
        self.media_sent: set[str] = set()  # paths of the files the simulated patient has sent

    def remember(self, reply: AgentReply) -> None:
        """What the agent's message offered and said: the buttons a tap may name, the words media are due by."""
        parts = reply.parts
        offered = {b.id: b.title for p in parts if isinstance(p, ButtonsPart) for b in p.buttons}
        offered |= {r.id: r.title for p in parts if isinstance(p, ListPart) for s in p.sections for r in s.rows}
        self.offered = offered
        self.last_agent_text = reply.text


def offered_title(state: ChannelState, button_id: str) -> str | None:
    """The title of the button or row ``button_id`` the agent's last message offered (``None``: not offered)."""
    return state.offered.get(button_id)
