"""Frames on disk as Parquet, written and read back through one declaration of which columns hold lists and dicts.

Parquet wants one type per column, so ``to_parquet`` stores every list or dict cell as JSON text and records those
columns' names in the file's metadata; ``from_parquet`` turns exactly those columns back into Python values. Files
written before the metadata existed are read with ``JSON_COLUMNS``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from convoeval.frames.schemas import _LIST_COLUMNS

#: The JSON-encoded columns of a file without metadata: the frames' list columns and the turn checks' values.
JSON_COLUMNS = frozenset({*_LIST_COLUMNS, "expected", "actual"})
_METADATA_KEY = b"convoeval.json_columns"


def to_parquet(df: pd.DataFrame, path: Path | str) -> None:
    """Save a frame as Parquet; list and dict cells are stored as JSON text (Parquet wants one type per column)."""
    import pyarrow.parquet as pq  # noqa: PLC0415 - pyarrow loads on first use (start-up budget, tests/test_startup.py)

    out = df.copy()
    encoded = []
    for c in out.columns:
        if out[c].dtype == object and len(out):
            out[c] = out[c].map(lambda v: None if v is None else json.dumps(v, ensure_ascii=False, default=str))
            encoded.append(str(c))
    table = pa.Table.from_pandas(out, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), _METADATA_KEY: json.dumps(encoded).encode()}
    pq.write_table(table.replace_schema_metadata(metadata), path)


def from_parquet(path: Path | str) -> pd.DataFrame:
    """A frame saved by ``to_parquet``, its list and dict cells given back their Python values.

    A missing cell comes back as None, NA or (pandas' string dtype) NaN: all are "no value", none is JSON.
    """
    import pyarrow.parquet as pq  # noqa: PLC0415 - pyarrow loads on first use (start-up budget, tests/test_startup.py)

    recorded = (pq.read_schema(path).metadata or {}).get(_METADATA_KEY)
    columns = set(json.loads(recorded)) if recorded is not None else JSON_COLUMNS
    frame = pd.read_parquet(path)
    for column in frame.columns:
        if column in columns:
            frame[column] = frame[column].map(_json_cell).astype(object)
    return frame


def _json_cell(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else None
