"""The calibrated estimates as a reader sees them: the judge's raw rate, the labels alone, and the judge calibrated
by the labels, side by side, each with its interval — in the run report (with human labels: the run's ``labels``
setting) and in the agreement notebook.

The numbers are ``convoeval.stats.calibration.calibration_table``'s (the estimators: ``convoeval.stats.calibration``,
``docs/agreement.md``, "Calibration: one function per question"); this module only reads them. ``calibrated_cells``
pivots a table to one row per judge × labels × criterion and one column per estimator (a refused estimate reads
``refused: <why>``, never a number); ``calibrated_rates`` is the run report's section (the database's verdicts,
criteria linked to an assertion, are free labels and are calibrated on too, in rows of their own, so the human and
the free calibration can be compared); ``calibrated_view`` is the study's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, Unpack

import numpy as np
import pandas as pd

from convoeval._util.html_blocks import HTML, box, cell, esc, table, wrap
from convoeval._util.paths import project_root, under
from convoeval.pipeline.results import EvalResult
from convoeval.stats.calibration.free_labels import database_labels
from convoeval.stats.calibration.table import calibration_table
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.labels import load_labels

__all__ = ["ESTIMATOR_HEADERS", "calibrated_cells", "calibrated_rates", "calibrated_rates_frame", "calibrated_view",
           "run_labels"]


#: The estimators shown, in column order, with their headers.
ESTIMATOR_HEADERS = {
    "judge_only": "raw judge rate",
    "labels_only": "labels only",
    "ppi++": "PPI++",
    "isotonic": "isotonic",
    "rogan_gladen": "Rogan–Gladen",
}
_INDEX = ("instrument", "rater", "labels", "criterion")


def _text(row: Any) -> str:
    if isinstance(row.refused, str) and row.refused:
        return f"refused: {row.refused}"
    if not np.isfinite(row.value):
        return "n/a"
    return f"{row.value:.2f} [{row.ci_low:.2f}, {row.ci_high:.2f}]".replace("-0.00", "0.00")


def calibrated_cells(estimates: pd.DataFrame, *, index: Sequence[str] = _INDEX) -> pd.DataFrame:
    """One row per ``index``, one column per estimator (``value [ci_low, ci_high]`` or ``refused: why``), then the
    labelled and unlabelled counts and PPI++'s effective sample size.

    Args:
        estimates: A calibrated-estimates table (``estimator, value, ci_low, ci_high, refused, n_labelled,
            n_unlabelled, n_effective`` and the ``index`` columns present in it).
        index: The grouping columns of a row (those absent from ``estimates`` are skipped).
    """
    index = [c for c in index if c in estimates]
    headers = [h for e, h in ESTIMATOR_HEADERS.items() if e in set(estimates.get("estimator", []))]
    if estimates.empty:
        return pd.DataFrame(columns=[*index, *headers, "labelled", "unlabelled", "PPI++ effective n"])
    rows = []
    for keys, group in estimates.groupby(index, sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        by = {r.estimator: r for r in group.itertuples()}
        row = dict(zip(index, keys, strict=True))
        for name, header in ESTIMATOR_HEADERS.items():
            if header in headers:
                row[header] = _text(by[name]) if name in by else "—"
        calibrated = by.get("ppi++") or by.get("labels_only")
        row["labelled"] = int(calibrated.n_labelled) if calibrated is not None else 0
        row["unlabelled"] = int(calibrated.n_unlabelled) if calibrated is not None else 0
        eff = float(by["ppi++"].n_effective) if "ppi++" in by else float("nan")
        row["PPI++ effective n"] = round(eff, 1) if np.isfinite(eff) else "—"
        rows.append(row)
    return pd.DataFrame(rows)


class HasTables(Protocol):
    """Anything with a study's result tables by name (``AgreementStudy``)."""

    @property
    def tables(self) -> Mapping[str, pd.DataFrame]:
        """The study's tables by name."""
        ...


def calibrated_view(study: HasTables) -> HTML:
    """A study's calibrated estimates (``tables["calibrated_estimates"]``) side by side, with how to read them."""
    frame = study.tables.get("calibrated_estimates")
    if frame is None or frame.empty:
        text = ("No calibrated estimates: no labels. Free labels come from criteria linked to a database assertion "
                "and from known-fault conversations; human labels from the labels parameter.")
        return HTML(wrap(box(esc(text))), text=text)
    cells = calibrated_cells(frame)
    rows = [[cell(v, str(c)) for v, c in zip(r, cells.columns, strict=True)] for r in cells.itertuples(index=False)]
    note = ("Each cell: estimate [95% interval]. <b>raw judge rate</b> trusts the judge (its interval ignores the "
            "judge's bias); <b>labels only</b> ignores the judge; <b>PPI++</b>, <b>isotonic</b> and "
            "<b>Rogan–Gladen</b> correct the judge with the labels. An estimator refuses (and says why) when the "
            "labels are too few or do not cover the judge's scores. See docs/agreement.md, \"Calibrated estimates\".")
    refused = int(frame["refused"].fillna("").astype(bool).sum())
    return HTML(wrap(box(note) + table(rows, [esc(c) for c in cells.columns])),
                text=f"{len(cells)} calibrated rows, {refused} refused estimate(s)")



def run_labels(run: EvalResult, labels: str | Path | None = None) -> Path | None:
    """The label path of a run: ``labels``, else the run's ``labels`` setting (relative to the project); or None."""
    given = labels if labels is not None else (run.meta.get("config") or {}).get("labels")
    return under(project_root(), given) if given else None


def calibrated_rates_frame(run: EvalResult, labels: str | Path | None = None, *, estimation: Estimation | None = None,
                           **deprecated: Unpack[EstimationAliases]) -> pd.DataFrame:
    """``calibration_table`` of the run's judge on the human labels and on the database's, per criterion.

    Args:
        run: A run (``convoeval.load_results``).
        labels: A label CSV or folder; default the run's ``labels`` setting.
        estimation: Level, seed and replicates (``convoeval.stats.Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        The estimates of both (``labels`` column: ``human`` / ``database``; every criterion for the human labels,
        those linked to an assertion for the database's); empty without human labels.
    """
    est = estimation_from(estimation, deprecated, "calibrated_rates_frame")
    path = run_labels(run, labels)
    rubric, assertions = run.frames.rubric, run.frames.assertions
    if path is None or rubric.empty:
        return pd.DataFrame()
    linked = len(assertions) and rubric["assertion"].notna().any()
    free = database_labels(rubric, assertions) if linked else None
    return calibration_table(run.frames, free=free, human=load_labels(path), rater="judge_model", goal=False,
                             human_criteria="all", estimation=est)


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
