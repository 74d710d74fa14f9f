"""The default store: a SQLite file (or memory), on the standard library's ``sqlite3``.

It behaves as ``SqlStore`` does on SQLite (the same rows, errors, transactions and locking; a parity test runs both),
without SQLAlchemy: a run's every conversation seeds, logs, checks and cleans up about sixty rows, and SQLAlchemy's
statement layer and its import were ~0.3-0.5 s of CPU of a 200-conversation run (benchmarks/RESULTS.md, #28).
Postgres stays on ``SqlStore``.

* WAL mode with a busy timeout, and every write transaction starts with ``BEGIN IMMEDIATE``, so concurrent writers
  (threads or processes) queue on the lock instead of failing with "database is locked". Reads stay deferred.
* A pool of connections, one per operation or transaction in progress, reused afterwards; an in-memory database
  lives in one connection, which threads take turns on.
* Booleans (the Postgres migration's ``BOOLEAN`` columns; SQLite stores 0/1) come back as ``True``/``False``.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from convoeval.store import schema
from convoeval.store.base import TABLES, Row, Store, StoreError

__all__ = ["BUSY_TIMEOUT_S", "SqliteStore", "configure_connection", "set_wal", "sqlite_database"]

BUSY_TIMEOUT_S = 30


def sqlite_database(url: str) -> str | None:
    """The database file of a ``sqlite://`` URL as SQLAlchemy reads it (``None``: in memory).

    Returns ``None`` for ``sqlite://``, ``sqlite:///`` and ``sqlite:///:memory:``; the path after ``sqlite:///``
    otherwise, percent-decoded (``sqlite:////abs/x.db`` is ``/abs/x.db``).

    Example:
        >>> sqlite_database("sqlite:///reports/a%20b.db"), sqlite_database("sqlite://")
        ('reports/a b.db', None)
    """
    _, _, rest = url.partition("://")
    database = unquote(rest[1:]) if rest.startswith("/") else ""
    return None if database in ("", ":memory:") else database


class SqliteStore(Store):
    """``Store`` over ``sqlite3`` for ``sqlite:///path.db`` (and ``sqlite://`` in memory) URLs.

    Example:
        >>> store = SqliteStore("sqlite:///:memory:")
        >>> store.migrate()
        >>> store.select("runs")
        []
    """

    backend = "sqlite"
    sql_refusal = None

    def __init__(self, url: str):
        database = sqlite_database(url)
        # Resolved once: a process that changes its working folder later (a notebook, a test) keeps this file.
        self._path = None if database is None else os.path.abspath(os.path.expanduser(database))
        self._database = database
        self._idle: list[sqlite3.Connection] = []  # the pool: connections not in use, the last returned first
        self._closed = False
        self._pool_lock = threading.Lock()
        # The connection of the transaction open in this thread / task, if any (see ``transaction``).
        self._tx: contextvars.ContextVar[sqlite3.Connection | None] = contextvars.ContextVar(
            f"sqlite-tx-{id(self)}", default=None)
        # An in-memory database lives in one connection, which threads must take turns on.
        self._serial: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if self._path is None else contextlib.nullcontext())
        self._booleans = schema.boolean_columns()
        self._sql: dict[tuple[Any, ...], str] = {}  # statements by shape, built once
        if self._path is not None:
            with self._errors("connect"):
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        # No file is opened yet (as SqlStore's engine opened none): one that cannot be opened fails in ``migrate``.
        # In memory the one connection is the database (a second would be another, empty, one).
        self._memory = self._connect() if self._path is None else None

    @property
    def url(self) -> str:
        return f"sqlite:///{self._database or ':memory:'}"

    # ── connections ──

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: the sqlite3 module issues no BEGIN of its own; ``_begin`` does.
        conn = sqlite3.connect(self._path or ":memory:", timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        try:
            configure_connection(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection of the pool for the block (a new one when none is idle), returned to it afterwards."""
        if self._memory is not None:
            with self._serial:
                yield self._memory
            return
        with self._pool_lock:
            if self._closed:
                raise StoreError(f"{self.backend} store ({self.url}): the store is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            yield conn
        finally:
            if conn.in_transaction:  # an error mid-statement: nothing half-done goes back to the pool
                conn.rollback()
            with self._pool_lock:  # a connection lent out when the store closed is closed when it comes back
                closed = self._closed
                if not closed:
                    self._idle.append(conn)
            if closed:  # closed while this block used it: its work is done now
                conn.close()

    @contextlib.contextmanager
    def _begin(self, kind: str) -> Iterator[sqlite3.Connection]:
        """A transaction (``BEGIN IMMEDIATE`` to write, ``BEGIN`` to read) on a pooled connection, committed at the
        end of the block and rolled back by an exception."""
        with self._connection() as conn:
            conn.execute(kind)
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    @contextlib.contextmanager
    def _conn(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """The open transaction's connection, else a write transaction of its own, or a connection to read on."""
        current = self._tx.get()
        if current is not None:
            yield current
        elif write:
            with self._begin("BEGIN IMMEDIATE") as conn:
                yield conn
        else:
            with self._connection() as conn:
                yield conn

    # ── schema ──

    def migrate(self) -> None:
        with self._errors("migrate"), self._begin("BEGIN IMMEDIATE") as conn:
            schema.migrate_missing(self.backend, _schema_gaps(conn), conn.execute)

    # ── transactions ──

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run every row operation inside the block in ONE transaction (this thread's); commit at the end.

        A conversation's seeding, its messages and its cleanup each write a dozen rows or more: one transaction
        each instead of one per row is a fraction of the commits and of the waits for SQLite's write lock. An
        exception rolls back everything the block wrote.
        """
        with self._within("transaction", "BEGIN IMMEDIATE"):
            yield

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run the reads inside the block on ONE connection, in one deferred read transaction: a consistent view
        that takes no write lock, so it never blocks the runs writing beside it. Inside a ``transaction()`` it adds
        nothing."""
        with self._within("open a read snapshot", "BEGIN"):
            yield

    @contextlib.contextmanager
    def _within(self, action: str, begin: str) -> Iterator[None]:
        """The block's row operations on one connection in one transaction (``begin``), unless one is open here."""
        if self._tx.get() is not None:  # nested: part of the outer transaction
            yield
            return
        with self._errors(action), self._begin(begin) as conn:
            token = self._tx.set(conn)
            try:
                yield
            finally:
                self._tx.reset(token)

    # ── row operations ──

    def insert(self, table: str, rows: Row | Sequence[Row]) -> list[Row]:
        batch = schema.insert_rows(self.backend, table, rows)
        if not batch:
            return []
        with self._errors(f"insert into {table}"), self._conn(write=True) as conn:
            stored = []
            for row in batch:
                cursor = conn.execute(self._insert_sql(table, tuple(row)), self._values(table, row))
                # fetchall: the statement runs to its end here, so nothing is still in progress at COMMIT
                stored.extend(self._rows(table, cursor))
            return stored

    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        column, descending = schema.order_column(order_by)
        schema.check_columns(self.backend, table, [*(where or {}), *([column] if column else [])])
        clause, params = _where(where or {})
        sql = f'SELECT * FROM "{table}"{clause}'
        if column:
            sql += f' ORDER BY "{column}"{" DESC" if descending else ""}'
        with self._errors(f"select from {table}"), self._conn(write=False) as conn:
            return self._rows(table, conn.execute(sql, params))

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, [*where, *values])
        if not where or not values:
            raise StoreError(f"{self.backend} store: update of {table!r} needs a non-empty where and values")
        clause, params = _where(where)
        assignments = ", ".join(f'"{c}" = ?' for c in values)
        with self._errors(f"update {table}"), self._conn(write=True) as conn:
            sql = f'UPDATE "{table}" SET {assignments}{clause}'
            return conn.execute(sql, (*self._values(table, values), *params)).rowcount

    def delete(self, table: str, where: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, where)
        if not where:
            raise StoreError(f"{self.backend} store: refusing to delete every row of {table!r} (empty where)")
        clause, params = _where(where)
        with self._errors(f"delete from {table}"), self._conn(write=True) as conn:
            return conn.execute(f'DELETE FROM "{table}"{clause}', params).rowcount

    def query(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run a ``sql:`` assertion's query with ``params`` bound by name; the rows as tuples.

        The scenario loader has parsed the query and refused any write; here SQLite refuses one too, with
        ``PRAGMA query_only`` on while it runs.
        """
        with self._errors("run a sql: assertion's query"), self._conn(write=False) as conn:
            conn.execute("PRAGMA query_only = ON")
            try:
                return [tuple(row) for row in conn.execute(sql, dict(params))]
            finally:
                conn.execute("PRAGMA query_only = OFF")

    def close(self) -> None:
        """Close the idle connections; one in use (a worker thread's transaction) closes when its block ends."""
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        if self._memory is not None:
            with self._serial:
                self._memory.close()

    # ── helpers ──

    def _insert_sql(self, table: str, columns: tuple[str, ...]) -> str:
        """``INSERT … RETURNING *`` for ``columns`` of ``table``, built once per shape."""
        key = ("insert", table, columns)
        sql = self._sql.get(key)
        if sql is None:
            names = ", ".join(f'"{c}"' for c in columns)
            sql = self._sql[key] = (f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))}) '
                                    "RETURNING *")
        return sql

    def _values(self, table: str, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """``row``'s values to bind, ``BOOLEAN`` columns checked and stored as 0/1 (as SQLAlchemy's ``Boolean``)."""
        booleans = self._booleans.get(table, ())
        return tuple(_boolean(value) if column in booleans else value for column, value in row.items())

    def _rows(self, table: str, cursor: sqlite3.Cursor) -> list[Row]:
        """The cursor's rows as dicts in column order, ``BOOLEAN`` columns as ``True``/``False``."""
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        for column in self._booleans.get(table, ()):
            for row in rows:
                if row.get(column) is not None:
                    row[column] = bool(row[column])
        return rows

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn driver errors into ``StoreError`` naming the backend and the action, as ``SqlStore`` words them."""
        try:
            yield
        except StoreError:
            raise
        except (sqlite3.Error, OSError, _NotABooleanError) as exc:
            kind = "constraint violated" if isinstance(exc, sqlite3.IntegrityError) else "failed"
            reason = " ".join(str(exc).split())[:600]
            raise StoreError(f"{self.backend} store ({self.url}): {action} {kind}: {reason}") from None


class _NotABooleanError(ValueError):
    """A value for a ``BOOLEAN`` column that is not ``None``, ``True`` or ``False`` (nor 0 or 1)."""


def _boolean(value: Any) -> int | None:
    """A ``BOOLEAN`` column's value as SQLite stores it, refused in SQLAlchemy's words when it is not a boolean."""
    if value is None:
        return None
    if value in (True, False):  # 0 and 1 too, as SQLAlchemy accepts them
        return int(value)
    if not isinstance(value, int):
        raise _NotABooleanError(f"Not a boolean value: {value!r}")
    raise _NotABooleanError(f"Value {value!r} is not None, True, or False")


def _regexp(pattern: str, text: str | None) -> bool | None:
    """SQLite's ``text REGEXP pattern``, as SQLAlchemy's driver defines it."""
    return None if text is None else re.search(pattern, text) is not None


def _where(where: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """`` WHERE …`` for ``where`` (``None`` matches NULL) and its parameters; empty for no condition."""
    if not where:
        return "", ()
    parts = [f'"{c}" IS NULL' if v is None else f'"{c}" = ?' for c, v in where.items()]
    return " WHERE " + " AND ".join(parts), tuple(v for v in where.values() if v is not None)


def configure_connection(conn: sqlite3.Connection | sqlite3.Cursor) -> None:
    """What every connection to a convoeval SQLite store sets: the busy timeout, WAL, ``synchronous = NORMAL``,
    foreign keys, and the ``regexp``/``floor`` functions a ``sql:`` query may use (SQLAlchemy's driver adds them)."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
    set_wal(conn)
    # In WAL mode NORMAL is safe against application crashes (only a power loss can drop the last commits).
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    connection = conn.connection if isinstance(conn, sqlite3.Cursor) else conn
    connection.create_function("regexp", 2, _regexp, deterministic=True)
    connection.create_function("floor", 1, math.floor, deterministic=True)


def set_wal(conn: sqlite3.Connection | sqlite3.Cursor) -> None:
    """Put the database in WAL mode, retrying while another connection holds the lock (within the busy timeout).

    Switching a fresh file to WAL needs an exclusive lock, and SQLite may answer "database is locked" at once
    (without its busy handler) while other connections open the same new file.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            # SQLite's result code, not its message ("database is locked"): the primary code is the low byte of an
            # extended one (SQLITE_BUSY_RECOVERY, ...).
            code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
            if code not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _schema_gaps(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """What the database lacks of the reference schema: ``(missing tables, "table lacks columns ..." notes)``."""
    existing = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return schema.gaps({table: {info[1] for info in conn.execute(f'PRAGMA table_info("{table}")')}
                        for table in existing if table in TABLES})
