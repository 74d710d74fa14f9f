"""Notebook parameters: names, values, one-line errors, output folder; replay misses and the threshold gate."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_support import conversation, run_data

from convoeval.report import NOTEBOOK_PARAMETERS, ParameterError, check_parameters
from convoeval.report.execute import (
    RERECORD_HINT,
    ThresholdError,
    check_threshold,
    replay_misses,
)
from convoeval.report.params import check_values, notebook_defaults

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_defaults_run_the_billing_agent_with_seed_42():
    config = check_parameters(notebook_defaults())
    rc = config.run_config
    assert (rc.agent, rc.seeds, rc.trials, rc.scenario) == ("billing", [42], 1, None)
    assert rc.scenarios_dir == "evals/scenarios"  # relative to the working directory, which is the project here
    assert config.output_dir.parent == ROOT / "reports" and config.output_dir.name.startswith("run-billing-s42-")


@pytest.mark.parametrize(("values", "message"), [
    ({"agnet": "billing"}, "unknown notebook parameter(s) agnet; known: agent, seed"),
    ({"seed": "x"}, "seed must be an integer, a list of integers, or None"),
    ({"trials": 0}, "trials must be a positive integer, got 0"),
    ({"judge_samples": True}, "judge_samples must be a positive integer, got True"),
    ({"fail_threshold": 11}, "fail_threshold must be a number from 0 to 10"),
    ({"agent": "billingg"}, "agent must be one of support, scheduling"),
    ({"type": "chat"}, "type must be 'scripted', 'conversational' or None"),
    ({"scenario": "no-such-scenario"}, "no scenario in"),
    ({"simulator_model": 3}, "simulator_model must be a model name"),
])
def test_bad_parameters_fail_with_one_line(values, message):
    with pytest.raises(ParameterError) as err:
        check_parameters({**notebook_defaults(), **values})
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert err.value._render_traceback_() == [f"ParameterError: {err.value}"]  # what a notebook cell shows


def test_kernel_objects_are_not_taken_for_parameters():
    import json

    namespace = {**notebook_defaults(), "In": [""], "Out": {}, "_": 1, "json": json, "report": check_parameters,
                 "config": object()}
    assert check_parameters(namespace).params["agent"] == "billing"


def test_seed_list_scenario_and_output_dir():
    config = check_parameters({**notebook_defaults(), "seed": [1, 2], "scenario": "billing-scripted-pix-en",
                               "output_dir": "build/x"})
    assert config.run_config.seeds == [1, 2]
    assert config.output_dir == ROOT / "build" / "x"


def test_papermill_output_path_puts_the_data_beside_the_executed_notebook(tmp_path):
    config = check_parameters({**notebook_defaults(), "PAPERMILL_OUTPUT_PATH": str(tmp_path / "r.ipynb"),
                               "PAPERMILL_INPUT_PATH": "notebooks/run.ipynb"})
    assert config.output_dir == tmp_path / "r"


def test_every_parameter_has_a_check_and_a_meaning():
    assert set(check_values(notebook_defaults())) == set(NOTEBOOK_PARAMETERS)
    assert all(len(spec) == 3 and spec[2] for spec in NOTEBOOK_PARAMETERS.values())


def test_replay_misses_are_found_in_the_calls(tmp_path):
    run = run_data(conversation("r1"), tmp_path)
    assert replay_misses(run).empty
    run.frames["calls"] = pd.concat([run.frames["calls"], pd.DataFrame([{
        "role": "judge", "scenario": "s", "turn": None,
        "error": "CacheMissError: replay-only cache has no recorded response for this judge call"}])])
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
    from convoeval.report.execute import RunError, execute

    monkeypatch.setenv("CONVOEVAL_STORE_URL", url)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    # An endpoint that is never called: the store fails first, and no local model server is started for nothing.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "never-called")
    config = check_parameters({"agent": "support", "scenario": "support-scripted-info-pt", "output_dir": str(tmp_path)})
    with pytest.raises(RunError) as err:
        execute(config)
    assert "store URL" in str(err.value) and "s3cr3t-pw" not in str(err.value) and "\n" not in str(err.value)
    assert err.value._render_traceback_() == [f"RunError: {err.value}"]  # a notebook shows one line, no stack
