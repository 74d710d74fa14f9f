"""``compare(..., labels=...)``: each side's pass rates calibrated on its own labels, the change, the page section."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_compare_stats import frames

from convoeval.compare import CompareError, compare
from convoeval.compare.views import calibrated_changes, compare_sections
from convoeval.frames import RUBRIC_SCHEMA, RunFrames, typed_frame
from convoeval.stats.calibration.change import CHANGE_COLUMNS, calibrated_rate_changes

N = 60


def _side(target: str, rate: float, seed: int) -> tuple[RunFrames, np.ndarray]:
    """A side of N conversations whose lenient judge (sensitivity .95, specificity .4) rates criterion c1."""
    rng = np.random.default_rng(seed)
    side = frames([("s", i, 0, "pass", 8.0) for i in range(N)], target=target)
    truth = rng.random(N) < rate
    judge = np.where(truth, rng.random(N) < 0.95, rng.random(N) < 0.6)
    rubric = [{"run_id": f"{target}-{i}", "scenario": "s", "agent": "billing", "seed": i, "trial": 0,
               "criterion_index": 0, "criterion": "c1", "passed": bool(judge[i]), "judge_model": "j", "sample": 0}
              for i in range(N)]
    side = side.replace(rubric=typed_frame(rubric, RUBRIC_SCHEMA))
    return side, truth


def _labels(rows: list[tuple[str, bool]]) -> pd.DataFrame:
    return pd.DataFrame({"conversation": [r for r, _ in rows], "criterion": "c1",
                         "label": pd.array([v for _, v in rows], dtype="boolean"), "rater": "ana", "note": "",
                         "source": "human", "file": "ana.csv", "line": range(2, len(rows) + 2)})


def test_a_calibrated_drop_is_shown_per_criterion_beside_the_verdict():
    (base, tb), (cand, tc) = _side("a", 0.85, 1), _side("b", 0.35, 2)
    labels = _labels([(f"a-{i}", bool(tb[i])) for i in range(30)] + [(f"b-{i}", bool(tc[i])) for i in range(30)])
    result = compare(base, cand, n_boot=50, labels=labels)
    row = result.calibrated.set_index("criterion").loc["c1"]
    assert list(result.calibrated.columns) == list(CHANGE_COLUMNS)
    assert row["n_labelled_baseline"] == 30 and row["n_labelled_candidate"] == 30 and not row["refused"]
    assert row["ci_high"] < 0 < row["baseline"] - row["candidate"]
    assert row["difference"] == pytest.approx(row["candidate"] - row["baseline"])
    assert any(line.startswith("calibrated pass rate (ppi++): c1 — ") for line in result.lines())
    assert "Calibrated pass rates" in [title for title, _ in compare_sections(result)]
    assert "labelled (candidate)" in calibrated_changes(result).html
    # Without labels: no table, no section, nothing in the console lines.
    plain = compare(base, cand, n_boot=50)
    assert plain.calibrated.empty and "Calibrated pass rates" not in [t for t, _ in compare_sections(plain)]
    assert calibrated_changes(plain).text.startswith("No labels")


def test_too_few_labels_on_a_side_refuse_the_change_with_that_side_s_reason():
    (base, tb), (cand, tc) = _side("a", 0.8, 3), _side("b", 0.8, 4)
    labels = _labels([(f"a-{i}", bool(tb[i])) for i in range(30)] + [(f"b-{i}", bool(tc[i])) for i in range(5)])
    table = calibrated_rate_changes(base.rubric, cand.rubric, labels)
    assert table.loc[0, "refused"].startswith("candidate: only 5 labelled") and np.isnan(table.loc[0, "difference"])
    assert np.isfinite(table.loc[0, "baseline"])


def test_a_scenario_seed_trial_key_names_a_conversation_on_both_sides_and_is_refused():
    (base, _), (cand, _) = _side("a", 0.8, 5), _side("b", 0.8, 6)
    with pytest.raises(CompareError, match=r"ana.csv, line 2: conversation 's/0/0' is a scenario/seed/trial key"):
        compare(base, cand, n_boot=50, labels=_labels([("s/0/0", True)]))
