"""pass^k, flip rates and score spread against values computed by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from convoeval.report.stability import flip_rates, pass_hat_k, score_spread


def _scores(statuses: dict[str, list[str]], agent: str = "a") -> pd.DataFrame:
    rows = [{"agent": agent, "scenario": s, "status": st, "score": {"pass": 9.0, "fail": 3.0}.get(st)}
            for s, sts in statuses.items() for st in sts]
    return pd.DataFrame(rows)


def test_pass_hat_k_is_the_mean_over_scenarios_of_c_choose_k_over_n_choose_k():
    # s1: 3 of 4 pass, s2: 4 of 4, s3: 1 of 4
    scores = _scores({"s1": ["pass", "pass", "pass", "fail"], "s2": ["pass"] * 4,
                      "s3": ["pass", "fail", "fail", "error"]})
    got = pass_hat_k(scores).set_index("k")["pass_hat_k"]
    assert list(got.index) == [1, 2, 3, 4]
    assert got[1] == pytest.approx((3 / 4 + 1 + 1 / 4) / 3)
    assert got[2] == pytest.approx((3 / 6 + 1 + 0) / 3)  # C(3,2)/C(4,2) = 3/6, C(1,2) = 0
    assert got[3] == pytest.approx((1 / 4 + 1 + 0) / 3)
    assert got[4] == pytest.approx(1 / 3)


def test_pass_hat_k_per_agent_and_uneven_counts():
    scores = pd.concat([_scores({"s1": ["pass", "fail"]}, "a"), _scores({"s1": ["pass", "pass", "pass"]}, "b")])
    got = pass_hat_k(scores, ks=[1, 3]).set_index(["agent", "k"])
    assert got.loc[("a", 1), "pass_hat_k"] == 0.5
    assert math.isnan(got.loc[("a", 3), "pass_hat_k"]) and got.loc[("a", 3), "scenarios"] == 0  # n=2 < k=3
    assert got.loc[("b", 3), "pass_hat_k"] == 1.0


def test_pass_hat_k_counts_warn_only_when_asked_and_never_errors():
    scores = _scores({"s": ["warn", "pass", "error"]})
    assert pass_hat_k(scores, ks=[1])["pass_hat_k"].iloc[0] == pytest.approx(1 / 3)
    assert pass_hat_k(scores, ks=[1], passing=("pass", "warn"))["pass_hat_k"].iloc[0] == pytest.approx(2 / 3)
    assert pass_hat_k(scores.iloc[0:0]).empty


def _rubric(verdicts: list[list[bool | None]]) -> pd.DataFrame:
    """One conversation per inner list (its judge samples), one criterion."""
    rows = [{"agent": "a", "scenario": "s", "criterion_index": 0, "criterion": "c", "run_id": f"r{i}",
             "passed": v, "sample": j} for i, samples in enumerate(verdicts) for j, v in enumerate(samples)]
    return pd.DataFrame(rows).astype({"passed": "boolean"})


def test_flip_rate_is_the_share_of_disagreeing_pairs():
    # 2 passes, 2 fails: 4 of the 6 pairs disagree
    got = flip_rates(_rubric([[True], [True], [False], [False]])).iloc[0]
    assert got["flip_rate"] == pytest.approx(4 / 6) and not got["unanimous"]
    assert flip_rates(_rubric([[True], [True], [True]])).iloc[0]["flip_rate"] == 0.0


def test_flip_rate_uses_the_majority_of_samples_and_drops_ties_and_errors():
    got = flip_rates(_rubric([[True, True, False], [True, False], [None], [False, False, True]])).iloc[0]
    # r0 -> pass, r1 tie -> left out, r2 only an error -> left out, r3 -> fail
    assert (got["conversations"], got["passes"], got["fails"]) == (2, 1, 1)
    assert got["flip_rate"] == 1.0
    single = flip_rates(_rubric([[True]])).iloc[0]
    assert math.isnan(single["flip_rate"])  # one conversation: nothing to compare


def test_score_spread_across_seeds():
    scores = pd.DataFrame({"agent": "a", "scenario": "s", "status": ["pass", "fail", "error"],
                           "score": [9.0, 3.0, float("nan")]})
    got = score_spread(scores).iloc[0]
    assert (got["conversations"], got["errors"], got["mean"], got["range"]) == (3, 1, 6.0, 6.0)
    assert got["std"] == pytest.approx(math.sqrt(18))
