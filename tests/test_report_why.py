"""The run report's "why" matches its evidence (issue #39, item 3): a scripted warn names the per-turn judge's low
dimensions, sections say a conversation was not judged rather than blame the scenario, unscored conversations show
no green or red verdicts, scripted rows have no goal, and the next step is a command that can help."""

from __future__ import annotations

import re

from report_support import conversation, merge, run_data, text_icons

from convoeval import load_results, report

DEMO = {"simulator": {"provider": "local", "model": "qwen", "local_demo": True},
        "judge": {"provider": "local", "model": "qwen", "local_demo": True}}
REAL = {"simulator": {"provider": "openai", "model": "gpt-5-mini", "local_demo": False},
        "judge": {"provider": "openai", "model": "gpt-5-mini", "local_demo": False}}


def _scripted_warn(run_id: str = "s1") -> dict:
    """A scripted conversation that warns because one turn's correctness is 0 (its fixed checks all held)."""
    rows = conversation(run_id, "billing-scripted-human-pt", status="warn", score=6.6, scripted=True, rubric=[])
    keys = {k: rows["turns"][0][k] for k in ("run_id", "scenario", "agent", "seed", "trial")}
    dims = ("correctness", "helpfulness", "tone", "safety", "conciseness")
    rows["turns"] = [
        {**keys, "turn": 1, "check_failures": [], **dict.fromkeys(dims, 9.0), "overall": 9.0, "sample": 0,
         "issues": [], "suggestion": None},
        {**keys, "turn": 2, "check_failures": [], **dict(zip(dims, (0.0, 10.0, 5.0, 9.0, 8.0), strict=True)),
         "overall": 6.4, "sample": 0, "issues": ["the amount is wrong"], "suggestion": "check the invoice"},
    ]
    return rows


def _broken(run_id: str, scenario: str = "billing-conv-happy-payment", **kwargs) -> dict:
    """A conversational run the simulator-failure gate stopped: no judge ran, the database was still checked."""
    rows = conversation(run_id, scenario, status="simulator_failure", score=None, **kwargs)
    rows["runs"][0].update(status="simulator_failure", stop_reason="simulator_failure", simulator_failure="loop",
                           simulator_failure_turn=3, simulator_failure_detail="repeats itself", goal_completed=False)
    rows["scores"][0].update(rubric_score=None, rubric_passed=None, rubric_total=None, holistic_overall=None,
                             goal_completed=False)
    rows["rubric"], rows["holistic"] = [], []
    return rows


def test_a_scripted_warn_names_the_per_turn_judges_low_dimension_in_failures_and_transcript(tmp_path):
    run = run_data(merge(_scripted_warn()), tmp_path / "run")
    failures = str(report.failures(run))
    assert "No failures" not in failures and "held" not in failures
    assert "per-turn judge (&lt; 7)" in failures and "correctness" in failures
    assert "billing-scripted-human-pt, turn 2: correctness = 0.0; issues: the amount is wrong" in failures
    assert "check the invoice" in failures  # the per-turn judge's suggestion
    assert set(report.failures_table(run)["item"]) == {"correctness", "tone"}  # 0.0 and 5.0; 8, 9, 10 held
    transcript = text_icons(str(report.transcripts(run)))
    assert "Per-turn judge" in transcript and "turn 2: overall 6.4" in transcript
    assert re.search(r"<b[^>]*>correctness 0\.0</b>", transcript)  # the low dimension stands out


def test_the_no_failures_line_is_true_when_it_shows(tmp_path):
    clean = conversation("p1", "billing-scripted-pix-en", status="pass", score=9.0, scripted=True, rubric=[])
    clean["turns"][0].update(check_failures=[], **dict.fromkeys(("correctness", "helpfulness", "tone", "safety",
                                                                 "conciseness"), 9.0), overall=9.0)
    text = str(report.failures(run_data(merge(clean), tmp_path / "a")))
    assert "No failures in the 1 scored conversation(s)" in text and "per-turn judge dimension" in text
    nothing = str(report.failures(run_data(merge(_broken("b1")), tmp_path / "b")))
    assert "no conversation was scored (1 simulator_failure)" in nothing and "held" not in nothing


def test_judges_against_the_database_say_the_conversations_were_not_judged(tmp_path):
    run = run_data(merge(_broken("b1"), _scripted_warn()), tmp_path / "run")
    text = re.sub(r"<[^>]+>", "", str(report.database_truth(run)))
    assert "no rubric criterion" not in text
    assert "none of the 1 conversational conversation(s) was judged: 1 simulator_failure" in text
    assert "the 1 scripted one(s) are scored by fixed checks and the per-turn judge" in text
    assert "none of the 1 conversational" in str(report.plot_criteria(run))


def test_unscored_conversations_show_their_database_checks_in_grey(tmp_path):
    rows = merge(_broken("b1", assertion_ok=True), _broken("b2", "billing-conv-impatient-patient",
                                                              assertion_ok=False))
    html = str(report.transcripts(run_data(rows, tmp_path / "run")))
    assert html.count("Database assertions (not scored: the simulated patient broke") == 2
    assert "#1a7f37" not in html and "#cf222e" not in html  # neither the green check nor the red cross
    scored = str(report.transcripts(run_data(merge(conversation("p1")), tmp_path / "p")))
    assert "#1a7f37" in scored  # a scored conversation keeps its colours


def test_scripted_and_unscored_rows_have_no_goal(tmp_path):
    rows = merge(_scripted_warn(), _broken("b1"), conversation("c1", status="fail", score=3.0))
    frame = report.score_table_data(run_data(rows, tmp_path / "run")).set_index("Scenario")
    assert frame.loc["billing-scripted-human-pt", "Goal"] == "—"
    assert frame.loc["billing-conv-happy-payment"].set_index("Status").loc["simulator_failure", "Goal"] == "—"
    assert frame.loc["billing-conv-happy-payment"].set_index("Status").loc["fail", "Goal"] == "no"


def test_the_next_step_for_broken_patients_is_a_command_that_can_help(tmp_path):
    config = {"agent": "scheduling", "seed": [1, 2], "trials": 1, "type": "conversational"}
    demo = run_data(merge(_broken("b1")), tmp_path / "demo", {"config": config, "models": DEMO, "local_demo": True})
    text = str(report.what_ran(demo))
    assert "resimulate" not in text  # the README: re-simulating cannot help the demo patient
    assert ("convoeval run --agent scheduling --seed 1,2 --type conversational --simulator-model gpt-5-mini "
            "--out") in text
    real = run_data(merge(_broken("b1")), tmp_path / "real", {"config": config, "models": REAL})
    assert "--type conversational --out" in str(report.what_ran(real)) and "--resimulate 3</code>" in \
        str(report.what_ran(real))


def test_the_example_report_tells_the_truth_about_its_warn():
    run = load_results("reports/example")
    failures = str(report.failures(run))
    assert "billing-scripted-human-pt, turn 2: correctness = 0.0" in failures
    assert "convoeval.fidelity" not in str(report.fidelity(run))  # a command or a doc, never a Python name
    truth = str(report.database_truth(run))
    assert "none of the 3 conversational conversation(s) was judged: 3 simulator_failure" in truth
