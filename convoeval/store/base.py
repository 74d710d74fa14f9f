"""The fixtures store: the database the agent under test works on.

Three backends implement one small interface of row operations (``insert``, ``select``, ``update``, ``delete``),
picked by URL (see ``convoeval.store.open_store``):

* ``sqlite:///path.db`` — the embedded default, no server needed (``SqliteStore``, on the standard library's sqlite3);
* ``postgresql://…`` — any Postgres, including a Supabase project's direct connection string (``SqlStore``,
  SQLAlchemy Core);
* ``supabase://`` — a Supabase project through the ``supabase`` client (PostgREST), with ``SUPABASE_URL`` and
  ``SUPABASE_SERVICE_ROLE_KEY`` from the environment.

Everything above the row operations (seeding fixtures, cleanup, assertions, the agents' tools) is written once,
against this interface, so the three backends behave alike.

Isolation: every row carries the ``run_id`` of the run that created it (seeded by the run, or written by the agent
during it). Each run seeds its own clinic, so two concurrent runs of one scenario never see each other's rows,
even with the same persona phone. Cleanup deletes rows by ``run_id`` and nothing else.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from convoeval.errors import ConvoevalError

Row = dict[str, Any]

# Tables of the reference schema in dependency order (parents first). Cleanup deletes in reverse order.
TABLES: tuple[str, ...] = (
    "runs",
    "clinics",
    "patients",
    "professionals",
    "services",
    "slots",
    "appointments",
    "invoices",
    "payment_links",
    "nps_responses",
    "handoffs",
    "conversations",
    "messages",
    "patient_details",  # migration 002
)


class StoreError(ConvoevalError, RuntimeError):
    """A store operation failed (connection, constraint, bad table or column). The message names the backend."""


class Store(abc.ABC):
    """Row operations over the reference schema. Thread-safe; every method is synchronous.

    ``where`` maps column names to values and matches rows where every column equals its value
    (``None`` matches SQL NULL). Tables and columns are checked against the reference schema.
    """

    #: Short backend name: "sqlite", "postgres" or "supabase".
    backend: str = ""

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """The store's URL with any password or key redacted; safe to print and to record."""

    @abc.abstractmethod
    def migrate(self) -> None:
        """Create the reference schema if it does not exist (idempotent)."""

    @abc.abstractmethod
    def insert(self, table: str, rows: Row | Sequence[Row]) -> list[Row]:
        """Insert one or many rows; returns them as stored (with generated defaults)."""

    @abc.abstractmethod
    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        """Rows matching ``where`` (all rows when None)."""

    @abc.abstractmethod
    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        """Set ``values`` on rows matching ``where``; returns the number of rows changed."""

    @abc.abstractmethod
    def delete(self, table: str, where: Mapping[str, Any]) -> int:
        """Delete rows matching ``where`` (which must not be empty); returns the number deleted."""

    def query(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run one read-only query (a ``sql:`` assertion's, already checked by ``convoeval.scenarios.sql_check``)
        with ``params`` bound by name (``:run_id``); returns its rows as tuples.

        A backend without SQL access refuses (the default here): say why in the ``StoreError``, and set
        ``sql_refusal`` so a run can refuse before its conversation rather than after it.
        """
        raise StoreError(self.sql_refusal or f"{self.backend or type(self).__name__} store: cannot run SQL queries")

    #: Why this backend cannot run ``sql:`` assertions (``None``: it can).
    sql_refusal: str | None = "this store cannot run SQL queries (sql: assertions need a SQL backend)"

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """A block whose row operations commit together (SQL stores); a backend without transactions runs each
        operation on its own (the default here), so callers still clean up after a failure."""
        return contextlib.nullcontext()

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """A block of reads that see one consistent state, where the backend offers it (SQL stores: one read-only
        transaction); elsewhere each read runs on its own (the default here)."""
        return contextlib.nullcontext()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
