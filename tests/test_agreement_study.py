"""convoeval.agreement.study.compute_tables on studies that lack a kind of data: each missing table is empty; the
study's parameters checked into a ``StudyConfig``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from agreement_support import assertion_rows, holistic, rubric, runs

from convoeval.agreement.study import Study, compute_tables
from convoeval.agreement.study_params import StudyConfig, check_study_parameters
from convoeval.fidelity import FIDELITY_SCHEMA
from convoeval.frames import RunFrames, typed_frame
from convoeval.pipeline.config import ParameterError
from convoeval.stats import Estimation

PAIRS = ["probe", "run_id", "scenario", "instrument", "item", "before", "after", "error"]


def _study(judges: dict[str, list[bool]], n_runs: int, *, target: str = "clinic:billing") -> Study:
    """Saved runs (no fault study) re-judged by ``judges``; c1 declares the assertion a1, c2 none."""
    ids = [f"r{i}" for i in range(n_runs)]
    judged = rubric(judges, criteria=("c1", "c2"), assertions={"c1": "a1"}).rename(columns={"judge_model": "judge"})
    scores = holistic({j: [8.0] * n_runs for j in judges}).rename(columns={"judge_model": "judge"})
    frames = RunFrames.from_frames({"runs": runs(dict.fromkeys(ids, True)).assign(target=target),
                                    "assertions": assertion_rows([(r, "a1", i % 2 == 0) for i, r in enumerate(ids)])})
    flags = typed_frame([{"run_id": r, "scenario": "s", "check": "parroting", "flagged": False} for r in ids],
                        FIDELITY_SCHEMA)
    return Study(out_dir=Path("unused"), frames=frames,
                 judged={"rubric": judged, "holistic": scores, "fidelity": flags, "pairs": pd.DataFrame(columns=PAIRS)})


def test_saved_runs_without_known_faults_give_every_other_table_and_no_fault_tables():
    two = _study({"a": [True, False, True, True, False, True], "b": [True, True, True, False, False, True]}, 3)
    tables = compute_tables(two, estimation=Estimation(n_boot=100))
    assert tables["faults"].empty and tables["fault_confusion"].empty
    assert not tables["judges"].empty and not tables["scores"].empty and not tables["database"].empty
    assert tables["probes"].empty and "labels" not in tables


def test_one_judge_and_one_conversation_compute_without_a_crash():
    tables = compute_tables(_study({"a": [True, False]}, 1), estimation=Estimation(n_boot=100))
    assert "judges" not in tables and tables["faults"].empty
    assert set(tables["database"]["n"]) == {1}  # one conversation: a table, inconclusive
    assert tables["database"]["ci_too_wide"].all()


def test_a_saved_study_reads_back_with_missing_json_cells_as_none(tmp_path):
    from convoeval.agreement.study import _save, load_study

    study = _study({"a": [True, False]}, 1)
    study.out_dir = tmp_path
    study.frames.assertions["expected"] = pd.Series([{"status": "paid"}], dtype=object)
    study.frames.assertions["actual"] = pd.Series([None], dtype=object)  # e.g. no invoice found
    study.tables = compute_tables(study, estimation=Estimation(n_boot=100))
    _save(study)
    back = load_study(tmp_path)
    assert back.frames.assertions["expected"].tolist() == [{"status": "paid"}]
    assert back.frames.assertions["actual"].tolist() == [None]


def test_bland_altman_of_one_conversation_is_a_one_line_note_not_empty_panels():
    from convoeval.agreement.views import plot_bland_altman

    one = _study({"a": [True, False], "b": [True, True]}, 1)
    one.meta = {"judges": {"a": None, "b": None}}
    note = plot_bland_altman(one)
    assert note.text == "No Bland–Altman plot: it needs two or more conversations scored by both a and b (1 here)."
    three = _study({"a": [True, False] * 3, "b": [True, True] * 3}, 3)
    assert type(plot_bland_altman(three)).__name__ == "Chart"


def test_conversations_the_simulator_failure_gate_stopped_are_counted_apart_and_in_no_table():
    from convoeval.agreement.views import fidelity_view, study_overview

    study = _study({"a": [True, False] * 3, "b": [True, True] * 3}, 3)
    runs = study.frames.runs
    stopped = runs["run_id"] == "r2"
    study.frames = study.frames.replace(runs=runs.assign(
        status=runs["status"].where(~stopped, "simulator_failure"),
        simulator_failure=pd.Series(["parroting" if s else None for s in stopped]),
        simulator_failure_turn=pd.Series([3 if s else None for s in stopped]),
        simulator_failure_detail=pd.Series(["turns 2–3: …" if s else None for s in stopped])))
    tables = compute_tables(study, estimation=Estimation(n_boot=100))
    assert tables["simulator_failures"][["run_id", "check", "turn"]].values.tolist() == [["r2", "parroting", 3]]
    assert set(tables["database"]["n"]) == {2}  # r2's assertion is not the agent's: left out
    study.tables, study.meta = tables, {"judges": {"a": None, "b": None}}
    assert "1: the simulated patient broke" in str(study_overview(study))
    assert "Stopped by the simulator-failure gate" in str(fidelity_view(study))
    clean = compute_tables(_study({"a": [True, False] * 3, "b": [True, True] * 3}, 3), estimation=Estimation(n_boot=100))
    assert "simulator_failures" not in clean and set(clean["database"]["n"]) == {3}


#: A valid parameter set (a fault study, no saved runs), written out so the test needs no notebook.
VALID = {"runs": [], "fault_study": True, "agents": ["support"], "scenario": None, "faults": None, "seeds": [1],
         "trials": 1, "judges": {"greedy": {"provider": "local"}}, "judge_samples": 1, "probes": [], "labels": None,
         "exclude_unfaithful": False, "simulator_gate": False, "simulator_model": None, "simulator": None,
         "output_dir": "out",
         "concurrency": 1, "n_boot": 100, "scenarios_dir": None}


def test_study_config_types_exactly_the_parameters_the_notebook_may_set():
    assert StudyConfig.parameter_names() == list(VALID)


def test_checked_parameters_come_back_as_given_and_a_bad_one_is_named(tmp_path):
    config = check_study_parameters({}, defaults={**VALID, "output_dir": str(tmp_path)})
    assert config.params == {**VALID, "output_dir": str(tmp_path)} and config.out_dir == tmp_path
    with pytest.raises(ParameterError, match=r"seeds must be a non-empty list of integers, got \[\]"):
        check_study_parameters({"seeds": []}, defaults=VALID)


def test_agreement_views_interpret_is_the_function_even_after_its_submodule_was_imported() -> None:
    """``convoeval.stats.interpret`` named both a function and its submodule: once the submodule was imported
    directly, ``from convoeval.stats import interpret`` handed out the module (mypy: "module not callable"; CI failed
    on it when test order changed). The submodule is ``stats/verdicts.py`` now."""
    code = ("import convoeval.stats.verdicts\nimport convoeval.agreement.views as v\n"
            "print(callable(v.interpret), v.interpret.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.split() == ["True", "convoeval.stats.verdicts"]


def test_human_labels_give_the_judges_against_them_and_one_corrected_rate_each(tmp_path):
    # Rogan–Gladen reaches a study once, through the calibrated estimates (pass_rate_estimates); the labels table
    # holds the judge against each human rater (docs/agreement.md, "Calibration: one function per question").
    verdicts = [True, False] * 12
    study = _study({"a": verdicts}, 12)
    lines = "".join(f"r{i},c1,{'pass' if i % 3 else 'fail'},ana,\n" for i in range(12))
    (tmp_path / "labels.csv").write_text("conversation,criterion,label,rater,note\n" + lines, encoding="utf-8")
    tables = compute_tables(study, labels=tmp_path / "labels.csv", estimation=Estimation(n_boot=50))
    assert "calibrated" not in tables
    assert set(tables["labels"]["rater_b"]) == {"ana"}
    estimates = tables["calibrated_estimates"]
    human = estimates[(estimates["labels"] == "human") & (estimates["estimator"] == "rogan_gladen")]
    assert human["criterion"].tolist() == ["c1"]
