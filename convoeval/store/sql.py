"""The SQL backend over SQLAlchemy Core: any Postgres (including a Supabase project's direct connection string),
and SQLite URLs that carry driver options (``sqlite:///x.db?timeout=…``) or name a driver (``sqlite+pysqlite://``).
Plain ``sqlite://`` URLs open ``SqliteStore`` (``store/sqlite.py``), which behaves as this class does on SQLite.

The differences between the two databases are confined to engine set-up:

* SQLite runs in WAL mode with a busy timeout, and every write transaction starts with ``BEGIN IMMEDIATE`` so
  concurrent writers (threads or processes) queue on the lock instead of failing with "database is locked".
* Postgres URLs (``postgresql://`` or ``postgres://``) use the psycopg 3 driver; migrations hold an advisory lock so
  concurrent first starts do not race to create the same tables.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import StaticPool

from convoeval.store import schema
from convoeval.store.base import TABLES, Row, Store, StoreError
from convoeval.store.sqlite import BUSY_TIMEOUT_S, configure_connection

#: How long a ``sql:`` assertion's query may run on Postgres before the database stops it.
QUERY_TIMEOUT_MS = 5000
_PG_SCHEMES = ("postgresql", "postgres")
_READONLY = "convoeval_readonly"


def normalize_url(url: str) -> sa.URL:
    """Parse ``url``, pointing ``postgresql://`` and ``postgres://`` at the psycopg 3 driver."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise StoreError(f"store URL must look like sqlite:///path.db or postgresql://…, got {url.split('@')[-1]!r}")
    if scheme.split("+")[0] in _PG_SCHEMES:
        scheme = "postgresql+psycopg"
    try:
        return sa.make_url(f"{scheme}://{rest}")
    except sa_exc.ArgumentError:
        raise StoreError(f"store URL could not be parsed (scheme {scheme!r})") from None


class SqlStore(Store):
    """``Store`` over SQLAlchemy Core for ``sqlite:///…`` and ``postgresql://…`` URLs.

    Example:
        >>> store = SqlStore("sqlite:///:memory:")
        >>> store.migrate()
        >>> store.select("runs")
        []
    """

    def __init__(self, url: str):
        self._sa_url = normalize_url(url)
        self.backend = "sqlite" if self._sa_url.get_backend_name() == "sqlite" else "postgres"
        self._secrets = _secrets(self._sa_url)
        self._tables: dict[str, sa.Table] = {}
        self._inserts: dict[str, sa.Insert] = {}  # one prepared INSERT per table (see insert)
        self._deletes: dict[tuple, sa.Delete] = {}  # one prepared DELETE per table and where-shape
        self._reflect_lock = threading.Lock()
        # The connection of the transaction open in this thread / task, if any (see ``transaction``).
        self._tx: contextvars.ContextVar[sa.Connection | None] = contextvars.ContextVar(f"tx-{id(self)}", default=None)
        # Whether that connection is a read snapshot's (see ``snapshot``), already read-only.
        self._reading: contextvars.ContextVar[bool] = contextvars.ContextVar(f"reading-{id(self)}", default=False)
        # An in-memory SQLite database lives in one connection, which threads must take turns on.
        self._memory = self.backend == "sqlite" and self._sa_url.database in (None, "", ":memory:")
        self._serial: contextlib.AbstractContextManager[Any] = threading.RLock() if self._memory else contextlib.nullcontext()
        with self._errors("connect"):
            self._engine = self._create_engine()

    # ── set-up ──

    def _create_engine(self) -> sa.Engine:
        if self.backend == "postgres":
            return sa.create_engine(
                self._sa_url,
                pool_pre_ping=True,
                pool_size=10,
                max_overflow=20,
                # 10 s unless the URL sets its own (?connect_timeout=N): a black-holed host must fail, not hang.
                connect_args={} if "connect_timeout" in self._sa_url.query else {"connect_timeout": 10},
            )
        database = self._sa_url.database
        if self._memory or database is None:  # no database is in memory too (``self._memory`` already says so)
            engine = sa.create_engine(
                "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(
                self._sa_url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_S}
            )
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine

    @property
    def url(self) -> str:
        if self.backend == "sqlite":  # SQLAlchemy would percent-escape ":memory:"
            return f"sqlite:///{self._sa_url.database or ':memory:'}"
        return _redact(self._sa_url)

    def migrate(self) -> None:
        with self._serial, self._errors("migrate"), self._engine.begin() as conn:
            if self.backend == "postgres":
                conn.exec_driver_sql("SELECT pg_advisory_xact_lock(hashtext('convoeval.store.migrate'))")
            schema.migrate_missing(self.backend, _schema_gaps(conn), conn.exec_driver_sql)
        with self._reflect_lock:
            self._tables.clear()
            self._inserts.clear()
            self._deletes.clear()

    # ── row operations ──

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run every row operation inside the block in ONE transaction (this thread's); commit at the end.

        A conversation's seeding, its messages and its cleanup each write a dozen rows or more: one transaction
        each instead of one per row is a fraction of the commits and of the waits for SQLite's write lock. An
        exception rolls back everything the block wrote.
        """
        if self._tx.get() is not None:  # nested: part of the outer transaction
            yield
            return
        with self._serial, self._errors("transaction"), self._engine.begin() as conn:
            token = self._tx.set(conn)
            try:
                yield
            finally:
                self._tx.reset(token)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run the reads inside the block on ONE connection, in one read transaction: a consistent view, and one
        BEGIN instead of one per ``select`` (the assertions of a conversation make about twenty).

        Postgres makes the transaction ``READ ONLY`` (a write inside fails); SQLite's stays deferred, so it takes
        no write lock and never blocks the runs writing beside it. Inside an open ``transaction()`` it adds nothing.
        """
        if self._tx.get() is not None:
            yield
            return
        with self._serial, self._errors("open a read snapshot"), self._engine.connect() as raw:
            conn = raw.execution_options(**{_READONLY: True})
            if self.backend == "postgres":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {QUERY_TIMEOUT_MS}")
            token, reading = self._tx.set(conn), self._reading.set(True)
            try:
                yield
            finally:
                self._tx.reset(token)
                self._reading.reset(reading)

    @contextlib.contextmanager
    def _conn(self, *, write: bool) -> Iterator[sa.Connection]:
        """The open transaction's connection, else a new one (a write transaction, or a read-only connection)."""
        current = self._tx.get()
        if current is not None:
            yield current
        elif write:
            with self._serial, self._engine.begin() as conn:
                yield conn
        else:
            with self._serial, self._engine.connect() as conn:
                yield conn.execution_options(**{_READONLY: True})

    def insert(self, table: str, rows: Row | Sequence[Row]) -> list[Row]:
        batch = schema.insert_rows(self.backend, table, rows)
        if not batch:
            return []
        statement = self._insert_statement(table)
        with self._errors(f"insert into {table}"), self._conn(write=True) as conn:
            # One statement object per table, the row as parameters: SQLAlchemy finds its compiled form in its cache
            # instead of building and compiling a new INSERT per row (a third of the store's CPU in a batch).
            return [dict(conn.execute(statement, row).mappings().one()) for row in batch]

    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        column, descending = schema.order_column(order_by)
        schema.check_columns(self.backend, table, [*(where or {}), *([column] if column else [])])
        t = self._table(table)
        stmt = sa.select(t).where(*_conditions(t, where or {}))
        if column:
            stmt = stmt.order_by(t.c[column].desc() if descending else t.c[column])
        with self._errors(f"select from {table}"), self._conn(write=False) as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, [*where, *values])
        if not where or not values:
            raise StoreError(f"{self.backend} store: update of {table!r} needs a non-empty where and values")
        t = self._table(table)
        stmt = sa.update(t).where(*_conditions(t, where)).values(dict(values))
        with self._errors(f"update {table}"), self._conn(write=True) as conn:
            return conn.execute(stmt).rowcount

    def delete(self, table: str, where: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, where)
        if not where:
            raise StoreError(f"{self.backend} store: refusing to delete every row of {table!r} (empty where)")
        statement, params = self._delete_statement(table, where)
        with self._errors(f"delete from {table}"), self._conn(write=True) as conn:
            return conn.execute(statement, params).rowcount

    sql_refusal = None

    def query(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run a ``sql:`` assertion's query with ``params`` bound; the rows as tuples.

        The scenario loader has parsed the query and refused any write; here the database refuses one too: SQLite
        runs it with ``PRAGMA query_only`` on, Postgres in a ``READ ONLY`` transaction with a statement timeout.
        """
        statement = sa.text(sql)
        with self._errors("run a sql: assertion's query"), self._conn(write=False) as conn:
            if self.backend == "postgres":
                # In a transaction of its own, or in a snapshot (already read-only); inside the caller's write
                # transaction, writes may already have run (and a LOCAL setting would outlive the query).
                if self._tx.get() is None and not self._reading.get():
                    conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {QUERY_TIMEOUT_MS}")
                return [tuple(row) for row in conn.execute(statement, dict(params))]
            conn.exec_driver_sql("PRAGMA query_only = ON")
            try:
                return [tuple(row) for row in conn.execute(statement, dict(params))]
            finally:
                conn.exec_driver_sql("PRAGMA query_only = OFF")

    def close(self) -> None:
        self._engine.dispose()

    # ── helpers ──

    def _insert_statement(self, name: str) -> sa.Insert:
        """``INSERT … RETURNING *`` for table ``name``, columns taken from each execution's parameters."""
        statement = self._inserts.get(name)
        if statement is None:
            t = self._table(name)
            statement = self._inserts[name] = sa.insert(t).returning(*t.c)
        return statement

    def _delete_statement(self, name: str, where: Mapping[str, Any]) -> tuple[sa.Delete, dict[str, Any]]:
        """``DELETE`` for ``where``'s shape (its columns, and which are NULL), values as bound parameters.

        Built once per shape, like ``_insert_statement``: every conversation's cleanup deletes by ``run_id`` from
        every table, and building a fresh statement each time cost more than the deletes.
        """
        shape = (name, tuple((column, value is None) for column, value in where.items()))
        statement = self._deletes.get(shape)
        if statement is None:
            t = self._table(name)
            statement = self._deletes[shape] = sa.delete(t).where(*[
                t.c[column].is_(None) if is_null else t.c[column] == sa.bindparam(f"where_{column}")
                for column, is_null in shape[1]])
        return statement, {f"where_{column}": value for column, value in where.items() if value is not None}

    def _table(self, name: str) -> sa.Table:
        """The reflected table (reflected once, on first use, under a lock: MetaData is not thread-safe)."""
        schema.check_table(self.backend, name)
        with self._reflect_lock:
            if not self._tables:
                with self._serial, self._errors("reflect the schema"), self._engine.connect() as conn:
                    self._tables.update(_reflect(conn))
            return self._tables[name]

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn driver errors into ``StoreError`` naming the backend, with any password scrubbed out.

        ``from None`` drops the driver's exception chain: its traceback may print the connection string.
        """
        try:
            yield
        except StoreError:
            raise
        except sa_exc.NoSuchTableError as exc:
            raise StoreError(f"{self.backend} store: table {exc} does not exist; run migrate() first") from None
        except (sa_exc.SQLAlchemyError, OSError) as exc:
            kind = "constraint violated" if isinstance(exc, sa_exc.IntegrityError) else "failed"
            reason = str(getattr(exc, "orig", None) or exc)
            for secret in self._secrets:
                reason = reason.replace(secret, "***")
            reason = " ".join(reason.split())[:600]
            raise StoreError(f"{self.backend} store ({self.url}): {action} {kind}: {reason}") from None


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take BEGIN away from the sqlite3 module (it would defer it) and emit our own in _sqlite_on_begin.
    dbapi_connection.isolation_level = None
    configure_connection(dbapi_connection)  # the same settings as the default SQLite store's connections


def _sqlite_on_begin(conn: sa.Connection) -> None:
    # A deferred write transaction that later needs the write lock fails at once with SQLITE_BUSY (the busy
    # timeout cannot help); IMMEDIATE takes the lock up front, so writers wait their turn. Reads stay deferred.
    conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(_READONLY) else "BEGIN IMMEDIATE")


def _conditions(table: sa.Table, where: Mapping[str, Any]) -> list[sa.ColumnElement[bool]]:
    return [table.c[k].is_(None) if v is None else table.c[k] == v for k, v in where.items()]


def _schema_gaps(conn: sa.Connection) -> tuple[list[str], list[str]]:
    """What the database lacks of the reference schema: ``(missing tables, "table lacks columns ..." notes)``."""
    inspector = sa.inspect(conn)
    existing = set(inspector.get_table_names())
    found = {table: [c["name"] for c in cols]
             for (_, table), cols in inspector.get_multi_columns(filter_names=[*TABLES]).items()}
    return schema.gaps({table: found.get(table, []) for table in existing if table in TABLES})


def _reflect(conn: sa.Connection) -> dict[str, sa.Table]:
    metadata = sa.MetaData()
    metadata.reflect(conn, only=[*TABLES])
    for name, columns in schema.boolean_columns().items():
        for column in columns:
            # SQLite has no BOOLEAN type; typing these columns Boolean makes rows come back as True/False.
            metadata.tables[name].c[column].type = sa.Boolean()
    return {name: metadata.tables[name] for name in TABLES}


def _secrets(url: sa.URL) -> list[str]:
    values = [url.password, url.query.get("password")]
    secrets = [v for v in values if isinstance(v, str) and v]
    return [*secrets, *(quote(s, safe="") for s in secrets)]


def _redact(url: sa.URL) -> str:
    if "password" in url.query:
        url = url.update_query_dict({"password": "***"})
    return url.render_as_string(hide_password=True)
