"""Fixtures shared by several test modules.

``fake_llm``: every model a notebook kernel (or a sweep) builds talks to a local fake OpenAI-compatible server.

``_stop_local_servers_at_the_end`` (session, automatic): the embedded model's server is a detached process that
outlives whoever started it, by design; a test session stops every one it started (see ``stop_local_servers``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convoeval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def _stop_local_servers_at_the_end(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Record every local server started during the session (this process and its children) and stop them after."""
    from convoeval.llm.local import STARTED_LOG_ENV

    log = tmp_path_factory.getbasetemp() / "local-servers-started.jsonl"
    previous = os.environ.get(STARTED_LOG_ENV)
    os.environ[STARTED_LOG_ENV] = str(log)
    try:
        yield log
    finally:
        if previous is None:
            os.environ.pop(STARTED_LOG_ENV, None)
        else:
            os.environ[STARTED_LOG_ENV] = previous
        stop_local_servers(log, tmp_path_factory.getbasetemp())


def stop_local_servers(log: Path, base: Path) -> list[int]:
    """Stop the local servers recorded in ``log``, and any whose log file lies under ``base``.

    The second catches servers started by subprocesses run with a scrubbed environment (no ``STARTED_LOG_ENV``)
    but a state folder in a test's tmp_path; servers of other sessions and the user's own are left alone.
    """
    from convoeval.llm.local import stop_started_servers
    from convoeval.llm.local.server import _terminate

    stopped = stop_started_servers(log)
    for pid in _servers_logging_under(base):
        _terminate({"pid": pid})
        stopped.append(pid)
    return stopped


def _servers_logging_under(base: Path) -> list[int]:
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            command = (proc / "cmdline").read_bytes()
            if not any(name in command for name in (b"convoeval.local_server", b"convoeval.local_llm")):
                continue
            log = Path(os.readlink(proc / "fd" / "1"))
        except OSError:
            continue
        if log.is_relative_to(base.resolve()) and int(proc.name) != os.getpid():
            found.append(int(proc.name))
    return found


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh SQLite store in ``tmp_path``, with convoeval's state there too and the response cache off."""
    from convoeval.store import open_store

    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as s:
        yield s


@pytest.fixture
def fake_llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A fake server for every role; state, store and cache stay in tmp_path; the project is the working folder."""
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
        monkeypatch.setenv("CONVOEVAL_CACHE_PATH", str(tmp_path / "state" / "cache.sqlite"))
        monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("CONVOEVAL_CACHE", raising=False)
        monkeypatch.chdir(ROOT)
        yield server
