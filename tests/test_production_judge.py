"""`convoeval judge` on an imported folder: the rubric and holistic judges, scores and statuses as a run's, calls
accounted, resume, the report; and `label` and `compare` read the judged folder as a run's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_reliability_support import llm_responder

from convoeval import load_results
from convoeval.cli import main

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "production"


@pytest.fixture
def imported(tmp_path, fake_llm) -> Path:
    fake_llm.responder = llm_responder
    out = tmp_path / "imported"
    assert main(["import", str(SAMPLES / "whatsapp" / "android-pt-BR.txt"), str(SAMPLES / "table" / "messages-en.jsonl"),
                 "--agent-name", "Clínica Sorriso", "--agent", "billing", "--out", str(out)]) == 0
    return out


def test_judge_an_imported_folder_with_the_family_rubric(imported, fake_llm, capsys):
    assert main(["judge", str(imported), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "on 12 criteria (the billing scenarios' rubric" in said and "report: " in said
    result = load_results(imported)
    frames = result.frames
    n = len(frames.runs)
    assert n == 4 and set(frames.scores["status"]) <= {"pass", "warn", "fail"}
    assert len(frames.rubric) == 12 * n and len(frames.holistic) == n and frames.rubric["passed"].notna().all()
    assert set(frames.runs["source"]) == {"production"}
    judge_calls = frames.calls[frames.calls["role"] == "judge"]
    assert len(judge_calls) == 2 * n and judge_calls["prompt_tokens"].notna().all()  # accounted, per conversation
    assert (imported / "report.html").is_file() and result.meta["judged_with"]["criteria"][0]
    # Resumed: nothing is judged again.
    requests = len(fake_llm.requests)
    assert main(["judge", str(imported), "--no-progress"]) == 0
    assert len(fake_llm.requests) == requests


def test_criteria_from_a_file(imported, tmp_path, capsys):
    criteria = tmp_path / "criteria.yaml"
    criteria.write_text("goal: Pay the invoice or get the boleto\ncriteria:\n  - Agent answered in the patient's "
                        "language\n  - Agent never asked for a password\n", encoding="utf-8")
    assert main(["judge", str(imported), "--criteria", str(criteria), "--no-progress"]) == 0
    rubric = load_results(imported).frames.rubric
    assert set(rubric["criterion"]) == {"Agent answered in the patient's language", "Agent never asked for a password"}


def test_a_judge_that_cannot_answer_is_an_error_with_its_reason(imported, fake_llm):
    fake_llm.responder = lambda request: "this is not JSON at all"
    assert main(["judge", str(imported), "--no-progress"]) == 3
    scores = load_results(imported).frames.scores
    assert set(scores["status"]) == {"error"} and scores["error"].notna().all()


def test_a_hosted_judge_is_refused_on_an_unscrubbed_folder(tmp_path, fake_llm, capsys):
    out = tmp_path / "raw"
    assert main(["import", str(SAMPLES / "table" / "messages-es.csv"), "--no-scrub", "--out", str(out)]) == 0
    with pytest.raises(SystemExit) as stopped:
        main(["judge", str(out), "--no-progress", "--criteria", str(_criteria(tmp_path))])
    assert stopped.value.code == 2 and "--no-scrub and the judge is a hosted model" in capsys.readouterr().err
    assert main(["judge", str(out), "--no-progress", "--criteria", str(_criteria(tmp_path)), "--allow-unscrubbed"]) == 0


def test_an_unknown_family_asks_for_criteria(tmp_path, fake_llm, capsys):
    out = tmp_path / "prod"
    assert main(["import", str(SAMPLES / "table" / "messages-es.csv"), "--out", str(out)]) == 0
    with pytest.raises(SystemExit):
        main(["judge", str(out)])
    assert "family 'production' has no conversational scenario: give --criteria" in capsys.readouterr().err


def _criteria(tmp_path: Path) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps(["Agent was polite"]), encoding="utf-8")
    return path


def test_compare_this_week_with_last_week_and_production_with_a_simulated_run(imported, tmp_path, fake_llm, capsys):
    other = tmp_path / "last-week"
    assert main(["import", str(SAMPLES / "cloud-api" / "webhooks-pt-BR.jsonl"), "--agent", "billing",
                 "--out", str(other)]) == 0
    with pytest.raises(SystemExit):  # unjudged: nothing to compare yet, said in one line
        main(["compare", str(other), str(imported)])
    assert "has no judged conversation: judge it first" in capsys.readouterr().err
    assert main(["judge", str(imported), "--no-progress"]) == 0
    assert main(["judge", str(other), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(other), str(imported)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("last-week (2 judged conversation(s)) vs imported (4): independent samples")
    assert any(line.strip().startswith("pass rate") for line in said)
    assert any("criterion: Agent generated a payment link" in line for line in said)
    # Production against a simulated run of the same family (reports/example: the billing agent, judged).
    example = Path(__file__).resolve().parents[1] / "reports" / "example"
    assert main(["compare", str(example), str(imported)]) == 0
    said = capsys.readouterr().out
    assert "example (3 judged conversation(s)) vs imported (4)" in said
    # ... with the Sim2Real fidelity table, each measure with the setting that moves it, and its page.
    assert "patient messages per turn (bursts)" in said and "channel.bursts" in said
    assert "patient messages that are voice notes" in said and "channel.media with kind: audio" in said
    page = (imported / "sim2real.html").read_text(encoding="utf-8")
    assert "Sim2Real fidelity" in page and "data:image/png;base64" in page


def test_judge_on_local_dask_workers(imported, fake_llm):
    assert main(["judge", str(imported), "--no-progress", "--workers", "2"]) == 0
    frames = load_results(imported).frames
    assert len(frames.scores) == 4 and set(frames.scores["status"]) <= {"pass", "warn", "fail"}
    assert len(frames.calls[frames.calls["role"] == "judge"]) == 8  # the workers' calls came back with the payloads
