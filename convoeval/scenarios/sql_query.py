"""``sql:`` assertions: a named read-only query over the reference schema, with the run's ids bound, and its expectation.

Checked when the scenario loads, by parsing the query with sqlglot (never by running it), so a bad query is one error
line naming the file and the field before anything runs. A query is refused when it:

* is not exactly one query (``SELECT``, ``WITH … SELECT``, ``UNION`` …): no ``INSERT``/``UPDATE``/``DELETE``, DDL,
  ``PRAGMA``, ``SELECT … INTO``, ``FOR UPDATE``, nor a data-modifying ``WITH``;
* calls a function sqlglot does not know as a standard SQL function (``pg_sleep``, ``set_config``, ``nextval``,
  ``lo_import`` … could wait, change settings or write);
* names a table or column the reference schema (the migrations) does not have, or a schema-qualified table;
* binds a parameter other than ``:run_id``, ``:clinic_id`` and ``:patient_id``, or none of them: every run shares the
  database with other runs, so a query that does not pick its own run's rows would judge someone else's.

The store adds a second guard when it runs the query (a read-only transaction; see ``SqlStore.query``).
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Annotated, Any, Literal

import sqlglot
from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator, model_validator
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from convoeval.scenarios.models import NonEmptyStr, StrictModel
from convoeval.sql_schema import column_types

__all__ = ["BOUND_PARAMETERS", "OPERATORS", "SqlCheck", "SqlChecks", "check_query"]

#: The names a query may bind, each set from the run's ``SeededRun``.
BOUND_PARAMETERS = ("run_id", "clinic_id", "patient_id")
OPERATORS = ("==", "!=", "<", "<=", ">", ">=")
Operator = Literal["==", "!=", "<", "<=", ">", ">="]

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


def _parse(query: str) -> exp.Expression:
    sqlglot_log = logging.getLogger("sqlglot")
    level = sqlglot_log.level
    # sqlglot warns (on the root logger's handlers) when it falls back to an opaque Command; we refuse those anyway.
    sqlglot_log.setLevel(logging.ERROR)
    try:
        parsed = [s for s in sqlglot.parse(query, read="postgres") if s is not None]
    except SqlglotError as exc:
        # sqlglot underlines the token with terminal escapes: keep the words only.
        words = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).split())
        raise ValueError(f"the query cannot be parsed: {words[:200]}") from None
    finally:
        sqlglot_log.setLevel(level)
    if len(parsed) != 1:
        raise ValueError(f"expected one query, found {len(parsed)} statements")
    statement = parsed[0]
    if not isinstance(statement, exp.Query):
        raise ValueError(f"the query must only read, but it is {_what(statement)}: sql: assertions are read-only")
    return statement


def _what(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return f"a {str(node.this).upper()} command"
    if isinstance(node, exp.Into):
        return "SELECT … INTO (it creates a table)"
    if isinstance(node, exp.Lock):
        return "a row lock (FOR UPDATE / FOR SHARE)"
    return f"{type(node).__name__.upper()}"


def _check_tables(statement: exp.Expression) -> None:
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


def _check_parameters(statement: exp.Expression) -> None:
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
def _sqlglot_schema() -> dict[str, dict[str, str]]:
    return {table: dict(cols) for table, cols in column_types("sqlite").items()}


def _check_columns(statement: exp.Expression) -> None:
    try:
        qualify(statement.copy(), schema=_sqlglot_schema(), dialect="postgres", validate_qualify_columns=True)
    except OptimizeError as exc:
        message = " ".join(str(exc).split()).split(" Line:")[0].rstrip(".")
        raise ValueError(f"{message[0].lower()}{message[1:]}; check the column names against the reference schema "
                         "(docs/store.md)") from None


Expected = StrictBool | StrictInt | StrictFloat | StrictStr | None


class SqlCheck(StrictModel):
    """One named ``sql:`` assertion: a query and what it must return.

    Either ``expect`` (the query returns one value: one row of one column, or no row at all, read as null) or
    ``rows`` (how many rows it returns), compared with ``op`` (default ``==``).
    """

    query: Annotated[NonEmptyStr, Field(description="One read-only SELECT over the reference schema, binding "
                                                    ":run_id, :clinic_id and/or :patient_id.")]
    expect: Expected = Field(default=None, description="The value the query returns (one row, one column).")
    rows: Annotated[StrictInt, Field(ge=0)] | None = Field(default=None, description="How many rows it returns.")
    op: Operator = Field(default="==", description="How the actual value compares with the expected one.")

    @field_validator("query")
    @classmethod
    def _read_only(cls, value: str) -> str:
        return check_query(value)

    @model_validator(mode="after")
    def _one_expectation(self) -> SqlCheck:
        given = [name for name in ("expect", "rows") if name in self.model_fields_set]
        if len(given) != 1:
            raise ValueError("set exactly one of expect (the value the query returns) and rows (how many rows it "
                             f"returns), got {' and '.join(given) or 'neither'}")
        if self.op not in ("==", "!=") and "expect" in given and not _orderable(self.expect):
            raise ValueError(f"op {self.op!r} compares numbers or text, got expect: {self.expect!r}")
        return self

    def expected(self) -> str:
        """The expectation as the report shows it: ``"== 1"``, ``"rows == 0"``."""
        return f"rows {self.op} {self.rows}" if self.rows is not None else f"{self.op} {_plain(self.expect)}"


def _orderable(value: Any) -> bool:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


def _plain(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


#: ``sql:`` in YAML: a mapping of names (shown in the report as ``sql.<name>``) to checks, in file order.
SqlChecks = Annotated[
    dict[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")], SqlCheck],
    Field(min_length=1),
]
