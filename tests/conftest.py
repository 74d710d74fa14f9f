"""Fixtures shared by several test modules.

``fake_llm``: every model a notebook kernel (or a sweep) builds talks to a local fake OpenAI-compatible server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from convoeval.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


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
