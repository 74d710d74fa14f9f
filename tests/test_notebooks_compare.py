"""notebooks/compare.ipynb executed by papermill on two results folders made with fake models (no LLM call in the
kernel: the candidate is a folder), and its parameter checks."""

from __future__ import annotations

import pandas as pd
import papermill
import pytest
from compare_support import env, fake_models, run_baseline  # noqa: F401 - env is a fixture
from conftest import ROOT
from papermill.exceptions import PapermillExecutionError

from convoeval.compare import CompareError, compare, load_side, run_candidate
from convoeval.compare.notebook import RegressionError, check_regressions, compare_params

HAPPY = "billing-conv-happy-payment"


@pytest.fixture
def folders(env, monkeypatch):  # noqa: F811
    with fake_models(monkeypatch):
        base = run_baseline(env / "base", n_seeds=8, scenario=HAPPY)
        run_candidate(base, "clinic:billing?faults=wrong_amount", out=env / "cand", replay=True, progress="off")
    return env


def test_the_notebook_compares_two_folders_writes_the_page_and_gates(folders):
    out = folders / "executed.ipynb"
    params = {"baseline": str(folders / "base"), "candidate": str(folders / "cand"), "output_dir": str(folders / "page")}
    papermill.execute_notebook(str(ROOT / "notebooks" / "compare.ipynb"), str(out), parameters=params,
                               cwd=str(ROOT), progress_bar=False)
    page = (folders / "page" / "compare.html").read_text(encoding="utf-8")
    assert "REGRESSED" in page and "Agent identified the pending invoice" in page
    text = out.read_text(encoding="utf-8")
    assert "1 regression(s) statistically supported" in text or "regression(s) statistically supported" in text
    with pytest.raises(PapermillExecutionError, match="RegressionError"):
        papermill.execute_notebook(str(ROOT / "notebooks" / "compare.ipynb"), str(out), cwd=str(ROOT),
                                   parameters={**params, "fail_on_regression": True}, progress_bar=False)
    # With human labels on both sides (by run id), the page also shows the calibrated pass rates and their change.
    rubric = [load_side(folders / side).frames.rubric for side in ("base", "cand")]
    labelled = pd.concat([r.drop_duplicates(["run_id", "criterion"]) for r in rubric], ignore_index=True)
    labels = folders / "labels.csv"
    pd.DataFrame({"conversation": labelled["run_id"], "criterion": labelled["criterion"], "label": "pass",
                  "rater": "ana"}).to_csv(labels, index=False)
    papermill.execute_notebook(str(ROOT / "notebooks" / "compare.ipynb"), str(out), cwd=str(ROOT),
                               parameters={**params, "labels": str(labels)}, progress_bar=False)
    page = (folders / "page" / "compare.html").read_text(encoding="utf-8")
    assert "Calibrated pass rates" in page and "refused: baseline: only 8 labelled" in page


def test_parameters_are_checked_in_one_line(folders):
    with pytest.raises(CompareError, match="give exactly one candidate"):
        compare_params({"baseline": "x"})
    with pytest.raises(CompareError, match="alpha must be a number between 0 and 1"):
        compare_params({"baseline": "x", "candidate": "y", "alpha": 5})
    with pytest.raises(CompareError, match="replay needs a candidate run now"):
        compare_params({"baseline": "x", "candidate": "y", "replay": True})
    params = compare_params({"baseline": str(folders / "base"), "candidate": str(folders / "cand"),
                        "fail_on_regression": True})
    result = compare(folders / "base", folders / "cand", n_boot=100)
    with pytest.raises(RegressionError, match="criterion Agent identified the pending invoice"):
        check_regressions(result, params)
