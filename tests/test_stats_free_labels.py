"""Labels from everywhere in one format (human CSV, the database, known faults) and the calibrated pass and goal
rates computed from the runs' frames with them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from agreement_support import assertion_rows, holistic, rubric
from test_agreement_faults import LINK, paired_happy_study

from convoeval.agreement.fault_labels import fault_labels
from convoeval.stats.calibration.free_labels import database_labels
from convoeval.stats.calibration.rates import goal_rate_estimates, label_values, pass_rate_estimates
from convoeval.stats.goal import goal_truth
from convoeval.stats.labels import load_labels, read_labels

LABEL_FRAME = ["conversation", "criterion", "label", "rater", "note", "source", "file", "line"]


def _study(n=80, seed=0, labelled=40):
    """A judge (sensitivity .9, specificity .5) on ``n`` runs × 2 criteria; the database decides criterion c1 on
    the first ``labelled`` runs; the truth of both criteria is returned for human labels."""
    rng = np.random.default_rng(seed)
    truth = rng.random((n, 2)) < 0.6
    judge = np.where(truth, rng.random((n, 2)) < 0.9, rng.random((n, 2)) < 0.5)
    frame = rubric({"judge-x": list(judge.ravel())}, criteria=("c1", "c2"), assertions={"c1": "paid"})
    checks = assertion_rows([(f"r{i}", "paid", bool(truth[i, 0])) for i in range(labelled)]
                            + [("r79", "paid", None)])
    return frame, checks, truth


def test_database_labels_are_a_labels_frame_that_reads_back_with_no_error(tmp_path):
    frame, checks, truth = _study()
    labels = database_labels(frame, checks)
    assert list(labels.columns) == LABEL_FRAME
    assert set(labels["source"]) == {"database"} and set(labels["rater"]) == {"database"}
    assert len(labels) == 41 and set(labels["criterion"]) == {"c1"}
    assert labels.set_index("conversation").loc["r3", "label"] == truth[3, 0]
    assert pd.isna(labels.set_index("conversation").loc["r79", "label"])   # the check errored: unsure, not a fail
    assert labels["note"].iloc[0] == "assertion paid"
    path = tmp_path / "database.csv"
    labels.drop(columns=["file", "line"]).assign(
        label=labels["label"].map({True: "pass", False: "fail"}).fillna("unsure")).to_csv(path, index=False)
    back = read_labels(path)
    assert back["label"].equals(labels["label"]) and set(back["source"]) == {"database"}


def test_fault_labels_carry_the_known_fault_truth_and_its_reasons():
    frames = paired_happy_study(assertions=[("h1", "payment_link_created", False)],
                                assertion_of={LINK: "payment_link_created"})
    labels = fault_labels(frames)
    assert list(labels.columns) == LABEL_FRAME and set(labels["source"]) == {"fault"}
    got = labels.set_index(["conversation", "criterion"])
    assert got.loc[("w1", "Agent identified the pending invoice and mentioned the amount"), "label"] == False  # noqa: E712
    assert pd.isna(got.loc[("h1", LINK), "label"]) and "payment_link_created failed" in got.loc[("h1", LINK), "note"]
    assert "healthy counterpart" in got.loc[("h1", "Agent did not fabricate any URLs"), "note"]


def test_label_values_filter_by_source_and_take_the_raters_majority():
    frame, checks, _ = _study()
    human = pd.DataFrame({"conversation": ["r0", "r0", "r0", "r1", "r1"], "criterion": ["c2"] * 5,
                          "label": pd.array([True, True, False, True, False], dtype="boolean"),
                          "rater": ["ana", "bia", "cai", "ana", "bia"], "source": "human"})
    both = pd.concat([human, database_labels(frame, checks)], ignore_index=True)
    only_human = label_values(both, frame, sources="human")
    assert only_human[["run_id", "criterion", "label", "n_raters"]].values.tolist() == [["r0", "c2", 1.0, 3]]
    assert set(label_values(both, frame, sources="database")["criterion"]) == {"c1"}
    assert len(label_values(both, frame)) == 1 + 40
    with pytest.raises(ValueError, match="unknown label source"):
        label_values(both, frame, sources="oracle")


def test_pass_rates_calibrated_on_free_labels_per_criterion_and_pooled():
    frame, checks, truth = _study()
    table = pass_rate_estimates(frame, database_labels(frame, checks), n_boot=200)
    rows = table.set_index(["criterion", "estimator"])
    assert list(table.columns[:3]) == ["rater", "criterion", "estimator"]
    c1 = rows.loc["c1"]
    assert c1.loc["labels_only", "value"] == pytest.approx(truth[:40, 0].mean())
    assert c1.loc["judge_only", "value"] == pytest.approx(frame.query("criterion == 'c1'")["passed"].mean())
    assert c1.loc["ppi++", "n_labelled"] == 40 and c1.loc["ppi++", "n_unlabelled"] == 40
    assert (c1["labels"] == "database").all()
    # c2 has no database label: every calibrated estimate is refused with the reason; the raw rate is still shown.
    c2 = rows.loc["c2"]
    assert c2.loc["ppi++", "refused"].startswith("only 0 labelled") and np.isnan(c2.loc["ppi++", "value"])
    assert not c2.loc["judge_only", "refused"] and np.isfinite(c2.loc["judge_only", "value"])
    pooled = rows.loc["(all)"]
    assert pooled.loc["ppi++", "n"] == 80 and pooled.loc["ppi++", "n_labelled"] == 40
    assert "conversation-clustered" in pooled.loc["ppi++", "method"]


def test_goal_rate_from_the_holistic_score_calibrated_on_the_database_goal():
    rng = np.random.default_rng(2)
    met = rng.random(120) < 0.4
    score = np.clip(np.round(np.where(met, 8, 5) + rng.normal(0, 1.5, 120)), 0, 10)  # a lenient judge
    frame = holistic({"judge-x": list(score)})
    checks = assertion_rows([(f"r{i}", "paid", bool(met[i])) for i in range(50)])
    table = goal_rate_estimates(frame, goal_truth(checks)).set_index("estimator")
    assert table.loc["judge_only", "value"] == pytest.approx((score >= 5).mean())
    assert table.loc["labels_only", "value"] == pytest.approx(met[:50].mean())
    assert table.loc["ppi++", "n_labelled"] == 50 and set(table["dimension"]) == {"goal_completion"}
    # A few unlabelled conversations scored below every labelled one: the isotonic map refuses, unless allowed.
    assert "outside the labelled scores' range" in table.loc["isotonic", "refused"]
    allowed = goal_rate_estimates(frame, goal_truth(checks), max_outside=0.2).set_index("estimator")
    for name in ("ppi++", "isotonic"):
        assert allowed.loc[name, "ci_low"] < met.mean() < allowed.loc[name, "ci_high"]
    assert table.loc["judge_only", "ci_low"] > met.mean()   # the lenient judge's own interval misses the truth
    with pytest.raises(ValueError, match="goal_met"):
        goal_rate_estimates(frame, checks)


def test_human_csv_labels_calibrate_like_the_free_ones(tmp_path):
    frame, _, truth = _study()
    rows = [f"r{i},c2,{'pass' if truth[i, 1] else 'fail'},ana\n" for i in range(30)] + ["r30,c2,unsure,ana\n"]
    (tmp_path / "ana.csv").write_text("conversation,criterion,label,rater\n" + "".join(rows), encoding="utf-8")
    table = pass_rate_estimates(frame, load_labels(tmp_path), by=("criterion",), overall=False)
    c2 = table.set_index(["criterion", "estimator"]).loc["c2"]
    assert c2.loc["labels_only", "n_labelled"] == 30                         # the unsure label is left out
    assert c2.loc["labels_only", "value"] == pytest.approx(truth[:30, 1].mean()) and (c2["labels"] == "human").all()


def test_pass_rates_stratified_by_scenario_when_labels_were_drawn_per_scenario():
    rng = np.random.default_rng(8)
    parts, rows = [], []
    for scenario, size, rate in (("small", 40, 0.2), ("large", 160, 0.9)):
        truth = rng.random(size) < rate
        judge = np.where(truth, rng.random(size) < 0.9, rng.random(size) < 0.3)
        prefix = f"{scenario}-"
        parts.append(rubric({"judge-x": list(judge)}, scenario=scenario, run_prefix=prefix))
        rows += [(f"{prefix}{i}", "c1", "pass" if truth[i] else "fail") for i in range(15)]  # 15 labels in each
    frame = pd.concat(parts, ignore_index=True)
    labels = pd.DataFrame(rows, columns=["conversation", "criterion", "label"]).assign(
        label=lambda f: f["label"].eq("pass").astype("boolean"), rater="ana", source="human", file="ana.csv",
        line=lambda f: range(2, len(f) + 2))
    flat = pass_rate_estimates(frame, labels, estimators=("labels_only",), overall=False).iloc[0]
    strat = pass_rate_estimates(frame, labels, estimators=("labels_only",), overall=False, strata="scenario").iloc[0]
    small, large = (labels["conversation"].str.startswith(s) for s in ("small", "large"))
    assert flat["value"] == pytest.approx(labels["label"].astype(float).mean())        # 50/50: over-weighs "small"
    assert strat["value"] == pytest.approx(0.2 * labels.loc[small, "label"].astype(float).mean()
                                           + 0.8 * labels.loc[large, "label"].astype(float).mean())
    assert "stratified over 2 strata" in strat["method"]
