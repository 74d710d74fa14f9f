"""The reference schema as data: tables, their columns, and which columns are booleans.

Read from the migration files themselves (``convoeval._util.sql_schema``), so the SQL stays the single source of truth and
every backend checks table and column names the same way (and gives the same error for a typo).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from convoeval._util.sql_schema import column_types, migration_files, statements
from convoeval.store.base import TABLES, StoreError

__all__ = ["boolean_columns", "check_columns", "check_table", "columns", "gaps", "insert_rows", "migrate_missing",
           "order_column"]


@functools.cache
def columns() -> dict[str, tuple[str, ...]]:
    """Every reference table mapped to its column names, in schema order."""
    found = {table: tuple(cols) for table, cols in column_types("sqlite").items()}
    if set(found) != set(TABLES):
        # A migration and TABLES disagree: a packaging or editing mistake, not a user error.
        raise StoreError(f"reference schema: migration tables {sorted(found)} differ from TABLES {sorted(TABLES)}")
    return {table: found[table] for table in TABLES}


@functools.cache
def boolean_columns() -> dict[str, frozenset[str]]:
    """Columns that are BOOLEAN in the Postgres migration (SQLite stores them as 0/1 integers)."""
    return {
        table: frozenset(c for c, kind in cols.items() if kind == "BOOLEAN")
        for table, cols in column_types("postgres").items()
    }


def gaps(found: Mapping[str, Iterable[str]]) -> tuple[list[str], list[str]]:
    """What a database lacks of the reference schema, given the columns of its tables (``found``, reference tables
    only): ``(missing tables, "table lacks columns ..." notes)``."""
    missing, incomplete = [], []
    for table, cols in columns().items():
        if table not in found:
            missing.append(table)
            continue
        lacking = set(cols) - set(found[table])
        if lacking:
            incomplete.append(f"table {table} lacks columns {', '.join(sorted(lacking))}")
    return missing, incomplete


def migrate_missing(backend: str, found: tuple[list[str], list[str]], execute: Callable[[str], Any]) -> None:
    """Create the reference tables a database lacks (``found``: what ``gaps`` says), one statement at a time.

    Nothing runs when the schema is already there: on Postgres re-running the DDL would take table locks that block
    (or deadlock with) the inserts of runs already going on.

    Raises:
        StoreError: a table of a reference name lacks columns (likely another application's: never altered).
    """
    missing, incomplete = found
    if incomplete:
        raise StoreError(f"{backend} store: existing tables do not match the reference schema "
                         f"({'; '.join(incomplete)}). Point convoeval at a database of its own.")
    if missing:
        for path in migration_files(backend):
            for statement in statements(path.read_text(encoding="utf-8")):
                execute(statement)


def check_table(backend: str, table: str) -> tuple[str, ...]:
    """The columns of ``table``; raises ``StoreError`` naming the table when it is not in the reference schema."""
    cols = columns().get(table)
    if cols is None:
        raise StoreError(f"{backend} store: unknown table {table!r}; expected one of {', '.join(TABLES)}")
    return cols


def check_columns(backend: str, table: str, names: Iterable[str]) -> None:
    """Raise ``StoreError`` naming the first column of ``names`` that ``table`` does not have."""
    cols = check_table(backend, table)
    for name in names:
        if name not in cols:
            raise StoreError(f"{backend} store: unknown column {name!r} in table {table!r}; expected one of {', '.join(cols)}")


def order_column(order_by: str | None) -> tuple[str | None, bool]:
    """Split an ``order_by`` of the form ``"col"`` or ``"-col"`` (descending) into ``(column, descending)``."""
    if not order_by:
        return None, False
    return (order_by[1:], True) if order_by.startswith("-") else (order_by, False)


def insert_rows(backend: str, table: str, rows: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of an insert as fresh dicts: columns checked against the reference schema, a new ``id`` where none.

    Raises:
        StoreError: a column the table does not have.
    """
    batch = [dict(rows)] if isinstance(rows, Mapping) else [dict(r) for r in rows]
    for row in batch:
        check_columns(backend, table, row)
        if row.get("id") is None:
            row["id"] = uuid.uuid4().hex
    return batch
