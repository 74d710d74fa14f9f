"""One call into the agent under test, timed, with what may go wrong in agent code kept to its conversation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

from convoeval.agents.base import Agent, AgentError, AgentReply

__all__ = ["call_agent"]


async def call_agent(agent: Agent, call: Awaitable[object]) -> tuple[AgentReply, float]:
    """Await ``call`` (``agent.respond(...)`` or ``agent.idle(...)``) and return the reply and its seconds.

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
        name = getattr(agent, "name", type(agent).__name__)
        raise AgentError(f"agent {name!r} raised {type(exc).__name__}({exc}); only this conversation ended") from None
    if not isinstance(reply, AgentReply):
        raise AgentError(f"agent {getattr(agent, 'name', agent)!r} returned {type(reply).__name__}, not an AgentReply")
    return reply, time.perf_counter() - started
