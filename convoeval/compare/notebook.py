"""The comparison notebook's steps: its parameters checked in one line each, the candidate (read or run now), the
comparison, and the CI gate. ``COMPARE_PARAMETERS`` is the notebook's parameters cell (a test holds them equal).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoeval.compare.advice import few_seeds_warning
from convoeval.compare.comparison import Comparison, compare
from convoeval.compare.pairing import CompareError, SideSource, load_side
from convoeval.html_blocks import esc, table, wrap
from convoeval.paths import project_root
from convoeval.pipeline.progress import Mode

__all__ = ["COMPARE_PARAMETERS", "CompareParams", "RegressionError", "check_regressions", "compare_params",
           "html_path", "run_compare_params"]


def _opt_str(v: Any) -> bool:
    return v is None or (isinstance(v, str) and bool(v.strip()))


def _prob(v: Any) -> bool:
    return isinstance(v, float) and 0 < v < 1


#: name -> (default, check, what a valid value is, meaning), in the parameters cell's order.
COMPARE_PARAMETERS: dict[str, tuple[Any, Callable[[Any], bool], str, str]] = {
    "baseline": (None, _opt_str, "a results folder", "the baseline's results folder (a run's or a sweep's)"),
    "candidate": (None, _opt_str, "a results folder or None", "the candidate's results folder"),
    "candidate_target": (None, _opt_str, "a target or None",
                         "instead: run this target now on the baseline's conversations"),
    "replay": (False, lambda v: isinstance(v, bool), "True or False",
               "with a target run now: replay the baseline's patient until the first divergent reply"),
    "aa": (False, lambda v: isinstance(v, bool), "True or False", "instead: run the baseline's own target again"),
    "agent": (None, _opt_str, "an agent name or None", "only this agent's scenarios"),
    "scenario": (None, _opt_str, "a scenario id or None", "only this scenario"),
    "type": (None, lambda v: v in (None, "scripted", "conversational"), "'scripted', 'conversational' or None",
             "only this scenario type"),
    "alpha": (0.05, _prob, "a number between 0 and 1", "significance level"),
    "detect": (1.0, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
               "a positive number", "a score difference (points) to size the sample for"),
    "fail_on_regression": (False, lambda v: isinstance(v, bool), "True or False",
                           "the last cell fails when a regression is statistically supported"),
    "output_dir": (None, _opt_str, "a folder or None",
                   "where the page goes (default: beside the executed notebook, or the candidate's folder)"),
    "labels": (None, _opt_str, "a label CSV or folder, or None",
               "human labels (conversations by run id): each side's pass rates calibrated on them, and the change"),
}


class _OneLine(RuntimeError):
    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class RegressionError(_OneLine):
    """``fail_on_regression`` is set and a regression was found: a deterministic check broke in a scripted pair, or
    a test supports it."""


@dataclass
class CompareParams:
    """The notebook's checked parameters."""

    values: dict[str, Any]
    executed: str | None = None

    def __getattr__(self, name: str) -> Any:
        if name in COMPARE_PARAMETERS:
            return self.values[name]
        raise AttributeError(name)

    def _repr_html_(self) -> str:

        rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>", esc(COMPARE_PARAMETERS[k][3])]
                for k, v in self.values.items()]
        return wrap(table(rows, ["parameter", "value", "meaning"]))


def compare_params(namespace: Mapping[str, Any]) -> CompareParams:
    """The notebook's parameters (pass ``globals()``), checked; a mistake is one ``CompareError`` line.

    Example:
        >>> compare_params({"baseline": "reports/v1", "candidate": "reports/v2"}).alpha
        0.05
    """
    values = {name: namespace.get(name, spec[0]) for name, spec in COMPARE_PARAMETERS.items()}
    for name, (_default, check, what, _meaning) in COMPARE_PARAMETERS.items():
        if not check(values[name]):
            raise CompareError(f"{name} must be {what}, got {values[name]!r}")
    if values["baseline"] is None:
        raise CompareError("baseline must be a results folder (a run's or a sweep's)")
    ways = [values["candidate"] is not None, values["candidate_target"] is not None, values["aa"]]
    if sum(ways) != 1:
        raise CompareError("give exactly one candidate: candidate (a folder), candidate_target, or aa=True")
    if values["replay"] and values["candidate"] is not None:
        raise CompareError("replay needs a candidate run now (candidate_target or aa), not a results folder")
    executed = namespace.get("PAPERMILL_OUTPUT_PATH")
    return CompareParams(values, executed if isinstance(executed, str) else None)


def run_compare_params(params: CompareParams, *, progress: bool | Mode = "lines") -> Comparison:
    """Read the baseline, read or run the candidate (``progress`` as ``SharedOptions``), and compare them.

    A baseline of one seed is warned about (printed) before the candidate runs: only deterministic checks can then
    show a change.
    """
    from convoeval.compare.candidate import baseline_target, run_candidate  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    scope = {"agent": params.agent, "scenario": params.scenario, "type": params.type}
    baseline = load_side(_path(params.baseline)).select(**scope)
    candidate: SideSource | None = _path(params.candidate) if params.candidate is not None else None
    if warning := few_seeds_warning(baseline, alpha=params.alpha, candidate_runs_now=candidate is None,
                                    scope=scope):
        print(f"warning: {warning}")
    if candidate is None:
        target = params.candidate_target or baseline_target(baseline)
        candidate = run_candidate(baseline, target, replay=params.replay, progress=progress)
    labels = _path(params.labels) if params.labels is not None else None
    if labels is not None and not labels.exists():
        raise CompareError(f"labels: {labels} does not exist (a label CSV or a folder of them)")
    result = compare(baseline, candidate, alpha=params.alpha, detect=params.detect, labels=labels, **scope)
    result.rerun = {"candidate_runs_now": params.candidate is None}
    return result


def _path(value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() or path.exists() else project_root() / path


def html_path(params: CompareParams, result: Comparison) -> Path:
    """Where the page goes: ``output_dir``, else beside the executed notebook, else the candidate's folder, else a
    new ``reports/compare-<time>/``."""
    if params.output_dir is not None:
        return _path(params.output_dir) / "compare.html"
    if params.executed:
        executed = Path(params.executed)
        return (Path.cwd() / executed.parent / executed.stem / "compare.html").resolve()
    if result.candidate.folders and params.candidate is None:
        return result.candidate.folders[0] / "compare.html"
    return project_root() / "reports" / f"compare-{time.strftime('%Y%m%d-%H%M%S')}" / "compare.html"


def check_regressions(result: Comparison, params: CompareParams) -> str:
    """The gate: with ``fail_on_regression``, fail (one line, naming them) when the headline is regressed."""
    if not params.fail_on_regression:
        return f"{result.regression_summary()}; fail_on_regression is off"
    if result.exit_code(fail_on_regression=True):
        raise RegressionError(result.regression_summary())
    return "no regression: no deterministic check broke and none is statistically supported"
