"""Three or more raters: irrCAC's published values, statsmodels and krippendorff, missing and degenerate data."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from agreement_support import RAW_4RATERS, rubric
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from convoeval.stats import (
    ALL,
    _nominal,
    binary_agreement,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    multi_rater_agreement,
    rubric_ratings,
)


def test_irrcac_published_values_on_raw_4raters():
    # irrCAC (Gwet): AC1 0.77544, Fleiss' kappa 0.76117 on raw_4raters, which has missing ratings.
    assert gwet_ac1(RAW_4RATERS) == pytest.approx(0.77544, abs=5e-6)
    assert fleiss_kappa(RAW_4RATERS) == pytest.approx(0.76117, abs=5e-6)
    # The same data is Krippendorff's own example: nominal alpha 0.743.
    assert krippendorff_alpha(RAW_4RATERS.T.astype(float)) == pytest.approx(0.743, abs=5e-4)


def test_multi_rater_agreement_reproduces_the_published_values_from_a_ratings_frame():
    rows = [{"run_id": f"u{i}", "criterion": "c", "rater": f"R{j + 1}", "category": RAW_4RATERS[i, j]}
            for i in range(12) for j in range(4) if RAW_4RATERS[i, j] is not None]
    out = multi_rater_agreement(pd.DataFrame(rows), value="category", n_boot=100)
    v = dict(zip(out["statistic"], out["value"], strict=True))
    assert v["gwet_ac1"] == pytest.approx(0.77544, abs=5e-6)
    assert v["fleiss_kappa"] == pytest.approx(0.76117, abs=5e-6)
    assert v["krippendorff_alpha"] == pytest.approx(0.74342, abs=5e-6)
    assert v["percent_agreement"] == pytest.approx(0.81818, abs=5e-6)  # irrCAC's pa 0.818
    assert set(out["n"]) == {12} and set(out["raters"]) == {"R1, R2, R3, R4"}


def test_fleiss_kappa_is_statsmodels_on_complete_data_and_the_missing_data_form_agrees():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 3, size=(25, 4))
    table, _ = aggregate_raters(data)
    expected = sm_fleiss_kappa(table, method="fleiss")
    assert fleiss_kappa(data) == pytest.approx(expected)
    with_empty_rater = np.column_stack([data.astype(object), [None] * 25])  # forces the missing-data path
    assert fleiss_kappa(with_empty_rater) == pytest.approx(expected)


def test_vectorised_alpha_equals_krippendorff_with_missing_ratings():
    rng = np.random.default_rng(4)
    for _ in range(10):
        data = rng.integers(0, 2, size=(30, 3)).astype(float)
        data[rng.random(data.shape) < 0.2] = np.nan
        sums = _nominal.unit_sums(_nominal.unit_counts(data, 2)).sum(axis=0)
        expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement="nominal")
        assert _nominal.coefficients(sums, 2)["krippendorff_alpha"] == pytest.approx(expected)


def test_bootstrap_weights_equal_duplicated_units():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 2, size=(12, 3)).astype(float)
    counts = rng.integers(0, 3, size=12)
    sums = counts @ _nominal.unit_sums(_nominal.unit_counts(data, 2))
    duplicated = np.repeat(data, counts, axis=0)
    assert _nominal.coefficients(sums, 2)["gwet_ac1"] == pytest.approx(gwet_ac1(duplicated, categories=[0.0, 1.0]))
    assert _nominal.coefficients(sums, 2)["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=duplicated.T, level_of_measurement="nominal"))


def test_two_raters_give_the_same_chance_corrected_values_as_binary_agreement():
    rng = np.random.default_rng(6)
    a = list(rng.random(40) < 0.6)
    b = [x if rng.random() < 0.8 else not x for x in a]
    ratings = rubric_ratings(rubric({"a": a, "b": b}))
    multi = multi_rater_agreement(ratings, n_boot=50).set_index("statistic")["value"]
    pair = binary_agreement(ratings, n_boot=50).set_index("statistic")["value"]
    for stat in ("gwet_ac1", "krippendorff_alpha", "percent_agreement"):
        assert multi[stat] == pytest.approx(pair[stat])


def test_every_rater_gives_every_item_one_label():
    ratings = rubric_ratings(rubric({"a": [True] * 10, "b": [True] * 10, "c": [True] * 10}))
    v = multi_rater_agreement(ratings, n_boot=50).set_index("statistic")["value"]
    assert np.isnan(v["fleiss_kappa"]) and np.isnan(v["krippendorff_alpha"])
    assert v["gwet_ac1"] == 1.0 and v["percent_agreement"] == 1.0


def test_missing_ratings_and_single_rated_items():
    frame = rubric({"a": [True, False, True, None], "b": [True, False, None, None], "c": [True, True, True, None]})
    out = multi_rater_agreement(rubric_ratings(frame), n_boot=50)
    assert set(out["n_items"]) == {3}  # the item nobody rated is dropped; the one rated once counts for shares
    v = out.set_index("statistic")["value"]
    assert v["percent_agreement"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    data = np.array([[1, 1, 1], [0, 0, 1], [1, None, 1]], dtype=object)
    assert v["gwet_ac1"] == pytest.approx(gwet_ac1(data, categories=[0, 1]))


def test_judge_samples_as_raters_per_criterion_and_pooled():
    frame = rubric({"j": [True, True, False, True, True, True] * 5}, criteria=("c1", "c2"), samples=3)
    out = multi_rater_agreement(rubric_ratings(frame, samples="each"), n_boot=50)
    assert list(pd.unique(out["criterion"])) == ["c1", "c2", ALL]
    assert set(out["n_raters"]) == {3}
    c2 = out[(out["criterion"] == "c2") & (out["statistic"] == "percent_agreement")]["value"].iloc[0]
    assert c2 == 1.0


def test_unknown_rater_is_an_error():
    with pytest.raises(ValueError, match="unknown rater"):
        multi_rater_agreement(rubric_ratings(rubric({"a": [True, False]})), raters=["a", "zz"])
