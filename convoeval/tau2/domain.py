"""τ²-bench's domains as convoeval domains: ``tau2:airline`` and ``tau2:retail``.

``Tau2Domain`` reads a domain's policy, tool schemas, tasks and τ²'s user-simulator guidelines from τ²'s worker
(``convoeval.tau2.worker``) once per process; each task is a scenario (``convoeval.tau2.tasks``). A conversation's
``Tau2Session`` is a fresh τ² environment on a fresh copy of the domain's database with the task's
``initial_state``: the agent under test calls its tools through ``AgentSession.tools`` (the openai-chat adapter
binds ``specs`` and uses ``instructions``, τ²'s own agent prompt around the policy, as its system prompt; a user's
own agent calls ``session.tools.call(name, arguments)``), τ²'s environment runs them, and the τ² assertions
(``convoeval.tau2.checks``) read the calls and the database before the session closes.

Example (needs τ²'s venv, ``make setup``)::

    from convoeval.domains import get_domain
    airline = get_domain("tau2:airline")
    scenario = airline.scenario("5")           # task 5 as a ConversationalScenario
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convoeval.agents.base import ToolCall
from convoeval.scenarios import ConversationalScenario, Scenario
from convoeval.tau2 import checks  # noqa: F401 - registers the tau2_* assertion keys before any scenario is built
from convoeval.tau2.sessions import forget_session, keep_session
from convoeval.tau2.tasks import scenario_id, task_scenario
from convoeval.tau2.worker import Tau2Error, worker

__all__ = ["AGENT_INSTRUCTION", "DOMAINS", "Tau2Domain", "Tau2Session", "tau2_domain"]

#: τ²'s domains convoeval runs (telecom's user has tools of its own, which convoeval's simulated users do not).
DOMAINS = ("airline", "retail")

#: τ²'s own agent instructions (``tau2.agent.llm_agent.AGENT_INSTRUCTION``), around the domain's policy as τ² does.
AGENT_INSTRUCTION = """\
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."""

_SYSTEM = "<instructions>\n{instruction}\n</instructions>\n<policy>\n{policy}\n</policy>"


class Tau2Session:
    """One conversation's τ² environment (see the module's docstring); ``calls`` every tool call made, in order."""

    def __init__(self, domain: Tau2Domain, task: Mapping[str, Any], run_id: str):
        self.domain = domain
        self.task_id = str(task["id"])
        self.task_criteria: Mapping[str, Any] = task.get("evaluation_criteria") or {}
        self.run_id = run_id
        self.specs = domain.specs
        self.instructions = domain.instructions
        self.calls: list[ToolCall] = []
        self._env = worker().request("open", domain=domain.tau2_name, task=self.task_id)["env"]
        keep_session(run_id, self)

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> object:
        """Run tool ``name`` in τ²'s environment; its result (parsed JSON), or τ²'s ``"Error: ..."`` text."""
        args = dict(arguments or {})
        answer = worker().request("call", env=self._env, name=name, arguments=args)
        content = answer["content"]
        result: Any = content
        if not answer["error"]:
            try:
                result = json.loads(content)
            except (TypeError, ValueError):
                result = content
        self.calls.append(ToolCall(name=name, arguments=args, result=result))
        return result

    def db_match(self) -> dict[str, Any]:
        """Whether this conversation's database equals the one after the task's gold actions (``match``), and where
        not (``changed``)."""
        return worker().request("db_match", env=self._env, domain=self.domain.tau2_name, task=self.task_id)

    def close(self) -> None:
        """Free the environment (after the assertions read it)."""
        forget_session(self.run_id)
        try:
            worker().request("close", env=self._env)
        except Tau2Error:
            pass  # a dead worker holds nothing any more


class Tau2Domain:
    """A τ² domain (``tau2:airline``): its tasks as scenarios, its tools and policy, a session per conversation."""

    #: The target a τ² scenario runs against when none is given: an LLM agent with the domain's tools and policy.
    default_target = "openai-chat"

    def __init__(self, tau2_name: str):
        if tau2_name not in DOMAINS:
            raise ValueError(f"unknown τ² domain {tau2_name!r}; convoeval runs {', '.join(DOMAINS)}")
        self.tau2_name = tau2_name
        self.name = f"tau2:{tau2_name}"

    @functools.cached_property
    def info(self) -> dict[str, Any]:
        """What τ²'s worker says about the domain: policy, tools, tasks, guidelines, files, τ²'s version."""
        return worker().request("info", domain=self.tau2_name)

    @property
    def specs(self) -> list[dict[str, Any]]:
        """The domain's tools as OpenAI function schemas (τ²'s ``Tool.openai_schema``)."""
        return list(self.info["tools"])

    @property
    def instructions(self) -> str:
        """The agent's system prompt: τ²'s agent instructions and the domain's policy."""
        return _SYSTEM.format(instruction=AGENT_INSTRUCTION, policy=self.info["policy"])

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """The domain's tasks as τ² ships them."""
        return list(self.info["tasks"])

    def task(self, task_id: str) -> dict[str, Any]:
        """Task ``task_id`` (τ²'s id, or the scenario's ``tau2-<domain>-<id>``).

        Raises:
            KeyError: no such task (the message names the domain's first ids).
        """
        wanted = str(task_id)
        for task in self.tasks:
            if wanted in (str(task["id"]), scenario_id(self.tau2_name, task["id"])):
                return task
        shown = ", ".join(str(t["id"]) for t in self.tasks[:5])
        raise KeyError(f"τ² {self.tau2_name} has no task {task_id!r} (its ids: {shown}, …)")

    def scenario(self, task_id: str) -> ConversationalScenario:
        """Task ``task_id`` as a scenario."""
        return task_scenario(self.tau2_name, self.task(task_id), guidelines=self.info["guidelines"])

    def scenarios(self) -> list[Scenario]:
        """Every task of the domain as a scenario, in τ²'s order."""
        return [task_scenario(self.tau2_name, t, guidelines=self.info["guidelines"]) for t in self.tasks]

    def files(self) -> list[Path]:
        """The domain's files in τ²'s package: tasks.json, db.json, policy.md."""
        return [Path(p) for p in self.info["files"]]

    def open_session(self, scenario: Scenario, run_id: str) -> Tau2Session:
        """A fresh environment for one conversation of ``scenario`` (a fresh copy of the database, initial state)."""
        return Tau2Session(self, self.task(scenario.id), run_id)


def tau2_domain(rest: str) -> Tau2Domain:
    """The factory of ``tau2:<domain>`` names (``convoeval.domains``).

    Raises:
        ValueError: a domain convoeval does not run (airline and retail).
    """
    return Tau2Domain(rest)
