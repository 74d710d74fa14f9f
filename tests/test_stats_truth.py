"""Database truth: criteria paired with their assertions, the goal verdicts, agreement for a results folder."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from agreement_support import assertion_rows, holistic, rubric, runs

from convoeval import load_results
from convoeval.frames import RunFrames
from convoeval.pipeline import plan
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.scenarios import load_scenarios
from convoeval.stats import ALL, DATABASE, database_agreement, goal_ratings, goal_truth, truth_pairs, truth_ratings
from convoeval.store import open_store
from convoeval.testing import FakeChatModel

T, F = True, False
LINK = "Agent generated a payment link"


def _rubric(judge: list[bool]) -> pd.DataFrame:
    # Per run: the link criterion (declares payment_link_created), then a politeness criterion (declares nothing).
    return rubric({"judge": judge}, criteria=(LINK, "Agent was polite"), assertions={LINK: "payment_link_created"})


def test_truth_ratings_pair_each_declared_criterion_with_its_assertion():
    checks = assertion_rows([("r0", "payment_link_created", T), ("r1", "payment_link_created", F),
                             ("r2", "payment_link_created", None), ("r0", "tools_called", F)])
    truth = truth_ratings(_rubric([T, T, T, T, F, T, T, T]), checks)  # 4 runs; r3 has no check
    assert truth[["run_id", "criterion", "rater"]].values.tolist() == [
        ["r0", LINK, DATABASE], ["r1", LINK, DATABASE], ["r2", LINK, DATABASE]]
    assert truth["passed"].tolist()[:2] == [True, False] and truth["passed"].isna().tolist()[2]


def test_truth_pairs_show_judge_and_database_side_by_side():
    checks = assertion_rows([("r0", "payment_link_created", T), ("r1", "payment_link_created", F)])
    pairs = truth_pairs(_rubric([T, T, T, T]), checks)
    assert pairs[["run_id", "judge_passed", "database_passed", "agree"]].values.tolist() == [
        ["r0", True, True, True], ["r1", True, False, False]]


def test_goal_truth_uses_outcome_assertions_only_by_default():
    checks = assertion_rows([
        ("r0", "payment_link_created", T), ("r0", "tools_called", F),        # outcome met, process failed
        ("r1", "payment_link_created", T), ("r1", "invoice_status", F),      # outcome not met
        ("r2", "payment_link_created", None), ("r2", "invoice_status", T),   # unknown
        ("r3", "tools_called", T),                                           # no outcome assertion
    ])
    goal = goal_truth(checks).set_index("run_id")["goal_met"]
    assert goal["r0"] and not goal["r1"] and pd.isna(goal["r2"]) and "r3" not in goal
    strict = goal_truth(checks, exclude=()).set_index("run_id")["goal_met"]
    assert not strict["r0"] and strict["r3"]


def test_goal_ratings_threshold_database_and_simulator():
    frame = holistic({"judge": [5.0, 4.9, 9.0]})
    checks = assertion_rows([(f"r{i}", "payment_link_created", v) for i, v in enumerate([T, T, F])])
    ratings = goal_ratings(frame, checks, runs=runs({"r0": T, "r1": F, "r2": T}))
    by_rater = {r: g.sort_values("run_id")["passed"].tolist() for r, g in ratings.groupby("rater")}
    assert by_rater == {"judge": [T, F, T], DATABASE: [T, T, F], "simulator": [T, F, T]}
    assert set(ratings["criterion"]) == {"goal_completion"}
    stricter = goal_ratings(frame, checks, threshold=7)
    assert stricter[stricter["rater"] == "judge"].sort_values("run_id")["passed"].tolist() == [F, F, T]


def test_scripted_runs_have_no_simulator_claim():
    frame = holistic({"judge": [7.0]})
    checks = assertion_rows([("r0", "payment_link_created", T)])
    ratings = goal_ratings(frame, checks, runs=runs({"r0": F}, kind="scripted"))
    assert "simulator" not in set(ratings["rater"])


def _frames(n: int = 12) -> RunFrames:
    db = [i % 3 != 0 for i in range(n)]
    judge = [v for d in db for v in (d, True)]  # the judge copies the database on the link criterion
    return RunFrames.from_frames({
        "rubric": _rubric(judge),
        "holistic": holistic({"judge": [8.0 if d else 2.0 for d in db]}),
        "assertions": assertion_rows([(f"r{i}", "payment_link_created", d) for i, d in enumerate(db)]),
        "runs": runs({f"r{i}": True for i in range(n)}),
    })


def test_database_agreement_for_every_instrument():
    out = database_agreement(_frames(), n_boot=100)
    assert list(out.columns[:4]) == ["instrument", "criterion", "rater_a", "rater_b"]
    assert set(out["rater_b"]) == {DATABASE}
    rubric_kappa = out[(out["instrument"] == "rubric") & (out["statistic"] == "cohen_kappa")]
    assert rubric_kappa["criterion"].tolist() == [LINK] and rubric_kappa["value"].iloc[0] == 1.0
    goal = out[out["instrument"] == "goal"].set_index(["rater_a", "statistic"])["value"]
    assert goal[("judge", "percent_agreement")] == 1.0
    assert goal[("simulator", "sensitivity")] == 1.0 and goal[("simulator", "specificity")] == 0.0
    assert ALL not in set(out["criterion"])  # one declared criterion: no pooled row


def test_database_agreement_reads_a_results_folder(tmp_path):
    frames = _frames()
    (tmp_path / "runs").mkdir()
    for run_id in frames.runs["run_id"]:
        payload = {name: json.loads(frame[frame["run_id"] == run_id].to_json(orient="records"))
                   for name, frame in frames.items() if name != "calls"}
        (tmp_path / "runs" / f"{run_id}.json").write_text(json.dumps(payload), encoding="utf-8")
    loaded = database_agreement(load_results(tmp_path).frames, n_boot=100)
    expected = database_agreement(frames, n_boot=100)
    pd.testing.assert_frame_equal(loaded.sort_values(list(loaded.columns[:5])).reset_index(drop=True),
                                  expected.sort_values(list(expected.columns[:5])).reset_index(drop=True))


def test_no_declared_assertions_and_no_holistic_gives_an_empty_table():
    frames = _frames()
    frames = frames.replace(rubric=frames.rubric.assign(assertion=pd.NA), holistic=frames.holistic.iloc[0:0])
    out = database_agreement(frames, n_boot=10)
    assert out.empty and "statistic" in out.columns


def test_truth_needs_the_assertion_column():
    with pytest.raises(ValueError, match="assertion"):
        truth_ratings(_rubric([T, T]).drop(columns="assertion"), assertion_rows([]))


async def test_agreement_on_a_real_batch_with_the_fake_models(tmp_path, monkeypatch):
    """The frames a real batch writes (fake simulator and judge, sqlite store) feed the database agreement."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    sc = load_scenarios(scenario="recall-conv-declines-pt")[0]
    declared = [c.text for c in sc.rubric if c.assertion == "appointment_created"]
    n = len(sc.criteria)

    def judge_reply(messages, kwargs):  # every criterion passes; goal_completion 9
        tool = (kwargs.get("tools") or [{}])[0].get("function", {}).get("name", "")
        if "Rubric" in tool:
            return {"verdicts": [{"index": i + 1, "evidence": "Turn 1", "reasoning": "seen", "passed": True}
                                 for i in range(n)]}
        scores = {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 8, "goal_completion": 9}
        return {"issues": [], "scores": scores, "suggestion": "ok"}

    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        # The patient greets first: a stop signal before the agent said anything is the gate's premature_goal.
        def patient(messages, kwargs):
            return "Oi, quem fala?" if len(messages) <= 2 else "Não, obrigado. [GOAL_COMPLETE]"

        opts = RunOptions(simulator_model=FakeChatModel(responder=patient),
                          judge_model=FakeChatModel(responder=judge_reply), store=store)
        await arun_batch(plan([sc], seeds=[1], trials=2), options=opts, out_dir=tmp_path / "out", progress=False)
    frames = load_results(tmp_path / "out").frames
    pairs = truth_pairs(frames.rubric, frames.assertions)
    assert len(pairs) == 2 and set(pairs["criterion"]) == set(declared)
    db = frames.assertions[frames.assertions["assertion"] == "appointment_created"]
    assert sorted(pairs["database_passed"].tolist()) == sorted(db["passed"].tolist())
    out = database_agreement(frames, n_boot=50)
    assert set(out["instrument"]) == {"rubric", "goal"}
    judges = set(frames.rubric["judge_model"].astype(str))
    assert set(out["rater_a"]) == judges | {"simulator"} and set(out["rater_b"]) == {DATABASE}
    goal = out[(out["instrument"] == "goal") & (out["rater_a"] == "simulator")].set_index("statistic")["value"]
    assert goal["pass_rate_a"] == 1.0  # the fake patient always claims [GOAL_COMPLETE]
    assert set(out["n"]) == {2} and out["ci_too_wide"].all()  # two conversations cannot support a conclusion
