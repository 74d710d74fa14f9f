"""convoeval's verdicts beside τ²'s own evaluator, on the same trajectories: the parity measurement (docs/tau2.md).

A finished τ² conversation (its transcript rows, with every tool call's arguments and result) is written as τ²'s
trajectory (``UserMessage`` / ``AssistantMessage`` with ``tool_calls`` / ``ToolMessage``) and handed to
``tau2.evaluator.evaluator.evaluate_simulation`` in τ²'s worker, which rebuilds the database from the trajectory's
calls, runs the gold actions on a fresh copy and returns its reward. convoeval's verdicts come from the run's own
assertions (``convoeval.tau2.checks``), computed while it ran, by convoeval's code:

* ``reward``: the product of the checks the task's ``reward_basis`` names (``tau2_state`` for ``DB``,
  ``tau2_communicate`` for ``COMMUNICATE``), 0 when the conversation did not end by the user (τ²'s rule: a
  simulation stopped at its step limit or by an error scores 0);
* ``action``: ``tau2_actions``, against τ²'s ``ACTION`` evaluation.

``parity_row`` sets both side by side for one conversation; ``aparity`` runs tasks × targets and returns the rows.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from convoeval.pipeline.conversation import ConversationResult, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import RunOptions
from convoeval.tau2.domain import Tau2Domain
from convoeval.tau2.worker import worker

__all__ = ["USER_ENDED", "aparity", "convoeval_verdict", "parity_row", "tau2_termination", "tau2_trajectory"]

#: The stop reasons of a conversation the simulated user ended (τ²'s ``USER_STOP``).
USER_ENDED = ("GOAL_COMPLETE", "STUCK")


def tau2_termination(stop_reason: str | None) -> str:
    """τ²'s ``TerminationReason`` value for a convoeval stop reason."""
    if stop_reason in USER_ENDED:
        return "user_stop"
    return "max_steps" if stop_reason == "max_turns" else "agent_error"


def _content(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, default=str)


def tau2_trajectory(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """τ²'s messages for one conversation's transcript rows (patient, then agent with its tool calls in order).

    Example:
        >>> rows = [{"role": "patient", "text": "Hi"},
        ...         {"role": "agent", "text": "Done.", "tool_calls": [{"name": "f", "arguments": {"a": 1},
        ...                                                            "result": {"ok": True}}]}]
        >>> [m["role"] for m in tau2_trajectory(rows)]
        ['user', 'assistant', 'tool', 'assistant']
    """
    messages: list[dict[str, Any]] = []
    for row in rows:
        if row.get("role") == "patient":
            messages.append({"role": "user", "content": row.get("text") or ""})
            continue
        for i, call in enumerate(row.get("tool_calls") or []):
            call_id = f"{len(messages)}-{i}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "name": call["name"], "arguments": call.get("arguments") or {}}]})
            result = call.get("result")
            error = isinstance(result, str) and result.startswith("Error:")
            messages.append({"role": "tool", "id": call_id, "content": _content(result), "error": error})
        if row.get("text"):
            messages.append({"role": "assistant", "content": row["text"]})
    return messages


def convoeval_verdict(assertions: Sequence[Mapping[str, Any]], reward_basis: Iterable[str],
                      stop_reason: str | None) -> dict[str, float | None]:
    """convoeval's τ² reward and action verdict from one conversation's assertion rows (see the module's docstring)."""
    passed = {row["assertion"]: bool(row["passed"]) for row in assertions}
    keys = {"DB": "tau2_state", "COMMUNICATE": "tau2_communicate"}
    reward = float(stop_reason in USER_ENDED and all(passed.get(keys[b], True) for b in reward_basis if b in keys))
    action = passed.get("tau2_actions")
    return {"reward": reward, "action": None if action is None else float(action)}


def parity_row(domain: Tau2Domain, result: ConversationResult, *, kind: str) -> dict[str, Any]:
    """One conversation's verdicts, convoeval's and τ²'s evaluator's, side by side (``agree`` when they are equal)."""
    run = result.rows["runs"][0]
    task = domain.task(run["scenario"])
    transcript = [r for r in result.rows["transcripts"] if r["run_id"] == run["run_id"]]
    basis = (task.get("evaluation_criteria") or {}).get("reward_basis") or ["DB", "COMMUNICATE"]
    ours = convoeval_verdict([a for a in result.rows["assertions"] if a["run_id"] == run["run_id"]], basis,
                             run["stop_reason"])
    theirs = worker().request("evaluate", domain=domain.tau2_name, task=str(task["id"]),
                              messages=tau2_trajectory(transcript), termination=tau2_termination(run["stop_reason"]))
    return {"domain": domain.tau2_name, "task": str(task["id"]), "kind": kind, "target": run["target"],
            "status": result.rows["scores"][0]["status"], "stop_reason": run["stop_reason"],
            "error": run["error"], "convoeval_reward": ours["reward"], "tau2_reward": theirs["reward"],
            "convoeval_action": ours["action"], "tau2_action": theirs["action_reward"],
            "tau2_db_match": theirs["db_match"],
            "agree": ours["reward"] == theirs["reward"] and (ours["action"] is None
                                                             or ours["action"] == theirs["action_reward"]),
            "tool_calls": sum(len(r.get("tool_calls") or []) for r in transcript)}


async def aparity(domain: Tau2Domain, task_ids: Sequence[str], targets: Mapping[str, str], options: RunOptions, *,
                  concurrency: int = 4) -> list[dict[str, Any]]:
    """Run every task × target (``{kind: target}``) and return each conversation's ``parity_row``."""
    gate = asyncio.Semaphore(concurrency)

    async def one(task_id: str, kind: str, target: str) -> dict[str, Any]:
        async with gate:
            result = await arun_any(Job(domain.scenario(task_id), 0, target=target), options)  # the job's own target
            return await asyncio.to_thread(parity_row, domain, result, kind=kind)

    return list(await asyncio.gather(*(one(t, kind, target) for t in task_ids for kind, target in targets.items())))
