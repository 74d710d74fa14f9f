"""Deterministic evidence in a comparison (issue #39, item 1): a database or path assertion or a scripted turn check
that flips in a scripted pair is a fact that headlines REGRESSED (or IMPROVED) and is listed with scenario and seed;
a score difference too few pairs can test is said in words with the command that would test it; a baseline of one
seed is warned about before the candidate runs; and no ``nan`` reaches the terminal or the page."""

from __future__ import annotations

import re

import papermill
from compare_support import env, fake_models  # noqa: F401 - env is a fixture
from conftest import ROOT

import convoeval.compare as compare_module
from convoeval.cli import main
from convoeval.compare import IMPROVED, NO_CHANGE, REGRESSED, Side, compare, load_side
from convoeval.compare.advice import few_seeds_warning, next_seeds, rerun_command
from convoeval.compare.notebook import compare_params, run_compare_params
from convoeval.compare.views import render_compare_html
from convoeval.frames import ASSERTION_SCHEMA, RUN_SCHEMA, SCORE_SCHEMA, TURN_SCHEMA, RunFrames, typed_frame
from convoeval.pipeline import EvalConfig, run_eval

FAULTY = "clinic:billing?faults=invented_payment_url"
#: A ``nan`` / ``NaN`` as a word (a base64 image may hold the letters, so images are removed first).
NAN = re.compile(r"\bnan\b", re.I)


def no_nan(text: str) -> bool:
    return not NAN.search(re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", text))


def scripted_run(out, target: str | None = None, *, judge_seed: int = 0, noisy: bool = False, monkeypatch=None):
    with fake_models(monkeypatch, noisy=noisy, seed=judge_seed):
        config = EvalConfig.checked({"agent": "billing", "type": "scripted"}, target=target, output_dir=str(out))
        return run_eval(config, progress="off")


def test_the_issue_a_payment_fault_on_scripted_scenarios_headlines_regressed_naming_each_flip(env, monkeypatch,
                                                                                             capsys):
    scripted_run(env / "base", monkeypatch=monkeypatch)
    seen_before_running: list[str] = []
    real_run = compare_module.run_candidate

    def run_candidate(*args, **kwargs):
        seen_before_running.append(capsys.readouterr().err)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(compare_module, "run_candidate", run_candidate)
    with fake_models(monkeypatch):
        code = main(["compare", str(env / "base"), "--candidate-target", FAULTY, "--type", "scripted",
                     "--out", str(env / "cand"), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0  # no gate asked for
    # Warned before the candidate ran: one seed leaves the judges' scores untestable.
    assert "warning: the baseline ran one seed (42): 1 conversation(s) per scenario" in seen_before_running[0]
    assert "--seed 1,2,3,4,5,6" in seen_before_running[0]
    verdict = next(line for line in out.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: REGRESSED — ") and "payment_link_created" in verdict
    assert "went pass → fail in scripted conversations" in verdict
    # Each flip listed with its kind, scenario, seed and trial, and what the candidate's check said.
    assert ("  pass → fail: database assertion payment_link_created — billing-scripted-pix-en seed 42 trial 1: "
            "expected true, got false") in out
    assert "pass → fail: database assertion payment_link_created — billing-scripted-boleto-es seed 42 trial 1" in out
    assert "pass → fail: path assertion path:calls(create_payment_link)==1 — billing-scripted-pix-en seed 42" in out
    assert ("pass → fail: turn check turn 3: tools_called: expected create_payment_link — billing-scripted-pix-en "
            "seed 42 trial 1: got []") in out
    # The scenario that asks for a human, where the fault changes nothing deterministic, is not named in a flip.
    assert not any("billing-scripted-human-pt seed" in line for line in out.splitlines() if "pass → fail" in line)
    # The score's difference is said to be untested, in words, with the next step as commands.
    assert "score: untested (too few pairs) — " in out
    assert "the score's difference (" in out and "is untested: 3 pair(s), 1 per scenario" in out
    rerun = f"convoeval run --type scripted --seed 1,2,3,4,5,6 --out {env / 'base'}-s1-6"
    assert f"  {rerun}" in out
    assert (f"  convoeval compare {env / 'base'}-s1-6 --candidate-target '{FAULTY}' --type scripted") in out
    assert no_nan(out) and no_nan(err), out
    page = (env / "cand" / "compare.html").read_text(encoding="utf-8")
    assert "REGRESSED" in page and "Deterministic checks that flipped" in page and "fact (scripted" in page
    assert rerun in page and no_nan(page)

    # The gate fails on a fact, naming the broken checks.
    assert main(["compare", str(env / "base"), str(env / "cand"), "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert "11 deterministic check(s) broke in scripted conversations: " in err
    assert "assertion payment_link_created" in err
    assert "turn check turn 3: tools_called: expected create_payment_link" in err


def test_a_fix_in_a_scripted_pair_headlines_improved_and_both_folders_get_a_rerun_command(env, monkeypatch,
                                                                                         capsys):
    scripted_run(env / "broken", FAULTY, monkeypatch=monkeypatch)
    scripted_run(env / "fixed", monkeypatch=monkeypatch)
    assert main(["compare", str(env / "broken"), str(env / "fixed"), "--html", str(env / "page.html")]) == 0
    out, err = capsys.readouterr()
    assert "verdict: IMPROVED — " in out and "went fail → pass in scripted conversations" in out
    assert ("  fail → pass: database assertion payment_link_created — billing-scripted-pix-en seed 42 trial 1: "
            "was: expected true, got false") in out
    # Two folders: both sides must run again on more seeds, then compare those.
    steps = out.split("next, to test it")[1].splitlines()[1:4]
    assert steps[0] == (f"  convoeval run --type scripted --target '{FAULTY}' --seed 1,2,3,4,5,6 "
                        f"--out {env / 'broken'}-s1-6")  # each side with its own recorded target
    assert steps[1] == f"  convoeval run --type scripted --seed 1,2,3,4,5,6 --out {env / 'fixed'}-s1-6"
    assert steps[2] == f"  convoeval compare {env / 'broken'}-s1-6 {env / 'fixed'}-s1-6"
    assert "warning: the baseline ran one seed (42)" in err
    assert "the candidate's folder again with --seed 1,2,3,4,5,6, and compare those two folders" in err
    assert no_nan(out) and no_nan((env / "page.html").read_text(encoding="utf-8"))
    # The notebook's step says the same before it compares.
    run_compare_params(compare_params({"baseline": str(env / "broken"), "candidate": str(env / "fixed")}))
    assert "warning: the baseline ran one seed (42)" in capsys.readouterr().out
    # The executed notebook (JSON, with its HTML and text outputs) shows the facts and holds no nan.
    executed = env / "executed.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / "compare.ipynb"), str(executed), cwd=str(ROOT),
                               parameters={"baseline": str(env / "broken"), "candidate": str(env / "fixed"),
                                           "output_dir": str(env / "nb")}, progress_bar=False)
    notebook = executed.read_text(encoding="utf-8")
    assert "Deterministic checks that flipped" in notebook and "fact (scripted, deterministic)" in notebook
    assert no_nan(notebook) and no_nan((env / "nb" / "compare.html").read_text(encoding="utf-8"))


def test_when_only_judge_scores_differ_on_too_few_pairs_it_says_so_and_gives_the_command(env, monkeypatch, capsys):
    scripted_run(env / "a", monkeypatch=monkeypatch, noisy=True, judge_seed=1)
    scripted_run(env / "b", monkeypatch=monkeypatch, noisy=True, judge_seed=2)
    result = compare(env / "a", env / "b", n_boot=100)
    assert result.flips.empty and result.verdict == NO_CHANGE
    assert result.overall["difference"] != 0  # the judges' scores moved, nothing deterministic did
    lines = result.lines()
    text = "\n".join(lines)
    assert "score: untested (too few pairs)" in text
    assert "is untested: 3 pair(s), 1 per scenario, are too few for an interval or a test" in text
    assert "it is not evidence either way" in text
    assert f"--seed 1,2,3,4,5,6 --out {env / 'a'}-s1-6" in text and f"--out {env / 'b'}-s1-6" in text
    assert no_nan(text) and no_nan(render_compare_html(result)), text


# ── the rule, on frames built by hand ──


def _frames(target: str, rows: list[tuple[str, str, int, bool, list[str]]]) -> RunFrames:
    """Frames from ``(scenario, type, trial, payment_link_created passed, turn 1's check failures)``."""
    runs, scores, assertions, turns = [], [], [], []
    for i, (scenario, kind, trial, passed, failures) in enumerate(rows):
        keys = {"run_id": f"{target}-{i}", "scenario": scenario, "agent": "billing", "seed": 42, "trial": trial}
        runs.append({**keys, "target": target, "type": kind, "status": "completed"})
        scores.append({**keys, "status": "pass" if passed else "fail", "score": 9.0 if passed else 3.0})
        assertions.append({"run_id": keys["run_id"], "scenario": scenario, "assertion": "payment_link_created",
                           "passed": passed, "message": "ok" if passed else "payment_link_created: got false"})
        turns.append({**keys, "turn": 1, "check_failures": failures, "sample": 0})
    return RunFrames.from_frames({"runs": typed_frame(runs, RUN_SCHEMA), "scores": typed_frame(scores, SCORE_SCHEMA),
                                  "assertions": typed_frame(assertions, ASSERTION_SCHEMA),
                                  "turns": typed_frame(turns, TURN_SCHEMA)})


def test_a_flip_in_a_conversational_pair_is_left_to_the_tests_not_a_fact():
    base = _frames("a", [("conv", "conversational", 1, True, [])])
    cand = _frames("b", [("conv", "conversational", 1, False, [])])
    result = compare(base, cand, n_boot=50)
    assert len(result.flips) == 1 and not result.flips["fact"].any()
    assert "conversational pair" in result.flips["why_not_fact"].iloc[0]
    assert result.verdict == NO_CHANGE  # one flip of a simulated conversation is a sample, not a fact
    assert any("1 other flip(s) of a deterministic check are not facts" in line for line in result.lines())


def test_a_check_a_side_gives_both_ways_on_the_same_script_is_not_a_fact():
    # The baseline's own two trials of the scripted scenario disagree: the agent is not deterministic there.
    base = _frames("a", [("s", "scripted", 1, True, []), ("s", "scripted", 2, False, [])])
    cand = _frames("b", [("s", "scripted", 1, False, []), ("s", "scripted", 2, False, [])])
    result = compare(base, cand, n_boot=50)
    flip = result.flips.iloc[0]
    assert not flip["fact"] and "the baseline's own runs of this scenario disagree" in flip["why_not_fact"]
    assert result.verdict == NO_CHANGE


def test_a_turn_check_flips_both_ways_named_by_its_expectation_not_by_what_was_seen():
    seen = "tools_called: expected create_payment_link, got [{}]"
    base = _frames("a", [("s1", "scripted", 1, True, [seen.format("list_invoices")]),
                         ("s2", "scripted", 1, True, [])])
    cand = _frames("b", [("s1", "scripted", 1, True, [seen.format("")]),  # still failing, other tools: no flip
                         ("s2", "scripted", 1, True, ["response_contains: missing 'pix'"])])
    result = compare(base, cand, n_boot=50)
    assert list(result.flips["check"]) == ["turn 1: response_contains: missing 'pix'"]
    assert result.verdict == REGRESSED
    found = result.regressions()
    assert list(found["kind"]) == ["turn check"] and found["fact"].all()
    assert "s2 seed 42 trial 1" in found["detail"].iloc[0]
    fixed = compare(cand, base, n_boot=50)
    assert fixed.verdict == IMPROVED and list(fixed.improvements()["kind"]) == ["turn check"]


def test_no_warning_when_the_baseline_has_enough_seeds_and_one_when_it_has_one():
    many = load_side(RunFrames.from_frames({"runs": typed_frame(
        [{"run_id": f"r{s}", "scenario": "s", "seed": s, "trial": 1, "type": "scripted"} for s in range(6)],
        RUN_SCHEMA)}))
    one = load_side(RunFrames.from_frames({"runs": typed_frame(
        [{"run_id": "r", "scenario": "s", "seed": 7, "trial": 1, "type": "scripted"}], RUN_SCHEMA)}))
    assert few_seeds_warning(many) is None
    warning = few_seeds_warning(one)
    assert warning is not None and warning.startswith("the baseline ran one seed (7)")
    # Frames in memory record no command, so the warning says what to do without inventing one.
    assert "convoeval run" not in warning and "run the baseline again with --seed 1,2,3,4,5,6 first" in warning



def test_a_rerun_command_keeps_the_recorded_settings_and_runs_only_what_the_comparison_compares(tmp_path):
    side = Side("example", RunFrames.from_frames({"runs": typed_frame(
        [{"run_id": "r", "scenario": "s", "seed": 42, "trial": 1, "type": "scripted"}], RUN_SCHEMA)}),
        folders=[tmp_path / "example"], meta={"config": {"agent": "billing", "type": None, "trials": 2,
                                                         "judge_model": {"model": "m", "temperature": 0},
                                                         "target": "clinic:billing", "simulator_gate": False}})
    command, folder = rerun_command(side, next_seeds(side), scope={"type": "scripted"})
    assert next_seeds(side) == [1, 2, 3]  # two trials each: three seeds give a scenario six pairs
    assert command == (f"convoeval run --type scripted --trials 2 --target clinic:billing --judge-model "
                       f"""'{{"model": "m", "temperature": 0}}' --no-simulator-gate --seed 1,2,3 --out {folder}""")
    assert folder.endswith("example-s1-3")
