"""Two raters on pass/fail: hand-computed tables, the libraries, degenerate data, the conversation bootstrap."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from agreement_support import rubric
from sklearn.metrics import cohen_kappa_score

from convoeval.stats import ALL, RESULT_COLUMNS, binary_agreement, confusion_counts, rubric_ratings
from convoeval.stats.binary import table_statistics

T, F = True, False
# A against reference B, one item per conversation: n11 = 4, n10 = 2, n01 = 1, n00 = 3.
A = [T, T, T, T, T, F, F, F, T, F]
B = [T, T, T, F, F, F, F, T, T, F]


def _values(table: pd.DataFrame, **where) -> dict[str, float]:
    rows = table
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return dict(zip(rows["statistic"], rows["value"], strict=True))


def test_hand_computed_two_by_two():
    ratings = rubric_ratings(rubric({"a": A, "b": B}))
    out = binary_agreement(ratings, pairs=[("a", "b")], n_boot=50)
    v = _values(out, criterion="c1")
    assert v["percent_agreement"] == pytest.approx(0.7)
    assert v["cohen_kappa"] == pytest.approx(0.4)  # po .7, pe .6·.5 + .4·.5 = .5
    assert v["gwet_ac1"] == pytest.approx((0.7 - 0.495) / 0.505)  # pi .55, pe 2·.55·.45
    assert v["krippendorff_alpha"] == pytest.approx(1 - 19 * 3 / (11 * 9))  # 1 - (2n-1)·disagree/(n_pass·n_fail)
    assert v["sensitivity"] == pytest.approx(4 / 5)
    assert v["specificity"] == pytest.approx(3 / 5)
    assert (v["pass_rate_a"], v["pass_rate_b"]) == pytest.approx((0.6, 0.5))
    assert list(out.columns) == ["criterion", "rater_a", "rater_b", *RESULT_COLUMNS]
    assert set(out["n"]) == {10} and set(out["n_items"]) == {10}


def test_closed_forms_equal_the_libraries_on_random_tables():
    rng = np.random.default_rng(7)
    for _ in range(25):
        a = rng.random(30) < rng.uniform(0.1, 0.9)
        b = np.where(rng.random(30) < rng.uniform(0.5, 1.0), a, ~a)
        table = np.array([np.sum(~a & ~b), np.sum(~a & b), np.sum(a & ~b), np.sum(a & b)])
        got = table_statistics(table)
        assert got["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=[False, True]), nan_ok=True)
        expected_alpha = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float),
                                            level_of_measurement="nominal")
        assert got["krippendorff_alpha"] == pytest.approx(expected_alpha)


def test_every_item_one_label_gives_nan_kappa_not_a_crash():
    out = binary_agreement(rubric_ratings(rubric({"a": [T] * 12, "b": [T] * 12})), n_boot=50)
    v = _values(out)
    assert np.isnan(v["cohen_kappa"]) and np.isnan(v["krippendorff_alpha"])
    assert v["gwet_ac1"] == 1.0 and v["percent_agreement"] == 1.0
    assert v["sensitivity"] == 1.0 and np.isnan(v["specificity"])  # no item the reference fails
    kappa = out[out["statistic"] == "cohen_kappa"].iloc[0]
    assert np.isnan(kappa["ci_low"]) and kappa["ci_too_wide"]


def test_all_raters_agree_with_both_labels():
    verdicts = [T, F] * 6
    out = binary_agreement(rubric_ratings(rubric({"a": verdicts, "b": verdicts})), n_boot=200)
    kappa = out[out["statistic"] == "cohen_kappa"].iloc[0]
    assert (kappa["value"], kappa["ci_low"], kappa["ci_high"]) == (1.0, 1.0, 1.0)
    assert not kappa["ci_too_wide"]  # 12 conversations, zero width


def test_missing_ratings_drop_the_item_for_that_pair():
    a = [T, T, None, F, F, T, T, F, F, T, T, F]
    b = [T, F, T, F, F, T, T, F, None, T, T, F]
    out = binary_agreement(rubric_ratings(rubric({"a": a, "b": b})), n_boot=50)
    assert set(out["n_items"]) == {10}
    v = _values(out)
    kept = [i for i in range(12) if a[i] is not None and b[i] is not None]
    assert v["cohen_kappa"] == pytest.approx(
        cohen_kappa_score([a[i] for i in kept], [b[i] for i in kept], labels=[False, True]))


def test_single_conversation_is_flagged_and_does_not_crash():
    frame = rubric({"a": [T, F, T], "b": [T, F, F]}, criteria=("c1", "c2", "c3"))
    out = binary_agreement(rubric_ratings(frame), n_boot=50)
    pooled = out[out["criterion"] == ALL]
    assert set(pooled["n"]) == {1} and set(pooled["n_items"]) == {3}
    assert out["ci_too_wide"].all()  # fewer than 10 conversations
    assert _values(pooled)["percent_agreement"] == pytest.approx(2 / 3)


def test_per_criterion_and_pooled_rows():
    rng = np.random.default_rng(3)
    a = list(rng.random(60) < 0.5)
    b = [x if rng.random() < 0.8 else not x for x in a]
    out = binary_agreement(rubric_ratings(rubric({"a": a, "b": b}, criteria=("c1", "c2", "c3"))), n_boot=50)
    assert list(pd.unique(out["criterion"])) == ["c1", "c2", "c3", ALL]
    pooled = out[(out["criterion"] == ALL) & (out["statistic"] == "percent_agreement")].iloc[0]
    assert pooled["value"] == pytest.approx(np.mean(np.array(a) == np.array(b)))
    assert (pooled["n"], pooled["n_items"]) == (20, 60)


def test_bootstrap_resamples_whole_conversations():
    # Conversation r0 agrees on all 10 criteria, r1 disagrees on all 10. Resampling conversations gives replicates
    # of 1, 0.5 or 0 agreement only; resampling criterion rows would give a narrow interval around 0.5.
    criteria = tuple(f"c{i}" for i in range(10))
    frame = rubric({"a": [T] * 10 + [T] * 10, "b": [T] * 10 + [F] * 10}, criteria=criteria)
    out = binary_agreement(rubric_ratings(frame), by=(), n_boot=400, seed=1)
    row = out[out["statistic"] == "percent_agreement"].iloc[0]
    assert (row["value"], row["ci_low"], row["ci_high"]) == (0.5, 0.0, 1.0)


def test_bootstrap_is_deterministic_for_a_seed():
    rng = np.random.default_rng(11)
    a = list(rng.random(30) < 0.5)
    b = [x if rng.random() < 0.8 else not x for x in a]
    ratings = rubric_ratings(rubric({"a": a, "b": b}))
    first, again = (binary_agreement(ratings, n_boot=100, seed=5) for _ in range(2))
    other = binary_agreement(ratings, n_boot=100, seed=6)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["ci_low"], other["ci_low"])
    kappa = first[first["statistic"] == "cohen_kappa"].iloc[0]
    assert kappa["ci_low"] <= kappa["value"] <= kappa["ci_high"]


def test_pairs_reference_and_default_pairs():
    ratings = rubric_ratings(rubric({"j1": [T, F] * 6, "j2": [T, T] * 6, "human": [T, F] * 6}))
    pairs = binary_agreement(ratings, n_boot=10)[["rater_a", "rater_b"]].drop_duplicates()
    assert pairs.values.tolist() == [["human", "j1"], ["human", "j2"], ["j1", "j2"]]
    ref = binary_agreement(ratings, reference="human", n_boot=10)[["rater_a", "rater_b"]].drop_duplicates()
    assert ref.values.tolist() == [["j1", "human"], ["j2", "human"]]
    with pytest.raises(ValueError, match="unknown rater"):
        binary_agreement(ratings, pairs=[("j1", "nobody")])


def test_two_verdicts_per_item_and_rater_is_an_error_that_says_what_to_do():
    frame = rubric({"a": [T, F] * 6, "b": [T, T] * 6}, samples=2)
    with pytest.raises(ValueError, match="samples="):
        binary_agreement(rubric_ratings(frame, samples="each").assign(rater=lambda f: f["judge"]))


@pytest.mark.parametrize(("votes", "expected"), [
    ([T, T, F], True), ([T, F], False), ([None, None], None), ([T, None], True), ([F, None, None], False),
])
def test_majority_of_samples_matches_the_composite_score(votes, expected):
    frame = rubric({"a": votes}, samples=len(votes))
    got = rubric_ratings(frame)["passed"].iloc[0]
    assert (got is pd.NA and expected is None) or got == expected


def test_sample_modes():
    frame = rubric({"a": [F, T, T]}, samples=3)
    assert not rubric_ratings(frame, samples="first")["passed"].iloc[0]
    assert rubric_ratings(frame, samples=2)["passed"].tolist() == [True]
    each = rubric_ratings(frame, samples="each")
    assert each["rater"].tolist() == ["a #0", "a #1", "a #2"] and set(each["judge"]) == {"a"}
    with pytest.raises(ValueError, match="samples must be"):
        rubric_ratings(frame, samples="median")


def test_rater_from_several_columns():
    frame = rubric({"m": [T, F]}).assign(prompt_version="v2")
    assert rubric_ratings(frame, rater=("judge_model", "prompt_version"))["rater"].unique().tolist() == ["m | v2"]


def test_confusion_counts_are_the_table():
    out = confusion_counts(rubric_ratings(rubric({"a": A, "b": B})), pairs=[("a", "b")])
    cells = {(r.a_passed, r.b_passed): r.count for r in out.itertuples()}
    assert cells == {(F, F): 3, (F, T): 1, (T, F): 2, (T, T): 4}
