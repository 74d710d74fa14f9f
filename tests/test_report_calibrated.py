"""The run report's calibrated pass rates: the ``labels`` setting (a flag, a notebook parameter), the section, the page."""

from __future__ import annotations

import numpy as np
import pytest
from agreement_support import assertion_rows, rubric
from report_support import conversation, merge, run_data

from convoeval._util.paths import project_root
from convoeval.frames import RunFrames
from convoeval.pipeline import ConfigError, EvalConfig
from convoeval.pipeline.results import EvalResult
from convoeval.report import calibrated_rates, calibrated_rates_frame
from convoeval.report.page import render_html, sections


def _run(tmp_path, labels):
    rng = np.random.default_rng(4)
    truth = rng.random((60, 2)) < 0.5
    judge = np.where(truth, rng.random((60, 2)) < 0.95, rng.random((60, 2)) < 0.6)   # lenient
    frame = rubric({"judge-x": list(judge.ravel())}, criteria=("c1", "c2"), assertions={"c1": "paid"})
    checks = assertion_rows([(f"r{i}", "paid", bool(truth[i, 0])) for i in range(60)])
    path = tmp_path / "labels.csv"
    path.write_text("conversation,criterion,label,rater\n" + "".join(
        f"r{i},c2,{'pass' if truth[i, 1] else 'fail'},ana\n" for i in range(20)), encoding="utf-8")
    meta = {"config": {"labels": str(path) if labels else None}}
    return EvalResult(out_dir=tmp_path, frames=RunFrames.from_frames({"rubric": frame, "assertions": checks}),
                      meta=meta), truth


def test_with_labels_the_report_calibrates_on_them_and_on_the_database(tmp_path):
    run, truth = _run(tmp_path, labels=True)
    frame = calibrated_rates_frame(run, n_boot=200)
    got = frame.set_index(["labels", "criterion", "estimator"])
    assert got.loc[("human", "c2", "labels_only"), "value"] == pytest.approx(truth[:20, 1].mean())
    assert got.loc[("human", "c2", "ppi++"), "n_labelled"] == 20 and not got.loc[("human", "c2", "ppi++"), "refused"]
    assert got.loc[("database", "c1", "labels_only"), "value"] == pytest.approx(truth[:, 0].mean())
    assert ("human", "c1", "ppi++") in got.index     # refused: no human label on c1, with the reason
    assert got.loc[("human", "c1", "ppi++"), "refused"].startswith("only 0 labelled")
    shown = calibrated_rates(run)
    assert "raw judge rate" in shown.html and "PPI++" in shown.html and "refused: only 0 labelled" in shown.html


def test_without_labels_the_section_says_so_and_the_page_leaves_it_out(tmp_path):
    run, _ = _run(tmp_path, labels=False)
    assert calibrated_rates_frame(run).empty
    assert calibrated_rates(run).text.startswith("No labels")


def test_the_report_page_has_the_section_only_when_the_run_has_labels(tmp_path):
    rows = merge(*[conversation(f"c{i}", seed=i, rubric=[i % 3 > 0, True]) for i in range(12)])
    path = tmp_path / "ana.csv"
    path.write_text("conversation,criterion,label,rater\n" + "".join(
        f"c{i},0,{'pass' if i % 4 else 'fail'},ana\n" for i in range(12)), encoding="utf-8")
    with_labels = run_data(rows, tmp_path, meta={"config": {"labels": str(path)}})
    assert [h for h, _ in sections(with_labels)].index("Calibrated pass rates") == 6
    page = render_html(with_labels)
    assert "Calibrated pass rates" in page and "Rogan–Gladen" in page and "criterion 0 &lt;i&gt;" in page
    assert "Calibrated pass rates" not in render_html(run_data(rows, tmp_path))


def test_the_labels_setting_must_name_an_existing_file():
    assert EvalConfig(labels="evals/labels/example.csv").labels == "evals/labels/example.csv"
    with pytest.raises((ConfigError, ValueError), match="does not exist"):
        EvalConfig(labels="evals/labels/nope.csv")
    assert (project_root() / "evals/labels").is_dir()
