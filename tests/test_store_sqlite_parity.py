"""The default SQLite store (``sqlite3``) against SQLAlchemy's (``SqlStore``), the implementation it replaced on
``sqlite://`` URLs: the same operations give the same rows, counts, errors and URLs (issue #28)."""

from __future__ import annotations

import itertools
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_support import clinic_scenario

from convoeval.store import TABLES, Store, StoreError, cleanup_run, open_store, seed_run
from convoeval.store.sql import SqlStore
from convoeval.store.sqlite import SqliteStore, sqlite_database

_NOW = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00")


def _outcome(action: Callable[[], Any]) -> Any:
    """What an action returns, or the error it raises (type and message)."""
    try:
        return action()
    except StoreError as exc:
        return ("StoreError", str(exc))


def _stable(value: Any) -> str:
    """``value``'s text without what differs between two runs of the script: the time and the database's path."""
    return re.sub(r"sqlite:///\S+?\.db", "sqlite:///<db>", _NOW.sub("<now>", repr(value)))


def _counted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated ids from a counter, the same in both runs (so rows ordered by id come in the same order)."""
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter)))


def _script(store: Store) -> list[Any]:
    """Every row operation, their edge cases and errors, in one fixed order."""
    seeded = seed_run(store, clinic_scenario(), run_id="a" * 32)
    run = seeded.run_id
    out: list[Any] = [{t: store.select(t, {"run_id": run}, order_by="id") for t in TABLES}]
    out.append(store.select("slots", {"run_id": run, "available": False}))
    out.append(store.select("slots", {"run_id": run, "service_id": None}))
    out.append(store.select("invoices", {"run_id": run}, order_by="-due_date"))
    out.append(store.update("slots", {"run_id": run, "available": True}, {"available": False}))
    out.append(store.select("slots", {"run_id": run}, order_by="starts_at"))
    out.append(store.insert("handoffs", [{"run_id": run, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id, "reason": "r1", "created_at": "2026-01-01"},
                                         {"run_id": run, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id, "reason": "r2", "created_at": "2026-01-01"}]))
    out.append(store.insert("handoffs", []))
    out.append(_outcome(lambda: store.insert("patients", {"run_id": run, "clinic_id": "no-such-clinic"})))
    out.append(_outcome(lambda: store.insert("patients", {"run_id": run, "nope": 1})))
    out.append(_outcome(lambda: store.select("nope")))
    out.append(_outcome(lambda: store.update("slots", {}, {"available": True})))
    slot = dict(store.select("slots", {"run_id": run})[0], id=None, available=True)
    for value in ("yes", 2, 1, 0, 1.0, None):
        out.append(_outcome(lambda value=value: store.insert("slots", dict(slot, available=value))))
        out.append(_outcome(lambda value=value: store.update("slots", {"run_id": run, "fixture_ref": "s2"},
                                                            {"available": value})))
    out.append(store.select("slots", {"run_id": run, "available": "yes"}))
    out.append(_outcome(lambda: store.delete("slots", {})))
    out.append(store.query("SELECT count(*), max(amount_cents), floor(7.5) FROM invoices WHERE run_id = :run_id "
                           "AND status REGEXP 'pa.*'", {"run_id": run, "unused": 1}))
    out.append(_outcome(lambda: store.query("DELETE FROM invoices WHERE run_id = :run_id", {"run_id": run})))
    out.append(len(store.select("invoices", {"run_id": run})))

    def rolled_back() -> None:
        with store.transaction():
            store.insert("handoffs", {"run_id": run, "clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id, "reason": "gone", "created_at": "2026-01-01"})
            raise StoreError("stop")

    out.append(_outcome(rolled_back))
    with store.snapshot():
        out.append(len(store.select("handoffs", {"run_id": run})))
    with store.transaction(), store.transaction():
        out.append(store.delete("handoffs", {"run_id": run, "reason": "r1"}))
    out.append(cleanup_run(store, run))
    out.append({t: store.select(t, {"run_id": run}) for t in TABLES})
    out.append(store.url)
    return out


def test_both_sqlite_stores_give_the_same_rows_counts_and_errors(tmp_path: Path, monkeypatch) -> None:
    with SqlStore(f"sqlite:///{tmp_path / 'sa.db'}") as reference, SqliteStore(f"sqlite:///{tmp_path / 'std.db'}") as store:
        reference.migrate()
        store.migrate()
        _counted_ids(monkeypatch)
        expected = _stable(_script(reference))
        _counted_ids(monkeypatch)
        got = _stable(_script(store))
    assert got == expected
    assert "True" in got and "False" in got and "constraint violated" in got  # the script reached what it checks


def test_sqlite_urls_open_the_standard_library_store_unless_they_carry_driver_options(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'a.db'}") as plain, open_store("sqlite://") as memory:
        assert type(plain) is SqliteStore and type(memory) is SqliteStore
    with open_store(f"sqlite:///{tmp_path / 'b.db'}?timeout=5") as options, \
            open_store(f"sqlite+pysqlite:///{tmp_path / 'c.db'}") as driver:
        assert type(options) is SqlStore and type(driver) is SqlStore
    for with_host in ("sqlite://host/x.db", "sqlite://./x.db"):  # SQLAlchemy refuses them, not a database in memory
        with pytest.raises(StoreError, match="Invalid SQLite URL"):
            open_store(with_host)


def test_a_relative_path_stays_the_same_file_when_the_working_folder_changes(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    monkeypatch.chdir(tmp_path / "first")
    with open_store("sqlite:///rel.db") as store:
        store.insert("runs", {"id": "r", "run_id": "r", "scenario_id": "t", "started_at": "x"})
        monkeypatch.chdir(tmp_path / "second")
        seen: list[int] = []
        with store.transaction():  # holds the pooled connection: the read below opens another one
            thread = threading.Thread(target=lambda: seen.append(len(store.select("runs"))))
            thread.start()
            thread.join(10)
        assert seen == [1]
    assert not (tmp_path / "second" / "rel.db").exists()


def test_closing_the_store_lets_a_transaction_in_progress_finish(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'close.db'}")
    inside, closed = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with store.transaction():
                store.insert("runs", {"id": "r", "run_id": "r", "scenario_id": "t", "started_at": "x"})
                inside.set()
                closed.wait(10)
                store.insert("runs", {"id": "s", "run_id": "s", "scenario_id": "t", "started_at": "x"})
        except BaseException as exc:  # noqa: BLE001 - the test reports any
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    assert inside.wait(10)
    store.close()
    closed.set()
    thread.join(10)
    assert not errors
    with sqlite3.connect(tmp_path / "close.db") as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    with pytest.raises(StoreError, match="closed"):
        store.select("runs")


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///:memory:", "sqlite:///rel/x.db",
                                 "sqlite:////abs/x.db", "sqlite:///a%20b.db"])
def test_urls_read_as_sqlalchemy_reads_them(url: str) -> None:
    import sqlalchemy as sa

    assert sqlite_database(url) == (sa.make_url(url).database or None if sa.make_url(url).database != ":memory:"
                                    else None)


def test_an_in_memory_store_is_one_database_whatever_the_thread() -> None:
    with SqliteStore("sqlite://") as store:
        store.migrate()
        store.insert("runs", {"id": "r", "run_id": "r", "scenario_id": "t", "started_at": "x"})
        seen: list[int] = []
        thread = threading.Thread(target=lambda: seen.append(len(store.select("runs"))))
        thread.start()
        thread.join(10)
        assert seen == [1]


def test_writers_on_many_threads_queue_on_the_lock_instead_of_failing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    with open_store(url) as store:
        errors: list[BaseException] = []

        def write(k: int) -> None:
            try:
                for i in range(20):
                    with store.transaction():
                        run = f"{k:02d}{i:030d}"
                        store.insert("runs", {"id": run, "run_id": run, "scenario_id": "t", "started_at": "x"})
                        store.delete("runs", {"id": run})
            except BaseException as exc:  # noqa: BLE001 - the test reports any
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert store.select("runs") == []
    # The file is in WAL mode, as SqlStore left it.
    with sqlite3.connect(tmp_path / "busy.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_database_that_cannot_be_opened_fails_in_the_same_words(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder.db").mkdir()
    for name in ("a-file/x.db", "a-folder.db"):
        url = f"sqlite:///{tmp_path / name}"
        errors = []
        for make in (SqlStore, SqliteStore):
            def opened(make: Callable[[str], Store] = make, url: str = url) -> None:
                with make(url) as store:
                    store.migrate()
            errors.append(_outcome(opened))
        assert errors[0] == errors[1] and errors[0][0] == "StoreError", errors
