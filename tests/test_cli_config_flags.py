"""``convoeval run`` takes every ``EvalConfig`` field as a flag, built from the model."""

from __future__ import annotations

import argparse
import gc
from typing import Any

import pytest
from pydantic import Field

from convoeval import cli
from convoeval.cli.config_flags import FLAG_NAMES, NO_FLAG, add_config_flags, flag_for, given_settings
from convoeval.pipeline import ConfigError, EvalConfig


def _run_parser() -> argparse.ArgumentParser:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]


def _flags_by_dest() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for action in _run_parser()._actions:
        found.setdefault(action.dest, set()).update(action.option_strings)
    return found


def _config(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> EvalConfig:
    """The EvalConfig ``convoeval run <argv>`` hands to ``run_eval`` (stopped there: nothing runs)."""
    seen: list[EvalConfig] = []

    def fake_run_eval(config: EvalConfig, **kwargs: Any) -> Any:
        seen.append(config)
        raise ConfigError("stop here")

    monkeypatch.setattr("convoeval.pipeline.execute.run_eval", fake_run_eval)
    with pytest.raises(SystemExit):
        cli.main(["run", *argv])
    return seen[0]


def test_every_config_field_has_a_flag_or_a_reason():
    """Fails when a field is added to EvalConfig without a flag (or a reason in NO_FLAG)."""
    flags = _flags_by_dest()
    for name in EvalConfig.model_fields:
        if name in NO_FLAG:
            assert NO_FLAG[name].strip(), f"{name} is in NO_FLAG without a reason"
            assert name not in flags, f"{name} is in NO_FLAG but has a flag"
        else:
            assert flag_for(name) in flags.get(name, set()), f"EvalConfig.{name} has no {flag_for(name)} flag"
    assert set(NO_FLAG) <= set(EvalConfig.model_fields), "NO_FLAG names a field EvalConfig does not have"
    assert set(FLAG_NAMES) <= set(EvalConfig.model_fields)


def test_the_flags_existing_scripts_use_still_work():
    flags = set().union(*_flags_by_dest().values())
    for flag in ("--agent", "--seed", "--scenario", "--type", "--trials", "--target", "--simulator-model",
                 "--judge-model", "--judge-samples", "--fail-threshold", "--out", "--scenarios-dir", "--store",
                 "--concurrency", "--workers", "--cluster", "--verbose", "--no-progress", "--no-resume",
                 "--allow-errors", "--resimulate"):
        assert flag in flags, flag


@pytest.mark.parametrize("annotation", [set[int], list[str], tuple[int, int]])
def test_a_field_with_no_command_line_form_stops_the_parser_being_built(annotation):
    class Wider(EvalConfig):
        hook: annotation = Field(default=None, description="a field a shell cannot type")  # type: ignore[valid-type]

    with pytest.raises(TypeError, match="EvalConfig.hook .* has no command-line form.*NO_FLAG"):
        add_config_flags(argparse.ArgumentParser(), model=Wider)


def test_no_flag_gives_exactly_the_models_defaults(monkeypatch):
    assert _config([], monkeypatch).model_dump() == EvalConfig().model_dump()
    assert given_settings(_run_parser().parse_args([])) == {}  # a default is never passed on as if typed


@pytest.mark.parametrize(("argv", "expected"), [
    (["--no-simulator-gate"], {"simulator_gate": False}),
    (["--simulator-gate"], {"simulator_gate": True}),
    (["--simulator-gate", "{parrot_turns: 3}"], {"simulator_gate": {"parrot_turns": 3}}),
    (["--no-resume"], {"resume": False}),
    (["--resume"], {"resume": True}),
    (["--agent", "all"], {"agent": None}),
    (["--agent", "support"], {"agent": "support"}),
    (["--seed", "1,2,3"], {"seed": [1, 2, 3]}),
    (["--seed", "7"], {"seed": 7}),
    (["--seed", "own"], {"seed": None}),
    (["--type", "scripted"], {"type": "scripted"}),
    (["--trials", "3", "--judge-samples", "2", "--concurrency", "8", "--resimulate", "2"],
     {"trials": 3, "judge_samples": 2, "concurrency": 8, "resimulate": 2}),
    (["--fail-threshold", "6.5"], {"fail_threshold": 6.5}),
    (["--judge-model", "gpt-5-mini"], {"judge_model": "gpt-5-mini"}),
    (["--simulator-model", "{provider: local, temperature: 0.7}"],
     {"simulator_model": {"provider": "local", "temperature": 0.7}}),
    (["--target", "clinic:billing?faults=rude_tone"], {"target": "clinic:billing?faults=rude_tone"}),
    (["--cluster", "tcp://127.0.0.1:8786"], {"cluster": "tcp://127.0.0.1:8786"}),
    (["--scenario", "support-scripted-info-pt"], {"scenario": "support-scripted-info-pt", "agent": None}),
])
def test_each_flag_sets_its_field(argv, expected, monkeypatch):
    dumped = _config(argv, monkeypatch).model_dump()
    assert {k: dumped[k] for k in expected} == expected


def test_path_flags_are_relative_to_the_shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = _config(["--out", "here", "--scenarios-dir", "sc", "--workers", "1"], monkeypatch)
    assert (config.output_dir, config.scenarios_dir) == (str(tmp_path / "here"), str(tmp_path / "sc"))


@pytest.mark.parametrize(("argv", "shown"), [
    (["--simulator-gate", "parrot_turns"], "argument --simulator-gate: expected a YAML mapping"),
    (["--simulator-gate", "{parrot_turn: 3}"], "simulator_gate has a bad gate setting parrot_turn"),
    (["--judge-model", "{modle: x}"], "judge_model has a bad model setting modle"),
    (["--seed", "1,x"], "argument --seed: --seed takes integers"),
    (["--agent", "dentist"], "argument --agent: invalid choice: 'dentist'"),
    (["--resimulate", "11"], "resimulate must be from 0 to 10, got 11"),
])
def test_a_bad_flag_value_is_one_line_and_exit_2(argv, shown, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert shown in err[-1] and "Traceback" not in "".join(err), err


def test_the_help_shows_every_setting_with_its_default():
    text = " ".join(_run_parser().format_help().split())
    for name in EvalConfig.model_fields:
        assert flag_for(name) in text, name
    for shown in ("(default: billing)", "(default: 42)", "(default: 4)", "(default: --resume)", "(default: on)",
                  "--no-simulator-gate", "(default: each scenario's reference clinic agent)"):
        assert shown in text, shown


def test_an_in_process_run_leaves_the_garbage_collector_as_it_found_it(monkeypatch):
    """``convoeval run`` freezes the heap while it runs (full collections walked ~2,300 modules for nothing); called
    in-process (a test session, a notebook) it must not leave the caller's objects pinned or its thresholds changed."""
    during: list[tuple[int, tuple[int, int, int]]] = []

    def fake_run_eval(config: EvalConfig, **kwargs: Any) -> Any:
        during.append((gc.get_freeze_count(), gc.get_threshold()))
        raise ConfigError("stop here")

    monkeypatch.setattr("convoeval.pipeline.execute.run_eval", fake_run_eval)
    before = (gc.get_freeze_count(), gc.get_threshold())
    with pytest.raises(SystemExit):
        cli.main(["run", "--agent", "billing"])
    assert during and during[0][0] > 0 and during[0][1][2] == 100  # frozen while the run ran
    assert (gc.get_freeze_count(), gc.get_threshold()) == before
