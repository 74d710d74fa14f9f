"""The columns every agreement function returns, declared once, and the row builder that sets the CI flag."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from convoeval.stats.sample_size import ci_too_wide

#: The result contract: grouping columns (criterion, rater_a, rater_b, dimension, ...) come first, then these.
RESULT_COLUMNS = ("statistic", "value", "ci_low", "ci_high", "n", "n_items", "method", "ci_too_wide")
#: The value of every grouping column in the row that pools all groups (e.g. all criteria).
ALL = "(all)"


def stat_row(
    statistic: str,
    value: float,
    ci_low: float,
    ci_high: float,
    *,
    n: int,
    n_items: int,
    method: str,
    scale: float = 1.0,
    has_ci: bool = True,
    groups: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One result row; ``has_ci=False`` marks a design quantity (e.g. a minimum detectable difference): no CI/flag."""
    value = float(value) if value is not None and np.isfinite(value) else float("nan")
    if not np.isfinite(value):
        ci_low = ci_high = float("nan")
    flag = bool(ci_too_wide(ci_low, ci_high, n=n, scale=scale)) if has_ci else False
    return {
        **(groups or {}),
        "statistic": statistic, "value": value, "ci_low": float(ci_low), "ci_high": float(ci_high),
        "n": int(n), "n_items": int(n_items), "method": method, "ci_too_wide": flag,
    }


def result_frame(rows: Iterable[Mapping[str, Any]], group_columns: Sequence[str]) -> pd.DataFrame:
    """Rows to a frame: grouping columns, any extra columns, then ``RESULT_COLUMNS``, with stable dtypes."""
    rows = list(rows)
    frame = pd.DataFrame(rows)
    for column in [*group_columns, *RESULT_COLUMNS]:
        if column not in frame:
            frame[column] = pd.Series(dtype=object)
    extras = [c for c in frame.columns if c not in group_columns and c not in RESULT_COLUMNS]
    frame = frame[[*group_columns, *extras, *RESULT_COLUMNS]]
    return frame.astype({
        "statistic": "string", "value": "float64", "ci_low": "float64", "ci_high": "float64",
        "n": "Int64", "n_items": "Int64", "method": "string", "ci_too_wide": "bool",
    }).reset_index(drop=True)


def stacked(parts: Sequence[pd.DataFrame], first: str, group_columns: Sequence[str]) -> pd.DataFrame:
    """Result tables of several raters (or instruments) stacked, with ``first`` as the leading column.

    Args:
        parts: Result tables, each with a ``first`` column saying whose rows they are.
        first: The column that tells the parts apart.
        group_columns: The grouping columns of an empty result, after ``first``.
    """
    if not parts:
        return result_frame([], [first, *group_columns])
    out = pd.concat(parts, ignore_index=True)
    return out[[first, *[c for c in out.columns if c != first]]]
