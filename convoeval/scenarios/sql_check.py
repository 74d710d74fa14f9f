"""The check of a ``sql:`` assertion's query when the scenario loads: parsed with sqlglot, never run, so a bad query
is one error line naming the file and the field before anything runs.

Imported by ``convoeval.scenarios.sql_query`` only when a scenario has a ``sql:`` query (sqlglot takes most of a
second to import). A query is refused when it:

* is not exactly one query (``SELECT``, ``WITH … SELECT``, ``UNION`` …): no ``INSERT``/``UPDATE``/``DELETE``, DDL,
  ``PRAGMA``, ``SELECT … INTO``, ``FOR UPDATE``, nor a data-modifying ``WITH``;
* calls a function sqlglot does not know as a standard SQL function (``pg_sleep``, ``set_config``, ``nextval``,
  ``lo_import`` … could wait, change settings or write);
* names a table or column the reference schema (the migrations) does not have, or a schema-qualified table;
* binds a parameter other than ``:run_id``, ``:clinic_id`` and ``:patient_id``, or none of them: every run shares the
  database with other runs, so a query that does not pick its own run's rows would judge someone else's.

The store adds a second guard when it runs the query (read-only: see ``SqliteStore.query`` and ``SqlStore.query``).
"""

from __future__ import annotations

import functools
import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from convoeval._util.sql_schema import column_types

__all__ = ["BOUND_PARAMETERS", "check_query"]

#: The names a query may bind, each set from the run's ``SeededRun``.
BOUND_PARAMETERS = ("run_id", "clinic_id", "patient_id")
# Nodes that write, lock, change the session or leave the query language. sqlglot names some differently across
# versions, so each is looked up by name and skipped when this version lacks it.
_FORBIDDEN = tuple(getattr(exp, name) for name in (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable", "Command", "Into", "Lock",
    "Set", "Pragma", "Copy", "Transaction", "Commit", "Rollback", "Grant", "Use", "LoadData", "Analyze",
) if hasattr(exp, name))


def check_query(query: str) -> str:
    """``query`` when it is one read-only query over the reference schema binding the run's ids.

    Raises:
        ValueError: one sentence saying what is refused (a write, an unknown table or column, a parameter …).
    """
    try:
        return _check(query)
    except RecursionError:  # sqlglot parses and qualifies recursively: a query nested thousands deep
        raise ValueError("the query is nested too deeply to check") from None
    except SqlglotError as exc:  # any other complaint of sqlglot's is still this file's error, never a traceback
        raise ValueError(f"the query cannot be checked: {_words(exc)}") from None


def _check(query: str) -> str:
    statement = _parse(query)
    for node in statement.walk():
        if isinstance(node, _FORBIDDEN):
            raise ValueError(f"the query must only read, but it holds {_what(node)}: sql: assertions are read-only")
        if isinstance(node, exp.Anonymous):
            raise ValueError(f"function {node.name}() is refused: only functions sqlglot knows as standard SQL "
                             "are allowed (another could wait, change a setting or write)")
    _check_tables(statement)
    _check_parameters(statement)
    _check_columns(statement)
    return query


def _parse(query: str) -> exp.Expr:
    sqlglot_log = logging.getLogger("sqlglot")
    level = sqlglot_log.level
    # sqlglot warns (on the root logger's handlers) when it falls back to an opaque Command; we refuse those anyway.
    sqlglot_log.setLevel(logging.ERROR)
    try:
        parsed = [s for s in sqlglot.parse(query, read="postgres") if s is not None]
    except SqlglotError as exc:
        raise ValueError(f"the query cannot be parsed: {_words(exc)}") from None
    finally:
        sqlglot_log.setLevel(level)
    if len(parsed) != 1:
        raise ValueError(f"expected one query, found {len(parsed)} statements")
    statement = parsed[0]
    if not isinstance(statement, exp.Query):
        raise ValueError(f"the query must only read, but it is {_what(statement)}: sql: assertions are read-only")
    return statement


def _words(exc: Exception) -> str:
    # sqlglot underlines the token with terminal escapes: keep the words only.
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).split())[:200]


def _what(node: exp.Expr) -> str:
    if isinstance(node, exp.Command):
        return f"a {str(node.this).upper()} command"
    if isinstance(node, exp.Into):
        return "SELECT … INTO (it creates a table)"
    if isinstance(node, exp.Lock):
        return "a row lock (FOR UPDATE / FOR SHARE)"
    return f"{type(node).__name__.upper()}"


def _check_tables(statement: exp.Expr) -> None:
    tables = column_types("sqlite")
    ctes = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
    for table in statement.find_all(exp.Table):
        if not table.name:
            raise ValueError(f"table functions are refused ({table.sql()[:60]}); read the reference tables")
        if table.args.get("db") or table.args.get("catalog"):
            raise ValueError(f"unknown table {table.sql()!r}: only the reference tables, without a schema name "
                             f"({', '.join(tables)})")
        if table.name not in tables and table.name not in ctes:
            raise ValueError(f"unknown table {table.name!r}; the reference schema has {', '.join(tables)}")


def _check_parameters(statement: exp.Expr) -> None:
    if any(True for _ in statement.find_all(exp.Parameter)):
        raise ValueError(f"positional parameters ($1) are refused; bind by name: {_bound()}")
    names = set()
    for placeholder in statement.find_all(exp.Placeholder):
        if not placeholder.name or placeholder.name == "?":
            raise ValueError(f"positional parameters (?) are refused; bind by name: {_bound()}")
        if placeholder.name not in BOUND_PARAMETERS:
            raise ValueError(f"unknown parameter :{placeholder.name}; a query may bind {_bound()}")
        names.add(placeholder.name)
    if not names:
        raise ValueError(f"the query binds none of {_bound()}: other runs share the database, so it must pick its "
                         "own run's rows (e.g. WHERE run_id = :run_id)")


def _bound() -> str:
    return ", ".join(f":{name}" for name in BOUND_PARAMETERS)


@functools.cache
def _sqlglot_schema() -> dict[str, object]:
    return {table: dict(cols) for table, cols in column_types("sqlite").items()}


def _check_columns(statement: exp.Expr) -> None:
    try:
        qualify(statement.copy(), schema=_sqlglot_schema(), dialect="postgres", validate_qualify_columns=True)
    except OptimizeError as exc:
        message = " ".join(str(exc).split()).split(" Line:")[0].rstrip(".")
        raise ValueError(f"{message[0].lower()}{message[1:]}; check the column names against the reference schema "
                         "(docs/store.md)") from None
