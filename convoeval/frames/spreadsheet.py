"""CSV files a person opens in a spreadsheet, safe from formula injection; the Parquet files keep the exact text.

A transcript is written by whoever talks to the agent, so an attacker controls it: a cell that starts with ``=``,
``+``, ``-`` or ``@`` (or a tab or carriage return before one) is a formula to Excel, LibreOffice and Google Sheets,
and ``=HYPERLINK(...)`` or ``=WEBSERVICE(...)`` in a message would run when an analyst opens ``transcripts.csv``.
OWASP's guidance (CSV Injection) is to prefix such a cell with a single quote, which the spreadsheet shows and
treats as text. ``safe_cell`` does that to every text cell; numbers are left alone (``-0.5`` is a number, not a
formula).

The prefix is reversible: a cell that already starts with quotes before one of those characters gets one more, and
``restore_cell`` takes exactly one off, so ``restore_cell(safe_cell(x)) == x`` for every string. Code that reads a
CSV written here back (the red team's ``cases.csv`` and ``leaks.csv``) restores its cells with
``read_spreadsheet_csv``; everything else reads the Parquet files, which hold the text as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["FORMULA_STARTS", "read_spreadsheet_csv", "restore_cell", "safe_cell", "safe_frame", "to_spreadsheet_csv"]

#: The characters that make a spreadsheet read a cell as a formula when it starts with one (OWASP, CSV Injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _risky(text: str) -> bool:
    return text.lstrip("'").startswith(FORMULA_STARTS)


def _text(column: pd.Series) -> bool:
    """A column that may hold text: object (Python values) or a string dtype, never one of numbers."""
    return bool(column.dtype == object or pd.api.types.is_string_dtype(column.dtype))


def safe_cell(value: object) -> object:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run as a formula; anything else unchanged.

    Example:
        >>> safe_cell("=1+1"), safe_cell("- a list item"), safe_cell("fine"), safe_cell(-0.5)
        ("'=1+1", "'- a list item", 'fine', -0.5)
    """
    return "'" + value if isinstance(value, str) and _risky(value) else value


def restore_cell(value: object) -> object:
    """The text ``safe_cell`` was given: one leading ``'`` taken off a cell it prefixed; anything else unchanged."""
    if isinstance(value, str) and value.startswith("'") and _risky(value[1:]):
        return value[1:]
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with ``safe_cell`` applied to every text cell (columns of numbers are left as they are)."""
    out = frame.copy()
    for column in out.columns:
        if _text(out[column]):
            out[column] = out[column].map(safe_cell)
    return out


def to_spreadsheet_csv(frame: pd.DataFrame, path: Path | str) -> None:
    """Write ``frame`` as CSV (no index) with every text cell made safe to open in a spreadsheet (``safe_cell``)."""
    safe_frame(frame).to_csv(path, index=False)


def read_spreadsheet_csv(path: Path | str, *, keep_default_na: bool = True,
                         na_values: Sequence[str] | None = None) -> pd.DataFrame:
    """A CSV written by ``to_spreadsheet_csv``, its text cells restored (``restore_cell``); the options are
    ``pandas.read_csv``'s."""
    frame = pd.read_csv(path, keep_default_na=keep_default_na, na_values=na_values)
    for column in frame.columns:
        if _text(frame[column]):
            frame[column] = frame[column].map(restore_cell)
    return frame
