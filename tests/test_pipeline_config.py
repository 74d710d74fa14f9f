"""The one configuration object: EvalConfig's checks, and the same object behind the notebook, the CLI and sweeps."""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import papermill
import pytest
from report_support import conversation, run_data

from convoeval import cli
from convoeval.pipeline import ConfigError, EvalConfig, notebook_config
from convoeval.pipeline.notebook import RERECORD_HINT, ThresholdError, check_threshold, replay_misses

ROOT = Path(__file__).resolve().parents[1]
RUN_NOTEBOOK = ROOT / "notebooks" / "run.ipynb"


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_defaults_run_the_billing_agent_with_seed_42():
    config = notebook_config({})
    assert (config.agent, config.seeds, config.trials, config.scenario, config.workers) == ("billing", [42], 1, None, 1)
    assert config.scenarios_path() == ROOT / "evals" / "scenarios"
    out = config.output_path()
    assert out.parent == ROOT / "reports" and out.name.startswith("run-billing-s42-")


def test_default_output_folders_are_unique_per_run():
    """Two runs started in the same second never share a default folder (they overwrote each other's files).

    Eight hex digits: with four, 50 names in one second collided about 2% of the time (this test flaked).
    """
    config = EvalConfig()
    assert len({config.output_path() for _ in range(50)}) == 50


@pytest.mark.parametrize(("values", "message"), [
    ({"agnet": "billing"}, "unknown setting(s) agnet (did you mean 'agent'?); known: agent, seed"),
    ({"seed": "x"}, "seed must be integers from 0 to 1,000,000,000"),
    ({"seed": 99999999999999999999999}, "seed must be integers from 0 to 1,000,000,000"),
    ({"seed": [1, 1]}, "seed must not repeat a seed"),
    ({"trials": 0}, "trials must be from 1 to 1,000, got 0"),
    ({"trials": 99999999999}, "trials must be from 1 to 1,000, got 99999999999"),
    ({"judge_samples": True}, "judge_samples must be a whole number, got True"),
    ({"concurrency": "4"}, "concurrency must be a whole number, got '4'"),
    ({"workers": 0}, "workers must be from 1 to 512"),
    ({"fail_threshold": 11}, "fail_threshold must be a number from 0 to 10"),
    ({"agent": "billingg"}, "agent must be one of support, scheduling"),
    ({"type": "chat"}, "type must be 'scripted', 'conversational' or None"),
    ({"scenario": "no-such-scenario"}, "no scenario in"),
    ({"simulator_model": 3}, "simulator_model must be a model name"),
    ({"judge_model": {"modle": "x"}}, "judge_model has a bad model setting modle"),
    ({"cluster": "localhost:8786"}, "cluster must be a Dask scheduler address"),
])
def test_bad_settings_fail_with_one_line(values, message):
    with pytest.raises(ConfigError) as err:
        notebook_config(values)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert err.value._render_traceback_() == [f"ConfigError: {err.value}"]  # what a notebook cell shows


def test_kernel_objects_are_not_taken_for_parameters():
    import json

    namespace = {"In": [""], "Out": {}, "_": 1, "json": json, "report": notebook_config, "config": object()}
    assert notebook_config(namespace).agent == "billing"


def test_seed_list_scenario_and_output_dir():
    config = notebook_config({"seed": [1, 2], "scenario": "billing-scripted-pix-en", "output_dir": "build/x"})
    assert config.seeds == [1, 2]
    assert config.output_path() == ROOT / "build" / "x"


def test_papermill_output_path_puts_the_data_beside_the_executed_notebook(tmp_path):
    config = notebook_config({"PAPERMILL_OUTPUT_PATH": str(tmp_path / "r.ipynb"), "PAPERMILL_INPUT_PATH": "notebooks/run.ipynb"})
    assert config.output_path() == tmp_path / "r"


def test_the_notebook_the_cli_and_a_sweep_build_the_same_configuration(monkeypatch):
    """One object: the notebook's declared parameters, the CLI's flags and a sweep's checks all end in EvalConfig."""
    declared = {n: ast.literal_eval(p["default"]) for n, p in papermill.inspect_notebook(str(RUN_NOTEBOOK)).items()}
    notebook = notebook_config({**declared, "seed": [1, 2], "trials": 3, "judge_samples": 2, "workers": 2})

    seen: list[EvalConfig] = []

    def fake_run_eval(config, **kwargs):
        seen.append(config)
        raise ConfigError("stop here")

    monkeypatch.setattr("convoeval.pipeline.execute.run_eval", fake_run_eval)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--seed", "1,2", "--trials", "3", "--judge-samples", "2", "--workers", "2"])
    assert exit_.value.code == 2  # the ConfigError above, as a usage error
    assert seen[0].model_dump() == notebook.model_dump()

    from convoeval.sweep.run import SweepError, _check, _plan

    _check(RUN_NOTEBOOK, _plan(["billing"], [1]), 3, {"judge_samples": 2})  # valid: no error
    with pytest.raises(SweepError, match="judge_samples must be a whole number"):
        _check(RUN_NOTEBOOK, _plan(["billing"], [1]), 3, {"judge_samples": "2"})


def test_bad_numbers_on_the_command_line_are_one_line_and_exit_2(capsys):
    for argv in (["run", "--seed", "99999999999999999999999"], ["run", "--trials", "99999999999"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("convoeval: error:") and "must be from" in err or "must be integers" in err
        assert "\n" not in err and "Traceback" not in err


def test_replay_misses_are_found_in_the_calls(tmp_path):
    run = run_data(conversation("r1"), tmp_path)
    assert replay_misses(run).empty
    run.frames = run.frames.replace(calls=pd.concat([run.frames.calls, pd.DataFrame([{
        "role": "judge", "scenario": "s", "turn": None,
        "error": "CacheMissError: replay-only cache has no recorded response for this judge call"}])]))
    assert len(replay_misses(run)) == 1
    assert "scripts/record-nbval-cache.sh" in RERECORD_HINT and "CONVOEVAL_CACHE=rw" in RERECORD_HINT


def test_threshold_gate(tmp_path):
    run = run_data(conversation("r1", score=6.0, status="warn"), tmp_path, meta={"config": {"fail_threshold": None}})
    assert "nothing to gate" in check_threshold(run)
    assert "at least 5" in check_threshold(run, 5)
    with pytest.raises(ThresholdError, match=r"1 conversation\(s\) below fail_threshold 7.*billing-conv-happy-payment"):
        check_threshold(run, 7)


@pytest.mark.parametrize("url", ["postgresql://ana:s3cr3t-pw@db.example:port/evals", "mysql://ana:s3cr3t-pw@h/db"])
def test_a_store_that_cannot_be_opened_is_one_line_in_the_notebook(tmp_path, monkeypatch, url):
    from convoeval.pipeline.notebook import RunError, run_notebook_config

    monkeypatch.setenv("CONVOEVAL_STORE_URL", url)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    # An endpoint that is never called: the store fails first, and no local model server is started for nothing.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "never-called")
    config = notebook_config({"agent": "support", "scenario": "support-scripted-info-pt", "output_dir": str(tmp_path)})
    with pytest.raises(RunError) as err:
        run_notebook_config(config)
    assert "store URL" in str(err.value) and "s3cr3t-pw" not in str(err.value) and "\n" not in str(err.value)
    assert err.value._render_traceback_() == [f"RunError: {err.value}"]  # a notebook shows one line, no stack


def test_a_scenario_id_is_found_whatever_the_default_agent():
    """`convoeval run --scenario support-…` (and -p scenario) found nothing: the default agent filter was billing."""
    assert notebook_config({"scenario": "support-scripted-info-pt"}).agent is None
    assert notebook_config({"agent": "billing", "scenario": "support-scripted-info-pt"}).agent is None  # the cell's default
    assert EvalConfig(agent="support", scenario="support-scripted-info-pt").agent == "support"  # given in code


def test_a_relative_output_dir_is_the_projects_and_the_cli_makes_out_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT / "notebooks")  # Jupyter's and nbval's working folder
    assert notebook_config({"output_dir": "build/x"}).output_path() == ROOT / "build" / "x"
    seen = []
    monkeypatch.setattr("convoeval.pipeline.execute.run_eval", lambda config, **kw: seen.append(config) or exec("raise SystemExit(0)"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        cli.main(["run", "--out", "here", "--scenarios-dir", str(ROOT / "evals" / "scenarios")])
    assert seen[0].output_path() == tmp_path / "here"
