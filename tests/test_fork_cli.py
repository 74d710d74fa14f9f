"""``convoeval fork``: the cost first, a big job refused in one line, a small one run against a fake server."""

from __future__ import annotations

import pytest
from fork_support import HEALTHY, models, scripted_patient
from test_reliability_support import llm_responder

from convoeval import load_results
from convoeval.cli import main
from convoeval.llm import models as model_registry
from convoeval.pipeline.conversation import RunOptions, run_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.results import write_conversation
from convoeval.scenarios import load_scenarios
from convoeval.store import open_store
from convoeval.testing import FakeOpenAIServer


@pytest.fixture
def saved(tmp_path, monkeypatch):
    """A saved happy-path billing conversation, and a fake OpenAI-compatible server for every role."""
    with FakeOpenAIServer(responder=llm_responder) as server:
        for name, value in {"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "fake-model",
                            "CONVOEVAL_HOME": str(tmp_path / "state"), "CONVOEVAL_CACHE": "off",
                            "CONVOEVAL_STORE_URL": f"sqlite:///{tmp_path / 'store.db'}"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        model_registry.clear_model_cache()
        happy = load_scenarios(scenario="billing-conv-happy-payment")[0]
        with open_store() as store:
            opts = RunOptions(target=HEALTHY, simulator_model=scripted_patient(),
                              judge_model=models()["judge_model"], store=store)
            result = run_any(Job(happy, 42), opts)
        try:
            yield write_conversation(tmp_path / "results", "happy", result.payload()), server
        finally:
            model_registry.clear_model_cache()


def test_a_fork_above_the_bound_is_refused_in_one_line_before_any_call(saved, capsys):
    path, server = saved
    with pytest.raises(SystemExit) as exc:
        main(["fork", str(path), "-n", "50"])
    err = capsys.readouterr()
    assert exc.value.code == 2 and "above the bound of 200" in err.err and "--yes" in err.err
    assert err.err.count("\n") == 1 and "Traceback" not in err.err
    assert "5 fork point(s) × 50 continuation(s)" in err.out  # the cost was shown first
    assert server.stats["requests"] == 0


def test_a_fork_at_one_turn_runs_and_saves_its_continuations(saved, capsys, tmp_path):
    path, server = saved
    assert main(["fork", str(path.parent.parent), "happy", "--at-turn", "2", "-n", "2",
                 "--out", str(tmp_path / "forks")]) == 0
    out = capsys.readouterr().out
    assert "1 fork point(s) × 2 continuation(s)" in out and "fork_turn" in out
    frames = load_results(tmp_path / "forks").frames
    assert len(frames.runs) == 2 and (frames.runs["replayed_turns"] == 2).all()


@pytest.mark.parametrize(("argv", "message"), [
    (["fork", "no/such/file.json"], "neither a conversation file"),
    (["pin", "no/such/file.json"], "neither a conversation file"),
    (["fork", "{saved}", "--at-turn", "9"], "between 0 and the conversation's 4 patient turns"),
    (["fork", "{saved}", "--turns", "1,x"], "--turns takes values separated by commas"),
])
def test_bad_input_is_one_line_and_exit_2(saved, capsys, argv, message):
    path, server = saved
    with pytest.raises(SystemExit) as exc:
        main([a.format(saved=path) for a in argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1
    assert server.stats["requests"] == 0
