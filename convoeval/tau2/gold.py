"""Agents that perform a τ² task's gold actions, and mutants of them: the parity measurement's known answers.

``gold`` answers the user's first message by calling every gold action of the task, in order, through the
conversation's τ² tools (``AgentSession.tools``), says each ``communicate_info`` string, and asks whether there is
anything else (the agenda patient then closes). ``gold_drop_last`` leaves the last gold action out; ``gold_change``
calls the last one with one argument changed. Each is a ``module:function`` target::

    convoeval run --domain tau2:retail --scenario 5 --target convoeval.tau2.gold:gold
    convoeval run --domain tau2:retail --scenario 5 --target convoeval.tau2.gold:gold_drop_last   # fails: tau2_actions

Later messages get a goodbye and no call.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from convoeval.agents.base import AgentError, AgentReply, AgentSession, ToolCall

__all__ = ["CLOSING", "changed_value", "gold", "gold_actions", "gold_change", "gold_drop_last", "mutate"]

#: What the gold agent says after acting (its "anything else?" is the close the agenda patient waits for).
CLOSING = "Is there anything else I can help you with?"

_DONE: set[str] = set()  # conversations (run ids) the gold agent already acted in


def gold_actions(session: AgentSession) -> list[Mapping[str, Any]]:
    """The task's gold actions the agent performs (requestor ``assistant``), from the conversation's τ² session.

    Raises:
        AgentError: the conversation has no τ² tools (a scenario of another domain).
    """
    tools = session.tools
    criteria = getattr(tools, "task_criteria", None)
    if criteria is None:
        raise AgentError("the τ² gold agent needs a scenario of a tau2: domain (AgentSession.tools is not τ²'s)")
    return [a for a in criteria.get("actions") or [] if a.get("requestor", "assistant") == "assistant"]


def changed_value(value: object) -> object:
    """A value that differs from ``value`` and has its type (a string gets a suffix, a number one more, …).

    Example:
        >>> changed_value("HAT045"), changed_value(3), changed_value(["a", "b"]), changed_value(True)
        ('HAT045-x', 4, ['a', 'b', 'a'], False)
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return f"{value}-x"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "x": "x"}
    return "x"


def mutate(actions: list[Mapping[str, Any]], how: str) -> list[Mapping[str, Any]]:
    """The gold actions with one mutation: ``drop_last`` (the last action left out) or ``change`` (the last action's
    first argument changed); ``none`` returns them as they are."""
    if how == "none" or not actions:
        return list(actions)
    if how == "drop_last":
        return list(actions[:-1])
    if how == "change":
        last = copy.deepcopy(dict(actions[-1]))
        arguments = dict(last.get("arguments") or {})
        if arguments:
            key = next(iter(arguments))
            arguments[key] = changed_value(arguments[key])
        last["arguments"] = arguments
        return [*actions[:-1], last]
    raise ValueError(f"unknown mutation {how!r}: none, drop_last or change")


def _act(session: AgentSession, how: str) -> AgentReply:
    if session.run_id in _DONE:
        return AgentReply(bubbles=["You're welcome. Goodbye!"])
    _DONE.add(session.run_id)
    calls: list[ToolCall] = []
    for action in mutate(gold_actions(session), how):
        arguments = dict(action.get("arguments") or {})
        result = session.tools.call(action["name"], arguments)
        calls.append(ToolCall(name=action["name"], arguments=arguments, result=result))
    said = [*(session.tools.task_criteria.get("communicate_info") or [])]
    text = " ".join(["I have taken care of your request.", *(f"{s}." for s in said), CLOSING])
    return AgentReply(bubbles=[text], tool_calls=calls)


def gold(message: str, session: AgentSession) -> AgentReply:
    """The gold agent: every gold action of the task, then its communicate_info (see the module's docstring)."""
    return _act(session, "none")


def gold_drop_last(message: str, session: AgentSession) -> AgentReply:
    """The gold agent without the task's last gold action."""
    return _act(session, "drop_last")


def gold_change(message: str, session: AgentSession) -> AgentReply:
    """The gold agent with one argument of the last gold action changed."""
    return _act(session, "change")
