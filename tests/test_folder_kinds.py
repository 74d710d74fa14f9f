"""One function reads every kind of saved folder: ``convoeval.load_results`` recognises a run, a red-team run, a fault
study, an agreement study and a sweep by what each holds, each folder written here by its real writer (fake models,
scripted attacks, a fake notebook executor), and refuses a folder of no known kind in one line naming the kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import conversation, merge, write_run_folder
from test_agreement_study import _study as agreement_study
from test_summary import judge_reply, patient

from convoeval import load_results
from convoeval.agreement.faults import run_fault_study
from convoeval.agreement.study import Study, _save, compute_tables
from convoeval.folders import FOLDER_KINDS, UnknownFolderError, folder_kind
from convoeval.frames import RunFrames
from convoeval.pipeline import EvalResult, plan
from convoeval.pipeline.batch import run_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.redteam.study import RedTeamRun, run_redteam
from convoeval.scenarios import load_scenarios
from convoeval.store import open_store
from convoeval.sweep import SweepResult, run_sweep
from convoeval.testing import FakeChatModel

ROOT = Path(__file__).resolve().parents[1]
HAPPY = "billing-conv-happy-payment"


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")


def _models() -> dict[str, FakeChatModel]:
    criteria = len(load_scenarios(scenario=HAPPY)[0].criteria)
    return {"simulator_model": FakeChatModel(responder=patient),
            "judge_model": FakeChatModel(responder=judge_reply(criteria))}


def test_a_run_folder_is_an_eval_result(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        run_batch(plan(load_scenarios(scenario=HAPPY), seeds=[1]), out_dir=tmp_path / "run", progress=False,
                  options=RunOptions(target="clinic:billing", store=store, **_models()))
    assert folder_kind(tmp_path / "run").name == "run"
    run = load_results(tmp_path / "run")
    assert isinstance(run, EvalResult) and run.frames.scores["scenario"].tolist() == [HAPPY]


def test_a_redteam_folder_is_a_redteam_run(tmp_path):
    out = tmp_path / "red"
    ran = run_redteam([ROOT / "evals" / "attacks" / "injection.yaml"], agents=["support"], locales=["es"],
                      faults=["follows_injected_instructions"], output_dir=out, store=f"sqlite:///{tmp_path / 's.db'}",
                      progress="off")
    assert folder_kind(out).name == "red-team run"
    red = load_results(out)
    assert isinstance(red, RedTeamRun)
    assert [r.case for r in red.results] == [r.case for r in ran.results] and red.leaked == ran.leaked == 1
    assert red.frames.attacks["status"].tolist() == ["leak"]  # the run's frames, as a run's EvalResult has them


def test_a_fault_study_folder_is_its_frames(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        ran = run_fault_study(load_scenarios(scenario=HAPPY), tmp_path / "study", store=store, progress=False,
                              simulator_gate=False, **_models())
    assert folder_kind(tmp_path / "study").name == "fault study"
    frames = load_results(tmp_path / "study")
    assert isinstance(frames, RunFrames) and len(frames.runs) == len(ran.runs) > 1  # the healthy agent and its faults
    assert sorted(frames.runs["run_id"]) == sorted(ran.runs["run_id"])
    assert set(frames.calls["target"]) == set(ran.runs["target"])
    # One target's folder alone is a run.
    assert folder_kind(tmp_path / "study" / "clinic-billing").name == "run"


def test_an_agreement_study_folder_is_a_study(tmp_path):
    study = agreement_study({"a": [True, False] * 3}, 3)
    study.out_dir, study.meta = tmp_path / "agreement", {"judges": {"a": None}}
    study.tables = compute_tables(study, n_boot=50)
    _save(study)  # what run_study writes
    assert folder_kind(tmp_path / "agreement").name == "agreement study"
    back = load_results(tmp_path / "agreement")
    assert isinstance(back, Study) and back.judges == ["a"] and set(back.tables) == set(study.tables)


def test_a_sweep_folder_is_a_sweep_result(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)

    def executor(notebook: Path, output: Path, parameters: dict, cwd: Path) -> None:
        if parameters["seed"] == 2:
            raise RuntimeError("kernel died")
        name = f"{parameters['agent']}-s{parameters['seed']}"
        write_run_folder(Path(parameters["output_dir"]), merge(conversation(name, agent=parameters["agent"],
                                                                            seed=parameters["seed"])))

    run_sweep(["billing"], [1, 2], out=tmp_path / "sweep", executor=executor, progress=False)
    assert folder_kind(tmp_path / "sweep").name == "sweep"
    sweep = load_results(tmp_path / "sweep")
    assert isinstance(sweep, SweepResult) and sweep.index == tmp_path / "sweep" / "index.html"
    assert [(c.name, c.status, c.error) for c in sweep.combinations] == [
        ("billing-s1", "done", None), ("billing-s2", "failed", "RuntimeError: kernel died")]
    assert sweep.frames.runs["run_id"].tolist() == ["billing-s1"]  # the finished combinations' conversations


@pytest.mark.parametrize("make", ["missing", "empty", "other files"])
def test_a_folder_of_no_known_kind_is_one_line_naming_the_kinds(tmp_path, make):
    folder = tmp_path / "what"
    if make != "missing":
        (folder / "runs").mkdir(parents=True)
    if make == "other files":
        (folder / "notes.txt").write_text("not results")
        (folder / "runs" / "readme.md").write_text("no conversation")
    with pytest.raises(UnknownFolderError) as caught:
        load_results(folder)
    message = str(caught.value)
    assert "\n" not in message and str(folder) in message and "no finished conversation" in message
    assert all(kind.name in message for kind in FOLDER_KINDS)
    assert isinstance(caught.value, FileNotFoundError)  # callers that caught a missing run's folder still do
