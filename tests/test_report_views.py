"""The report's pieces on synthetic runs: escaping, chat bubbles, chips, score table, plots, errors, the HTML page."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from report_support import SCRIPT, conversation, merge, run_data, text_icons, write_run_folder

from convoeval import load_results, report
from convoeval.report import LOCAL_DEMO_WARNING


@pytest.fixture
def mixed_run(tmp_path):
    """A pass, a fail with a hostile agent reply, an error (judge failed), and a scripted run."""
    rows = merge(
        conversation("r1", status="pass", score=8.5, rubric=[True, True]),
        conversation("r2", "billing-conv-impatient-patient", status="fail", score=3.0, agent_text=SCRIPT,
                     assertion_ok=False, rubric=[False, True]),
        conversation("r3", "billing-conv-confused-patient", status="error", score=None, rubric=[True, None],
                     error=f"rubric judge: criterion 2 missing {SCRIPT}", holistic=None),
        conversation("r4", "billing-scripted-pix-en", status="warn", score=6.0, scripted=True, rubric=[]),
    )
    rows["calls"].append({"role": "judge", "provider": "local", "model": "qwen",
                          "scenario": "billing-conv-confused-patient", "seed": 42, "trial": 1, "turn": None,
                          "cache_hit": False, "is_local_demo": True,
                          "error": "LLMCallError: timed out after 3 attempts"})
    meta = {"convoeval_version": "0.1.0", "local_demo": True, "started_at": "2026-01-01T10:00:00", "duration_s": 12.5,
            "config": {"agent": "billing", "seeds": [42], "trials": 1, "judge_samples": 1},
            "models": {"simulator": {"provider": "local", "model": "qwen", "base_url": None, "local_demo": True},
                       "judge": {"provider": "local", "model": "qwen", "base_url": None, "local_demo": True}}}
    return run_data(rows, tmp_path / "run", meta)


def _html(value) -> str:
    return value.to_html() if hasattr(value, "to_html") else str(value)


def test_untrusted_text_is_escaped_everywhere(mixed_run):
    pieces = [report.what_ran(mixed_run), report.score_table(mixed_run), report.transcripts(mixed_run),
              report.failures(mixed_run), report.errors(mixed_run)]
    for piece in pieces:
        assert "<script" not in _html(piece).lower()
    page = report.render_html(mixed_run)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in str(report.transcripts(mixed_run))
    assert "&lt;b&gt;bold&lt;/b&gt;" in str(report.transcripts(mixed_run))  # tool results too


def test_transcripts_are_collapsible_chats_with_bubbles_and_chips(mixed_run):
    html = str(report.transcripts(mixed_run))
    assert html.count("<details style=\"margin:6px 0") == 4  # one collapsible block per conversation
    assert " open" not in html.split(">", 3)[2]  # collapsed by default
    # patient left, agent right; the agent's two WhatsApp messages are two bubbles
    assert html.count("align-items:flex-start") == 8 and html.count("align-items:flex-end") == 4
    assert html.count("Prefere Pix ou boleto?") == 4
    shown = text_icons(html)  # icons are inline SVG (no emoji font needed), named here
    assert "[tool] list_invoices" in shown and "[stop] GOAL_COMPLETE" in shown
    assert "[cross] response_contains: missing &#x27;Pix&#x27;" in shown  # scripted turn check shown under the reply
    opened = str(report.transcripts(mixed_run, status="fail", open=True))
    assert opened.count("<details open") == 1 and "billing-conv-impatient-patient" in opened


def test_score_table_is_a_styler_with_components_and_status_colours(mixed_run):
    styler = report.score_table(mixed_run)
    assert isinstance(styler, pd.io.formats.style.Styler)
    frame = report.score_table_data(mixed_run)
    assert list(frame["Status"]) == ["error", "pass", "fail", "warn"]  # sorted by scenario
    row = frame.set_index("Scenario").loc["billing-conv-impatient-patient"]
    assert row["Rubric"] == "1/2" and row["Assertions passed"] == "0/1" and row["Goal"] == "no"
    assert frame.set_index("Scenario").loc["billing-conv-happy-payment", "Assertions passed"] == "1/1"
    html = styler.to_html()
    assert "background-color:#ffdcd7" in html.replace(": ", ":")  # fail colour
    assert "—" in html  # the errored run has no score, shown as a dash rather than 0


def _score_cells(page: str) -> dict[str, list[str]]:
    """The score table's cells by column name, read from HTML (the Styler's table, in a notebook or a page)."""
    table = re.search(r"<table id=\"T_\w+\">.*?</table>", page, re.S).group(0)
    header = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th [^>]*col_heading[^>]*>(.*?)</th>", table)]
    rows = [re.findall(r"<td [^>]*>(.*?)</td>", r, re.S) for r in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]
    return {name: [row[i].strip() for row in rows] for i, name in enumerate(header)}


def test_scores_show_one_decimal_in_the_table_and_on_the_page(mixed_run, tmp_path):
    # Whole numbers and halves alike: 10.0 and 6.5, never 10.000000 (a second Styler.format once reset the first).
    mixed_run.frames.scores.loc[0, ["score", "rubric_score", "holistic_overall"]] = [10.0, 6.5, 2 / 3 * 10]
    page = str(report.save_html(mixed_run, tmp_path / "page.html").text)
    for html in (report.score_table(mixed_run).to_html(), Path(page).read_text(encoding="utf-8")):
        cells = _score_cells(html)
        numbers = [v for column in ("Score", "Rubric score", "Holistic") for v in cells[column]]
        assert numbers and all(re.fullmatch(r"\d+\.\d|—", v) for v in numbers), numbers
        assert {"10.0", "6.5", "6.7"} <= set(numbers)
        assert all(re.fullmatch(r"\d+|—", v) for c in ("Seed", "Trial", "Messages") for v in cells[c])
        assert "1/1" in cells["Assertions passed"]


def test_the_committed_example_page_shows_one_decimal_and_assertions_passed():
    # Rebuilt from its saved data with: python -m convoeval.report reports/example
    page = (Path(__file__).resolve().parents[1] / "reports" / "example" / "report.html").read_text(encoding="utf-8")
    cells = _score_cells(page)
    numbers = [v for column in ("Score", "Rubric score", "Holistic") for v in cells[column]]
    assert len(numbers) == 18 and all(re.fullmatch(r"\d+\.\d|—", v) for v in numbers), numbers
    assert numbers.count("—") == 9  # the three conversational runs ended simulator_failure: nothing scored
    # human-pt: the 0.5B turn judge scored one turn low (6.6), every assertion passed
    assert cells["Status"] == ["simulator_failure"] * 3 + ["pass", "warn", "pass"]
    assert cells["Assertions passed"] == ["0/2", "0/1", "0/1", "5/5", "4/4", "5/5"]


def test_what_ran_warns_about_the_local_demo_model_and_points_to_errors(mixed_run):
    html = str(report.what_ran(mixed_run))
    assert LOCAL_DEMO_WARNING.split(".")[0] in html
    assert "(local demo model)" in html
    assert "error(s)" in html and "cache hits 4 of 5" in html
    usage = report.usage_frame(mixed_run)
    assert usage["calls"].sum() == 5 and usage["errors"].sum() == 1


def test_what_ran_without_local_model_has_no_warning_and_says_unknown_cost(mixed_run):
    judge = {"provider": "openai", "model": "gpt-x", "local_demo": False}
    mixed_run.meta.update(local_demo=False, models={"judge": judge})
    mixed_run.frames = mixed_run.frames.replace(calls=pd.DataFrame([{
        "role": "judge", "provider": "openai", "model": "gpt-x", "scenario": "s", "cache_hit": False, "cost_usd": None,
        "prompt_tokens": 10, "completion_tokens": 2, "is_local_demo": False, "error": None}]))
    html = str(report.what_ran(mixed_run))
    assert LOCAL_DEMO_WARNING.split(".")[0] not in html
    assert "unknown for gpt-x" in html


def test_errors_list_every_judge_agent_and_llm_error(mixed_run):
    frame = report.errors_frame(mixed_run)
    kinds = sorted(frame["kind"])
    assert kinds == ["LLM call", "conversation", "holistic judge", "rubric judge"]
    assert frame.loc[frame["kind"] == "rubric judge", "where"].iloc[0].startswith("criterion 2")
    html = str(report.errors(mixed_run))
    assert "#cf222e" in html and "4 error(s)" in html and "timed out after 3 attempts" in html


def test_no_errors_and_no_failures_say_so(tmp_path):
    clean = run_data(conversation("r1", rubric=[True]), tmp_path)
    assert report.errors_frame(clean).empty
    assert "No errors" in str(report.errors(clean))
    assert "No failures" in str(report.failures(clean))


def test_failures_show_evidence_and_suggestions(mixed_run):
    html = str(report.failures(mixed_run))
    assert "payment_link_created: expected true, got false" in html
    assert "be brief" in html  # the holistic judge's suggestion travels with the failure


def test_plots_are_png_charts_and_empty_data_gives_a_note(mixed_run, tmp_path):
    for plot in (report.plot_components, report.plot_criteria, report.plot_holistic):
        chart = plot(mixed_run)
        assert isinstance(chart, report.Chart)
        assert chart._repr_png_().startswith(b"\x89PNG")
    rates = report.criteria_frame(mixed_run).set_index(["scenario", "criterion_index"])
    assert rates.loc[("billing-conv-impatient-patient", 0), "pass_rate"] == 0.0
    assert rates.loc[("billing-conv-confused-patient", 1), "judged"] == 0  # a judge error is not a verdict
    scripted_only = run_data(conversation("r9", scripted=True, rubric=[]), tmp_path)
    assert isinstance(report.plot_criteria(scripted_only), report.HTML)
    assert report.holistic_frame(scripted_only).loc["billing-conv-happy-payment", "tone"] == 6.0


def test_save_html_writes_one_self_contained_page(mixed_run):
    link = report.save_html(mixed_run)
    page = (mixed_run.out_dir / "report.html").read_text(encoding="utf-8")
    headings = re.findall(r"<h2[^>]*>([^<]+)</h2>", page)
    assert headings == ["What ran", "Scores", "Plots", "Transcripts", "Failures", "Judges against the database",
                        "Simulated patient&#x27;s fidelity", "Errors"]
    assert page.count("data:image/png;base64,") == 3
    assert "<link" not in page and "src=\"http" not in page  # nothing external
    assert "report.html" in str(link)


def test_load_results_reads_a_saved_folder(tmp_path):
    folder = write_run_folder(tmp_path / "saved", merge(conversation("a1"), conversation("a2", seed=7)),
                              meta={"local_demo": True})
    run = load_results(folder)
    assert sorted(run.scores["seed"]) == [7, 42]
    assert run.meta == {"local_demo": True} and len(run.frames.calls) == 2
    with pytest.raises(FileNotFoundError, match="no finished conversation"):
        load_results(tmp_path / "empty")


def _with_assertion(rows, criterion_index: int, assertion: str):
    for r in rows["rubric"]:
        if r["criterion_index"] == criterion_index:
            r["assertion"] = assertion
    return rows


def test_database_truth_scores_the_rubric_judge_against_the_database(tmp_path):
    # Criterion 0 declares payment_link_created. r1: judge pass, database pass (right); r2: judge pass, database
    # fail (wrong); r3: judge fail, database fail (right). So sensitivity 1/1, specificity 1/2, agreement 2/3.
    rows = _with_assertion(merge(
        conversation("r1", rubric=[True, True], assertion_ok=True),
        conversation("r2", rubric=[True, False], assertion_ok=False),
        conversation("r3", rubric=[False, False], assertion_ok=False),
    ), 0, "payment_link_created")
    run = run_data(rows, tmp_path / "run")
    frame = report.database_truth_frame(run)
    rubric = frame[(frame["instrument"] == "rubric") & (frame["criterion"] == "criterion 0 <i>")]
    values = rubric.set_index("statistic")["value"]
    assert values["percent_agreement"] == pytest.approx(2 / 3)
    assert values["sensitivity"] == pytest.approx(1.0)
    assert values["specificity"] == pytest.approx(0.5)
    html = str(report.database_truth(run))
    assert "criterion 0 &lt;i&gt;" in html and "criterion 0 <i>" not in html  # judged text is escaped
    assert "0.67 [" in html  # agreement with its interval
    assert "Too few conversations" in html  # three conversations conclude nothing
    assert "goal_completion" in html  # the holistic judge's goal against the database too


def test_database_truth_without_declared_assertions_says_so(tmp_path):
    rows = merge(conversation("r1", scripted=True, rubric=[]))
    rows["assertions"] = []
    html = str(report.database_truth(run_data(rows, tmp_path / "run")))
    assert "No database truth in this run" in html


def test_fidelity_marks_a_parroting_patient_and_clears_a_faithful_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not inside the project: the run's recorded scenarios_dir is what finds them
    meta = {"config": {"scenarios_dir": str(Path(__file__).resolve().parents[1] / "evals" / "scenarios")}}
    echo = "Sua fatura de cento e cinquenta reais vence amanhã, prefere Pix ou boleto?"
    rows = merge(conversation("r1", agent_text=echo), conversation("r2", trial=2, agent_text=echo))
    parroting = next(r for r in rows["transcripts"] if r["run_id"] == "r1" and r["turn"] == 2)
    parroting["text"], parroting["bubbles"] = echo, [echo]
    html = str(report.fidelity(run_data(rows, tmp_path / "run", meta)))
    assert "1 of 2 conversation(s) flagged" in html and "parroting" in html
    flags = report.fidelity_frame(run_data(rows, tmp_path / "run", meta))
    from convoeval.fidelity import flagged_runs

    assert flagged_runs(flags) == ["r1"]  # r2's short patient lines copy nothing


def test_fidelity_without_the_scenarios_says_it_could_not_check(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = merge(conversation("r1"))
    html = str(report.fidelity(run_data(rows, tmp_path / "run", {"config": {"scenarios_dir": "nowhere"}})))
    assert "Fidelity not checked" in html and "nowhere" in html
