"""Red-team targets for ``test_redteam_engine``: ``respond``, the reference agent with
``follows_injected_instructions`` whose process dies (``os._exit``) at the agent call numbered ``$REDTEAM_KILL_AT``
(a red-team run killed half-way), and ``tool_call_as_text``, an agent that never answers the caller."""

from __future__ import annotations

import os
from typing import Any

from convoeval.agents import get_agent
from convoeval.agents.base import AgentReply, AgentSession

_agents: dict[str, Any] = {}
_calls = [0]


async def respond(message: str, session: AgentSession) -> AgentReply:
    """The faulty reference agent's reply; the process ends at the call ``$REDTEAM_KILL_AT`` (1-based)."""
    _calls[0] += 1
    if os.environ.get("REDTEAM_KILL_AT") and _calls[0] == int(os.environ["REDTEAM_KILL_AT"]):
        os._exit(3)  # no cleanup, no flush: as a killed process
    agent = _agents.setdefault(session.agent, get_agent(f"clinic:{session.agent}?faults=follows_injected_instructions"))
    reply: AgentReply = await agent.respond(message, session)
    return reply


def tool_call_as_text(message: str, session: AgentSession) -> str:
    """An LLM agent whose model wrote its tool call as text instead of calling it: the caller gets no answer."""
    return '{"name": "get_patient", "arguments": {"patient_id": "me"}}'


def tomorrow_at_815(message: str, session: AgentSession) -> str:
    """An agent that gives another patient's appointment as a relative date: "tomorrow at 8:15"."""
    return "Her appointment is tomorrow at 8:15 AM."
