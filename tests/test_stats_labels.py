"""Human labels: the CSV format and its errors, resolving against runs, scoring judges, the corrected pass rate
(Rogan–Gladen through ``pass_rate_estimates``, the one route from a run's frames)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from agreement_support import rubric

from convoeval.stats import (
    LabelError,
    label_ratings,
    load_labels,
    read_labels,
    score_against_labels,
)
from convoeval.stats.calibration import corrected_pass_rate, label_values, pass_rate_estimates

REPO = Path(__file__).resolve().parents[1]
HEADER = "conversation,criterion,label,rater,note\n"


def _csv(tmp_path: Path, body: str, name: str = "labels.csv", header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text(header + body, encoding="utf-8")
    return path


def test_the_documented_example_file_is_valid():
    labels = read_labels(REPO / "evals/labels/example.csv")
    assert len(labels) >= 5
    assert set(labels.columns) >= {"conversation", "criterion", "label", "rater", "note", "file", "line"}
    assert labels["label"].dtype == "boolean" and labels["line"].tolist()[0] == 2
    assert "boleto" in labels.loc[labels["criterion"] == "1", "note"].iloc[0]


def test_label_spellings(tmp_path):
    path = _csv(tmp_path, "r0,c1,PASS,ana,\nr0,c2,fail,ana,\nr1,c1,True,ana,\nr1,c2,0,ana,\n")
    assert read_labels(path)["label"].tolist() == [True, False, True, False]


@pytest.mark.parametrize(("body", "header", "message"), [
    ("r0,c1,pass,ana,\n", "conversation,criterion,label,note\n", r"labels\.csv: missing column\(s\) \['rater'\]"),
    ("r0,c1,pass,ana,\nr1,,fail,ana,\n", HEADER, r"labels\.csv, line 3: empty criterion"),
    ("r0,c1,pass,ana,\nr0,c2,maybe,ana,\n", HEADER, r"labels\.csv, line 3: label must be pass, fail or unsure, got 'maybe'"),
    ("r0,c1,pass,ana,robot\n", "conversation,criterion,label,rater,source\n",
     r"labels\.csv, line 2: source must be one of human, database, fault, got 'robot'"),
])
def test_errors_name_file_and_line(tmp_path, body, header, message):
    with pytest.raises(LabelError, match=message):
        read_labels(_csv(tmp_path, body, header=header))


def test_unsure_labels_and_sources_are_read(tmp_path):
    path = _csv(tmp_path, "r0,c1,unsure,ana,,\nr0,c2,pass,db,,database\nr1,c1,fail,ana,why,\n",
                header="conversation,criterion,label,rater,note,source\n")
    labels = read_labels(path)
    assert labels["label"].isna().tolist() == [True, False, False]
    assert labels["source"].tolist() == ["human", "database", "human"]
    assert read_labels(_csv(tmp_path, "r0,c1,pass,ana,\n", name="b.csv"))["source"].tolist() == ["human"]


def test_unsure_labels_are_validated_then_left_out_of_ratings(tmp_path):
    path = _csv(tmp_path, "r0,0,unsure,ana,\nr0,1,pass,ana,\n")
    ratings = label_ratings(read_labels(path), _runs())
    assert len(ratings) == 1 and bool(ratings["passed"].iloc[0])
    with pytest.raises(LabelError, match="no criterion_index 7"):
        label_ratings(read_labels(_csv(tmp_path, "r0,7,unsure,ana,\n", name="c.csv")), _runs())


def test_load_labels_reads_a_folder_skips_examples_and_rejects_double_labels(tmp_path):
    _csv(tmp_path, "r0,c1,pass,ana,\n", name="a.csv")
    _csv(tmp_path, "r0,c1,fail,bruno,\n", name="b.csv")
    _csv(tmp_path, "zz,c1,fail,ana,\n", name="example.csv")
    assert sorted(load_labels(tmp_path)["rater"]) == ["ana", "bruno"]
    _csv(tmp_path, "r0,c1,fail,ana,\n", name="c.csv")
    with pytest.raises(LabelError, match=r"'ana' labelled .* more than once .*a\.csv, line 2; .*c\.csv, line 2"):
        load_labels(tmp_path)


def _runs() -> pd.DataFrame:
    return rubric({"judge": [True, False, True, True]}, criteria=("Agent offered Pix", "Agent was polite"))


def test_conversations_by_run_id_or_key_and_criteria_by_text_or_index(tmp_path):
    path = _csv(tmp_path, "r0,agent  OFFERED pix,pass,ana,\ns/1/0,1,fail,ana,\n")
    ratings = label_ratings(read_labels(path), _runs())
    assert ratings[["run_id", "criterion", "rater", "passed"]].values.tolist() == [
        ["r0", "Agent offered Pix", "ana", True], ["r1", "Agent was polite", "ana", False]]
    assert ratings["criterion_index"].tolist() == [0, 1]


def test_unknown_criterion_and_ambiguous_keys_are_errors_with_file_and_line(tmp_path):
    with pytest.raises(LabelError, match=r"line 2: run r0 has no criterion 'Agent sang'"):
        label_ratings(read_labels(_csv(tmp_path, "r0,Agent sang,pass,ana,\n")), _runs())
    with pytest.raises(LabelError, match="no criterion_index 7"):
        label_ratings(read_labels(_csv(tmp_path, "r0,7,pass,ana,\n")), _runs())
    two_targets = pd.concat([_runs(), _runs().assign(run_id=lambda f: "x" + f["run_id"])], ignore_index=True)
    with pytest.raises(LabelError, match=r"line 2: conversation 's/0/0' matches 2 runs"):
        label_ratings(read_labels(_csv(tmp_path, "s/0/0,0,pass,ana,\n")), two_targets)


def test_labels_of_other_sweeps_are_left_out_with_a_warning(tmp_path):
    path = _csv(tmp_path, "r0,0,pass,ana,\nnot-a-run,0,pass,ana,\ns/9/9,0,pass,ana,\n")
    with pytest.warns(UserWarning, match="2 label"):
        ratings = label_ratings(read_labels(path), _runs())
    assert len(ratings) == 1


def test_corrected_pass_rate():
    assert corrected_pass_rate(0.62, 0.9, 0.8) == pytest.approx(0.6)
    assert corrected_pass_rate(0.05, 0.9, 0.9) == 0.0  # (0.05 + 0.9 - 1) / 0.8 < 0: clipped
    assert corrected_pass_rate(0.99, 0.9, 0.95) == 1.0
    assert np.isnan(corrected_pass_rate(0.5, 0.4, 0.6))  # q0 + q1 = 1: no information
    np.testing.assert_allclose(corrected_pass_rate(np.array([0.62, 0.5]), 0.9, 0.8), [0.6, 0.4286], atol=1e-4)


def _calibration_case(tmp_path: Path):
    # 20 conversations; the judge passes 12. The human labelled the first 10: 5 true passes (judge passed 4),
    # 5 true fails (judge passed 1) -> q1 = 0.8, q0 = 0.8.
    judge = [True] * 4 + [False] + [True] + [False] * 4 + [True] * 7 + [False] * 3
    human = [True] * 5 + [False] * 5
    lines = "".join(f"r{i},0,{'pass' if h else 'fail'},ana,\n" for i, h in enumerate(human))
    return rubric({"judge": judge}), load_labels([_csv(tmp_path, lines)])


def test_the_corrected_pass_rate_of_a_criterion_by_hand(tmp_path):
    runs, labels = _calibration_case(tmp_path)
    out = pass_rate_estimates(runs, labels, estimators=("judge_only", "rogan_gladen"), overall=False,
                              n_boot=200).set_index("estimator")
    scored = score_against_labels(runs, labels, overall=False, n_boot=50).set_index("statistic")
    assert out.loc["judge_only", "value"] == pytest.approx(12 / 20)
    assert (scored.loc["sensitivity", "value"], scored.loc["specificity", "value"]) == pytest.approx((0.8, 0.8))
    assert out.loc["rogan_gladen", "value"] == pytest.approx((0.6 + 0.8 - 1) / (0.8 + 0.8 - 1))
    assert out.loc["rogan_gladen", "value"] == pytest.approx(corrected_pass_rate(12 / 20, 0.8, 0.8))
    assert (out.loc["rogan_gladen", "n_labelled"], out.loc["judge_only", "n"]) == (10, 20)
    assert scored.loc["sensitivity", "n"] == 10
    low, high = out.loc["rogan_gladen", ["ci_low", "ci_high"]]
    assert 0 <= low <= out.loc["rogan_gladen", "value"] <= high <= 1


def test_score_against_labels_pairs_every_judge_with_every_human(tmp_path):
    runs, labels = _calibration_case(tmp_path)
    out = score_against_labels(runs, labels, n_boot=50)
    assert out[["rater_a", "rater_b"]].drop_duplicates().values.tolist() == [["judge", "ana"]]
    v = out.set_index("statistic")["value"]
    assert (v["sensitivity"], v["specificity"], v["percent_agreement"]) == pytest.approx((0.8, 0.8, 0.8))
    with pytest.raises(LabelError, match="equal judge names"):
        score_against_labels(runs, labels.assign(rater="judge"))


def test_several_humans_become_a_majority_reference(tmp_path):
    runs = rubric({"judge": [True, True, False, False]})
    lines = "r0,0,pass,a,\nr0,0,pass,b,\nr0,0,fail,c,\nr1,0,pass,a,\nr1,0,fail,b,\n" \
            "r2,0,fail,a,\nr2,0,fail,b,\nr3,0,fail,a,\n"
    labels = load_labels([_csv(tmp_path, lines)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        truth = label_values(labels, runs)
    # r1 is a tie (left out): the truth is r0 pass, r2 and r3 fail, which the judge (r0 pass, r2 and r3 fail) matches.
    assert truth.set_index("run_id")["label"].to_dict() == {"r0": 1.0, "r2": 0.0, "r3": 0.0}
    assert truth.set_index("run_id")["n_raters"].to_dict() == {"r0": 3, "r2": 2, "r3": 1}
    only_b = score_against_labels(runs, labels, overall=False, n_boot=20)
    only_b = only_b[only_b["rater_b"] == "b"].set_index("statistic")
    assert only_b.loc["specificity", "value"] == pytest.approx(1 / 2)  # b fails r1 and r2; the judge passed r1
