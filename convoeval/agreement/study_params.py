"""The agreement study's parameters: the notebook's parameters cell as one ``StudyConfig``, each checked in one line."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from convoeval._util.html_blocks import esc, shown_path
from convoeval._util.paths import project_root, under
from convoeval.agreement.probes.run import PROBES as _PROBES
from convoeval.pipeline.config import ParameterError
from convoeval.pipeline.notebook_params import NotebookParams, Text, notebook_values
from convoeval.scenarios import agent_names, did_you_mean
from convoeval.simulator.gate import gate_settings

__all__ = ["StudyConfig", "check_study_parameters"]


def _probe(name: str) -> str:
    if name not in _PROBES:
        raise PydanticCustomError("probe", "unknown probe")  # worded by ``expects``
    return name


def _gate(value: bool | dict[str, Any]) -> bool | dict[str, Any]:
    try:
        gate_settings(value)
    except (ValidationError, TypeError):
        raise PydanticCustomError("gate", "bad gate settings") from None  # worded by ``expects``
    return value


class StudyConfig(NotebookParams):
    """The agreement notebook's parameters, in its parameters cell's order, with its defaults; checked.

    ``params`` is them as a mapping (as ``study.json`` records them), ``out_dir`` the study's folder.
    """

    model_config = ConfigDict(strict=True)

    error = ParameterError
    noun = "agreement-notebook parameter"
    expects = {
        "runs": "must be a list of folder paths", "fault_study": "must be True or False",
        "agents": "must be a list of agent names", "scenario": "must be a scenario id or None",
        "faults": "must be a list of 'agent:fault' keys or None", "seeds": "must be a non-empty list of integers",
        "trials": "must be a positive integer", "judges": "must be a mapping of names to model specs",
        "judge_samples": "must be a positive integer", "probes": f"must be a list of {', '.join(_PROBES)}",
        "labels": "must be a CSV path or None", "exclude_unfaithful": "must be True or False",
        "simulator_gate": "must be True, False or a mapping of gate settings",
        "simulator_model": "must be a model spec or None", "simulator": "must be 'agenda', 'llm' or None",
        "output_dir": "must be a folder path or None", "concurrency": "must be a positive integer",
        "n_boot": "must be an integer of at least 100", "scenarios_dir": "must be a folder path or None",
    }

    runs: list[Text] = Field([], description="saved results folders to study (a run's or a sweep's folder)")
    fault_study: bool = Field(True, description="run each reference agent with and without its known faults")
    agents: list[Text] = Field(["support"], description="the fault study's agents")
    scenario: Text | None = Field("support-conv-wants-human-es", description="the fault study runs only this scenario")
    faults: list[Text] | None = Field(["support:never_escalates", "support:rude_tone"],
                                      description="only these known faults (None: every fault relevant to a scenario)")
    seeds: list[int] = Field([42], min_length=1, description="simulator seeds of the fault study")
    trials: int = Field(1, ge=1, description="repetitions of each fault-study conversation")
    judges: dict[Text, str | dict[str, Any] | None] = Field(
        {"greedy": {"provider": "local"}, "sampled": {"provider": "local", "temperature": 0.7}}, min_length=1,
        description="judge configurations to compare (the first also judges the fault study's runs and the probes)")
    judge_samples: int = Field(1, ge=1, description="independent samples per judge and conversation")
    probes: list[Annotated[str, AfterValidator(_probe)]] = Field(
        ["criteria_order", "injection_agent_pt", "language"], description="bias probes to run on the first judge")
    labels: Text | None = Field(None, description="human labels to score the judges against")
    exclude_unfaithful: bool = Field(False, description="leave out conversations whose simulated patient broke the "
                                                        "scenario")
    simulator_gate: Annotated[bool | dict[str, Any], AfterValidator(_gate)] = Field(
        False, description="stop a fault-study conversation whose simulated patient breaks (simulator_failure: not "
                           "judged)")
    simulator_model: str | dict[str, Any] | None = Field(None, description="the fault study's simulated patient")
    simulator: Literal["agenda", "llm"] | None = Field(
        None, description="how the fault study's patient is simulated (None: agenda on the embedded model; "
                          "docs/simulator.md)")
    output_dir: Text | None = Field(None, description="where the study's data and tables go")
    concurrency: int = Field(4, ge=1, description="conversations in flight at once")
    n_boot: int = Field(1000, ge=100, description="bootstrap replicates")
    scenarios_dir: Text | None = Field(None, description="scenario files (None: evals/scenarios)")
    _root: Path = PrivateAttr(default_factory=Path)
    _out: Path = PrivateAttr(default_factory=Path)

    @model_validator(mode="after")
    def _something_to_study(self) -> Self:
        # The folders and names the values point to, checked now: a typo should not cost a fault study.
        root = project_root()
        for folder in self.runs:
            if not under(root, folder).is_dir():
                raise ValueError(f"runs: no such folder {folder!r}")
        if not self.runs and not self.fault_study:
            raise ValueError("nothing to study: give results folders in runs, or set fault_study = True")
        if self.labels and not under(root, self.labels).exists():
            raise ValueError(f"labels: no such file {self.labels!r}")
        bad = [a for a in self.agents if a not in agent_names()]
        if bad:
            named = ", ".join(a + did_you_mean(a, agent_names()) for a in bad)
            raise ValueError(f"agents: unknown agent(s) {named}; expected some of {', '.join(agent_names())}")
        self._root = root
        self._out = (under(root, self.output_dir) if self.output_dir
                     else root / "reports" / f"agreement-{time.strftime('%Y%m%d-%H%M%S')}")
        return self

    @property
    def params(self) -> dict[str, Any]:
        """The parameters by name, as ``study.json`` records them."""
        return self.model_dump()

    @property
    def project_root(self) -> Path:
        """The project the study's relative paths are read from."""
        return self._root

    @property
    def out_dir(self) -> Path:
        """The study's folder: ``output_dir``, else a new ``reports/agreement-<time>``."""
        return self._out

    def scenarios_path(self) -> Path:
        """The scenario folder: ``scenarios_dir`` (relative to the project), else ``evals/scenarios``."""
        return under(self._root, self.scenarios_dir or "evals/scenarios")

    def _repr_html_(self) -> str:
        return self.parameter_table(
            before=f"<div>Parameters checked. The study goes to <code>{esc(shown_path(self.out_dir))}</code></div>")


def check_study_parameters(namespace: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
                           ) -> StudyConfig:
    """Validate the agreement notebook's parameters (pass ``globals()``).

    Args:
        namespace: The notebook's globals, or any mapping of parameter values.
        defaults: Values for parameters missing from ``namespace`` (default: ``StudyConfig``'s, the notebook's own).

    Returns:
        A ``StudyConfig``.

    Raises:
        ParameterError: an unknown name, a bad value, a folder that does not exist, or nothing to study.
    """
    return StudyConfig.checked({**(defaults or {}), **notebook_values(namespace)})
