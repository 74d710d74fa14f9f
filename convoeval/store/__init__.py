"""The fixtures store: open one by URL, seed a run's fixtures, check assertions, clean up.

``register_backend`` adds a URL scheme; another package can add one through a ``convoeval.stores`` entry point
(``convoeval._util.plugins``).

Example:
    >>> from convoeval.scenarios import load_scenario_file
    >>> from convoeval.store import open_store, seed_run, check_assertions, cleanup_run
    >>> scenario = load_scenario_file("evals/scenarios/billing/conv-happy-payment.yaml")
    >>> with open_store("sqlite:///:memory:") as store:
    ...     seeded = seed_run(store, scenario)
    ...     try:
    ...         results = check_assertions(store, scenario.assertions, seeded)
    ...     finally:
    ...         removed = cleanup_run(store, seeded.run_id)
    >>> [(r.key, r.passed) for r in results]
    [('payment_link_created', False)]
"""

from __future__ import annotations

import os
from collections.abc import Callable

from convoeval._util import plugins
from convoeval._util.paths import state_dir
from convoeval.store.assertions import AssertionResult, check_assertions
from convoeval.store.base import TABLES, Store, StoreError
from convoeval.store.conversations import ensure_conversation, record_message
from convoeval.store.fixtures import (
    FixtureError,
    SeededRun,
    cleanup_run,
    cleanup_stale_runs,
    finish_run,
    new_run_id,
    seed_run,
)

__all__ = [
    "TABLES",
    "AssertionResult",
    "FixtureError",
    "SeededRun",
    "Store",
    "StoreError",
    "check_assertions",
    "cleanup_run",
    "cleanup_stale_runs",
    "default_store_url",
    "ensure_conversation",
    "finish_run",
    "new_run_id",
    "open_store",
    "record_message",
    "register_backend",
    "seed_run",
]

StoreFactory = Callable[[str], Store]


def _sql_store(url: str) -> Store:
    from convoeval.store.sql import SqlStore  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return SqlStore(url)


def _sqlite_store(url: str) -> Store:
    # The standard library's sqlite3 (convoeval/store/sqlite.py, the same behaviour without SQLAlchemy's cost);
    # a URL with driver options (``?…``), a driver suffix or a host keeps SQLAlchemy's driver, which reads them
    # (or refuses them in its own words).
    scheme, _, rest = url.partition("://")
    if "?" in url or "+" in scheme or (rest and not rest.startswith("/")):  # options, a driver, or a host
        return _sql_store(url)
    from convoeval.store.sqlite import SqliteStore  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return SqliteStore(url)


def _supabase_store(url: str) -> Store:
    # Imported on demand: the supabase client is slow to import and most runs use SQLite.
    from convoeval.store.supabase import SupabaseStore  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return SupabaseStore(url)


_BACKENDS: dict[str, StoreFactory] = {
    "sqlite": _sqlite_store,
    "postgresql": _sql_store,
    "postgres": _sql_store,
    "supabase": _supabase_store,
}


def register_backend(scheme: str, factory: StoreFactory) -> None:
    """Make ``open_store`` handle URLs starting with ``<scheme>://`` by calling ``factory(url)``."""
    _BACKENDS[scheme] = factory


def _backend(scheme: str) -> StoreFactory | None:
    """The factory for ``scheme``: registered here, else a ``convoeval.stores`` entry point (then registered).

    Raises:
        StoreError: the entry point cannot be loaded, or what it names is not callable.
    """
    if scheme in _BACKENDS:
        return _BACKENDS[scheme]
    try:
        return plugins.plugin_for(plugins.STORE_GROUP, scheme, accepts=callable, expected="a factory",
                                  register=register_backend)
    except plugins.PluginError as exc:
        raise StoreError(str(exc)) from None


def default_store_url() -> str:
    """``$CONVOEVAL_STORE_URL``, else a SQLite file in the local state folder."""
    return os.environ.get("CONVOEVAL_STORE_URL") or f"sqlite:///{state_dir() / 'store.db'}"


def open_store(url: str | None = None) -> Store:
    """Open the store at ``url`` (default: ``default_store_url()``) and bring its schema up to date.

    Args:
        url: ``sqlite:///path.db``, ``postgresql://user:pass@host/db`` (or ``postgres://``), ``supabase://`` or
            ``supabase://<project-host>``. A driver suffix such as ``postgresql+psycopg://`` is accepted.

    Returns:
        A migrated ``Store``; close it (or use it as a context manager) when done.

    Raises:
        StoreError: unknown scheme, a URL that cannot be parsed, an unreachable database, or a schema that cannot be
            applied. The message never quotes the URL (it may carry a password).
    """
    url = url or default_store_url()
    scheme, sep, _ = url.partition("://")
    # Never echo the URL itself: it may carry a password.
    factory = _backend(scheme.split("+")[0].lower()) if sep else None
    if factory is None:
        shown = repr(scheme.split("+")[0]) if sep else "none"
        known = sorted({*_BACKENDS, *plugins.plugin_names(plugins.STORE_GROUP)})
        raise StoreError(f"unknown store URL scheme {shown}; expected one of {', '.join(known)}")
    try:
        store = factory(url)
    except ValueError:
        # SQLAlchemy's URL parser raises a bare ValueError whose text may quote a piece of the URL (a password typed
        # where the port goes), so it is not shown.
        raise StoreError("invalid store URL: it cannot be parsed "
                         "(expected postgresql://user:password@host:port/database)") from None
    try:
        store.migrate()
    except BaseException:
        store.close()
        raise
    return store
