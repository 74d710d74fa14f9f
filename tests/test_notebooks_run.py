"""notebooks/run.ipynb executed by papermill against the fake OpenAI-compatible server (a real kernel; slow).

The fake server answers every call with a schema-valid placeholder, so these tests check the notebook's plumbing
(every cell runs, the report has its parts, parameters are checked), not the numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import papermill
import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "notebooks" / "run.ipynb"

pytestmark = pytest.mark.notebook


def _execute(tmp_path: Path, **parameters):
    return papermill.execute_notebook(str(RUN), str(tmp_path / "executed.ipynb"), parameters=parameters,
                                      progress_bar=False, cwd=str(ROOT))


def _outputs(nb) -> dict[str, list[dict]]:
    """Cell source -> its outputs, for the code cells."""
    return {c["source"]: c.get("outputs", []) for c in nb["cells"] if c["cell_type"] == "code"}


def test_papermill_run_of_the_billing_agent_produces_the_whole_report(fake_llm, tmp_path):
    out = tmp_path / "run"
    nb = _execute(tmp_path, agent="billing", output_dir=str(out))
    outputs = _outputs(nb)
    html = lambda source: "".join(o["data"].get("text/html", "") for o in outputs[source])
    assert "Local demo model" not in html("report.what_ran(run)")  # the fake server is not the local model
    assert "openai-compatible" in html("report.what_ran(run)")
    score_table = html("report.score_table(run)")
    assert score_table.count("billing-") >= 6 and "<table" in score_table
    for source in ("report.plot_components(run)", "report.plot_criteria(run)", "report.plot_holistic(run)"):
        assert outputs[source][0]["data"]["image/png"]
    assert html("report.transcripts(run)").count("<details style=\"margin:6px 0") == 6
    # The fake server answers every call with a valid reply: nothing failed, and the section says so.
    assert "No errors: every conversation finished and every judge answered." in html("report.errors(run)")
    assert "goal_completion" in html("report.database_truth(run)")  # judges against the database, every run
    # the run's data beside the report, readable without re-running anything
    for name in ("scores", "transcripts", "rubric", "holistic", "calls"):
        assert (out / "data" / f"{name}.parquet").exists() and (out / "data" / f"{name}.csv").exists()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 3 and "billing-conv-happy-payment" in page
    assert fake_llm.stats["requests"] > 20
    assert html("report.calibrated_rates(run)").count("No labels") == 1 and "Calibrated pass rates" not in page
    # With human labels (the labels parameter) the same folder's report calibrates on them; no conversation re-runs.
    rubric = pd.read_parquet(out / "data" / "rubric.parquet")
    first = rubric[rubric["criterion_index"] == 0].drop_duplicates("run_id")
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"conversation": first["run_id"], "criterion": 0, "label": "pass", "rater": "ana"}).to_csv(
        labels, index=False)
    before = fake_llm.stats["requests"]
    again = _outputs(_execute(tmp_path, agent="billing", output_dir=str(out), labels=str(labels)))
    assert fake_llm.stats["requests"] == before
    shown = "".join(o["data"].get("text/html", "") for o in again["report.calibrated_rates(run)"])
    assert "raw judge rate" in shown and "refused: only" in shown and ">human<" in shown
    assert "Calibrated pass rates" in (out / "report.html").read_text(encoding="utf-8")


def test_a_bad_parameter_value_fails_with_one_line(fake_llm, tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as err:
        _execute(tmp_path, seed="forty-two")
    assert err.value.ename == "ConfigError"
    assert err.value.evalue.startswith("seed must be integers") and "\n" not in err.value.evalue
    assert err.value.traceback == [f"ConfigError: {err.value.evalue}"]  # no stack trace in the notebook
    assert fake_llm.stats["requests"] == 0


def test_a_mistyped_parameter_name_does_not_pass_silently(fake_llm, tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match=r"unknown setting\(s\) agnet"):
        _execute(tmp_path, agnet="scheduling")


def test_replay_only_cache_miss_fails_the_notebook_with_how_to_re_record(fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_CACHE", "replay")
    with pytest.raises(papermill.PapermillExecutionError) as err:
        _execute(tmp_path, agent="support", scenario="support-conv-wants-human-es", output_dir=str(tmp_path / "r"))
    assert err.value.ename == "ReplayMissError"
    assert "scripts/record-nbval-cache.sh" in err.value.evalue and "CONVOEVAL_CACHE=rw" in err.value.evalue
    assert fake_llm.stats["requests"] == 0
    executed = json.loads((tmp_path / "executed.ipynb").read_text())
    assert not (tmp_path / "r" / "report.html").exists() and executed["metadata"]["papermill"]["exception"]
