"""The reference schema as the migration files write it: tables, their columns and the columns' SQL types.

Read from ``convoeval/store/migrations`` itself, so the SQL stays the single source of truth. It sits in the lowest
layer because two layers need it: the store (which creates and checks the tables) and the scenario loader (which
refuses a ``sql:`` assertion naming a table or column the schema does not have, before any store is opened).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

MIGRATIONS_DIR = Path(__file__).parents[1] / "store" / "migrations"

_CREATE_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)\s*\((.*?)\n\);", re.S)
_NOT_A_COLUMN = ("UNIQUE", "PRIMARY", "CHECK", "FOREIGN", "CONSTRAINT")


def migration_files(dialect: str) -> list[Path]:
    """The migration files for ``dialect`` ("sqlite" or "postgres"), in the order they apply."""
    return sorted(MIGRATIONS_DIR.glob(f"[0-9][0-9][0-9]_*.{dialect}.sql"))


def strip_comments(sql: str) -> str:
    """Remove ``--`` comments (the migrations keep no ``--`` inside string literals)."""
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def statements(sql: str) -> list[str]:
    """Split a migration file into statements (no ``;`` inside literals or comments in our files)."""
    return [s.strip() for s in strip_comments(sql).split(";") if s.strip()]


@functools.cache
def column_types(dialect: str) -> dict[str, dict[str, str]]:
    """Every table the ``dialect``'s migrations create, mapped to ``{column: SQL type}`` in schema order.

    Returns a shared cached dict: do not modify it.
    """
    tables: dict[str, dict[str, str]] = {}
    for path in migration_files(dialect):
        for name, body in _CREATE_TABLE.findall(strip_comments(path.read_text(encoding="utf-8"))):
            columns = tables.setdefault(name, {})
            for line in body.split(","):
                words = line.split()
                if len(words) >= 2 and words[0].upper() not in _NOT_A_COLUMN and not words[0].startswith("("):
                    columns[words[0]] = words[1].upper()
    return tables
