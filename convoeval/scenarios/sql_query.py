"""``sql:`` assertions: a named read-only query over the reference schema, with the run's ids bound, and its expectation.

The query is checked by ``convoeval.scenarios.sql_check`` when the scenario loads (see there what is refused);
the store adds a second guard when it runs the query (read-only: see ``SqliteStore.query`` and ``SqlStore.query``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator, model_validator

from convoeval.scenarios.models import NonEmptyStr, StrictModel

__all__ = ["OPERATORS", "SqlCheck", "SqlChecks"]

OPERATORS = ("==", "!=", "<", "<=", ">", ">=")
Operator = Literal["==", "!=", "<", "<=", ">", ">="]


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
        # sqlglot takes most of a second to import: only a scenario with a sql: assertion pays for it, once.
        from convoeval.scenarios.sql_check import check_query  # noqa: PLC0415

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
