"""The Supabase backend: row operations through the ``supabase`` client (PostgREST over HTTPS).

URLs: ``supabase://`` takes the project URL from ``SUPABASE_URL`` (used verbatim, so a local
``http://127.0.0.1:54321`` works); ``supabase://<host>`` means ``https://<host>``, and a bare project ref
``supabase://abcd1234`` means ``https://abcd1234.supabase.co``. The service-role key always comes from
``SUPABASE_SERVICE_ROLE_KEY`` and never appears in ``url``, errors or logs.

PostgREST cannot create tables, so ``migrate()`` only checks that the reference schema is there; apply
``migrations/001_reference_schema.postgres.sql`` to the project first (docs/store.md says how).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from postgrest.exceptions import APIError
from supabase import Client, ClientOptions, create_client
from supabase._sync.client import SupabaseException

from convoeval.store import schema
from convoeval.store.base import Row, Store, StoreError

URL_ENV = "SUPABASE_URL"
KEY_ENV = "SUPABASE_SERVICE_ROLE_KEY"
PAGE_SIZE = 1000  # Supabase's default cap on rows per response
TIMEOUT_S = 30.0


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
        try:
            self._client = client or create_client(self._base, self._key, ClientOptions(httpx_client=self._http))
            self._client.postgrest  # noqa: B018 - build the lazy REST client now, not racily in many threads
        except SupabaseException as exc:
            raise StoreError(f"supabase store ({self.url}): {self._scrub(str(exc))}") from None

    @property
    def url(self) -> str:
        return f"supabase://{urlsplit(self._base).netloc.rpartition('@')[2]}"

    def migrate(self) -> None:
        missing = []
        for table, columns in schema.columns().items():
            # Selecting every reference column (and no row) also catches a table that exists but is outdated.
            _, reason = self._send(lambda t=table, c=columns: self._client.table(t).select(",".join(c)).limit(0))
            if reason is not None:
                missing.append(f"{table} ({reason})")
        if missing:
            raise StoreError(
                f"supabase store ({self.url}): the reference schema is missing or incomplete: {'; '.join(missing)}. "
                "PostgREST cannot create tables: apply convoeval/store/migrations/001_reference_schema.postgres.sql "
                "in the project's SQL editor or with psql (see docs/store.md)."
            )

    def insert(self, table: str, rows: Row | Sequence[Row]) -> list[Row]:
        batch = [dict(rows)] if isinstance(rows, Mapping) else [dict(r) for r in rows]
        for row in batch:
            schema.check_columns(self.backend, table, row)
            if row.get("id") is None:
                row["id"] = uuid.uuid4().hex
        if not batch:
            return []
        # default_to_null=False: a column a row leaves out gets its SQL default, as in the SQL backend.
        return self._execute(f"insert into {table}", lambda: self._client.table(table).insert(batch, default_to_null=False))

    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        column, descending = schema.order_column(order_by)
        schema.check_columns(self.backend, table, [*(where or {}), *([column] if column else [])])
        rows: list[Row] = []
        while True:
            start = len(rows)
            # A stable order (by id when none is asked for) keeps pages from overlapping.
            batch = self._execute(
                f"select from {table}",
                lambda: _filtered(self._client.table(table).select("*"), where or {})
                .order(column or "id", desc=descending)
                .range(start, start + PAGE_SIZE - 1),
            )
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
            reason = " ".join(str(p) for p in (exc.code, exc.message, exc.hint) if p) or "request refused"
        except (httpx.HTTPError, SupabaseException) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        return [], self._scrub(reason)

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text


def _filtered(query: Any, where: Mapping[str, Any]) -> Any:
    for column, value in where.items():
        query = query.is_(column, "null") if value is None else query.eq(column, value)
    return query

