"""docs/verbs.md is a doctest of the public verbs and their signatures, run against a fake OpenAI-compatible server."""

from __future__ import annotations

import doctest
from pathlib import Path

from test_reliability_support import llm_responder

from convoeval.llm import models
from convoeval.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


def test_the_verbs_page_runs_as_written(tmp_path, monkeypatch):
    with FakeOpenAIServer(responder=llm_responder) as server:
        for name, value in {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "fake-model",
                            "CONVOEVAL_HOME": str(tmp_path / "state"), "CONVOEVAL_CACHE": "off",
                            "CONVOEVAL_STORE_URL": f"sqlite:///{tmp_path / 'store.db'}"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.chdir(ROOT / "notebooks")  # Jupyter's working folder: the project's scenarios are still found
        models.clear_model_cache()
        try:
            result = doctest.testfile(str(ROOT / "docs" / "verbs.md"), module_relative=False, verbose=False,
                                      optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        finally:
            models.clear_model_cache()
    assert result.attempted >= 40 and result.failed == 0, result  # 41 examples: one dropped by mistake fails
