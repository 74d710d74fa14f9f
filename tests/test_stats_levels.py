"""Agreement beyond pass/fail (#45 item 7): Krippendorff's alpha at every level, the six ICCs, weighted kappa on more
than two categories, cohen_kappa refusing what is not pass/fail — each against the independent packages
(krippendorff, pingouin, sklearn, statsmodels) and the published examples (Krippendorff 2011; Shrout & Fleiss 1979).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from agreement_support import RAW_4RATERS, holistic
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa, to_table

from convoeval.stats import (
    ICC_FORMS,
    _metric,
    cohen_kappa,
    holistic_ratings,
    icc,
    krippendorff_alpha,
    multi_rater_agreement,
    score_agreement,
    weighted_kappa,
    weighted_kappa_ci,
)
from convoeval.stats.scores import _weighted

KRIPPENDORFF_2011 = np.array([[np.nan if v is None else float(v) for v in row] for row in RAW_4RATERS]).T
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
PINGOUIN_NAMES = {"icc_11": "ICC(1,1)", "icc_a1": "ICC(A,1)", "icc_c1": "ICC(C,1)", "icc_1k": "ICC(1,k)",
                  "icc_ak": "ICC(A,k)", "icc_ck": "ICC(C,k)"}


def _pingouin_icc(table: np.ndarray) -> dict[str, float]:
    long = pd.DataFrame([(i, j, v) for i, row in enumerate(table) for j, v in enumerate(row)],
                        columns=["target", "rater", "score"])
    out = pingouin.intraclass_corr(long, targets="target", raters="rater", ratings="score").set_index("Type")
    return {ours: float(out.loc[theirs, "ICC"]) for ours, theirs in PINGOUIN_NAMES.items()}


@pytest.mark.parametrize(("level", "published"), [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011_worked_example_at_every_level(level, published):
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, values 1..5.
    got = krippendorff_alpha(KRIPPENDORFF_2011, level=level)
    assert round(got, 3) == published
    assert got == pytest.approx(krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level),
                                abs=1e-13)


@pytest.mark.parametrize("level", _metric.LEVELS)
def test_the_vectorised_alpha_the_bootstrap_uses_is_the_krippendorff_package(level):
    rng = np.random.default_rng(11)
    for _ in range(8):
        data = rng.integers(1, 8, size=(40, 3)).astype(float)   # units × raters
        data[rng.random(data.shape) < 0.2] = np.nan
        values = np.unique(data[~np.isnan(data)])
        counts = np.stack([(data == v).sum(axis=1) for v in values], axis=1).astype(float)
        got = _metric.alpha(_metric.coincidences(counts).sum(axis=0), values, level)
        assert float(got) == pytest.approx(krippendorff.alpha(reliability_data=data.T, level_of_measurement=level),
                                           abs=1e-12)
        # A bootstrap replicate's weights equal the alpha of the units repeated that many times.
        weights = rng.integers(0, 3, size=len(data)).astype(float)
        repeated = np.repeat(data, weights.astype(int), axis=0)
        weighted = _metric.alpha(weights @ _metric.coincidences(counts), values, level)
        assert float(weighted) == pytest.approx(
            krippendorff.alpha(reliability_data=repeated.T, level_of_measurement=level), abs=1e-12)


def test_multi_rater_agreement_reports_alpha_at_the_level_asked_for():
    rows = [{"run_id": f"u{i}", "criterion": "c", "rater": f"R{j + 1}", "score": RAW_4RATERS[i, j]}
            for i in range(12) for j in range(4) if RAW_4RATERS[i, j] is not None]
    out = multi_rater_agreement(pd.DataFrame(rows), value="score", measurement="ordinal",
                                estimation=_est(200)).set_index("statistic")
    assert out.loc["krippendorff_alpha_ordinal", "value"] == pytest.approx(0.8153875, abs=5e-7)
    assert out.loc["krippendorff_alpha", "value"] == pytest.approx(0.74342, abs=5e-6)   # nominal still there
    low, high = out.loc["krippendorff_alpha_ordinal", ["ci_low", "ci_high"]]
    assert low < 0.815 < high
    with pytest.raises(ValueError, match="level of measurement"):
        multi_rater_agreement(pd.DataFrame(rows), value="score", measurement="ranks")


def test_the_six_iccs_are_shrout_and_fleiss_table_4_and_pingouin():
    got = icc(SHROUT_FLEISS)
    assert {k: round(v, 2) for k, v in got.items()} == {
        "icc_11": 0.17, "icc_a1": 0.29, "icc_c1": 0.71, "icc_1k": 0.44, "icc_ak": 0.62, "icc_ck": 0.91}
    assert set(got) == set(ICC_FORMS)
    reference = _pingouin_icc(np.array(SHROUT_FLEISS, dtype=float))
    assert got == pytest.approx(reference, abs=1e-13)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_iccs_match_pingouin_on_random_tables_and_the_weighted_form_on_duplicated_rows(k):
    rng = np.random.default_rng(k)
    table = np.clip(rng.normal(6, 2, (25, 1)) + rng.normal(0, 1.2, (25, k)) + np.arange(k) * 0.4, 0, 10).round()
    assert icc(table) == pytest.approx(_pingouin_icc(table), abs=1e-12)
    counts = rng.integers(0, 3, 25)
    weighted = {name: v[0] for name, v in icc(table, counts[None].astype(float)).items()}
    assert weighted == pytest.approx(icc(np.repeat(table, counts, axis=0)), abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_weighted_kappa_on_five_categories_is_sklearn_and_statsmodels(weights):
    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, 80)
    b = np.clip(a + rng.integers(-2, 3, 80), 1, 5)
    got = weighted_kappa(a.tolist(), b.tolist(), weights=weights)
    assert got == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-13)
    table = to_table(np.column_stack([a, b]), bins=np.arange(0.5, 6.5))[0]
    assert got == pytest.approx(cohens_kappa(table, wt={None: None, "linear": "linear",
                                                        "quadratic": "quadratic"}[weights]).kappa, abs=1e-12)
    # The contingency-table form the bootstrap uses, on weights, equals sklearn on the duplicated items.
    counts = rng.integers(0, 3, 80)
    cells = np.eye(25)[(a - 1) * 5 + (b - 1)]
    form = _metric.weighted_kappa_from_tables(counts @ cells, _metric.kappa_weights(5, weights))
    assert float(form) == pytest.approx(cohen_kappa_score(np.repeat(a, counts), np.repeat(b, counts),
                                                          weights=weights), abs=1e-12)


def test_weighted_kappa_takes_named_ordered_categories_and_refuses_unknown_ones():
    order = ["never", "sometimes", "always"]
    a, b = ["never", "always", "sometimes", "always"], ["never", "sometimes", "sometimes", "always"]
    assert weighted_kappa(a, b, weights="linear", labels=order) == pytest.approx(
        cohen_kappa_score([0, 2, 1, 2], [0, 1, 1, 2], weights="linear"))
    with pytest.raises(ValueError, match="not in labels"):
        weighted_kappa(a, ["often", *b[1:]], labels=order)
    with pytest.raises(ValueError, match="weights"):
        weighted_kappa(a, b, weights="cubic")  # type: ignore[arg-type]
    value, low, high = weighted_kappa_ci(a * 10, b * 10, labels=order, estimation=_est(300))
    assert low < value < high


@pytest.mark.parametrize("bad", [["pass", "fail", "pass"], [7.0, 0.0, 1.0], [2, 1, 0], [None, True, False]])
def test_cohen_kappa_refuses_labels_that_are_not_pass_fail(bad):
    # It used to cast them to bool: "fail" and 7 became passes and a kappa came out.
    with pytest.raises(ValueError, match="pass/fail"):
        cohen_kappa(bad, [True, False, True])


def test_cohen_kappa_still_takes_booleans_and_zero_one():
    assert cohen_kappa([1, 1, 0, 0], [True, False, False, False]) == 0.5
    assert cohen_kappa(np.array([1.0, 0.0, 1.0]), np.array([True, False, True])) == 1.0
    with pytest.raises(ValueError, match="one per item"):
        cohen_kappa([True, False], [True])


def _est(n_boot: int):
    from convoeval.stats import Estimation

    return Estimation(n_boot=n_boot)


def test_score_agreement_reports_the_new_statistics_equal_to_the_packages():
    rng = np.random.default_rng(21)
    a = np.clip(np.rint(rng.normal(6, 2, 40)), 0, 10)
    b = np.clip(a + rng.integers(-2, 3, 40), 0, 10)
    frame = pd.concat([holistic({"a": list(a)}), holistic({"b": list(b)})], ignore_index=True)
    table = score_agreement(holistic_ratings(frame, dimensions=("goal_completion",)), pairs=[("a", "b")],
                            estimation=_est(200)).set_index("statistic")
    reference = _pingouin_icc(np.column_stack([a, b]))
    for name in ICC_FORMS:
        assert table.loc[name, "value"] == pytest.approx(reference[name], abs=1e-12)
    for level in ("ordinal", "interval"):
        assert table.loc[f"krippendorff_alpha_{level}", "value"] == pytest.approx(
            krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement=level), abs=1e-12)
    assert table.loc["linear_weighted_kappa", "value"] == pytest.approx(
        cohen_kappa_score(a.astype(int), b.astype(int), labels=list(range(11)), weights="linear"), abs=1e-12)
    # The vectorised forms the intervals are computed from equal the packages on duplicated rows.
    counts = rng.integers(0, 3, 40)
    weighted = {k: v[0] for k, v in _weighted(a, b, counts[None].astype(float)).items()}
    da, db = np.repeat(a, counts), np.repeat(b, counts)
    assert weighted["krippendorff_alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([da, db]), level_of_measurement="ordinal"), abs=1e-12)
    assert weighted["linear_weighted_kappa"] == pytest.approx(
        cohen_kappa_score(da.astype(int), db.astype(int), labels=list(range(11)), weights="linear"), abs=1e-12)
    # The 0–10 statistics' default interval is the jackknife on Fisher's z (the one that holds at 30).
    assert "jackknife over run_id on Fisher's z with Student t" in table.loc["icc_a1", "method"]
    assert (table["ci_low"] <= table["value"]).all() and (table["value"] <= table["ci_high"]).all()
