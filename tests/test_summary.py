"""The console summary, the analyst's failure table, the JSON report and `convoeval run` end to end (fake models)."""

from __future__ import annotations

import json

import pytest

from convoeval import load_results
from convoeval.pipeline import plan
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.pipeline.summary import failures_frame, save_json_report, summary_lines
from convoeval.scenarios import load_scenarios
from convoeval.store import open_store
from convoeval.testing import FakeChatModel

HOLISTIC = {"issues": ["invented a link"],
            "scores": {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 9,
                       "goal_completion": 9},
            "suggestion": "Create the link with the tool"}


def judge_reply(n_criteria: int):
    def reply(messages, kwargs):
        tool = (kwargs.get("tools") or [{}])[0].get("function", {}).get("name", "")
        if "Rubric" in tool:
            return {"verdicts": [{"index": i + 1, "evidence": f"Turn {i + 1}", "reasoning": "seen", "passed": True}
                                 for i in range(n_criteria)]}
        return HOLISTIC
    return reply


def patient(messages, kwargs):
    # Pays by Pix, confirms, then ends: enough for the healthy billing agent to create the link.
    said = sum(1 for m in messages if m.type == "ai") if messages else 0
    text = "\n".join(str(m.content) for m in messages)
    if "https://" in text:
        return "Obrigada! [GOAL_COMPLETE]"
    return ["Oi, quero pagar minha fatura", "Pix", "Sim"][min(said, 2)]


@pytest.fixture
def frames(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    sc = load_scenarios(scenario="billing-conv-happy-payment")[0]
    out = tmp_path / "out"

    async def run(target):
        with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
            opts = RunOptions(target=target, simulator_model=FakeChatModel(responder=patient),
                              judge_model=FakeChatModel(responder=judge_reply(len(sc.criteria))), store=store)
            await arun_batch(plan([sc], seeds=[1] if target == "clinic:billing" else [2]), options=opts,
                             out_dir=out, progress=False)

    return run, out


async def test_summary_shows_components_and_the_fault_in_the_assertion_column(frames):
    run, out = frames
    await run("clinic:billing")
    await run("clinic:billing?faults=invented_payment_url")
    data = load_results(out).frames
    lines = summary_lines(data, fail_threshold=8)
    # RUBRIC and ASSERTS PASSED both read passed/checked, as in the report's score table ("Assertions passed").
    assert lines[0].split()[:8] == ["STATUS", "SCORE", "RUBRIC", "HOLIST", "ASSERTS", "PASSED", "GOAL", "MSGS"]
    healthy = next(line for line in lines if "seed 1," in line)
    faulty = next(line for line in lines if "seed 2," in line)
    # 5 assertions: payment_link_created and the scenario's 4 path assertions (2 of which the invented URL breaks).
    assert healthy.split()[:5] == ["PASS", "9.2", "4/4", "9.2", "5/5"], healthy
    assert faulty.split()[:5] == ["FAIL", "4.7", "4/4", "9.2", "2/5"], faulty  # each failed assertion costs 1.5
    # Each value sits under its header.
    for line in (healthy, faulty):
        assert line[lines[0].index("PASSED") + len("PASSED") - 3:][:3] in ("5/5", "2/5"), (lines[0], line)
    assert "payment_link_created: expected true, got false" in faulty.lower()
    assert lines[-2].startswith("2 run(s): 1 pass, 0 warn, 1 fail, 0 error")
    assert lines[-1] == "1 run(s) below the fail threshold 8 or in error"

    failures = failures_frame(data)
    row = failures[(failures["kind"] == "assertion") & (failures["item"] == "payment_link_created")].iloc[0]
    assert row["runs"] == 1 and row["suggestions"] == ["Create the link with the tool"]

    path = save_json_report(data, out / "report.json", meta={"agent": "billing"})
    report = json.loads(path.read_text(encoding="utf-8"))
    assert {r["score"]["status"] for r in report["runs"]} == {"pass", "fail"}
    assert all(r["transcripts"] and r["assertions"] for r in report["runs"])


def test_first_failures_names_each_runs_first_problem_in_reading_order():
    from convoeval.frames import (
        ASSERTION_SCHEMA,
        RUBRIC_SCHEMA,
        SCORE_SCHEMA,
        TURN_SCHEMA,
        RunFrames,
        typed_frame,
    )
    from convoeval.pipeline.summary import first_failure, first_failures

    frames = RunFrames.from_frames({
        "scores": typed_frame([{"run_id": r, "error": "agent error: boom" if r == "e" else None}
                               for r in ("e", "a", "c", "t", "ok")], SCORE_SCHEMA),
        "assertions": typed_frame([
            {"run_id": "e", "passed": False, "message": "not this: the error comes first"},
            {"run_id": "a", "passed": True, "message": "passed"},
            {"run_id": "a", "passed": False, "message": "invoice_status: expected paid, got pending"},
            {"run_id": "a", "passed": False, "message": "a later one"},
        ], ASSERTION_SCHEMA),
        "rubric": typed_frame([
            {"run_id": "a", "criterion": "not this: the assertion comes first", "passed": False},
            {"run_id": "c", "criterion": "Asks the payment method", "passed": False},
        ], RUBRIC_SCHEMA),
        "turns": typed_frame([
            {"run_id": "t", "turn": 1, "check_failures": []},
            {"run_id": "t", "turn": 2, "check_failures": ["expected tool lookup_invoice"]},
        ], TURN_SCHEMA),
    })
    assert first_failures(frames) == {
        "e": "agent error: boom",
        "a": "invoice_status: expected paid, got pending",
        "c": "criterion failed: Asks the payment method",
        "t": "turn 2: expected tool lookup_invoice",
    }
    assert first_failure("ok", frames) == "score below threshold"
