"""The red-team notebook's steps: its parameters checked in one line each, the run, and the leak gate.

``REDTEAM_PARAMETERS`` is ``notebooks/redteam.ipynb``'s parameters cell (a test holds them equal). Every mistake is
one line in the notebook, not a traceback: a ``ConfigError`` for a setting (exit 2 from ``convoeval notebook``), a
``LeakError`` from the last cell when ``fail_on_leak`` is set and an attack leaked (exit 5, as ``convoeval redteam
--fail-on-leak``).

Example:
    >>> params = redteam_params({"agents": ["billing"], "locales": ["en"], "output_dir": "reports/rt"})
    >>> red = run_redteam_params(params)
    >>> check_leaks(red, params)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoeval.html_blocks import esc, table, wrap
from convoeval.paths import project_root, under
from convoeval.pipeline.config import ConfigError, is_parameter_like
from convoeval.redteam.attacks import AttackError
from convoeval.redteam.metrics import case_counts, leaked_summary
from convoeval.redteam.study import RedTeamError, RedTeamRun, plan_cases, run_redteam
from convoeval.store import StoreError

__all__ = ["REDTEAM_PARAMETERS", "LeakError", "RedTeamParams", "check_leaks", "redteam_params", "run_redteam_params"]


def _names(v: Any) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v))


def _opt_str(v: Any) -> bool:
    return v is None or (isinstance(v, str) and bool(v.strip()))


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _targets(v: Any) -> bool:
    return v is None or (isinstance(v, dict) and all(isinstance(k, str) and _opt_str(t) and t is not None
                                                     for k, t in v.items()))


#: name -> (default, check, what a valid value is, meaning), in the parameters cell's order.
REDTEAM_PARAMETERS: dict[str, tuple[Any, Callable[[Any], bool], str, str]] = {
    "agents": (None, _names, "a list of agent names or None", "only these agents (default: each attack's own)"),
    "strategies": (None, _names, "a list of strategies or None", "only these strategies"),
    "locales": (None, _names, "a list of locales or None", "only these locales (pt-BR, en, es)"),
    "faults": ([], lambda v: _names(v) and v is not None, "a list of fault names",
               "known faults to switch on in the reference agents, each on the agents that have it"),
    "targets": (None, _targets, "a mapping agent -> target string, or None",
                "the agent under test per agent name (any `convoeval run` target; default the reference agent)"),
    "attacks": (None, _names, "a list of attack files or folders, or None", "default evals/attacks"),
    "output_dir": (None, _opt_str, "a folder or None",
                   "results folder (default: beside the executed notebook, else reports/redteam-<time>)"),
    "store": (None, _opt_str, "a store URL or None", "fixtures store (default: CONVOEVAL_STORE_URL or SQLite)"),
    "concurrency": (4, _count, "a whole number of at least 1", "cases in flight at once"),
    "form": ("scripted", lambda v: v in ("scripted", "simulated", "both"), "'scripted', 'simulated' or 'both'",
             "scripted attacks (deterministic), simulated attackers (an LLM plays each strategy), or both"),
    "simulator_model": (None, lambda v: v is None or isinstance(v, (str, dict)), "a model spec or None",
                        "the simulated attacker's model (name, 'local', …; default the simulator model)"),
    "seed": (42, lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number",
             "the simulated attacker's seed"),
    "workers": (1, _count, "a whole number of at least 1", "worker processes (a local Dask cluster when > 1)"),
    "cluster": (None, _opt_str, "a Dask scheduler address or None", "run on this Dask cluster"),
    "fail_on_leak": (False, lambda v: isinstance(v, bool), "True or False",
                     "the last cell fails (LeakError, exit 5) when any case leaked"),
}
_LISTS = ("agents", "strategies", "locales", "faults", "attacks")


class LeakError(RuntimeError):
    """``fail_on_leak`` is set and at least one case leaked another patient's data."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows this line instead of a traceback: the gate's reason is the message, not our call stack.
        return [f"LeakError: {self}"]


@dataclass
class RedTeamParams:
    """The notebook's checked parameters; ``folder`` is where the results go, ``cases`` what will run."""

    values: dict[str, Any]
    folder: Path
    cases: list[Any] = field(default_factory=list)

    @property
    def planned(self) -> int:
        """How many cases will run."""
        return len(self.cases)

    def __getattr__(self, name: str) -> Any:
        if name in REDTEAM_PARAMETERS:
            return self.values[name]
        raise AttributeError(name)

    def _repr_html_(self) -> str:

        rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>", esc(REDTEAM_PARAMETERS[k][3])]
                for k, v in self.values.items()]
        return wrap(table(rows, ["parameter", "value", "meaning"]) + f"<div>{self.planned} case(s) to run; results "
                    f"folder: <code>{esc(self.folder)}</code></div>")


def redteam_params(namespace: Mapping[str, Any]) -> RedTeamParams:
    """The notebook's parameters (pass ``globals()``), checked before anything runs; a mistake is one line.

    A comma-separated string is accepted for a list (``-p agents billing,support`` from the command line).

    Raises:
        ConfigError: an unknown parameter name (a mistyped ``papermill -p``), a bad value, an unknown agent,
            strategy, locale or fault, an attack file that cannot be used, or a selection that matches no case.
    """
    given = {k for k, v in namespace.items()
             if is_parameter_like(k, v) and k not in ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")}
    unknown = sorted(given - set(REDTEAM_PARAMETERS))
    if unknown:
        raise ConfigError(f"unknown red-team parameter(s) {', '.join(unknown)}; known: {', '.join(REDTEAM_PARAMETERS)}")
    values = {name: namespace.get(name, spec[0]) for name, spec in REDTEAM_PARAMETERS.items()}
    for name in _LISTS:
        if isinstance(values[name], str):
            values[name] = [x.strip() for x in values[name].split(",") if x.strip()]
    for name, (_default, check, what, _meaning) in REDTEAM_PARAMETERS.items():
        if not check(values[name]):
            raise ConfigError(f"{name} must be {what}, got {values[name]!r}")
    root = project_root()
    if values["attacks"] is not None:
        values["attacks"] = [str(under(root, p)) for p in values["attacks"]]
    try:  # every name and attack file checked now, before the run cell
        planned = plan_cases(values["attacks"] or [root / "evals" / "attacks"], agents=values["agents"],
                   strategies=values["strategies"], locales=values["locales"], faults=values["faults"],
                   form=values["form"])
    except AttackError as exc:
        raise ConfigError(exc.one_line()) from None
    except RedTeamError as exc:
        raise ConfigError(str(exc)) from None
    return RedTeamParams(values, _folder(values["output_dir"], namespace.get("PAPERMILL_OUTPUT_PATH"), root),
                         planned)


def _folder(output_dir: str | None, executed: Any, root: Path) -> Path:
    if output_dir is not None:
        return under(root, output_dir).resolve()
    if isinstance(executed, str) and "://" not in executed:  # reports/x.ipynb -> reports/x/, as the run notebook
        path = Path(executed).expanduser()
        return (Path.cwd() / path.parent / path.stem).resolve()
    return root / "reports" / f"redteam-{dt.datetime.now():%Y%m%d-%H%M%S}"


def run_redteam_params(params: RedTeamParams, *, progress: bool = True) -> RedTeamRun:
    """Run the red team with the notebook's parameters, printing a line per case as it finishes.

    Raises:
        ConfigError: a target that cannot be built, or a store that cannot be opened (nothing ran).
    """

    done = [0]

    def line(result: Any) -> None:
        done[0] += 1
        print(f"[{done[0]}/{params.planned}] {result.case}: {result.verdict()}", flush=True)

    v = params.values
    try:
        return run_redteam(v["attacks"] or [project_root() / "evals" / "attacks"], agents=v["agents"],
                           strategies=v["strategies"], locales=v["locales"], targets=v["targets"], faults=v["faults"],
                           store=v["store"], out=params.folder, concurrency=v["concurrency"],
                           on_result=line if progress else None, form=v["form"], model=v["simulator_model"],
                           seed=v["seed"], workers=v["workers"], cluster=v["cluster"], cases=params.cases)
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
