"""The run report's calibrated pass rates: with human labels (the run's ``labels`` setting), each judge's pass rate
per criterion raw, from the labels alone, and calibrated (PPI++, isotonic, Rogan–Gladen), side by side.

The estimators are ``convoeval.stats.pass_rate_estimates``; the table is ``calibration_views.calibrated_cells``'s.
The database's verdicts (criteria linked to an assertion) are free labels and are calibrated on too, in rows of
their own, so the human and the free calibration can be compared.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from convoeval._util.html_blocks import HTML, box, cell, esc, table, wrap
from convoeval._util.paths import project_root, under
from convoeval.pipeline.results import EvalResult
from convoeval.report.calibration_views import calibrated_cells
from convoeval.stats.calibrated_rates import pass_rate_estimates
from convoeval.stats.free_labels import database_labels
from convoeval.stats.labels import load_labels

__all__ = ["calibrated_rates", "calibrated_rates_frame", "run_labels"]


def run_labels(run: EvalResult, labels: str | Path | None = None) -> Path | None:
    """The label path of a run: ``labels``, else the run's ``labels`` setting (relative to the project); or None."""
    given = labels if labels is not None else (run.meta.get("config") or {}).get("labels")
    return under(project_root(), given) if given else None


def calibrated_rates_frame(run: EvalResult, labels: str | Path | None = None, *, n_boot: int = 1000) -> pd.DataFrame:
    """``pass_rate_estimates`` of the run's judge on the human labels and on the database's, per criterion.

    Returns:
        The estimates of both (``labels`` column: ``human`` / ``database``); empty without human labels.
    """
    path = run_labels(run, labels)
    rubric = run.frames.rubric
    if path is None or rubric.empty:
        return pd.DataFrame()
    parts = [pass_rate_estimates(rubric, load_labels(path), sources="human", overall=False, n_boot=n_boot)]
    assertions = run.frames.assertions
    if len(assertions) and rubric["assertion"].notna().any():
        free = database_labels(rubric, assertions)
        if len(free):
            table = pass_rate_estimates(rubric, free, overall=False, n_boot=n_boot)
            parts.append(table[table["criterion"].isin(set(free["criterion"]))])
    return pd.concat(parts, ignore_index=True)


def calibrated_rates(run: EvalResult, labels: str | Path | None = None) -> HTML:
    """The calibrated pass rates section of a run report (a one-line note when the run has no labels)."""
    frame = calibrated_rates_frame(run, labels)
    if frame.empty:
        text = "No labels (the labels setting: a label CSV in the evals/labels format), so no calibrated pass rates."
        return HTML(wrap(box(esc(text))), text=text)
    cells = calibrated_cells(frame, index=("rater", "labels", "criterion"))
    rows = [[cell(v, str(c)) for v, c in zip(r, cells.columns, strict=True)] for r in cells.itertuples(index=False)]
    note = ("Each cell: estimate [95% interval]. The raw judge rate trusts the judge; labels only ignores it; PPI++, "
            "isotonic and Rogan–Gladen correct the judge with the labels (docs/agreement.md, \"Calibrated "
            "estimates\"). A refused estimate says why instead of giving a number.")
    return HTML(wrap(box(esc(note)) + table(rows, [esc(c) for c in cells.columns])), text=f"{len(cells)} rows")
