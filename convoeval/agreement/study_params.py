"""The agreement study's parameters: what the notebook may set, each checked in one line, and the resolved ``StudyConfig``."""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

from pydantic import ValidationError

from convoeval.agreement.probes.run import PROBES as _PROBES
from convoeval.html_blocks import esc, shown_path, table, wrap
from convoeval.paths import project_root, under
from convoeval.pipeline.config import ParameterError, is_parameter_like
from convoeval.scenarios import agent_names, did_you_mean
from convoeval.simulator.gate import gate_settings


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v)


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _judges(v: Any) -> bool:
    return isinstance(v, dict) and bool(v) and all(
        isinstance(k, str) and k.strip() and (s is None or isinstance(s, (str, dict))) for k, s in v.items())


def _pos_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _opt_str(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() != "")


def _gate(v: Any) -> bool:


    if not isinstance(v, (bool, dict)):
        return False
    try:
        gate_settings(v)
    except (ValidationError, TypeError):
        return False
    return True


#: name -> (check, what a valid value is, meaning). The notebook's parameters cell declares exactly these names, and
#: ``StudyParams`` types them (tests/test_agreement_study.py holds the two lists equal).
STUDY_PARAMETERS: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "runs": (_str_list, "a list of folder paths", "saved results folders to study (a run's or a sweep's folder)"),
    "fault_study": (lambda v: isinstance(v, bool), "True or False",
                    "run each reference agent with and without its known faults"),
    "agents": (_str_list, "a list of agent names", "the fault study's agents"),
    "scenario": (_opt_str, "a scenario id or None", "the fault study runs only this scenario"),
    "faults": (lambda v: v is None or _str_list(v), "a list of 'agent:fault' keys or None",
               "only these known faults (None: every fault relevant to a scenario)"),
    "seeds": (_int_list, "a non-empty list of integers", "simulator seeds of the fault study"),
    "trials": (_pos_int, "a positive integer", "repetitions of each fault-study conversation"),
    "judges": (_judges, "a mapping of names to model specs",
               "judge configurations to compare (the first also judges the fault study's runs and the probes)"),
    "judge_samples": (_pos_int, "a positive integer", "independent samples per judge and conversation"),
    "probes": (lambda v: isinstance(v, list) and all(p in _PROBES for p in v), f"a list of {', '.join(_PROBES)}",
               "bias probes to run on the first judge"),
    "labels": (_opt_str, "a CSV path or None", "human labels to score the judges against"),
    "exclude_unfaithful": (lambda v: isinstance(v, bool), "True or False",
                           "leave out conversations whose simulated patient broke the scenario"),
    "simulator_gate": (_gate, "True, False or a mapping of gate settings",
                       "stop a fault-study conversation whose simulated patient breaks (simulator_failure: not judged)"),
    "simulator_model": (lambda v: v is None or isinstance(v, (str, dict)), "a model spec or None",
                        "the fault study's simulated patient"),
    "simulator": (lambda v: v in (None, "agenda", "llm"), "'agenda', 'llm' or None",
                  "how the fault study's patient is simulated (None: agenda on the embedded model; docs/simulator.md)"),
    "output_dir": (_opt_str, "a folder path or None", "where the study's data and tables go"),
    "concurrency": (_pos_int, "a positive integer", "conversations in flight at once"),
    "n_boot": (lambda v: _pos_int(v) and v >= 100, "an integer of at least 100", "bootstrap replicates"),
    "scenarios_dir": (_opt_str, "a folder path or None", "scenario files (None: evals/scenarios)"),
}


class StudyParams(TypedDict):
    """The agreement study's parameters once checked: what each ``STUDY_PARAMETERS`` check lets through."""

    runs: list[str]
    fault_study: bool
    agents: list[str]
    scenario: str | None
    faults: list[str] | None
    seeds: list[int]
    trials: int
    judges: dict[str, str | dict[str, Any] | None]
    judge_samples: int
    probes: list[str]
    labels: str | None
    exclude_unfaithful: bool
    simulator_gate: bool | dict[str, Any]
    simulator_model: str | dict[str, Any] | None
    simulator: str | None
    output_dir: str | None
    concurrency: int
    n_boot: int
    scenarios_dir: str | None


@dataclass
class StudyConfig:
    """Checked study parameters and the folders they resolve to."""

    params: StudyParams
    output_dir: Path
    project_root: Path

    @property
    def scenarios_dir(self) -> Path:
        return under(self.project_root, self.params["scenarios_dir"] or "evals/scenarios")

    def _repr_html_(self) -> str:

        rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>", esc(STUDY_PARAMETERS[k][2])]
                for k, v in self.params.items()]
        return wrap(f"<div>Parameters checked. The study goes to <code>{esc(shown_path(self.output_dir))}</code>"
                    "</div>" + table(rows, ["parameter", "value", "meaning"]))


def check_study_parameters(namespace: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
                           ) -> StudyConfig:
    """Validate the agreement notebook's parameters (pass ``globals()``).

    Args:
        namespace: The notebook's globals, or any mapping of parameter values.
        defaults: Values for parameters missing from ``namespace`` (default: the notebook's own defaults).

    Returns:
        A ``StudyConfig``.

    Raises:
        ParameterError: an unknown name, a bad value, a folder that does not exist, or nothing to study.
    """
    values = {k: v for k, v in namespace.items()
              if is_parameter_like(k, v) and k not in ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")}
    unknown = sorted(set(values) - set(STUDY_PARAMETERS))
    if unknown:
        raise ParameterError(f"unknown agreement-notebook parameter(s) {', '.join(unknown)}; "
                             f"known: {', '.join(STUDY_PARAMETERS)}")
    missing = [n for n in STUDY_PARAMETERS if n not in values]
    fallback = dict(defaults) if defaults is not None else (study_defaults() if missing else {})
    given = {n: values[n] if n in values else fallback.get(n) for n in STUDY_PARAMETERS}
    for name, (check, what, _) in STUDY_PARAMETERS.items():
        if not check(given[name]):
            raise ParameterError(f"{name} must be {what}, got {given[name]!r}")
    params = cast("StudyParams", given)  # every key was just checked to hold what StudyParams declares
    root = project_root()
    for folder in params["runs"]:
        if not under(root, folder).is_dir():
            raise ParameterError(f"runs: no such folder {folder!r}")
    if not params["runs"] and not params["fault_study"]:
        raise ParameterError("nothing to study: give results folders in runs, or set fault_study = True")
    if params["labels"] and not under(root, params["labels"]).exists():
        raise ParameterError(f"labels: no such file {params['labels']!r}")

    bad = [a for a in params["agents"] if a not in agent_names()]
    if bad:
        named = ", ".join(a + did_you_mean(a, agent_names()) for a in bad)
        raise ParameterError(f"agents: unknown agent(s) {named}; expected some of {', '.join(agent_names())}")
    out = (under(root, params["output_dir"]) if params["output_dir"]
           else root / "reports" / f"agreement-{time.strftime('%Y%m%d-%H%M%S')}")
    return StudyConfig(params=params, output_dir=out, project_root=root)


def study_defaults() -> dict[str, Any]:
    """The defaults ``notebooks/agreement.ipynb`` declares (``papermill.inspect_notebook``)."""

    import papermill  # noqa: PLC0415 - papermill loads only when a notebook runs

    path = project_root() / "notebooks" / "agreement.ipynb"
    found = papermill.inspect_notebook(str(path))
    return {name: ast.literal_eval(p["default"]) for name, p in found.items()}
