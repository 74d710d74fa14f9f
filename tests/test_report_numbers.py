"""Numbers in every table the notebooks and reports show are rounded for reading.

The agreement notebook's fidelity table showed ``share_flagged`` as ``0.6666666666666666``. Tables now format
numbers by column (``convoeval._util.html_blocks.number_text``): scores to one decimal, rates and statistics to two,
p-values to three, counts as whole numbers. The data behind them (CSV, Parquet, ``study.tables``) keeps full
precision: only what a reader sees is rounded.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from agreement_support import assertion_rows, holistic, rubric, runs
from report_support import conversation, merge, run_data

from convoeval import report
from convoeval._util.html_blocks import number_text
from convoeval.agreement import views
from convoeval.agreement.study import Study, compute_tables
from convoeval.fidelity import FIDELITY_SCHEMA
from convoeval.frames import RunFrames, typed_frame
from convoeval.stats import Estimation

#: A number shown unrounded (0.6666666666666666, 6.66667). Only p-values keep three decimals (0.046): four or more
#: is never meant.
LONG_DECIMALS = re.compile(r"\d\.\d{4,}")


def _visible(html: str) -> str:
    """The text of an HTML piece (tags and their inline styles removed)."""
    return re.sub(r"<[^>]*>", " ", html)


@pytest.mark.parametrize(("value", "column", "shown"), [
    (2 / 3, "share_flagged", "0.67"),
    (2 / 3, "value", "0.67"),
    (10 / 3, "rubric_score", "3.3"),
    (7.0, "Score", "7.0"),
    (np.float64(42.0), "seed", "42"),
    (3.0, "turn", "3"),
    (np.int64(4), "n", "4"),
    (0.04567, "p_value", "0.046"),
    (0.0004, "p_value", "<0.001"),
    (-3e-16, "ci_low", "0.00"),
    (1.0, "share_flagged", "1.00"),
    (2.5, "n", "2.50"),  # not whole: shown as a number, not silently truncated
    (True, "ci_too_wide", "True"),
    ("parroting", "check", "parroting"),
    (None, "value", ""),
    (float("nan"), "value", ""),
])
def test_a_number_reads_by_its_column(value, column, shown):
    assert number_text(value, column) == shown


def _study() -> Study:
    """Three saved conversations judged by two judges; the patient parroted in two of them, a probe moved one."""
    ids = ["r0", "r1", "r2"]
    judges = {"a": [True, False, True, True, False, True], "b": [True, True, True, False, False, True]}
    judged = rubric(judges, criteria=("c1", "c2"), assertions={"c1": "a1"}).rename(columns={"judge_model": "judge"})
    scores = holistic({"a": [8.0, 7.0, 6.0], "b": [7.0, 7.0, 9.0]}).rename(columns={"judge_model": "judge"})
    frames = RunFrames.from_frames({
        "runs": runs(dict.fromkeys(ids, True)).assign(target="clinic:billing"),
        "assertions": assertion_rows([(r, "a1", i % 2 == 0) for i, r in enumerate(ids)])})
    flags = typed_frame([{"run_id": r, "scenario": "s", "check": "parroting", "flagged": r != "r2", "turn": 2,
                          "detail": "copied the agent"} for r in ids], FIDELITY_SCHEMA)
    pairs = pd.DataFrame([{"probe": "criteria_order", "run_id": r, "scenario": "s", "instrument": "rubric",
                           "item": "c1", "before": b, "after": a, "error": None}
                          for r, b, a in (("r0", True, False), ("r1", True, True), ("r2", False, False))])
    study = Study(out_dir=Path("unused"), frames=frames,
                  judged={"rubric": judged, "holistic": scores, "fidelity": flags, "pairs": pairs})
    study.tables = compute_tables(study, estimation=Estimation(n_boot=100))
    study.meta = {"judges": {"a": None, "b": None}, "params": {"probes": ["criteria_order"]}}
    return study


def test_the_agreement_fidelity_table_shows_share_flagged_rounded():
    study = _study()
    assert study.tables["fidelity"]["share_flagged"].iloc[0] == pytest.approx(2 / 3)  # the data keeps precision
    shown = _visible(str(views.fidelity_view(study)))
    assert "0.67" in shown and "0.666" not in shown, shown
    probes = _visible(str(views.probe_view(study))).split()
    assert probes[probes.index("criteria_order") + 4:][:3] == ["0.67", "0.33", "-0.33"], probes  # before, after, effect


def test_no_table_of_the_agreement_notebook_shows_an_unrounded_number():
    study = _study()
    assert not study.tables["probes"].empty and not study.tables["judges"].empty  # the tables are really drawn
    for view in (views.study_overview, views.judges_view, views.database_view, views.fault_view, views.labels_view,
                 views.consistency_view, views.probe_view, views.fidelity_view, views.study_conclusions):
        shown = _visible(str(view(study)))
        assert not LONG_DECIMALS.search(shown), (view.__name__, LONG_DECIMALS.findall(shown))


def test_no_table_of_the_run_report_shows_an_unrounded_number():
    # A rubric of 3 criteria with 1 passed: a rubric score of 3.333…, a holistic of 6.666…
    run = run_data(merge(conversation("r1", rubric=[True, False, False], score=3.3, holistic=20 / 3, status="fail"),
                         conversation("r2", seed=7, rubric=[True, True, False], score=6.7, holistic=7.25)))
    shown = _visible(report.render_html(run))
    assert not LONG_DECIMALS.search(shown), LONG_DECIMALS.findall(shown)
    assert "correctness 6.7" in shown and "correctness = 6.7" in shown  # the transcript and the failures table


def test_the_compare_notebooks_details_read_in_the_unit_of_each_block():
    from types import SimpleNamespace

    from convoeval.compare.views import details

    def block(key, name, a, b, low, high):
        return pd.DataFrame([{key: name, "baseline": a, "candidate": b, "difference": b - a, "ci_low": low,
                              "ci_high": high}])

    cmp = SimpleNamespace(
        pass_rates=block("scenario", "s", 2 / 3, 1.0, -0.1, 0.6),
        holistic=block("dimension", "tone", 20 / 3, 7.25, -0.333, 1.5),
        pass_k=block("k", 2, 1 / 3, 2 / 3, 0.0, 0.5),
        usage=pd.concat([block("metric", "agent_tokens", 12345.6, 13456.7, 200.5, 2000.25),
                         block("metric", "eval_cost_usd", 0.00123, 0.00246, 0.0001, 0.002)]))
    cells = [c.strip() for c in _visible(str(details(cmp))).split("  ") if c.strip()]
    assert ["s", "67%", "100%", "+33%", "[-10%, +60%]"] == cells[cells.index("s"):][:5], cells
    assert ["tone", "6.7", "7.2", "+0.6", "[-0.3, +1.5]"] == cells[cells.index("tone"):][:5], cells
    assert ["agent_tokens", "12,346", "13,457", "+1,111", "[+200, +2,000]"] == \
        cells[cells.index("agent_tokens"):][:5], cells
    assert ["eval_cost_usd", "0.0012", "0.0025", "+0.0012", "[+0.0001, +0.002]"] == \
        cells[cells.index("eval_cost_usd"):][:5], cells
    assert "e+0" not in str(details(cmp))  # no 1.2e+04
