"""notebooks/agreement.ipynb executed by papermill against the fake OpenAI-compatible server (a real kernel; slow).

The fake server answers every call with a schema-valid placeholder, so these tests check the plumbing — the fault
study runs, two judge configurations re-judge, probes and fidelity run, every section shows — and that the tables
the notebook shows are exactly what the library functions return from the study's saved data.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import papermill
import pytest

from convoeval.agreement.study import compute_tables, load_study
from convoeval.stats import Estimation

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "agreement.ipynb"

pytestmark = pytest.mark.notebook

#: The notebook's default scope (one support scenario, the healthy agent and two faults) with the fake server's judges.
SMALL = {
    "judges": {"plain": {"temperature": 0.0}, "warm": {"temperature": 0.3}},
    "probes": ["criteria_order", "verbosity", "injection_agent_pt"],
    "concurrency": 2,
    "n_boot": 200,
}


def _execute(tmp_path: Path, **parameters):
    return papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "executed.ipynb"), parameters=parameters,
                                      progress_bar=False, cwd=str(ROOT))


def _outputs(nb) -> dict[str, list[dict]]:
    return {c["source"]: c.get("outputs", []) for c in nb["cells"] if c["cell_type"] == "code"}


def test_the_study_runs_end_to_end_and_its_tables_are_the_library_s(fake_llm, tmp_path):
    out = tmp_path / "study"
    nb = _execute(tmp_path, **SMALL, output_dir=str(out))
    outputs = _outputs(nb)
    html = lambda source: "".join(o["data"].get("text/html", "") for o in outputs[source])
    overview = html("views.study_overview(study)")
    assert "3 (1 healthy or external, 2 with known faults)" in overview and "judge errors" in overview
    assert "plain" in html("views.judges_view(study)") and "warm" in html("views.judges_view(study)")
    assert "Agent remained polite" in html("views.fault_view(study)")
    for source in ("views.plot_judge_heatmap(study)", "views.plot_fault_confusion(study)",
                   "views.plot_bland_altman(study)", "views.plot_probes(study)"):
        shown = [o for o in outputs[source] if o["output_type"] == "execute_result"]
        assert shown[0]["data"]["image/png"], source
        assert not [o for o in outputs[source] if o["output_type"] == "stream"], source  # no warnings printed
    assert "verbosity" in html("views.probe_view(study)")
    assert "parroting" in html("views.fidelity_view(study)")
    assert "You may not conclude" in html("views.study_conclusions(study)")
    # The calibrated estimates: the free labels (database, known faults) of 3 conversations are too few for any
    # calibrated interval, so each estimator says why instead of giving a number; the raw rates are shown.
    calibrated = html("views.calibrated_view(study)")
    assert "raw judge rate" in calibrated and "PPI++" in calibrated and "goal_completion (holistic score)" in calibrated
    assert "refused: only " in calibrated and "labelled conversation(s); at least 10" in calibrated
    assert "database+fault" in calibrated

    # The study's progress, as lines (convoeval notebook shows them in the terminal): each step, each conversation.
    log = "".join(o.get("text", "") for o in outputs["study = agreement_study.run_study(config)"]
                  if o["output_type"] == "stream")
    assert "[1/4] the fault study's conversations" in log and "running 3 conversation(s)" in log
    assert "support-conv-wants-human-es s42 t1 [rude_tone]: " in log
    assert "[2/4] judging 3 conversation(s) with 'plain' (rubric and holistic) (~6 LLM calls)" in log
    assert "[3/4] judging 3 conversation(s) with 'warm'" in log and "done: 6/6 LLM call(s) in " in log
    assert "[4/4] bias probes criteria_order, verbosity, injection_agent_pt" in log and log.rstrip().splitlines()[
        -1].startswith("done in ")

    # The saved study: the healthy agent and the notebook's two default faults, re-judged by both judges.
    study = load_study(out)
    assert sorted(study.frames.runs["target"]) == ["clinic:support", "clinic:support?faults=never_escalates",
                                                      "clinic:support?faults=rude_tone"]
    assert set(study.judged["rubric"]["judge"]) == {"plain", "warm"}
    assert study.judged["rubric"]["error"].isna().all()
    # The fault study's own runs were judged by the first configuration (a spec, turned into a model), not errors.
    assert study.frames.rubric["error"].isna().all() and len(study.frames.rubric) == 3 * 4
    assert set(study.tables) >= {"database", "judges", "scores", "faults", "fault_confusion", "probes", "fidelity"}
    # Every table the notebook showed is what the library computes from the saved data.
    recomputed = compute_tables(study, estimation=Estimation(n_boot=200))
    for name, saved in study.tables.items():
        fresh = recomputed[name]
        assert len(fresh) == len(saved), name
        if len(saved):
            numeric = [c for c in ("value", "ci_low", "ci_high", "n", "effect", "count") if c in saved]
            pd.testing.assert_frame_equal(fresh[numeric].reset_index(drop=True).astype(float),
                                          saved[numeric].reset_index(drop=True).astype(float), check_exact=False,
                                          rtol=1e-9, obj=name)
    # A second execution replays (the conversations are on disk, every call is in the cache), now with human labels
    # that say every criterion of the healthy run passed: each judge is scored against them.
    healthy = study.frames.runs.set_index("target").loc["clinic:support", "run_id"]
    criteria = study.judged["rubric"].query("run_id == @healthy")["criterion"].unique()
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"conversation": healthy, "criterion": criteria, "label": "pass", "rater": "ana"}).to_csv(
        labels, index=False)
    before = fake_llm.stats["requests"]
    _execute(tmp_path, **SMALL, output_dir=str(out), labels=str(labels))
    assert fake_llm.stats["requests"] == before
    scored = load_study(out).tables["labels"]
    assert {"plain", "warm"} <= set(scored["rater_a"]) and set(scored["rater_b"]) == {"ana"}
    estimates = load_study(out).tables["calibrated_estimates"]
    human = estimates[estimates["labels"] == "human"]
    assert set(human["rater"]) == {"plain", "warm"} and set(human["criterion"]) == set(criteria)
    assert human.loc[human["estimator"] == "ppi++", "refused"].str.startswith("only 1 labelled").all()


def _texts(nb) -> dict[str, str]:
    """Each code cell's displayed text (HTML tags dropped), by source; raises if a cell has no output at all."""
    import html
    import re

    shown = {}
    for source, outputs in _outputs(nb).items():
        parts = ["".join(o["data"].get("text/html", "")) or ("[image]" if "image/png" in o["data"] else "")
                 for o in outputs if "data" in o]
        shown[source] = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", "".join(parts))))
    return shown


def _saved_sweep(out: Path) -> None:
    # The README's command, in this process (its notebook kernels talk to the fake server too).
    from convoeval.cli import main

    assert main(["sweep", "--agent", "billing", "--seed", "1", "--type", "conversational", "--out", str(out),
                 "--no-progress"]) == 0


def _saved_run(out: Path) -> None:
    from convoeval.cli import main

    main(["run", "--scenario", "support-conv-wants-human-es", "--seed", "1", "--out", str(out), "--no-progress"])
    assert len(list((out / "runs").glob("*.json"))) == 1


def test_the_readme_s_saved_sweep_study_runs_every_section_and_says_there_are_no_known_faults(fake_llm, tmp_path):
    # README: convoeval sweep ... --out reports/s; papermill notebooks/agreement.ipynb ... -y '{runs: [reports/s],
    # fault_study: false, judges: {plain: ..., warm: ...}, probes: [criteria_order], n_boot: 100, ...}'.
    # It used to end in "reference rater 'known_faults' is not in the ratings ([])".
    _saved_sweep(tmp_path / "s")
    out = tmp_path / "a"
    nb = _execute(tmp_path, runs=[str(tmp_path / "s")], fault_study=False, n_boot=100, output_dir=str(out),
                  judges={"plain": {"temperature": 0.0}, "warm": {"temperature": 0.3}}, probes=["criteria_order"])
    shown = _texts(nb)
    assert "3 (3 healthy or external, 0 with known faults)" in shown["views.study_overview(study)"]
    assert "plain" in shown["views.judges_view(study)"] and "warm" in shown["views.judges_view(study)"]
    assert shown["views.fault_view(study)"].strip().startswith("No known-fault truth: fault_study = False")
    assert "No confusion matrices" in shown["views.plot_fault_confusion(study)"]
    assert shown["views.labels_view(study)"].strip().startswith("No human labels")
    assert "criteria_order" in shown["views.probe_view(study)"]
    assert shown["views.plot_probes(study)"] == "[image]"
    assert "What 3 conversations support" in shown["views.study_conclusions(study)"]
    study = load_study(out)
    assert study.tables["faults"].empty and not study.tables["judges"].empty and not study.tables["database"].empty


def test_one_saved_conversation_and_one_judge_without_probes_say_what_each_section_lacks(fake_llm, tmp_path):
    _saved_run(tmp_path / "one")
    nb = _execute(tmp_path, runs=[str(tmp_path / "one")], fault_study=False, judges={"plain": {"temperature": 0.0}},
                  probes=[], n_boot=100, output_dir=str(tmp_path / "a"))
    shown = {source: text.strip() for source, text in _texts(nb).items()}
    expected = {  # every section without data says so in one line; nothing else is shown there
        "views.judges_view(study)": "One judge configuration only",
        "views.plot_judge_heatmap(study)": "No judge × judge heatmap: one judge configuration only.",
        "views.plot_bland_altman(study)": "No Bland–Altman plot: it needs two judge configurations.",
        "views.fault_view(study)": "No known-fault truth: fault_study = False",
        "views.plot_fault_confusion(study)": "No confusion matrices, no known-fault truth: fault_study = False",
        "views.labels_view(study)": "No human labels",
        "views.consistency_view(study)": "No flip rates",
        "views.probe_view(study)": "No bias probes were run (probes = []).",
        "views.plot_probes(study)": "No bias probes were run.",
    }
    for source, start in expected.items():
        assert shown[source].startswith(start) and "\n" not in shown[source], (source, shown[source])
    assert "1 (1 healthy or external, 0 with known faults)" in shown["views.study_overview(study)"]
    assert "Agent transferred the patient to a human attendant" in shown["views.database_view(study)"]
    assert "What 1 conversation supports" in shown["views.study_conclusions(study)"]


def test_results_folders_without_a_completed_conversation_stop_with_one_line(fake_llm, tmp_path):
    from convoeval.cli import main

    main(["run", "--scenario", "billing-scripted-human-pt", "--out", str(tmp_path / "scripted"), "--no-progress"])
    with pytest.raises(papermill.PapermillExecutionError) as err:
        # The fake server's judge, not the default local one: a regression must fail here, not start a local model.
        _execute(tmp_path, runs=[str(tmp_path / "scripted")], fault_study=False, output_dir=str(tmp_path / "a"),
                 judges={"plain": {"temperature": 0.0}})
    assert err.value.ename == "ValueError"
    assert err.value.evalue.startswith("nothing to study: no completed conversational run (1 conversation(s) read: "
                                       "1 scripted")


def test_bad_or_unknown_parameters_fail_with_one_line(fake_llm, tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as err:
        _execute(tmp_path, judges=[])
    assert err.value.ename == "ParameterError" and err.value.evalue.startswith("judges must be")
    with pytest.raises(papermill.PapermillExecutionError) as err:
        _execute(tmp_path, runs=[], fault_study=False)
    assert "nothing to study" in err.value.evalue
    with pytest.raises(papermill.PapermillExecutionError) as err:
        _execute(tmp_path, judge_sample=2)  # a typo papermill would only warn about
    assert "unknown agreement-notebook parameter(s) judge_sample" in err.value.evalue
    assert fake_llm.stats["requests"] == 0
