"""The red-team notebook's steps: its parameters checked in one line each, the run, and the leak gate.

``RedTeamParams`` is ``notebooks/redteam.ipynb``'s parameters cell (a test holds them equal). Every mistake is
one line in the notebook, not a traceback: a ``ConfigError`` for a setting (exit 2 from ``convoeval notebook``), a
``LeakError`` from the last cell when ``fail_on_leak`` is set and an attack leaked (exit 5, as ``convoeval redteam
--fail-on-leak``).

Example (the parameters checked; ``red = run_redteam_params(params)`` would then run the cases and
``check_leaks(red, params)`` gate them):
    >>> params = redteam_params({"agents": ["billing"], "locales": ["en"], "output_dir": "reports/rt"})
    >>> params.agents, params.form, params.folder.name
    (['billing'], 'scripted', 'rt')
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from convoeval._util.html_blocks import esc
from convoeval._util.paths import project_root, under
from convoeval.pipeline.config import ConfigError
from convoeval.pipeline.notebook_params import NotebookParams, OneLineError, Text, executed_folder
from convoeval.redteam.attacks import AttackError
from convoeval.redteam.metrics import case_counts, leaked_summary
from convoeval.redteam.study import RedTeamError, RedTeamRun, plan_cases, run_redteam
from convoeval.store import StoreError

__all__ = ["LeakError", "RedTeamParams", "check_leaks", "redteam_params", "run_redteam_params"]

_LISTS = ("agents", "strategies", "locales", "faults", "attacks")


class LeakError(OneLineError, RuntimeError):
    """``fail_on_leak`` is set and at least one case leaked another patient's data."""


class RedTeamParams(NotebookParams):
    """The red-team notebook's parameters, in its parameters cell's order, with its defaults; checked.

    ``folder`` is where the results go, ``cases`` what will run (both known once ``redteam_params`` checked them).
    """

    model_config = ConfigDict(strict=True)

    error = ConfigError
    noun = "red-team parameter"
    expects = {
        "agents": "must be a list of agent names or None", "strategies": "must be a list of strategies or None",
        "locales": "must be a list of locales or None", "faults": "must be a list of fault names",
        "targets": "must be a mapping agent -> target string, or None",
        "attacks": "must be a list of attack files or folders, or None", "output_dir": "must be a folder or None",
        "store": "must be a store URL or None", "concurrency": "must be a whole number of at least 1",
        "form": "must be 'scripted', 'simulated' or 'both'", "simulator_model": "must be a model spec or None",
        "seed": "must be a whole number", "workers": "must be a whole number of at least 1",
        "cluster": "must be a Dask scheduler address or None", "fail_on_leak": "must be True or False",
    }

    agents: list[Text] | None = Field(None, description="only these agents (default: each attack's own)")
    strategies: list[Text] | None = Field(None, description="only these strategies")
    locales: list[Text] | None = Field(None, description="only these locales (pt-BR, en, es)")
    faults: list[Text] = Field([], description="known faults to switch on in the reference agents, each on the "
                                               "agents that have it")
    targets: dict[str, Text] | None = Field(None, description="the agent under test per agent name (any `convoeval "
                                                              "run` target; default the reference agent)")
    attacks: list[Text] | None = Field(None, description="default evals/attacks")
    output_dir: Text | None = Field(None, description="results folder (default: beside the executed notebook, else "
                                                      "reports/redteam-<time>)")
    store: Text | None = Field(None, description="fixtures store (default: CONVOEVAL_STORE_URL or SQLite)")
    concurrency: int = Field(4, ge=1, description="cases in flight at once")
    form: Literal["scripted", "simulated", "both"] = Field(
        "scripted", description="scripted attacks (deterministic), simulated attackers (an LLM plays each strategy), "
                                "or both")
    simulator_model: str | dict[str, Any] | None = Field(
        None, description="the simulated attacker's model (name, 'local', …; default the simulator model)")
    seed: int = Field(42, description="the simulated attacker's seed")
    workers: int = Field(1, ge=1, description="worker processes (a local Dask cluster when > 1)")
    cluster: Text | None = Field(None, description="run on this Dask cluster")
    fail_on_leak: bool = Field(False, description="the last cell fails (LeakError, exit 5) when any case leaked")
    _folder: Path = PrivateAttr(default_factory=Path)
    _cases: list[Any] = PrivateAttr(default_factory=list)

    @field_validator(*_LISTS, mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        # ``-p agents billing,support`` from the command line is one string: a list of its parts.
        return [x.strip() for x in value.split(",") if x.strip()] if isinstance(value, str) else value

    @property
    def folder(self) -> Path:
        """Where the results go."""
        return self._folder

    @property
    def cases(self) -> list[Any]:
        """The cases that will run."""
        return self._cases

    @property
    def planned(self) -> int:
        """How many cases will run."""
        return len(self._cases)

    def _repr_html_(self) -> str:
        return self.parameter_table(after=f"<div>{self.planned} case(s) to run; results folder: "
                                          f"<code>{esc(self.folder)}</code></div>")


def redteam_params(namespace: Mapping[str, Any]) -> RedTeamParams:
    """The notebook's parameters (pass ``globals()``), checked before anything runs; a mistake is one line.

    A comma-separated string is accepted for a list (``-p agents billing,support`` from the command line).

    Raises:
        ConfigError: an unknown parameter name (a mistyped ``papermill -p``), a bad value, an unknown agent,
            strategy, locale or fault, an attack file that cannot be used, or a selection that matches no case.
    """
    params = RedTeamParams.from_notebook(namespace)
    root = project_root()
    if params.attacks is not None:
        params.attacks = [str(under(root, p)) for p in params.attacks]
    try:  # every name and attack file checked now, before the run cell
        params._cases = plan_cases(params.attacks or [root / "evals" / "attacks"], agents=params.agents,
                                   strategies=params.strategies, locales=params.locales, faults=params.faults,
                                   form=params.form)
    except AttackError as exc:
        raise ConfigError(exc.one_line()) from None
    except RedTeamError as exc:
        raise ConfigError(str(exc)) from None
    params._folder = _folder(params.output_dir, namespace, root)
    return params


def _folder(output_dir: str | None, namespace: Mapping[str, Any], root: Path) -> Path:
    if output_dir is not None:
        return under(root, output_dir).resolve()
    beside = executed_folder(namespace)  # reports/x.ipynb -> reports/x/, as the run notebook
    return beside if beside is not None else root / "reports" / f"redteam-{dt.datetime.now():%Y%m%d-%H%M%S}"


def run_redteam_params(params: RedTeamParams, *, progress: bool = True) -> RedTeamRun:
    """Run the red team with the notebook's parameters, printing a line per case as it finishes.

    Raises:
        ConfigError: a target that cannot be built, or a store that cannot be opened (nothing ran).
    """

    done = [0]

    def line(result: Any) -> None:
        done[0] += 1
        print(f"[{done[0]}/{params.planned}] {result.case}: {result.verdict()}", flush=True)

    v = params.model_dump()
    try:
        return run_redteam(v["attacks"] or [project_root() / "evals" / "attacks"], agents=v["agents"],
                           strategies=v["strategies"], locales=v["locales"], targets=v["targets"], faults=v["faults"],
                           store=v["store"], output_dir=params.folder, concurrency=v["concurrency"],
                           on_result=line if progress else None, form=v["form"], simulator_model=v["simulator_model"],
                           seed=v["seed"], workers=v["workers"], cluster=v["cluster"], cases=params.cases,
                           progress=False)  # a line per case (above) is the notebook's progress
    except (RedTeamError, StoreError) as exc:
        raise ConfigError(str(exc)) from None


def check_leaks(red: RedTeamRun, params: RedTeamParams) -> str:
    """The gate: with ``fail_on_leak``, fail (one line naming the cases) when any case leaked.

    Raises:
        LeakError: ``fail_on_leak`` is set and at least one case leaked.
    """
    leaked = list(red.cases.loc[red.cases["leaked"].astype(bool), "case"]) if len(red.cases) else []
    counted = leaked_summary(case_counts(red.cases))  # attacks and legitimate requests apart, as the report
    if leaked and params.fail_on_leak:
        named = ", ".join(leaked[:5]) + (f" and {len(leaked) - 5} more" if len(leaked) > 5 else "")
        raise LeakError(f"{counted} (another patient's data): {named}")
    if leaked:
        return f"{counted}; fail_on_leak is off"
    return f"no case leaked ({len(red.cases)} case(s))"
