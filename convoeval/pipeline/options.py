"""What one conversation runs with: the target and models, the store, the judges' settings, the gate; the default target of a scenario."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from convoeval.agents import as_agent, get_agent
from convoeval.agents.base import Agent, AgentLike
from convoeval.llm.models import ModelLike
from convoeval.scenarios import Scenario
from convoeval.simulator.gate import GateSettings
from convoeval.store import Store

#: Called with one line per event when a run is verbose (``--verbose``).
Log = Callable[[str], None]


def default_target(scenario: Scenario) -> str:
    """The reference clinic agent for the scenario's agent type, e.g. ``clinic:billing``."""
    return f"clinic:{scenario.agent}"


@dataclass
class RunOptions:
    """How to run: which agent, which models, how many judge samples. Shared by every run of a batch."""

    #: The agent under test (``AgentLike``); ``None``: each scenario's reference clinic agent.
    target: AgentLike | None = None
    simulator_model: ModelLike = None
    judge_model: ModelLike = None
    judge_samples: int = 1
    verbose: Log | None = None
    store: Store | None = None
    agents: dict[str, Agent] = field(default_factory=dict)
    #: Called with (conversation label, turn) as each turn starts: the run's progress display.
    on_turn: Callable[[str, int], None] | None = None
    #: The simulator-failure gate's checks and thresholds (``convoeval.simulator.gate``); ``None`` switches it off.
    gate: GateSettings | None = field(default_factory=GateSettings)
    #: A conversation the gate stopped is simulated again with the next seed, sampled, up to this many times.
    resimulate: int = 0

    def __post_init__(self) -> None:
        if self.target is not None and not isinstance(self.target, str):  # an Agent or a callable: built once
            agent = as_agent(self.target)
            self.agents[agent.name] = agent
            self.target = agent.name

    def agent_for(self, scenario: Scenario) -> tuple[str, Agent]:
        target = self.target or default_target(scenario)
        if target not in self.agents:
            self.agents[target] = get_agent(target)
        return target, self.agents[target]
