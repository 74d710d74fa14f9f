"""The τ² assertions: the gold actions, the database's state, the information the agent had to give.

Three assertion keys (``convoeval.scenarios.register_assertion``), each read on the conversation's own τ² session
(found by the run's id) and worded so a failure names what failed:

* ``tau2_actions``: every gold action of the task appears among the agent's tool calls, compared as τ²'s
  ``Action.compare_with_tool_call`` compares them (same name; the arguments in ``compare_args``, or else every
  argument the call gave, equal to the gold ones); the detail names each missing action by id, name and arguments.
* ``tau2_state``: the conversation's database equals the database after the gold actions on a fresh copy (τ²'s
  own tools ran both; ``worker_main._db_match``); the detail names where they differ.
* ``tau2_communicate``: each ``communicate_info`` string appears in an agent message (case folded, commas removed,
  as τ²'s ``CommunicateEvaluator`` reads them).

τ²'s reward for a task is the product of the checks its ``reward_basis`` names (by default the state and the
information: ``DB`` and ``COMMUNICATE``); the action check is τ²'s ``ACTION`` evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from convoeval.scenarios import AssertionKind, register_assertion
from convoeval.tau2.sessions import OpenSession, session_of

__all__ = ["COMMUNICATE", "STATE", "TAU2_ACTIONS", "TAU2_KEYS", "action_matches", "communicated", "missing_actions"]


def action_matches(gold: Mapping[str, Any], name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether one tool call is the gold action ``gold`` (``{"name", "arguments", "compare_args"?}``), as τ² compares.

    Example:
        >>> gold = {"name": "cancel", "arguments": {"id": "A1", "reason": "x"}}
        >>> action_matches(gold, "cancel", {"id": "A1", "reason": "x"}), action_matches(gold, "cancel", {"id": "A1"})
        (True, True)
        >>> action_matches(gold, "cancel", {"id": "A2", "reason": "x"})
        False
    """
    if gold.get("name") != name:
        return False
    compare = gold.get("compare_args")
    keys = list(arguments) if compare is None else list(compare)
    if not keys:
        return True
    wanted = gold.get("arguments") or {}
    return {k: v for k, v in arguments.items() if k in keys} == {k: v for k, v in wanted.items() if k in keys}


def missing_actions(gold_actions: Sequence[Mapping[str, Any]], calls: Sequence[Any]) -> list[Mapping[str, Any]]:
    """The gold actions no call in ``calls`` (objects with ``name`` and ``arguments``) matches, in the task's order."""
    made = [(c.name, c.arguments or {}) for c in calls]
    return [g for g in gold_actions if g.get("requestor", "assistant") == "assistant"
            and not any(action_matches(g, name, arguments) for name, arguments in made)]


def communicated(info: str, agent_texts: Sequence[str]) -> bool:
    """Whether ``info`` is in one of the agent's messages, read as τ² reads it (lower case, commas dropped)."""
    return any(info.lower() in text.lower().replace(",", "") for text in agent_texts)


def _session(seeded: Any) -> OpenSession:
    return session_of(seeded.run_id)


def _agent_texts(store: Any, seeded: Any) -> list[str]:
    texts: list[str] = []
    for conversation in store.select("conversations", {"clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}):
        texts += [m["text"] or "" for m in store.select("messages", {"conversation_id": conversation["id"],
                                                                      "role": "agent"})]
    return texts


def _read_actions(store: Any, seeded: Any, expected: Any) -> dict[str, Any]:
    session = _session(seeded)
    missing = missing_actions(session.task_criteria.get("actions") or [], session.calls)
    return {"passed": not missing, "missing": missing}


def _judge_actions(expected: Any, actual: Any) -> tuple[bool, str]:
    if actual["passed"]:
        return True, "tau2_actions: every gold action was called"
    shown = "; ".join(f"{g.get('action_id', '?')} {g.get('name')}({_args(g.get('arguments') or {})})"
                      for g in actual["missing"])
    return False, f"tau2_actions: gold action(s) not called: {shown}"


def _args(arguments: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


def _read_state(store: Any, seeded: Any, expected: Any) -> dict[str, Any]:
    return dict(_session(seeded).db_match())


def _judge_state(expected: Any, actual: Any) -> tuple[bool, str]:
    if actual["match"]:
        return True, "tau2_state: the database equals the one after the gold actions"
    return False, f"tau2_state: the database differs from the one after the gold actions at {', '.join(actual.get('changed') or ['?'])}"


def _read_communicate(store: Any, seeded: Any, expected: Any) -> list[str]:
    texts = _agent_texts(store, seeded)
    return [i for i in _session(seeded).task_criteria.get("communicate_info") or [] if not communicated(i, texts)]


def _judge_communicate(expected: Any, actual: Any) -> tuple[bool, str]:
    if not actual:
        return True, "tau2_communicate: the agent said every piece of information the task requires"
    return False, f"tau2_communicate: the agent never said {', '.join(repr(i) for i in actual)}"


TAU2_ACTIONS = register_assertion(AssertionKind(
    "tau2_actions", bool, "τ²: every gold action of the task was called (τ²'s ACTION check).",
    read=_read_actions, judge=_judge_actions))
STATE = register_assertion(AssertionKind(
    "tau2_state", bool, "τ²: the database after the conversation equals the one after the gold actions (τ²'s DB check).",
    read=_read_state, judge=_judge_state))
COMMUNICATE = register_assertion(AssertionKind(
    "tau2_communicate", bool, "τ²: the agent said each communicate_info string (τ²'s COMMUNICATE check).",
    read=_read_communicate, judge=_judge_communicate))

#: The τ² assertion keys, in the order results are reported.
TAU2_KEYS = ("tau2_actions", "tau2_state", "tau2_communicate")
