"""The SQL backend (SQLite always, Postgres when configured): row operations, schema, errors, secrets, threads."""

from __future__ import annotations

import re
import threading
import traceback
import uuid

import pytest
from store_support import PG_URL, require_postgres, run_ids, store, store_url  # noqa: F401 - pytest fixtures

from convoeval._util.sql_schema import column_types
from convoeval.store import TABLES, Store, StoreError, open_store
from convoeval.store import schema as ref_schema
from convoeval.store.sql import SqlStore, normalize_url


def _runs_row(run_id: str) -> dict:
    return {"id": run_id, "run_id": run_id, "scenario_id": "t", "started_at": "2026-01-01T00:00:00+00:00"}


def _clinic(store: Store, run_id: str) -> str:
    store.insert("runs", _runs_row(run_id))
    return store.insert("clinics", {"run_id": run_id, "name": "C"})[0]["id"]


# ── schema and migrations ──


def test_postgres_migration_has_the_sqlite_columns_in_the_same_order() -> None:
    sqlite_cols = {t: tuple(c) for t, c in column_types("sqlite").items()}
    postgres_cols = {t: tuple(c) for t, c in column_types("postgres").items()}
    assert postgres_cols == sqlite_cols
    assert list(sqlite_cols) == list(TABLES)


def test_boolean_columns_come_from_the_postgres_migration() -> None:
    booleans = {t: set(c) for t, c in ref_schema.boolean_columns().items() if c}
    assert booleans == {"slots": {"available"}}


def test_migrate_is_idempotent(store_url: str) -> None:
    with open_store(store_url) as first:
        first.migrate()
        first.migrate()
        run_id = uuid.uuid4().hex
        first.insert("runs", _runs_row(run_id))
        # A second store on the same database migrates again and keeps the data.
        with open_store(store_url) as second:
            assert second.select("runs", {"id": run_id})[0]["scenario_id"] == "t"
            assert second.delete("runs", {"id": run_id}) == 1


def test_migrate_refuses_a_foreign_table_of_the_same_name(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE patients (id TEXT PRIMARY KEY, full_name TEXT)")
    with pytest.raises(StoreError, match=r"patients lacks columns .*clinic_id"):
        open_store(f"sqlite:///{path}")


# ── row operations ──


def test_insert_generates_ids_and_returns_stored_rows(store: Store, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    clinic_id = _clinic(store, run_id)
    assert re.fullmatch(r"[0-9a-f]{32}", clinic_id)
    row = store.select("clinics", {"id": clinic_id})[0]
    # Defaults from the schema come back too.
    assert row == {
        "id": clinic_id, "run_id": run_id, "fixture_ref": None, "name": "C",
        "timezone": "America/Sao_Paulo", "locale": "pt-BR",
    }


def test_booleans_round_trip(store: Store, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    clinic_id = _clinic(store, run_id)
    prof = store.insert("professionals", {"run_id": run_id, "clinic_id": clinic_id, "name": "P"})[0]["id"]
    base = {"run_id": run_id, "clinic_id": clinic_id, "professional_id": prof}
    inserted = store.insert("slots", [{**base, "starts_at": "09:00", "available": False}, {**base, "starts_at": "10:00"}])
    assert [r["available"] for r in inserted] == [False, True]
    free = store.select("slots", {"run_id": run_id, "available": True})
    assert [(r["starts_at"], r["available"]) for r in free] == [("10:00", True)]
    assert store.update("slots", {"run_id": run_id, "available": True}, {"available": False}) == 1
    assert all(r["available"] is False for r in store.select("slots", {"run_id": run_id}))


def test_select_where_none_matches_null_and_order_by(store: Store, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    clinic_id = _clinic(store, run_id)
    for name, cpf in (("b", None), ("a", "1"), ("c", None)):
        store.insert("patients", {"run_id": run_id, "clinic_id": clinic_id, "name": name, "phone": name * 8, "cpf": cpf})
    assert [r["name"] for r in store.select("patients", {"run_id": run_id, "cpf": None}, order_by="name")] == ["b", "c"]
    assert [r["name"] for r in store.select("patients", {"run_id": run_id}, order_by="-name")] == ["c", "b", "a"]


def test_update_and_delete_count_rows(store: Store, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    store.insert("clinics", [{"run_id": run_id, "name": n} for n in ("x", "y", "y")])
    assert store.update("clinics", {"run_id": run_id, "name": "y"}, {"locale": "es"}) == 2
    assert sorted(r["locale"] for r in store.select("clinics", {"run_id": run_id})) == ["es", "es", "pt-BR"]
    assert store.delete("clinics", {"run_id": run_id, "name": "y"}) == 2
    assert store.delete("clinics", {"run_id": run_id, "name": "y"}) == 0
    assert [r["name"] for r in store.select("clinics", {"run_id": run_id})] == ["x"]


def test_constraint_violation_is_a_store_error(store: Store, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    clinic_id = _clinic(store, run_id)
    patient = {"run_id": run_id, "clinic_id": clinic_id, "name": "p", "phone": "123456789"}
    store.insert("patients", patient)
    with pytest.raises(StoreError, match=f"{store.backend} store .*insert into patients constraint violated"):
        store.insert("patients", patient)  # same clinic and phone


def test_empty_where_is_refused_for_delete_and_update(store: Store) -> None:
    with pytest.raises(StoreError, match="refusing to delete every row of 'clinics'"):
        store.delete("clinics", {})
    with pytest.raises(StoreError, match="non-empty where"):
        store.update("clinics", {}, {"name": "x"})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.select("clinic"), r"unknown table 'clinic'"),
        (lambda s: s.insert("users", {"name": "x"}), r"unknown table 'users'"),
        (lambda s: s.select("clinics", {"nmae": "x"}), r"unknown column 'nmae' in table 'clinics'"),
        (lambda s: s.select("clinics", order_by="-nmae"), r"unknown column 'nmae' in table 'clinics'"),
        (lambda s: s.insert("clinics", {"run_id": "r", "name": "x", "phone": "1"}), r"unknown column 'phone' in table 'clinics'"),
        (lambda s: s.update("clinics", {"id": "x"}, {"colour": "red"}), r"unknown column 'colour' in table 'clinics'"),
        (lambda s: s.delete("clinics; drop table runs", {"id": "x"}), r"unknown table 'clinics; drop table runs'"),
    ],
)
def test_bad_table_or_column_names_give_store_error(store: Store, call, message: str) -> None:
    with pytest.raises(StoreError, match=f"^{store.backend} store: {message}"):
        call(store)


# ── URLs, errors and secrets ──


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+psycopg2", "postgres+psycopg"])
def test_postgres_urls_use_psycopg3(scheme: str) -> None:
    assert normalize_url(f"{scheme}://u:p@h:5/db").drivername == "postgresql+psycopg"


def test_url_redacts_the_password() -> None:
    store = SqlStore("postgres://alice:Sup3r-S3cret@db.example.com:5432/app?password=Other-S3cret")
    assert store.url.startswith("postgresql+psycopg://alice:***@db.example.com:5432/app")
    assert "S3cret" not in store.url
    store.close()


def test_connection_failure_never_shows_the_password() -> None:
    # Port 1 refuses at once; the error must still name the backend and hide the password.
    secret = "Sup3r" + "-S3cret"  # split so the traceback's source lines do not show it either
    url = f"postgresql://alice:{secret}@127.0.0.1:1/app"
    with pytest.raises(StoreError) as info:
        open_store(url)
    message = str(info.value)
    assert message.startswith("postgres store (postgresql+psycopg://alice:***@127.0.0.1:1/app): migrate failed")
    printed = "".join(traceback.format_exception(info.value))
    assert secret not in printed


@pytest.mark.postgres
def test_wrong_password_on_a_real_server_is_not_echoed() -> None:
    require_postgres()
    secret = "Wr0ng" + "-Pa55word"
    url = normalize_url(PG_URL).set(password=secret).render_as_string(hide_password=False)
    open_store(PG_URL).close()  # the server is up and lets this role in: below, only the password differs
    with pytest.raises(StoreError) as info:
        open_store(url)
    # What follows our prefix is PostgreSQL's own reason, passed through (psycopg gives no SQLSTATE for a failed
    # connection): it is not asserted, the password alone makes the difference.
    assert str(info.value).startswith("postgres store (postgresql+psycopg://"), str(info.value)
    assert ":***@" in str(info.value)
    assert secret not in "".join(traceback.format_exception(info.value))


def test_unknown_scheme_and_schemeless_urls_are_refused_without_echo() -> None:
    with pytest.raises(StoreError, match=r"unknown store URL scheme 'mysql'"):
        open_store("mysql://u:pw@h/db")
    with pytest.raises(StoreError) as info:
        open_store("alice:Sup3r-S3cret@host/db")
    assert "Sup3r-S3cret" not in str(info.value)


def test_default_url_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    with open_store() as s:
        assert s.url == f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.delenv("CONVOEVAL_STORE_URL")
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "home"))
    with open_store() as s:
        assert s.url == f"sqlite:///{tmp_path / 'home' / 'store.db'}"
    assert (tmp_path / "home" / "store.db").exists()


def test_in_memory_sqlite_is_shared_by_threads() -> None:
    with open_store("sqlite:///:memory:") as s:
        threads = [threading.Thread(target=s.insert, args=("clinics", {"run_id": "mem", "name": str(i)})) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(s.select("clinics", {"run_id": "mem"})) == 8


# ── concurrency ──


def test_many_threads_and_two_stores_write_concurrently(store_url: str, run_ids: list[str]) -> None:
    run_id = uuid.uuid4().hex
    run_ids.append(run_id)
    stores = [open_store(store_url), open_store(store_url)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        s = stores[n % 2]
        try:
            barrier.wait()
            for i in range(10):
                [row] = s.insert("clinics", {"run_id": run_id, "name": f"{n}-{i}"})
                s.update("clinics", {"id": row["id"]}, {"locale": "en"})
                s.select("clinics", {"id": row["id"]})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.close()
    assert errors == []
    with open_store(store_url) as s:
        rows = s.select("clinics", {"run_id": run_id})
        assert len(rows) == 80 and {r["locale"] for r in rows} == {"en"}


def test_concurrent_first_opens_of_a_new_database_all_succeed(store_url: str, tmp_path) -> None:
    # Each migrate() reads the catalogue, then writes the schema: the pattern that fails with "database is locked"
    # on SQLite unless the transaction takes the write lock up front, and races on Postgres without the lock.
    url = f"sqlite:///{tmp_path / 'fresh.db'}" if store_url.startswith("sqlite") else store_url
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            barrier.wait()
            open_store(url).close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_switching_to_wal_retries_sqlite_s_busy_code_whatever_its_message() -> None:
    # Decided by SQLite's result code, not by its message ("database is locked"): a driver or SQLite release may
    # word it differently.
    import sqlite3

    from convoeval.store.sqlite import set_wal as _set_wal

    def failure(code: int, message: str) -> sqlite3.OperationalError:
        exc = sqlite3.OperationalError(message)
        exc.sqlite_errorcode = code
        return exc

    class Cursor:
        def __init__(self, *failures: sqlite3.OperationalError) -> None:
            self.failures, self.calls = list(failures), 0

        def execute(self, sql: str) -> None:
            self.calls += 1
            if self.failures:
                raise self.failures.pop(0)

    busy = Cursor(failure(sqlite3.SQLITE_BUSY, "some future wording"), failure(261, "busy, recovering"))
    _set_wal(busy)  # 261 is SQLITE_BUSY_RECOVERY, an extended code of SQLITE_BUSY
    assert busy.calls == 3
    other = Cursor(failure(sqlite3.SQLITE_IOERR, "database is locked, says this message; the code says I/O"))
    with pytest.raises(sqlite3.OperationalError):
        _set_wal(other)
    assert other.calls == 1
