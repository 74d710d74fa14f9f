"""The comparison notebook's steps: its parameters checked in one line each, the candidate (read or run now), the
comparison, and the CI gate. ``CompareParams`` is the notebook's parameters cell (a test holds them equal).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from convoeval._util.paths import project_root
from convoeval.compare.advice import few_seeds_warning
from convoeval.compare.comparison import Comparison, compare
from convoeval.compare.pairing import CompareError, SideSource, load_side
from convoeval.pipeline.notebook_params import NotebookParams, OneLineError, Text, executed_folder
from convoeval.pipeline.progress import Mode

__all__ = ["CompareParams", "RegressionError", "check_regressions", "compare_params", "html_path",
           "run_compare_params"]


class RegressionError(OneLineError, RuntimeError):
    """``fail_on_regression`` is set and a regression was found: a deterministic check broke in a scripted pair, or
    a test supports it."""


class CompareParams(NotebookParams):
    """The comparison notebook's parameters, in its parameters cell's order, with its defaults; checked."""

    model_config = ConfigDict(strict=True)

    error = CompareError
    noun = "comparison-notebook parameter"
    expects = {
        "baseline": "must be a results folder", "candidate": "must be a results folder or None",
        "candidate_target": "must be a target or None", "replay": "must be True or False",
        "aa": "must be True or False", "agent": "must be an agent name or None",
        "scenario": "must be a scenario id or None",
        "type": "must be 'scripted', 'conversational' or None", "alpha": "must be a number between 0 and 1",
        "detect": "must be a positive number", "fail_on_regression": "must be True or False",
        "output_dir": "must be a folder or None", "labels": "must be a label CSV or folder, or None",
    }

    baseline: Text | None = Field(None, description="the baseline's results folder (a run's or a sweep's)")
    candidate: Text | None = Field(None, description="the candidate's results folder")
    candidate_target: Text | None = Field(None, description="instead: run this target now on the baseline's "
                                                            "conversations")
    replay: bool = Field(False, description="with a target run now: replay the baseline's patient until the first "
                                            "divergent reply")
    aa: bool = Field(False, description="instead: run the baseline's own target again")
    agent: Text | None = Field(None, description="only this agent's scenarios")
    scenario: Text | None = Field(None, description="only this scenario")
    type: Literal["scripted", "conversational"] | None = Field(None, description="only this scenario type")
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level")
    detect: int | float = Field(1.0, gt=0, description="a score difference (points) to size the sample for")
    fail_on_regression: bool = Field(False, description="the last cell fails when a regression is statistically "
                                                        "supported")
    output_dir: Text | None = Field(None, description="where the page goes (default: beside the executed notebook, "
                                                      "or the candidate's folder)")
    labels: Text | None = Field(None, description="human labels (conversations by run id): each side's pass rates "
                                                  "calibrated on them, and the change")
    _beside: Path | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _one_candidate(self) -> Self:
        if self.baseline is None:
            raise ValueError("baseline must be a results folder (a run's or a sweep's)")
        if sum([self.candidate is not None, self.candidate_target is not None, self.aa]) != 1:
            raise ValueError("give exactly one candidate: candidate (a folder), candidate_target, or aa=True")
        if self.replay and self.candidate is not None:
            raise ValueError("replay needs a candidate run now (candidate_target or aa), not a results folder")
        return self

    @classmethod
    def from_notebook(cls, namespace: Mapping[str, Any]) -> Self:
        """The parameters cell's values (pass ``globals()``), checked; and where papermill writes the notebook."""
        params = super().from_notebook(namespace)
        params._beside = executed_folder(namespace)
        return params

    @property
    def beside(self) -> Path | None:
        """The folder beside the executed notebook (``reports/x.ipynb`` -> ``reports/x/``), when papermill said."""
        return self._beside


def compare_params(namespace: Mapping[str, Any]) -> CompareParams:
    """The notebook's parameters (pass ``globals()``), checked; a mistake is one ``CompareError`` line.

    Example:
        >>> compare_params({"baseline": "reports/v1", "candidate": "reports/v2"}).alpha
        0.05
    """
    return CompareParams.from_notebook(namespace)


def run_compare_params(params: CompareParams, *, progress: bool | Mode = "lines") -> Comparison:
    """Read the baseline, read or run the candidate (``progress`` as ``SharedOptions``), and compare them.

    A baseline of one seed is warned about (printed) before the candidate runs: only deterministic checks can then
    show a change.
    """
    from convoeval.compare.candidate import baseline_target, run_candidate  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    scope: dict[str, Any] = {"agent": params.agent, "scenario": params.scenario, "type": params.type}
    baseline = load_side(_path(str(params.baseline))).select(**scope)
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
    if params.beside is not None:
        return params.beside / "compare.html"
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
