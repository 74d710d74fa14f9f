"""The production notebook's steps (``notebooks/production.ipynb``): import a sample, scrub it, judge it, show the
worst conversations with the command that pins or forks each, and set the imported patients beside a simulated run.

Each step is one call the notebook makes; the parameters are ``ProductionParams`` (one model, as ``EvalConfig`` is
the run notebook's), so a mistyped ``papermill -p`` is refused in one line before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd
from pydantic import Field, StrictInt

from convoeval._util.paths import project_root
from convoeval.fidelity.sim2real import sim2real_table
from convoeval.pipeline.config import ConfigError
from convoeval.pipeline.notebook_params import NotebookParams
from convoeval.pipeline.results import EvalResult, load_run
from convoeval.production.judging import ajudge_folder
from convoeval.production.rubric import production_rubric
from convoeval.production.scrub import Scrubber
from convoeval.production.settings import ImportSettings
from convoeval.production.writing import ImportSummary, import_conversations
from convoeval.report import HTML
from convoeval.report.plots import Chart
from convoeval.report.sim2real import plot_sim2real, sim2real_table_html
from convoeval.report.tables import score_table
from convoeval.report.transcripts import transcripts

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = ["ProductionParams", "import_step", "judge_step", "production_params", "scores", "scrub_report",
           "show_conversations", "sim2real_plot", "sim2real_step", "worst_conversations"]

_SAMPLES = ["samples/production/whatsapp/android-pt-BR.txt", "samples/production/cloud-api/webhooks-pt-BR.jsonl"]


class ProductionParams(NotebookParams):
    """The production notebook's parameters, in its parameters cell's order, with its defaults; checked."""

    error = ConfigError
    noun = "production-notebook parameter"
    expects = {"judge_samples": "must be a whole number of at least 1", "worst": "must be a whole number of at least 1"}

    sources: list[str] = Field(default_factory=lambda: list(_SAMPLES), description="files or folders to import")
    agent_name: str | None = Field("Clínica Sorriso", description="a chat export's sender that is the clinic")
    agent_phone: str | None = Field(None, description="or the clinic's phone number")
    agent: str = Field("billing", description="the agent family (its scenarios' rubric judges the conversations)")
    out_dir: str = Field("reports/production", description="the results folder to write (replaced if it exists)")
    scrub: bool = Field(True, description="replace personal data with consistent stand-ins before writing")
    judge: bool = Field(True, description="run the rubric and holistic judges (False: import and show only)")
    criteria: str | None = Field(None, description="a criteria file (None: the agent family's scenario rubric)")
    judge_model: str | dict[str, Any] | None = Field(None, description="the judges' model")
    judge_samples: Annotated[StrictInt, Field(ge=1)] = Field(1, description="judge samples per conversation")
    worst: Annotated[StrictInt, Field(ge=1)] = Field(5, description="how many of the worst conversations to show")
    simulated_dir: str | None = Field("reports/example", description="a simulated run of the family, for Sim2Real")


def production_params(namespace: Mapping[str, Any]) -> ProductionParams:
    """Pick the notebook's parameters out of its globals and check them (one clear line on a bad one); relative
    paths are the project's (a notebook runs in its own folder under nbval and papermill's ``cwd``)."""
    params = ProductionParams.from_notebook(namespace)
    root = project_root()

    def placed(path: str) -> str:
        return path if Path(path).is_absolute() or Path(path).exists() else str(root / path)

    return params.model_copy(update={"sources": [placed(p) for p in params.sources], "out_dir": placed(params.out_dir),
                                     "simulated_dir": placed(params.simulated_dir) if params.simulated_dir else None,
                                     "criteria": placed(params.criteria) if params.criteria else None})


def import_step(params: ProductionParams) -> ImportSummary:
    """Import ``params.sources`` into ``params.out_dir`` (scrubbed unless ``scrub`` is off); prints the summary."""
    scrubber = Scrubber() if params.scrub else None
    summary = import_conversations(params.sources, params.out_dir,
                                   ImportSettings(agent_name=params.agent_name, agent_phone=params.agent_phone,
                                                  agent=params.agent),
                                   transform=scrubber, report=scrubber.report if scrubber else None, force=True)
    for line in summary.lines():
        print(line)
    return summary


def scrub_report(summary: ImportSummary) -> pd.DataFrame:
    """What the scrubber replaced, kind by kind (empty when the import was not scrubbed)."""
    replaced = (summary.scrub or {}).get("replaced") or {}
    return pd.DataFrame({"kind": list(replaced), "replaced": list(replaced.values())})


def judge_step(params: ProductionParams) -> EvalResult:
    """Judge the imported folder (``convoeval judge``), or read it back unjudged when ``judge`` is off."""
    if not params.judge:
        print("judging skipped (judge = False)")
        return load_run(params.out_dir)
    from convoeval._util.aio import run_sync  # noqa: PLC0415 - the background loop, only when judging

    rubric = production_rubric(params.agent, criteria_file=params.criteria)
    return run_sync(ajudge_folder(params.out_dir, rubric, model=params.judge_model, samples=params.judge_samples,
                                  progress="lines", allow_unscrubbed=True))


def show_conversations(result: EvalResult) -> HTML:
    """Every imported conversation as a chat."""
    return transcripts(result)


def worst_conversations(result: EvalResult, params: ProductionParams) -> Styler:
    """The ``worst`` lowest-scored conversations (all of them unjudged, in order), each with the commands that pin
    it as a regression test and fork it against the agent under test, as a ``Styler`` (the commands shown whole,
    to copy; ``.data`` is the frame)."""
    runs = result.frames.runs[["run_id", "scenario", "n_messages"]]
    scores = result.frames.scores[["run_id", "status", "score"]] if len(result.frames.scores) else pd.DataFrame(
        columns=["run_id", "status", "score"])
    table = runs.merge(scores, on="run_id", how="left").sort_values(["score", "scenario"], na_position="last")
    file = lambda key: f"{Path(params.out_dir) / 'runs' / key}.json"  # noqa: E731 - one line, read once
    table["pin"] = [f"convoeval pin {file(k)}" for k in table["scenario"]]
    table["fork"] = [f"convoeval fork {file(k)} --turn 1 -n 5" for k in table["scenario"]]
    return table.head(params.worst).reset_index(drop=True).style.hide(axis="index")


def sim2real_step(result: EvalResult, params: ProductionParams) -> HTML:
    """The Sim2Real fidelity table: the simulated run ``simulated_dir`` beside the imported conversations."""
    if not params.simulated_dir:
        return HTML("<i>no simulated run given (simulated_dir = None)</i>", text="no simulated run given")
    table = sim2real_table(load_run(params.simulated_dir).frames.transcripts, result.frames.transcripts)
    return sim2real_table_html(table)


def sim2real_plot(result: EvalResult, params: ProductionParams) -> Chart | HTML:
    """The Sim2Real plot (every measure, simulated against production)."""
    if not params.simulated_dir:
        return HTML("<i>no simulated run given</i>", text="no simulated run given")
    return plot_sim2real(sim2real_table(load_run(params.simulated_dir).frames.transcripts, result.frames.transcripts))


def scores(result: EvalResult) -> Styler:
    """The per-conversation score table, as a run's."""
    table: Styler = score_table(result)
    return table
