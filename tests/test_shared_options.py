"""The options every verb that runs conversations shares (``convoeval.pipeline.options.SharedOptions``): one
declaration, one set of defaults, the same in ``fork``, ``fork_profile``, the fault study and compare's candidate run,
in ``EvalConfig`` and ``run_conversation``; an unknown option is a ``TypeError`` naming it."""

from __future__ import annotations

import argparse
import inspect
import typing

import pytest

from convoeval.agreement import faults
from convoeval.cli.compare_command import INHERITED_OPTIONS
from convoeval.cli.config_flags import add_shared_flags, given_options
from convoeval.compare import candidate
from convoeval.forking import FORK_DEFAULTS, ForkOptions, _profile, _run, afork, afork_profile, fork, fork_profile
from convoeval.llm.models import ModelSpec
from convoeval.pipeline.config import EvalConfig
from convoeval.pipeline.conversation import run_conversation
from convoeval.pipeline.options import OPTION_HELP, SHARED_DEFAULTS, SharedOptions, settle
from convoeval.redteam import study as redteam_study

SHARED = set(SHARED_DEFAULTS)


class _Stop(Exception):
    """Raised by the spy once a verb has settled its options: nothing runs."""


def _settled_by(monkeypatch: pytest.MonkeyPatch, module: object, call: typing.Callable[[], object]) -> dict:
    """The options ``call`` settles (through ``module.settle``), defaults filled in; the verb stops there."""
    seen: list[dict] = []

    def spy(verb, given, defaults):
        seen.append(dict(settle(verb, given, defaults)))
        raise _Stop

    monkeypatch.setattr(module, "settle", spy)
    with pytest.raises(_Stop):
        call()
    return seen[0]


#: The four verbs, each called with no option but what it needs to start (the spy stops it before anything runs).
VERBS = {
    "fork": (_run, lambda: fork("unused", at_turn=1)),
    "fork_profile": (_profile, lambda: fork_profile("unused")),
    "run_fault_study": (faults, lambda: faults.run_fault_study([], "unused")),
    "run_candidate": (candidate, lambda: candidate.run_candidate("unused", "clinic:billing")),
    "run_redteam": (redteam_study, lambda: redteam_study.run_redteam([])),
}


@pytest.mark.parametrize("verb", VERBS)
def test_the_four_verbs_take_the_shared_options_with_the_same_defaults(verb, monkeypatch):
    module, call = VERBS[verb]
    settled = _settled_by(monkeypatch, module, call)
    assert {k: settled[k] for k in SHARED} == SHARED_DEFAULTS  # every shared option, each with the one default


@pytest.mark.parametrize("verb", VERBS)
def test_an_unknown_option_is_a_type_error_naming_it(verb):
    module, _ = VERBS[verb]
    calls = {"fork": lambda: fork("unused", at_turn=1, concurency=2),
             "fork_profile": lambda: fork_profile("unused", judge_sample=2),
             "run_fault_study": lambda: faults.run_fault_study([], "unused", simulator_gates=False),
             "run_candidate": lambda: candidate.run_candidate("unused", "clinic:billing", store_url="sqlite://"),
             "run_redteam": lambda: redteam_study.run_redteam([], simulator_modle="local")}
    wrong = {"fork": ("concurency", "concurrency"), "fork_profile": ("judge_sample", "judge_samples"),
             "run_fault_study": ("simulator_gates", "simulator_gate"), "run_candidate": ("store_url", "store"),
             "run_redteam": ("simulator_modle", "simulator_model")}[verb]
    with pytest.raises(TypeError) as caught:
        calls[verb]()
    assert str(caught.value) == (f"{verb}() got an unexpected keyword argument {wrong[0]!r} "
                                 f"(did you mean {wrong[1]!r}?)")


def test_an_unknown_option_far_from_any_lists_the_options():
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'xyz'; its options are concurrency, "):
        settle("run_fault_study", {"xyz": 1}, SHARED_DEFAULTS)


def test_a_given_option_wins_over_its_default(monkeypatch):
    settled = _settled_by(monkeypatch, _run, lambda: fork("unused", at_turn=1, concurrency=2, progress="off"))
    assert settled["concurrency"] == 2 and settled["progress"] == "off" and settled["judge_samples"] == 1


def test_the_verbs_signatures_unpack_the_one_declaration():
    """mypy sees every option's type: each verb's ``**options`` is ``Unpack`` of ``SharedOptions`` (or of
    ``ForkOptions``, which extends it); the fork verbs' coroutines and their blocking twins alike."""
    for verb in (fork, afork, fork_profile, afork_profile, faults.run_fault_study, faults.arun_fault_study,
                 candidate.run_candidate, redteam_study.run_redteam):
        kwargs = [p for p in inspect.signature(verb).parameters.values() if p.kind is p.VAR_KEYWORD]
        assert [str(p.annotation) for p in kwargs] in (["Unpack[SharedOptions]"], ["Unpack[ForkOptions]"]), verb
    assert SharedOptions.__optional_keys__ == SHARED == set(OPTION_HELP) and not SharedOptions.__required_keys__
    assert SHARED < ForkOptions.__optional_keys__ == set(FORK_DEFAULTS)
    for name in SHARED:  # inherited, not redeclared: one type per option
        assert ForkOptions.__annotations__[name] is SharedOptions.__annotations__[name]


def test_eval_config_and_run_conversation_have_the_same_defaults():
    """``convoeval run`` (EvalConfig) and ``run_conversation`` take some of the same options: same defaults."""
    fields = EvalConfig.model_fields
    in_config = SHARED & set(fields)
    assert in_config == {"simulator_model", "judge_model", "judge_samples", "concurrency", "simulator_gate",
                         "simulator"}
    assert {k: fields[k].default for k in in_config} == {k: SHARED_DEFAULTS[k] for k in in_config}
    params = inspect.signature(run_conversation).parameters
    in_run = SHARED & set(params)
    assert in_run == {"simulator_model", "judge_model", "judge_samples", "store", "simulator_gate", "simulator"}
    assert {k: params[k].default for k in in_run} == {k: SHARED_DEFAULTS[k] for k in in_run}


def test_the_cli_has_a_flag_per_shared_option_and_passes_only_those_given():
    parser = argparse.ArgumentParser()
    add_shared_flags(parser, title="shared")
    assert given_options(parser.parse_args([])) == {}  # not given: the verb's default applies
    args = parser.parse_args(["--simulator-model", "{provider: local}", "--judge-model", "gpt-x", "--judge-samples",
                              "3", "--concurrency", "2", "--store", "sqlite:///x.db", "--no-progress",
                              "--simulator-gate", "{parrot_turns: 3}"])
    assert given_options(args) == {"simulator_model": {"provider": "local"}, "judge_model": "gpt-x",
                                   "judge_samples": 3, "concurrency": 2, "store": "sqlite:///x.db", "progress": False,
                                   "simulator_gate": {"parrot_turns": 3}}
    assert given_options(parser.parse_args(["--progress", "lines", "--no-simulator-gate"])) == {
        "progress": "lines", "simulator_gate": False}
    # compare's candidate run inherits these from the baseline's report.json
    assert set(INHERITED_OPTIONS) <= set(candidate.INHERITED) & SHARED


def test_a_new_shared_option_without_a_flag_fails_the_parser(monkeypatch):
    monkeypatch.setattr("convoeval.cli.config_flags.SHARED_DEFAULTS", {**SHARED_DEFAULTS, "brand_new": 1})
    monkeypatch.setitem(OPTION_HELP, "brand_new", "something new")
    with pytest.raises(TypeError, match="SharedOptions.brand_new has no command-line form"):
        add_shared_flags(argparse.ArgumentParser(), title="shared")


def test_run_candidate_refuses_what_it_cannot_record(tmp_path):
    from convoeval.pipeline import ConfigError
    from convoeval.testing import FakeChatModel

    with pytest.raises(TypeError, match="pass judge_samples as keyword argument"):
        candidate.run_candidate(tmp_path, "clinic:billing", settings={"judge_samples": 2})
    with pytest.raises(ConfigError, match="give judge_model as a name, 'local' or a mapping of settings, not a "
                                          "FakeChatModel object"):
        candidate._recordable({"judge_model": FakeChatModel()})
    assert candidate._recordable({"simulator_model": ModelSpec(model="m"), "simulator_gate": False,
                                  "concurrency": 2, "progress": "off", "judge_model": None}) == {
        "simulator_model": {"model": "m"}, "simulator_gate": False, "concurrency": 2}


@pytest.mark.parametrize(("option", "value", "shown"), [
    ("progress", "bars", "progress must be True, False, 'bar', 'lines' or 'off', got 'bars'"),
    ("concurrency", 0, "concurrency must be a whole number of at least 1, got 0"),
    ("judge_samples", 2.5, "judge_samples must be a whole number of at least 1, got 2.5"),
])
def test_a_bad_shared_option_value_is_refused_at_the_call(option, value, shown):
    # Before: progress="bars" showed no bar and no error; a concurrency of 0 failed far from the call.
    with pytest.raises(ValueError) as caught:
        settle("fork", {option: value}, SHARED_DEFAULTS)
    assert str(caught.value) == f"fork(): {shown}"


def test_a_shared_option_given_as_none_takes_its_default():
    settled = settle("run_candidate", {"progress": None, "concurrency": None}, SHARED_DEFAULTS)
    assert settled["progress"] is True and settled["concurrency"] == SHARED_DEFAULTS["concurrency"]
