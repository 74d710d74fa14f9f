"""``EvalConfig``: what to evaluate and how, as one pydantic model shared by the notebook, the CLI, sweeps and code.

Its fields are exactly the run notebook's papermill parameters (a test holds the two lists together), so a value
means the same wherever it is set. Every check lives here and fails with one line naming the setting, its value
and what would work: papermill only *warns* about an unknown parameter and pydantic's own messages span several
lines, so both are turned into a ``ConfigError``.

Secrets are never settings: models read their keys from the environment, the fixtures store comes from
``CONVOEVAL_STORE_URL`` (or the CLI's ``--store``), and a webhook's credentials from its own variables. So a
configuration can be written into an executed notebook, ``report.json`` or a task sent to a worker as it is.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from convoeval._util.paths import default_scenarios_dir, project_root, under
from convoeval.agents import safe_target
from convoeval.llm.models import ModelSpec
from convoeval.pipeline.notebook_params import (
    NotebookParams,
    OneLineError,
    executed_folder,
    notebook_values,
    parameter_table,
)
from convoeval.scenarios import agent_names, did_you_mean
from convoeval.simulator.gate import GateSettings, gate_settings

if TYPE_CHECKING:
    from convoeval.telemetry import Traces

__all__ = ["MAX_SEED", "ConfigError", "EvalConfig"]

#: Seeds reach the model APIs with the turn number added; OpenAI and llama.cpp take 32-bit seeds.
MAX_SEED = 1_000_000_000
MAX_TRIALS = 1_000
MAX_CONVERSATIONS = 1_000_000
SCHEDULER_ENV = "CONVOEVAL_DASK_SCHEDULER"


class ConfigError(OneLineError, ValueError):
    """A setting that cannot work; the message names it and says what would, in one line."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class EvalConfig(NotebookParams):
    """What to run. Every field has a working default: the billing agent's scenarios, offline, on the local model.

    Each field's ``description`` says what it means; ``convoeval run`` builds its flags and their help from these
    fields (``convoeval.cli.config_flags``), so the notebook's parameters, the command line and code cannot drift.

    Example:
        >>> EvalConfig(agent="billing", seed=[1, 2], trials=3).seeds
        [1, 2]
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    error = ConfigError
    noun = "setting"
    expects = {
        "agent": "must be an agent name, or None for all",
        "scenario": "must be a scenario id, or None",
        "type": "must be 'scripted', 'conversational' or None",
        "target": "must be a target such as clinic:billing, module:function or https://…, or None",
        "simulator_model": "must be a model name, 'local', a mapping of model settings, or None",
        "judge_model": "must be a model name, 'local', a mapping of model settings, or None",
        "fail_threshold": "must be a number from 0 to 10",
        "output_dir": "must be a folder path, or None",
        "scenarios_dir": "must be a folder path, or None",
        "cluster": "must be a Dask scheduler address such as tcp://host:8786, or None",
        "labels": "must be a label CSV file or a folder of them, or None",
        "resume": "must be True or False",
        "simulator_gate": "must be True, False or a mapping of gate settings (docs/fidelity.md)",
        "otel": "must be True or False",
    }

    agent: str | None = Field("billing", description="which agent's scenarios (None: every agent)")
    seed: int | list[int] | None = Field(
        42, description="the simulator seed or a list of seeds (None: each scenario's own)")
    scenario: str | None = Field(None, description="only the scenario with this id")
    type: Literal["scripted", "conversational"] | None = Field(None, description="only this scenario type")
    trials: int = Field(1, ge=1, le=MAX_TRIALS,
                        description="repetitions of each scenario × seed (pass^k needs several)")
    target: str | None = Field(
        None, description="the agent under test: clinic:<agent>[?faults=a,b], module:function, http(s)://…, "
                          "openai-chat[:model] (None: each scenario's reference clinic agent)")
    simulator_model: str | dict[str, Any] | None = Field(
        None, description="the simulated patient's model: a name, 'local' or a mapping of settings (None: the "
                          "environment decides)")
    judge_model: str | dict[str, Any] | None = Field(None, description="the judges' model, as simulator_model")
    simulator: Literal["agenda", "llm"] | None = Field(
        None, description="how the patient is simulated: 'agenda' (rules decide each act, the model only voices it) "
                          "or 'llm' (the model plays the patient); None: 'agenda' on the embedded local model, "
                          "'llm' on any other (docs/simulator.md)")
    judge_samples: int = Field(1, ge=1, le=50, description="independent samples per judge and conversation")
    fail_threshold: float | None = Field(
        None, ge=0, le=10, description="a conversation scoring below it (or in error) fails the run's gate")
    output_dir: str | None = Field(
        None, description="where the results go, relative to the project (None: a new reports/run-… folder); a "
                          "folder a live run is writing is refused")
    concurrency: int = Field(4, ge=1, le=10_000, description="conversations in flight at once (in all, across workers)")
    scenarios_dir: str | None = Field(None, description="the scenario files (None: the project's evals/scenarios)")
    domain: str | None = Field(
        None, description="the domain whose scenarios run (convoeval.domains): tau2:airline, tau2:retail (scenario: "
                          "a task id); None: the clinic's scenario files")
    workers: int = Field(1, ge=1, le=512,
                         description="worker processes (1: this process; more: a local Dask cluster)")
    cluster: str | None = Field(
        None, description=f"a Dask scheduler address (tcp://host:8786) to run on instead (None: {SCHEDULER_ENV})")
    resume: bool = Field(
        True, description="keep conversations already saved in output_dir (those that ended in error run again, "
                          "and with resimulate those that ended simulator_failure with fewer attempts)")
    simulator_gate: bool | dict[str, Any] = Field(
        True, description="stop a conversation whose simulated patient breaks (simulator_failure, never scored): "
                          "True, False (off) or a mapping of gate settings such as {parrot_turns: 3} "
                          "(docs/fidelity.md)")
    resimulate: int = Field(0, ge=0, le=10, description="simulate a conversation the gate stopped again with the "
                                                        "next seed, up to this many times")
    labels: str | None = Field(
        None, description="human labels (a CSV file or a folder of them, evals/labels format), relative to the "
                          "project: the report then shows each judge's pass rates calibrated on them (None: none)")
    otel: bool = Field(
        False, description="send every conversation as an OpenTelemetry trace (OTLP/HTTP) to "
                           "OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); on by itself when that "
                           "variable is set (docs/integrations.md)")

    # ── checks (one line each; pydantic's own messages are folded by ``checked``) ──

    @field_validator("agent", "scenario", "target", "output_dir", "scenarios_dir", "cluster", "labels", mode="before")
    @classmethod
    def _non_empty(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty (use None for the default)")
        return value.strip() if isinstance(value, str) else value

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str | None) -> str | None:

        if value is not None and value not in agent_names():
            raise ValueError(f"must be one of {', '.join(agent_names())} (or None for all)"
                             f"{did_you_mean(value, agent_names())}")
        return value

    @field_validator("labels")
    @classmethod
    def _labels_exist(cls, value: str | None) -> str | None:
        # Checked before the run, not after it in the report: a typo should not cost a whole run.
        if value is not None and not under(project_root(), value).exists():
            raise ValueError(f"{under(project_root(), value)} does not exist (a label CSV or a folder of them)")
        return value

    @field_validator("seed", mode="before")
    @classmethod
    def _seeds_in_range(cls, value: Any) -> Any:
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            raise ValueError("must list at least one seed (or be None for each scenario's own)")
        for s in values:
            if s is None and not isinstance(value, list):
                continue
            if not _is_int(s) or not 0 <= s <= MAX_SEED:
                raise ValueError(f"must be integers from 0 to {MAX_SEED:,} (or None for each scenario's own)")
        if isinstance(value, list) and len(set(value)) != len(value):
            raise ValueError("must not repeat a seed")
        return value

    @field_validator("trials", "judge_samples", "concurrency", "workers", "resimulate", mode="before")
    @classmethod
    def _strict_int(cls, value: Any) -> Any:
        if not _is_int(value):
            raise ValueError("must be a whole number")
        return value

    @field_validator("fail_threshold", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value)):
            raise ValueError("must be a number from 0 to 10, or None")
        return value

    @field_validator("simulator_model", "judge_model", mode="before")
    @classmethod
    def _model_spec(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("must be a model name, 'local', a mapping of model settings, or None")
        if isinstance(value, Mapping):

            try:
                ModelSpec(**value)  # unknown or mistyped settings fail here, before any run starts
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"])) or "settings"
                raise ValueError(f"has a bad model setting {where}: {first['msg']}") from None
            return dict(value)
        return value

    @field_validator("simulator_gate", mode="before")
    @classmethod
    def _gate(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if not isinstance(value, Mapping):
            raise ValueError("must be True, False or a mapping of gate settings (docs/fidelity.md)")

        try:
            GateSettings(**value)  # unknown or mistyped thresholds fail here, before any run starts
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "settings"
            raise ValueError(f"has a bad gate setting {where}: {first['msg']}") from None
        return dict(value)

    @field_validator("cluster")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and "://" not in value:
            raise ValueError("must be a Dask scheduler address such as tcp://host:8786")
        return value

    @model_validator(mode="after")
    def _scenario_picks_its_agent(self) -> EvalConfig:
        # A scenario id names its agent: the default agent filter (billing) must not hide a support scenario.
        if self.scenario is not None and "agent" not in self.model_fields_set:
            self.__dict__["agent"] = None
        return self

    @model_validator(mode="after")
    def _size(self) -> EvalConfig:
        if len(self.seeds) * self.trials > MAX_CONVERSATIONS:
            raise ValueError(f"seeds × trials must stay under {MAX_CONVERSATIONS:,} conversations per scenario")
        return self

    # ── construction ──

    @classmethod
    def from_notebook(cls, namespace: Mapping[str, Any]) -> EvalConfig:
        """The configuration a notebook's parameters cell made (pass ``globals()``).

        Plain values whose names are not settings can only come from a mistyped ``papermill -p`` name, so they are
        errors; modules, functions, classes and ``_``-names are ignored (the check can run again interactively).
        With no ``output_dir``, the data goes beside the executed notebook (``reports/x.ipynb`` -> ``reports/x/``)
        when papermill ran with ``--inject-output-path``.
        """
        values = notebook_values(namespace)
        if values.get("scenario") is not None and values.get("agent") == cls.model_fields["agent"].default:
            values.pop("agent")  # the parameters cell's default agent must not hide the scenario asked for
        config = cls.checked(values)
        beside = executed_folder(namespace)
        if config.output_dir is None and beside is not None:
            config.output_dir = str(beside)
        return config

    # ── what the settings resolve to ──

    @property
    def seeds(self) -> list[int | None]:
        """``seed`` as a list (``[None]``: each scenario's own seed)."""
        return list(self.seed) if isinstance(self.seed, list) else [self.seed]

    @property
    def scheduler(self) -> str | None:
        """The Dask scheduler to use: ``cluster``, else ``CONVOEVAL_DASK_SCHEDULER``, else none."""
        return self.cluster or os.environ.get(SCHEDULER_ENV) or None

    @property
    def distributed(self) -> bool:
        """Whether conversations run on Dask workers rather than in this process."""
        return self.workers > 1 or self.scheduler is not None

    def gate_settings(self) -> Any:
        """The simulator-failure gate's ``GateSettings``, or ``None`` when ``simulator_gate`` is ``False``."""

        return gate_settings(self.simulator_gate)

    def traces(self) -> Traces:
        """The run's OpenTelemetry export (``convoeval.telemetry``): on with ``otel`` or the standard
        ``OTEL_EXPORTER_OTLP_ENDPOINT``, else one that does nothing and imports nothing.

        Raises:
            ConfigError: an endpoint or protocol that cannot work, or export asked for without the SDK
                (one line), before anything runs.
        """
        from convoeval.telemetry import TelemetryError, start_traces  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

        try:
            return start_traces(self.otel)
        except TelemetryError as exc:
            raise ConfigError(str(exc)) from None

    def scenarios_path(self) -> Path:
        """The scenario folder: ``scenarios_dir`` (relative to the project), else the project's ``evals/scenarios``."""

        root = project_root()
        if self.scenarios_dir is None:
            return default_scenarios_dir()
        path = Path(self.scenarios_dir).expanduser()
        return path if path.is_absolute() or path.exists() else root / path

    def output_path(self) -> Path:
        """Where the results go: ``output_dir``, else a new folder under the project's ``reports/``.

        The default is unique per run (time to the second plus a random suffix), so two runs started in the same
        second never share a folder.
        """
        if self.output_dir is not None:
            # Relative to the project, as scenarios_dir: a notebook's working folder is notebooks/ under Jupyter and
            # nbval, the caller's under papermill. The CLI makes --out absolute against the shell's folder first.
            path = Path(self.output_dir).expanduser()
            return path if path.is_absolute() else project_root() / path
        seeds = "-".join("own" if s is None else str(s) for s in self.seeds[:3]) + ("-…" if len(self.seeds) > 3 else "")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return project_root() / "reports" / f"run-{self.agent or 'all'}-s{seeds}-{stamp}-{secrets.token_hex(4)}"

    def recorded(self) -> dict[str, Any]:
        """The settings as ``report.json`` records them (a webhook target without its credentials)."""

        return {**self.model_dump(), "target": safe_target(self.target)}

    def _repr_html_(self) -> str:
        return parameter_table(self.recorded(), name="setting")


class ParameterError(ConfigError):
    """A notebook parameter that cannot work (the agreement notebook's); one line, like any configuration mistake."""
