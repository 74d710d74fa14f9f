"""The Supabase backend: row operations through the ``supabase`` client (PostgREST over HTTPS).

URLs: ``supabase://`` takes the project URL from ``SUPABASE_URL`` (used verbatim, so a local
``http://127.0.0.1:54321`` works); ``supabase://<host>`` means ``https://<host>``, and a bare project ref
``supabase://abcd1234`` means ``https://abcd1234.supabase.co``. The service-role key always comes from
``SUPABASE_SERVICE_ROLE_KEY`` and never appears in ``url``, errors or logs.

PostgREST cannot create tables, so ``migrate()`` only checks that the reference schema is there; apply
``migrations/001_reference_schema.postgres.sql`` to the project first (docs/store.md says how). It first checks,
with one request and a short timeout (``$CONVOEVAL_SUPABASE_CONNECT_TIMEOUT``, default 5 s), that the host answers
at all: a host that refuses or never answers is reported as unreachable within seconds, not as a missing schema
after every table's check has waited out its retries and timeouts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from postgrest.exceptions import APIError
from supabase import Client, ClientOptions, create_client
from supabase._sync.client import SupabaseException

from convoeval._util.urls import safe_url
from convoeval.store import schema
from convoeval.store.base import Row, Store, StoreError

URL_ENV = "SUPABASE_URL"
KEY_ENV = "SUPABASE_SERVICE_ROLE_KEY"
PAGE_SIZE = 1000  # Supabase's default cap on rows per response
TIMEOUT_S = 30.0
#: How long ``migrate()`` waits for the host's first answer before calling it unreachable.
CONNECT_TIMEOUT_ENV = "CONVOEVAL_SUPABASE_CONNECT_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT_S = 5.0


def connect_timeout() -> float:
    """``$CONVOEVAL_SUPABASE_CONNECT_TIMEOUT`` in seconds (default 5).

    Raises:
        StoreError: the variable is set to something other than a positive number.
    """
    raw = os.environ.get(CONNECT_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_CONNECT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise StoreError(f"supabase store: {CONNECT_TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def project_url(url: str) -> str:
    """The project's HTTP(S) base URL for a ``supabase://`` store URL."""
    host = url.partition("://")[2].strip("/")
    if "@" in host:
        raise StoreError(f"supabase store: put the service-role key in {KEY_ENV}, not in the store URL")
    if not host:
        base = os.environ.get(URL_ENV, "").strip()
        if not base:
            raise StoreError(f"supabase store: supabase:// needs {URL_ENV} (e.g. https://<project>.supabase.co)")
        return base.rstrip("/")
    return f"https://{host}" if "." in host or ":" in host else f"https://{host}.supabase.co"


class SupabaseStore(Store):
    """``Store`` over a Supabase project's PostgREST API, authenticated with the service-role key."""

    backend = "supabase"

    def __init__(self, url: str = "supabase://", *, client: Client | None = None):
        self._base = project_url(url)
        self._key = os.environ.get(KEY_ENV, "")
        if client is None and not self._key:
            raise StoreError(f"supabase store: set {KEY_ENV} to the project's service-role key")
        # Our own HTTP client: timeouts are configured on it (the client's timeout options are deprecated) and
        # close() can release it. httpx clients are safe to share between threads.
        self._http = httpx.Client(timeout=TIMEOUT_S)
        self._own_client = client is None
        try:
            self._client = client or create_client(self._base, self._key, ClientOptions(httpx_client=self._http))
            self._client.postgrest  # noqa: B018 - build the lazy REST client now, not racily in many threads
        except SupabaseException as exc:
            raise StoreError(f"supabase store ({self.url}): {self._scrub(str(exc))}") from None

    @property
    def url(self) -> str:
        return f"supabase://{urlsplit(self._base).netloc.rpartition('@')[2]}"

    def migrate(self) -> None:
        """Check that the host answers, then that every reference table and column is there.

        Raises:
            StoreError: the host cannot be reached (naming its URL, never the key), or the schema is missing or
                incomplete (listing what is missing and how to apply the migration).
        """
        if self._own_client:
            self._check_reachable()
        missing = []
        for table, columns in schema.columns().items():
            # Selecting every reference column (and no row) also catches a table that exists but is outdated.
            try:
                self._client.table(table).select(",".join(columns)).limit(0).execute()
            except APIError as exc:
                missing.append(f"{table} ({self._api_reason(exc)})")
            except (httpx.HTTPError, SupabaseException) as exc:
                # The host stopped answering midway: that is not a missing table, and the next checks would wait too.
                raise StoreError(self._unreachable(exc, f"while checking table {table}")) from None
        if missing:
            raise StoreError(
                f"supabase store ({self.url}): the reference schema is missing or incomplete: {'; '.join(missing)}. "
                "PostgREST cannot create tables: apply convoeval/store/migrations/001_reference_schema.postgres.sql "
                "and then 002_patient_details.postgres.sql in the project's SQL editor or with psql (both are safe "
                "to run again; see docs/store.md)."
            )

    def insert(self, table: str, rows: Row | Sequence[Row]) -> list[Row]:
        batch = schema.insert_rows(self.backend, table, rows)
        if not batch:
            return []
        # default_to_null=False: a column a row leaves out gets its SQL default, as in the SQL backend.
        return self._execute(f"insert into {table}", lambda: self._client.table(table).insert(batch, default_to_null=False))

    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        column, descending = schema.order_column(order_by)
        schema.check_columns(self.backend, table, [*(where or {}), *([column] if column else [])])

        def page(start: int) -> Callable[[], Any]:
            # The request for the rows from `start` on; `start` is bound here, not read later from the loop.
            # A stable order (by id when none is asked for) keeps pages from overlapping.
            return lambda: (_filtered(self._client.table(table).select("*"), where or {})
                            .order(column or "id", desc=descending)
                            .range(start, start + PAGE_SIZE - 1))

        rows: list[Row] = []
        while True:
            batch = self._execute(f"select from {table}", page(len(rows)))
            rows.extend(batch)
            if len(batch) < PAGE_SIZE:
                return rows

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, [*where, *values])
        if not where or not values:
            raise StoreError(f"{self.backend} store: update of {table!r} needs a non-empty where and values")
        return len(self._execute(f"update {table}", lambda: _filtered(self._client.table(table).update(dict(values)), where)))

    def delete(self, table: str, where: Mapping[str, Any]) -> int:
        schema.check_columns(self.backend, table, where)
        if not where:
            raise StoreError(f"{self.backend} store: refusing to delete every row of {table!r} (empty where)")
        return len(self._execute(f"delete from {table}", lambda: _filtered(self._client.table(table).delete(), where)))

    #: PostgREST serves table rows and stored functions, never a query written by the caller.
    sql_refusal = ("supabase store: sql: assertions need SQL, which the Supabase REST API (PostgREST) does not run; "
                   "point convoeval at the project's direct Postgres connection string (postgresql://…, "
                   "docs/store.md) to check them, or use a plugin assertion that reads rows with select()")

    def close(self) -> None:
        self._http.close()

    def _execute(self, action: str, build: Callable[[], Any]) -> list[Row]:
        """Build and send one request; a failure becomes ``StoreError`` naming ``action``."""
        rows, reason = self._send(build)
        if reason is not None:
            raise StoreError(f"{self.backend} store ({self.url}): {action} failed: {reason}")
        return rows

    def _send(self, build: Callable[[], Any]) -> tuple[list[Row], str | None]:
        """``(rows, None)``, or ``([], reason)`` for a PostgREST or HTTP failure, with the key scrubbed out.

        The reason is kept apart from the exception so no driver traceback (which may hold headers) is chained.
        """
        try:
            return list(build().execute().data or []), None
        except APIError as exc:
            reason = self._api_reason(exc)
        except (httpx.HTTPError, SupabaseException) as exc:
            reason = self._scrub(f"{type(exc).__name__}: {exc}")
        return [], reason

    def _api_reason(self, exc: APIError) -> str:
        return self._scrub(" ".join(str(p) for p in (exc.code, exc.message, exc.hint) if p) or "request refused")

    def _check_reachable(self) -> None:
        """One request with a short timeout and no retry; any HTTP answer, even an error status, means reachable.

        Raises:
            StoreError: the connection was refused, failed, or got no answer within ``connect_timeout()``.
        """
        timeout = connect_timeout()
        first = next(iter(schema.columns()))
        try:
            self._http.get(f"{self._base}/rest/v1/{first}", params={"select": "id", "limit": "0"},
                           headers={"apikey": self._key, "Authorization": f"Bearer {self._key}"}, timeout=timeout)
        except httpx.HTTPError as exc:
            raise StoreError(self._unreachable(exc, f"within {timeout:g} s")) from None

    def _unreachable(self, exc: BaseException, when: str) -> str:
        reason = self._scrub(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        host = safe_url(self._base).rstrip("/")
        return (f"supabase store ({self.url}): the Supabase host {host} could not be reached {when} "
                f"({reason}). Check {URL_ENV} (or the store URL) and that the project is running; "
                f"{CONNECT_TIMEOUT_ENV} sets how long to wait for its first answer.")

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text


def _filtered(query: Any, where: Mapping[str, Any]) -> Any:
    for column, value in where.items():
        query = query.is_(column, "null") if value is None else query.eq(column, value)
    return query

