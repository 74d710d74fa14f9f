"""The run notebook's parameters: their names, their checks, and the ``RunConfig`` they become.

Papermill only *warns* about a parameter the notebook does not declare, so a typo (``-p agnet billing``) would run
the defaults silently. The notebook's second cell therefore calls ``check_parameters(globals())``, which rejects
unknown names and bad values with one line each, and the sweep checks names before it starts a kernel.

Secrets are never parameters (papermill writes parameters into the executed notebook): models read their keys
from the environment, and the fixtures store comes from ``CONVOEVAL_STORE_URL``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

from convoeval.report._html import css, esc, shown_path, table, wrap

__all__ = [
    "NOTEBOOK_PARAMETERS",
    "NotebookConfig",
    "ParameterError",
    "check_parameters",
    "default_output_dir",
    "project_root",
]


class ParameterError(ValueError):
    """A notebook parameter that cannot work. Shown as one line in a notebook, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing the traceback: the user needs the reason, not our call stack.
        return [f"ParameterError: {self}"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _optional(kind: Callable[[Any], bool], what: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v is None or kind(v)), f"{what} or None"


_STR = (lambda v: isinstance(v, str) and v.strip() != ""), "a non-empty string"
_POS_INT = (lambda v: _is_int(v) and v >= 1), "a positive integer"
_SEEDS = (lambda v: v is None or _is_int(v) or (isinstance(v, list) and v and all(_is_int(s) for s in v)),
          "an integer, a list of integers, or None (each scenario's own seed)")
_MODEL = (lambda v: v is None or (isinstance(v, str) and v.strip() != "") or isinstance(v, dict),
          "a model name, 'local', a mapping of model settings, or None (the environment decides)")
_THRESHOLD = (lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 10),
              "a number from 0 to 10, or None")

#: name -> (check, what a valid value is, meaning). The notebook's parameters cell declares exactly these names.
NOTEBOOK_PARAMETERS: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "agent": (*_optional(_STR[0], "an agent name"), "which agent's scenarios to run (None: every agent)"),
    "seed": (*_SEEDS, "simulator seed(s)"),
    "scenario": (*_optional(_STR[0], "a scenario id"), "only this scenario"),
    "type": (*_optional(_STR[0], "'scripted' or 'conversational'"), "only this scenario type"),
    "trials": (*_POS_INT, "repetitions of each scenario × seed"),
    "target": (*_optional(_STR[0], "a target spec"), "the agent under test (None: the reference clinic agent)"),
    "simulator_model": (*_MODEL, "the simulated patient's model"),
    "judge_model": (*_MODEL, "the judges' model"),
    "judge_samples": (*_POS_INT, "independent samples per judge"),
    "fail_threshold": (*_THRESHOLD, "the last cell fails when a conversation scores below it (or errors)"),
    "output_dir": (*_optional(_STR[0], "a folder path"), "where the run's data and report.html go"),
    "concurrency": (*_POS_INT, "conversations in flight at once"),
    "scenarios_dir": (*_optional(_STR[0], "a folder path"), "scenario files (None: evals/scenarios of the project)"),
}

# Names IPython puts in a kernel's namespace; they are not parameters.
_KERNEL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
# What papermill injects with --inject-output-path / --inject-paths: the executed notebook's location.
_PAPERMILL_PATHS = ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")


@dataclass
class NotebookConfig:
    """Checked parameters and what they resolve to.

    Attributes:
        params: every parameter's value, as given (defaults filled in).
        run_config: the ``convoeval.runs.RunConfig`` to execute.
        output_dir: where the run's data goes (created by the run).
        project_root: the folder holding ``evals/scenarios`` (relative paths are resolved against it).
    """

    params: dict[str, Any]
    run_config: Any
    output_dir: Path
    project_root: Path

    def _repr_html_(self) -> str:
        rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>", esc(NOTEBOOK_PARAMETERS[k][2])]
                for k, v in self.params.items()]
        return wrap(f"<div{css(margin_bottom='4px')}>Parameters checked. Results go to "
                    f"<code>{esc(shown_path(self.output_dir))}</code></div>" + table(rows, ["parameter", "value", "meaning"]))

    def __repr__(self) -> str:
        return f"NotebookConfig(output_dir={str(self.output_dir)!r}, params={self.params!r})"


def project_root(start: Path | str | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the working directory) holding ``evals/scenarios``.

    Notebooks run with the notebook's folder (Jupyter, nbval) or the caller's folder (papermill) as working
    directory; both find the project this way. Falls back to ``start`` itself.
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "evals" / "scenarios").is_dir():
            return folder
    return here


def default_output_dir(root: Path, params: Mapping[str, Any]) -> Path:
    """``<root>/reports/run-<agent>-s<seed>-<time>``: a new folder per run, named so a listing reads well."""
    seed = params.get("seed")
    seeds = "-".join(map(str, seed)) if isinstance(seed, list) else ("own" if seed is None else str(seed))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return root / "reports" / f"run-{params.get('agent') or 'all'}-s{seeds}-{stamp}"


def check_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check parameter names and value types; return them with defaults filled in.

    Args:
        values: parameter name -> value (unknown names are errors).

    Raises:
        ParameterError: the first unknown name or bad value, in one line.
    """
    unknown = sorted(set(values) - set(NOTEBOOK_PARAMETERS))
    if unknown:
        raise ParameterError(
            f"unknown notebook parameter(s) {', '.join(unknown)}; known: {', '.join(NOTEBOOK_PARAMETERS)}"
        )
    missing = [name for name in NOTEBOOK_PARAMETERS if name not in values]
    defaults = notebook_defaults() if missing else {}
    out = {name: values[name] if name in values else defaults.get(name) for name in NOTEBOOK_PARAMETERS}
    for name, (check, what, _) in NOTEBOOK_PARAMETERS.items():
        if not check(out[name]):
            raise ParameterError(f"{name} must be {what}, got {out[name]!r}")
    return out


def check_parameters(namespace: Mapping[str, Any], *, check_scenarios: bool = True) -> NotebookConfig:
    """Validate the notebook's parameters (pass ``globals()``) and resolve them into a run configuration.

    Plain values in ``namespace`` whose names are not parameters are reported as unknown: they can only come from a
    mistyped ``papermill -p`` name. Modules, functions, classes, objects and ``_``-names are ignored, so the check
    can be re-run in an interactive session.

    Without ``output_dir`` the data goes beside the executed notebook (``reports/x.ipynb`` -> ``reports/x/``) when
    papermill ran with ``--inject-output-path``, else to ``reports/run-<agent>-s<seed>-<time>/``.

    Args:
        namespace: the notebook's ``globals()`` (or any mapping of parameter values).
        check_scenarios: also check that the selection matches at least one scenario file.

    Returns:
        A ``NotebookConfig``; displaying it shows the parameters and the output folder.

    Raises:
        ParameterError: an unknown name or a bad value, with a one-line reason.

    Example:
        >>> config = check_parameters({"agent": "billing", "seed": 42})
        >>> config.run_config.seeds
        [42]
    """
    from convoeval.runs import RunConfig, RunConfigError

    values = {k: v for k, v in namespace.items() if _is_parameter_like(k, v) and k not in _PAPERMILL_PATHS}
    params = check_values(values)
    root = project_root()
    scenarios_dir = _resolve(root, params["scenarios_dir"] or "evals/scenarios")
    seed = params["seed"]
    config = RunConfig(
        agent=params["agent"],
        scenario=params["scenario"],
        type=params["type"],
        seeds=list(seed) if isinstance(seed, list) else [seed],
        trials=params["trials"],
        target=params["target"],
        simulator_model=params["simulator_model"],
        judge_model=params["judge_model"],
        judge_samples=params["judge_samples"],
        fail_threshold=params["fail_threshold"],
        scenarios_dir=shown_path(scenarios_dir),  # relative when it can be: the run's metadata gets shared
        concurrency=params["concurrency"],
    )
    try:
        config.validate()
        if check_scenarios:
            config.scenarios()
    except RunConfigError as exc:
        raise ParameterError(str(exc)) from None
    if params["output_dir"]:
        out = _resolve(root, params["output_dir"])
    elif isinstance(namespace.get("PAPERMILL_OUTPUT_PATH"), str) and "://" not in namespace["PAPERMILL_OUTPUT_PATH"]:
        # papermill --inject-output-path: the data goes beside the executed notebook, in a folder named after it.
        executed = Path(namespace["PAPERMILL_OUTPUT_PATH"]).expanduser()
        out = _resolve(Path.cwd(), executed.parent / executed.stem)
    else:
        out = default_output_dir(root, params)
    return NotebookConfig(params=params, run_config=config, output_dir=out, project_root=root)


def notebook_defaults(notebook: Path | str | None = None) -> dict[str, Any]:
    """The defaults the run notebook declares (``papermill.inspect_notebook``), as Python values.

    Falls back to the library's own defaults when the notebook cannot be found (a wheel install without it).
    """
    import ast

    path = Path(notebook) if notebook else project_root() / "notebooks" / "run.ipynb"
    if path.exists():
        import papermill

        found = papermill.inspect_notebook(str(path))
        return {name: ast.literal_eval(p["default"]) for name, p in found.items()}
    return dict(_FALLBACK_DEFAULTS)


_FALLBACK_DEFAULTS: dict[str, Any] = {
    "agent": "billing", "seed": 42, "scenario": None, "type": None, "trials": 1, "target": None,
    "simulator_model": None, "judge_model": None, "judge_samples": 1, "fail_threshold": None, "output_dir": None,
    "concurrency": 4, "scenarios_dir": None,
}  # fmt: skip


def _is_parameter_like(name: str, value: Any) -> bool:
    if name.startswith("_") or name in _KERNEL_NAMES:
        return False
    if isinstance(value, (ModuleType, FunctionType, type)) or callable(value):
        return False
    return value is None or isinstance(value, (str, int, float, bool, list, dict, tuple))


def _resolve(root: Path, path: str | Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p
