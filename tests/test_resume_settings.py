"""A resumed run never keeps, silently, a conversation saved with other settings (issue #39 item 2).

Started again on a results folder, a run keeps the conversations already saved there. Before, it kept them whatever
they had been made with: a new judge model judged nothing, yet ``report.json`` recorded it as the run's judge. Now
each conversation is saved with what it was made with (``convoeval.pipeline.resume.RESUME_SETTINGS``) and a resumed
run that would keep one made otherwise is refused in one line naming the difference and the way out, before
anything is written. And the run's summary, data and ``report.json`` are the conversations it selected
(``--type``, ``--scenario``), not every conversation the folder holds.

Every model is the fake OpenAI-compatible server (``fake_llm``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from convoeval.cli import main
from convoeval.pipeline import ConfigError, EvalConfig, run_eval

ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = "billing-scripted-pix-en"
CONVERSATIONAL = "billing-conv-happy-payment"


def _run(out: Path, **settings):
    config = EvalConfig.checked({"agent": "billing", "output_dir": str(out), **settings})
    return run_eval(config, progress="off", allow_errors=True)


def _snapshot(out: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of the folder with its modification time and content: a refused run must change none."""
    return {str(p.relative_to(out)): (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def _refused(out: Path, **settings) -> str:
    before = _snapshot(out)
    with pytest.raises(ConfigError) as refused:
        _run(out, **settings)
    assert _snapshot(out) == before  # nothing lost, nothing rewritten
    message = str(refused.value)
    assert "\n" not in message
    assert "--no-resume" in message and "--out" in message  # the ways out
    return message


def test_the_settings_compared_are_declared_once():
    from convoeval.pipeline.resume import RESUME_SETTINGS

    assert RESUME_SETTINGS == ("simulator_model", "simulator", "judge_model", "judge_samples", "target",
                               "scenario_version")


def test_a_new_judge_model_is_refused_naming_both_judges(fake_llm, tmp_path):
    out = tmp_path / "out"
    _run(out, scenario=SCRIPTED)
    message = _refused(out, scenario=SCRIPTED, judge_model="judge-two")
    assert "judge_model" in message and "fake-model" in message and "judge-two" in message, message
    # The way out works: --no-resume runs it again with the new judge, and report.json says so truthfully.
    again = _run(out, scenario=SCRIPTED, judge_model="judge-two", resume=False)
    assert again.meta["models"]["judge"]["model"] == "judge-two" and again.meta["runs_now"] == 1
    saved = json.loads(next((out / "runs").glob("*.json")).read_text())
    assert saved["settings"]["judge_model"] == "openai-compatible/judge-two"


def test_the_same_settings_resume_as_before(fake_llm, tmp_path):
    out = tmp_path / "out"
    _run(out, scenario=SCRIPTED)
    again = _run(out, scenario=SCRIPTED)
    assert (again.meta["runs_now"], again.meta["runs_resumed"]) == (0, 1)


@pytest.mark.parametrize(("change", "named"), [
    ({"simulator_model": "patient-two"}, "simulator_model"),
    ({"simulator": "llm"}, "simulator"),
    ({"target": "clinic:billing?faults=invented_payment_url"}, "target"),
    ({"judge_samples": 2}, "judge_samples"),
])
def test_another_simulator_target_or_judging_is_refused(fake_llm, tmp_path, change, named):
    out = tmp_path / "out"
    _run(out, scenario=CONVERSATIONAL, simulator="agenda")
    message = _refused(out, scenario=CONVERSATIONAL, **{"simulator": "agenda", **change})
    assert f"{named}: " in message, message
    assert CONVERSATIONAL in message or "1 saved conversation" in message, message


def test_the_default_simulator_and_the_one_it_resolves_to_are_the_same_setting(fake_llm, tmp_path):
    """None means the LLM patient off the embedded model: saying so explicitly changes nothing, so it resumes."""
    out = tmp_path / "out"
    _run(out, scenario=CONVERSATIONAL)
    again = _run(out, scenario=CONVERSATIONAL, simulator="llm")
    assert again.meta["runs_resumed"] == 1


def test_a_scripted_conversation_does_not_depend_on_the_simulator(fake_llm, tmp_path):
    """A scripted scenario has no simulated patient: another simulator model is no reason to refuse it."""
    out = tmp_path / "out"
    _run(out, scenario=SCRIPTED)
    again = _run(out, scenario=SCRIPTED, simulator_model="patient-two", simulator="llm")
    assert again.meta["runs_resumed"] == 1


def test_a_changed_scenario_file_is_refused_naming_the_scenario(fake_llm, tmp_path):
    scenarios = tmp_path / "scenarios" / "billing"
    scenarios.mkdir(parents=True)
    source = ROOT / "evals" / "scenarios" / "billing" / "scripted-pix-en.yaml"
    shutil.copy(source, scenarios / source.name)
    out = tmp_path / "out"
    _run(out, scenario=SCRIPTED, scenarios_dir=str(tmp_path / "scenarios"))
    text = source.read_text(encoding="utf-8")
    changed = text.replace("description:", "description: (edited)", 1)
    assert changed != text
    (scenarios / source.name).write_text(changed, encoding="utf-8")
    message = _refused(out, scenario=SCRIPTED, scenarios_dir=str(tmp_path / "scenarios"))
    assert "scenario_version" in message and SCRIPTED in message, message


def test_a_conversation_saved_without_settings_is_not_kept_silently(fake_llm, tmp_path):
    """Saved by a convoeval that did not record settings: nothing says it matches, so it is refused too."""
    out = tmp_path / "out"
    _run(out, scenario=SCRIPTED)
    path = next((out / "runs").glob("*.json"))
    payload = json.loads(path.read_text())
    del payload["settings"]
    path.write_text(json.dumps(payload))
    message = _refused(out, scenario=SCRIPTED)
    assert "saved without its settings" in message, message


def test_convoeval_run_refuses_in_one_line_with_exit_2(fake_llm, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--scenario", SCRIPTED, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["run", "--scenario", SCRIPTED, "--out", str(out), "--no-progress", "--judge-model", "judge-two"])
    shown = capsys.readouterr()
    assert exited.value.code == 2
    lines = shown.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("convoeval: error: ") and "judge_model" in lines[0], shown.err
    assert shown.out == ""


def test_type_selects_the_summary_and_the_data_not_only_the_work(fake_llm, tmp_path):
    out = tmp_path / "out"
    _run(out, scenario=CONVERSATIONAL)
    scripted = _run(out, type="scripted")
    assert set(scripted.frames.scores["scenario"]) == {"billing-scripted-boleto-es", "billing-scripted-human-pt",
                                                       SCRIPTED}
    assert not [line for line in scripted.lines if CONVERSATIONAL in line]
    assert [line for line in scripted.lines if line.startswith("3 run(s): ")], scripted.lines
    report = json.loads((out / "report.json").read_text())
    assert {s["scenario"] for s in report["scores"]} == set(scripted.frames.scores["scenario"])
    # The conversation of the other selection is still saved in the folder: nothing lost.
    assert len(list((out / "runs").glob("*.json"))) == 4
