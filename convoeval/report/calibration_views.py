"""The calibrated estimates side by side: the judge's raw rate, the labels alone, and the judge calibrated by the
labels, each with its interval, one row per judge × labels × criterion (and the holistic goal score).

``calibrated_cells`` pivots a ``convoeval.agreement.calibration.calibration_table`` (or any ``pass_rate_estimates``
table) for reading; ``calibrated_view`` shows a study's. A refused estimate reads ``refused: <why>``, never a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from convoeval._util.html_blocks import HTML, box, cell, esc, table, wrap

__all__ = ["ESTIMATOR_HEADERS", "calibrated_cells", "calibrated_view"]

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
