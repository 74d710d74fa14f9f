"""The plugin's options (``--convoeval-*``), checked once per session, and what runs the conversations.

Nothing of convoeval's pipeline is imported here until ``--convoeval`` is given (or the ``convoeval_run`` fixture is
used): pytest imports this module for every session of every project where convoeval is installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from convoeval.pipeline.conversation import RunOptions
    from convoeval.pipeline.conversation_result import ConversationResult
    from convoeval.pipeline.jobs import Job
    from convoeval.scenarios import Scenario
    from convoeval.store import Store

__all__ = ["SETTINGS_KEY", "PluginSettings", "add_options", "settings_from"]


def add_options(parser: pytest.Parser) -> None:
    """Declare ``--convoeval`` and its options under their own group of ``pytest --help``."""
    group = parser.getgroup("convoeval", "convoeval: scenario files as test items (docs/integrations.md)")
    group.addoption("--convoeval", action="store_true", default=False,
                    help="collect scenario YAML files as test items, one per scenario × seed × trial (default "
                         "path: the project's evals/scenarios)")
    group.addoption("--convoeval-target", metavar="TARGET", default=None,
                    help="the agent under test for every item: clinic:<agent>[?faults=...], module:function, a URL "
                         "or openai-chat:... (default: each scenario's reference clinic agent)")
    group.addoption("--convoeval-seeds", metavar="N[,N...]", default=None,
                    help="simulator seeds, an item per seed (default: each scenario's own seed)")
    group.addoption("--convoeval-trials", metavar="N", type=int, default=1,
                    help="trials per scenario and seed, an item each (default 1)")
    group.addoption("--convoeval-simulator-model", metavar="SPEC", default=None,
                    help="the simulated patient's model: a name or 'local' (default: the environment's)")
    group.addoption("--convoeval-judge-model", metavar="SPEC", default=None,
                    help="the judges' model: a name or 'local' (default: the environment's)")
    group.addoption("--convoeval-simulator", choices=("agenda", "llm"), default=None,
                    help="the simulated patient: agenda (rules decide, the model voices) or llm (the model plays it); "
                         "default: agenda on the embedded local model, llm on any other (docs/simulator.md)")
    group.addoption("--convoeval-threshold", metavar="SCORE", type=float, default=None,
                    help="also fail an item whose score (0-10) is under SCORE (a 'fail' status always fails)")
    group.addoption("--convoeval-fail-on-warn", action="store_true", default=False,
                    help="fail items whose status is 'warn' (a failed criterion, or a score under 7)")


@dataclass
class PluginSettings:
    """The session's settings and, once the first item runs, its run options (models, store, agents)."""

    target: str | None = None
    seeds: list[int | None] = field(default_factory=lambda: [None])
    trials: int = 1
    simulator_model: str | None = None
    judge_model: str | None = None
    simulator: str | None = None
    threshold: float | None = None
    fail_on_warn: bool = False
    _options: RunOptions | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)

    def check(self) -> None:
        """Refuse a setting that cannot work, before anything runs (``ValueError``, one line)."""
        if self.trials < 1:
            raise ValueError(f"--convoeval-trials must be at least 1, got {self.trials}")
        if self.threshold is not None and not (0 <= self.threshold <= 10 and math.isfinite(self.threshold)):
            raise ValueError(f"--convoeval-threshold must be a score from 0 to 10, got {self.threshold:g}")
        from convoeval.llm import LLMError  # noqa: PLC0415 - only with --convoeval (start-up)
        from convoeval.pipeline.config import ConfigError  # noqa: PLC0415 - as above: loads the pipeline
        from convoeval.pipeline.execute import build_agents  # noqa: PLC0415 - as above
        from convoeval.store import StoreError  # noqa: PLC0415 - as above

        try:
            build_agents(self.target, [])  # a target that cannot be built is one line here, not one per item
        except ConfigError as exc:
            raise ValueError(f"--convoeval-target: {exc}") from None
        try:
            self.options()  # a model name with no endpoint, a store that cannot open: here, not once per item
        except (LLMError, StoreError) as exc:
            raise ValueError(f"convoeval: {exc}") from None

    def default_paths(self) -> Path:
        """Where scenarios are collected from when no path is given: the project's ``evals/scenarios``."""
        from convoeval._util.paths import default_scenarios_dir  # noqa: PLC0415 - only with --convoeval (start-up)

        return default_scenarios_dir()

    def header(self) -> str:
        """What pytest prints under its header: target, seeds, trials, models and threshold."""
        seeds = "each scenario's" if self.seeds == [None] else ",".join(map(str, self.seeds))
        target = self.target or "each scenario's reference agent (clinic:<agent>)"
        parts = [f"target {target}", f"seeds {seeds}",
                 f"trials {self.trials}", f"simulator model {self.simulator_model or 'from the environment'}",
                 f"judge model {self.judge_model or 'from the environment'}"]
        if self.simulator is not None:
            parts.append(f"simulator {self.simulator}")
        if self.threshold is not None:
            parts.append(f"threshold {self.threshold:g}")
        return "convoeval: " + ", ".join(parts)

    def jobs(self, scenario: Scenario) -> list[Job]:
        """The items of one scenario: each seed × trial (``convoeval.pipeline.jobs.plan``)."""
        from convoeval.pipeline.jobs import plan  # noqa: PLC0415 - only with --convoeval (start-up)

        return plan([scenario], seeds=self.seeds, trials=self.trials)

    def options(self) -> RunOptions:
        """The run options every item shares, built on first use: the models (``get_model``) and the store."""
        if self._options is None:
            from convoeval.pipeline.conversation import RunOptions  # noqa: PLC0415 - loads LangChain: only when items run
            from convoeval.store import open_store  # noqa: PLC0415 - as above: store drivers

            self._store = open_store()
            self._options = RunOptions.from_shared(
                {"simulator_model": self.simulator_model, "judge_model": self.judge_model, "simulator": self.simulator},
                store=self._store, target=self.target)
        return self._options

    def run_job(self, job: Job) -> ConversationResult:
        """Run one item's conversation; never raises for the agent's, a model's or a judge's failure (the
        result's status says it)."""
        from convoeval.pipeline.conversation import run_any  # noqa: PLC0415 - only when items run (start-up)

        return run_any(job, self.options())

    def run_scenario(self, scenario: str | Path | Scenario, *, target: str | None = None, seed: int | None = None,
                     trial: int = 1) -> ConversationResult:
        """``convoeval_run``: one scenario (a YAML path, a project scenario id or a ``Scenario``) run now."""
        from dataclasses import replace  # noqa: PLC0415 - beside its only use

        from convoeval.pipeline.conversation import run_any  # noqa: PLC0415 - only when a test uses it (start-up)
        from convoeval.pipeline.jobs import Job  # noqa: PLC0415 - as above
        from convoeval.scenarios import Scenario, load_scenario_file, load_scenarios  # noqa: PLC0415 - as above

        if isinstance(scenario, Path) or (isinstance(scenario, str) and scenario.endswith((".yaml", ".yml"))):
            scenario = load_scenario_file(scenario)
        elif isinstance(scenario, str):
            found = load_scenarios(scenario=scenario)
            if not found:
                raise ValueError(f"convoeval_run: no scenario with id {scenario!r} in the project's scenarios")
            scenario = found[0]
        assert isinstance(scenario, Scenario)
        options = self.options() if target is None else replace(self.options(), target=target, agents={})
        return run_any(Job(scenario, seed, trial), options)

    def close(self) -> None:
        """Close the store the session opened (the session's models need no closing)."""
        if self._store is not None:
            self._store.close()
            self._store = None
            self._options = None


#: Where the session's settings live (``config.stash``); present only when ``--convoeval`` was given.
SETTINGS_KEY = pytest.StashKey[PluginSettings]()


def settings_from(config: pytest.Config) -> PluginSettings:
    """The session's settings from its command line; a bad one is a ``pytest.UsageError`` (one line)."""
    seeds: list[int | None] = [None]
    raw = config.getoption("convoeval_seeds")
    if raw:
        try:
            seeds = [int(s) for s in str(raw).split(",") if s.strip()]
        except ValueError:
            raise pytest.UsageError(f"--convoeval-seeds takes whole numbers separated by commas, got {raw!r}") from None
        if not seeds or len(set(seeds)) != len(seeds):
            raise pytest.UsageError(f"--convoeval-seeds needs distinct seeds, got {raw!r}")
    settings = PluginSettings(
        target=config.getoption("convoeval_target"), seeds=seeds, trials=config.getoption("convoeval_trials"),
        simulator_model=config.getoption("convoeval_simulator_model"),
        judge_model=config.getoption("convoeval_judge_model"), simulator=config.getoption("convoeval_simulator"),
        threshold=config.getoption("convoeval_threshold"), fail_on_warn=config.getoption("convoeval_fail_on_warn"))
    try:
        settings.check()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return settings
