"""The labelling workflow without a browser: which conversations are chosen, what the page holds, the import check."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from convoeval.cli import main
from convoeval.labelling import (
    LabelImportError,
    LabelPageError,
    check_labels,
    choose_conversations,
    conversation_priority,
    import_labels,
    label_page_html,
    load_folder,
    page_data,
)
from convoeval.pipeline import EvalConfig, run_eval
from tests.compare_support import env, fake_models, seeds  # noqa: F401 - env is a fixture
from tests.label_support import XSS, labelled_run


@pytest.fixture
def run(tmp_path):
    return labelled_run(tmp_path / "run", n=6)


def test_priority_is_the_judge_samples_disagreement(run):
    priority = conversation_priority(load_folder(run)).set_index("run_id")
    # conversation i's two samples disagree on i of its 10 criteria: each such criterion counts 4 * 0.5 * 0.5 = 1
    assert priority.loc["run-03", "disagreement"] == pytest.approx(0.3)
    assert priority.loc["run-00", "disagreement"] == 0
    assert (priority["near_threshold"] == 0).all()  # holistic 9.5 is 2.5 points from 7: outside the band


def test_a_score_near_a_threshold_counts_and_an_unanswered_criterion_is_uncertain(run):
    frames = load_folder(run)
    frames.holistic.loc[frames.holistic["run_id"] == "run-00", "overall"] = 6.5  # 0.5 from 7
    frames.rubric.loc[(frames.rubric["run_id"] == "run-01") & (frames.rubric["criterion_index"] == 9),
                         "passed"] = pd.NA  # both samples errored on criterion 9
    priority = conversation_priority(frames).set_index("run_id")
    assert priority.loc["run-00", "near_threshold"] == pytest.approx(0.75)
    assert priority.loc["run-00", "informativeness"] == pytest.approx(0.375)
    assert priority.loc["run-01", "disagreement"] == pytest.approx(0.2)  # criterion 0 split, criterion 9 unanswered


def test_the_most_informative_first_and_strata_take_turns(run):
    chosen = choose_conversations(load_folder(run), sample=4, stratify="scenario")
    assert list(chosen["run_id"]) == ["run-05", "run-04", "run-03", "run-02"]
    assert list(chosen["stratum"]) == ["billing-b", "billing-a", "billing-b", "billing-a"]
    assert list(chosen["conversation"])[:1] == ["billing-b/45/0"]


def test_balanced_when_one_stratum_is_far_more_informative(tmp_path):
    frames = load_folder(labelled_run(tmp_path / "r", n=8, scenarios=("a", "a", "a", "b")))
    chosen = choose_conversations(frames, sample=4, stratify="scenario")
    # b holds run-03 and run-07 only; without strata the top 4 would be runs 7, 6, 5, 4 (three of a)
    assert sorted(chosen["stratum"].value_counts().to_dict().items()) == [("a", 2), ("b", 2)]
    assert set(chosen["run_id"]) == {"run-07", "run-06", "run-03", "run-05"}


def test_stratify_by_status_uses_the_score_status(tmp_path):
    run = labelled_run(tmp_path / "r", n=4, scenarios=("a",))
    frames = load_folder(run)
    frames.scores["status"] = ["pass", "warn", "fail", "warn"]
    chosen = choose_conversations(frames, sample=3, stratify="status")
    assert list(chosen["stratum"]) == ["warn", "fail", "pass"]  # run-03 (warn) is the most informative


def test_random_sample_is_seeded_and_differs_from_the_ranked_one(tmp_path):
    frames = load_folder(labelled_run(tmp_path / "r", n=12, scenarios=("a",)))
    one = choose_conversations(frames, sample=5, random=True, seed=3)
    again = choose_conversations(frames, sample=5, random=True, seed=3)
    other = choose_conversations(frames, sample=5, random=True, seed=4)
    assert list(one["run_id"]) == list(again["run_id"])
    assert list(one["run_id"]) != list(other["run_id"])
    assert (one["method"] == "random").all()


def test_bad_requests_name_the_problem(run):
    frames = load_folder(run)
    with pytest.raises(LabelPageError, match="--stratify 'nope': no such column; choose one of .*scenario"):
        choose_conversations(frames, stratify="nope")
    with pytest.raises(LabelPageError, match="--sample must be at least 1"):
        choose_conversations(frames, sample=0)
    with pytest.raises(LabelPageError, match="holds no finished conversation"):
        load_folder(run / "runs")


def test_page_is_self_contained_and_cannot_be_broken_by_the_transcript(tmp_path):
    run = labelled_run(tmp_path / "run", n=2, agent_text=XSS + "</script><!--")
    frames = load_folder(run)
    html = label_page_html(page_data(frames, choose_conversations(frames, sample=2), source="run"))
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched: works offline
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src &#x27;none&#x27;" in csp and "unsafe-inline" not in csp
    data = json.loads(re.search(r'<script type="application/json" id="label-data">(.*?)</script>', html,
                                re.S).group(1))
    agent = data["conversations"][0]["messages"][1]
    assert agent["bubbles"][0] == XSS + "</script><!--"  # the text survives intact, as data
    assert agent["tools"][0]["name"] == "list_invoices"
    assert [c["index"] for c in data["conversations"][0]["criteria"]] == list(range(10))


def test_page_id_follows_the_selection(run):
    frames = load_folder(run)
    a = page_data(frames, choose_conversations(frames, sample=3), source="run")
    b = page_data(frames, choose_conversations(frames, sample=3), source="run")
    c = page_data(frames, choose_conversations(frames, sample=4), source="run")
    assert a["id"] == b["id"] != c["id"]


def test_duplicate_criterion_text_is_exported_by_index(tmp_path):
    run = labelled_run(tmp_path / "run", n=1, criteria=2)
    frames = load_folder(run)
    frames.rubric["criterion"] = "same text"
    data = page_data(frames, choose_conversations(frames, sample=1), source="run")
    assert [c["csv"] for c in data["conversations"][0]["criteria"]] == ["0", "1"]


def test_a_criterion_a_spreadsheet_would_run_as_a_formula_is_exported_by_index(tmp_path):
    run = labelled_run(tmp_path / "run", n=1, criteria=2)
    frames = load_folder(run)
    frames.rubric["criterion"] = frames.rubric["criterion_index"].map({0: "- greets the patient", 1: "plain"})
    data = page_data(frames, choose_conversations(frames, sample=1), source="run")
    assert [c["csv"] for c in data["conversations"][0]["criteria"]] == ["0", "plain"]  # the export prefixes a '


def test_the_page_says_how_the_simulated_patient_broke(tmp_path):
    run = labelled_run(tmp_path / "run", n=2)
    frames = load_folder(run)
    frames.runs.loc[frames.runs["run_id"] == "run-00", ["simulator_failure", "simulator_failure_turn",
                                                        "simulator_failure_detail"]] = ["loop", 3, "repeats itself"]
    data = page_data(frames, choose_conversations(frames, sample=2), source="run")
    patient = {c["id"]: c["patient"] for c in data["conversations"]}
    assert patient["run-00"] == ["stopped by the simulator-failure gate (loop at turn 3): repeats itself"]
    assert patient["run-01"] == []  # a faithful patient: nothing to say


def _write(path, rows):
    path.write_text("conversation,criterion,label,rater,note\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_import_check_reports_every_bad_line(run, tmp_path):
    crit = '"Criterion 1: the agent said ""R$ 150,00"" <b>1</b>"'
    labels = _write(tmp_path / "labels.csv", [
        f"run-01,{crit},pass,ana,",
        "run-01,3,maybe,ana,",          # line 3: not a label
        "run-99,0,pass,ana,",           # line 4: not in this run
        "run-01,42,fail,ana,",          # line 5: no such criterion
        "run-01,0,unsure,,",            # line 6: no rater
        "run-02,0,fail,ana,fine",
        "billing-b/41/0,2,pass,ana,",   # the short key of run-01: fine
        "billing-b/41/0,11,pass,ana,",  # line 9: but not this criterion
    ])
    check = check_labels(labels, load_folder(run))
    assert [int(re.search(r"line (\d+)", e).group(1)) for e in check.errors] == [3, 4, 5, 6, 9]
    assert "label must be pass, fail or unsure" in check.errors[0] and str(labels) in check.errors[0]
    assert "'run-99' is not in this run" in check.errors[1]
    assert "no criterion_index 42" in check.errors[2]
    assert "empty rater" in check.errors[3]
    with pytest.raises(LabelImportError) as caught:
        import_labels(labels, run, dest=tmp_path / "labels-dir")
    assert len(caught.value.check.errors) == 5 and not (tmp_path / "labels-dir").exists()


def test_an_empty_export_is_refused(run, tmp_path):
    check = check_labels(_write(tmp_path / "empty.csv", []), load_folder(run))
    assert check.errors == [f"{tmp_path / 'empty.csv'}: no labels (a header only): label at least one criterion "
                            "before exporting"]


def test_import_copies_a_clean_file_and_refuses_a_clash(run, tmp_path):
    labels = _write(tmp_path / "ana.csv", ["run-01,0,pass,ana,", "run-01,1,unsure,ana,why not", "run-02,0,fail,ana,"])
    check, target = import_labels(labels, run, dest=tmp_path / "labels")
    assert check.ok and target == tmp_path / "labels" / "ana.csv" and target.read_text() == labels.read_text()
    assert len(check.ratings) == 2 and check.summary().endswith("(2 pass/fail, 1 unsure) by ana; 0 errors")
    again = _write(tmp_path / "ana2.csv", ["run-01,0,fail,ana,"])
    with pytest.raises(LabelPageError, match="clashes with the labels in .*labelled conversation 'run-01'"):
        import_labels(again, run, dest=tmp_path / "labels")
    with pytest.raises(LabelPageError, match="exists"):
        import_labels(labels, run, dest=tmp_path / "labels")


def test_cli_writes_the_page_and_imports(run, tmp_path, capsys):
    page = tmp_path / "page.html"
    assert main(["label", str(run), "--sample", "3", "--stratify", "scenario", "--out", str(page)]) == 0
    out = capsys.readouterr().out
    assert "3 conversation(s), 30 criteria to label (most informative; by scenario: billing-a 1, billing-b 2)" in out
    assert page.exists() and "label-data" in page.read_text()
    good = _write(tmp_path / "l.csv", ["run-05,0,pass,ana,"])
    assert main(["label", "import", str(good), str(run), "--out", str(tmp_path / "lab")]) == 0
    assert "0 errors" in capsys.readouterr().out
    bad = _write(tmp_path / "b.csv", ["run-05,0,pass,ana,", "run-05,0,nah,ana,"])
    assert main(["label", "import", str(bad), str(run), "--out", str(tmp_path / "lab2")]) == 1
    err = capsys.readouterr().err
    assert f"error: {bad}, line 3: label must be pass" in err and "1 error(s)" in err


def test_cli_usage_errors_are_one_line(run, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["label", str(run), "--stratify", "colour"])
    assert stop.value.code == 2 and "--stratify 'colour'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["label", "import", "only-one.csv"])
    assert "usage: convoeval label import LABELS.csv RESULTS" in capsys.readouterr().err


def test_from_a_real_run_the_page_holds_the_scenario_criteria_and_ranks_by_disagreement(env, monkeypatch, tmp_path):
    """A pipeline run (fake simulator, a noisy judge sampled 3 times) into a page and a label file that imports."""
    with fake_models(monkeypatch, noisy=True, seed=1):
        config = EvalConfig.checked({"agent": "billing", "type": "conversational", "judge_samples": 3},
                                    seed=seeds(2), output_dir=str(tmp_path / "run"))
        run_eval(config, progress="off")
    frames = load_folder(tmp_path / "run")
    priority = conversation_priority(frames)
    chosen = choose_conversations(frames, sample=3)
    assert list(chosen["informativeness"]) == sorted(priority["informativeness"], reverse=True)[:3]
    assert priority["disagreement"].max() > 0  # the noisy judge's samples do disagree somewhere
    data = page_data(frames, chosen, source="run")
    texts = {c["text"] for conv in data["conversations"] for c in conv["criteria"]}
    assert "Agent offered Pix and boleto as payment options" in texts
    first = data["conversations"][0]
    assert [m["role"] for m in first["messages"]][:2] == ["patient", "agent"]
    rows = [f'{first["id"]},"{c["csv"]}",pass,ana,' for c in first["criteria"]]
    labels = _write(tmp_path / "real.csv", rows)
    assert check_labels(labels, frames).errors == []


def test_a_file_without_the_required_columns_is_one_error_on_line_1(run, tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("conversation,criterion,verdict\nrun-01,0,pass\n", encoding="utf-8")
    check = check_labels(path, load_folder(run))
    assert len(check.errors) == 1 and check.errors[0].startswith(f"{path}, line 1: missing column(s) ['label', 'rater']")
