"""notebooks/redteam.ipynb executed for real (no LLM in a red team) through papermill and ``convoeval notebook``, on
one agent and one locale with a known fault: every section's output, report.html, and ``fail_on_leak``.

A kernel per test, slow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import papermill
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "redteam.ipynb"

pytestmark = pytest.mark.notebook


#: The library the counts below were written on (#23); later attacks add cases, not meaning.
FIRST_ATTACKS = [str(ROOT / "evals" / "attacks" / f"{name}.yaml") for name in (
    "authority", "crescendo", "impersonation", "injection", "legitimate-daughter", "new-number", "third-party",
    "third-party-cancel", "third-party-pay", "urgency")]


def _parameters(tmp_path: Path, **extra) -> dict:
    return {"agents": ["billing"], "locales": ["en"], "faults": ["discloses_third_party"], "concurrency": 2,
            "attacks": FIRST_ATTACKS,
            "store": f"sqlite:///{tmp_path}/store.db", "output_dir": str(tmp_path / "out"), **extra}


def _html(nb: dict, source: str) -> str:
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and c["source"] == source)
    return "".join(o.get("data", {}).get("text/html", "") for o in cell["outputs"])


def test_the_notebook_shows_every_section_and_writes_report_html(tmp_path):
    nb = papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "executed.ipynb"), cwd=str(ROOT),
                                    parameters=_parameters(tmp_path), progress_bar=False)
    out = tmp_path / "out"
    cases = pd.read_csv(out / "data" / "attacks.csv")  # a results folder: the red team's frames in data/
    leaked = int(cases["leaked"].sum())
    assert len(cases) == 9 and leaked == 5  # the results files beside the report
    assert f"{leaked - 1} of 8 attack(s) leaked" in _html(nb, "views.redteam_overview(red)")  # + the legitimate one
    heatmap = next(c for c in nb["cells"] if c["source"] == "views.asr_heatmap(red)")["outputs"][0]
    assert heatmap["data"]["image/png"] and "strategy and agent" in heatmap["data"]["text/plain"]
    assert "[9%, 91%]" in _html(nb, "views.asr_table(red)")  # third_party on billing: 1 of 2, Wilson 95%
    assert "<code>appointment</code>" in _html(nb, "views.leak_kinds(red)")
    assert "0 of 1 legitimate request(s) not served" in _html(nb, "views.over_refusal_table(red)")
    assert "1 of 1 own request(s) served" in _html(nb, "views.utility_table(red)")
    transcripts = _html(nb, "views.leak_transcripts(red)")
    assert transcripts.count("<details") == leaked and "<mark" in transcripts and "LEAK" in transcripts
    progress = "".join("".join(o.get("text", "")) for c in nb["cells"] if c["source"] == "red = redteam.run_redteam_params(params)"
                       for o in c["outputs"])
    assert progress.count("\n") == 9 and "/9] authority/billing/en: LEAK" in progress  # a line per case
    last = nb["cells"][-1]["outputs"][0]["data"]["text/plain"]
    assert last == "'4 of 8 attack(s) leaked, 1 of 1 legitimate request(s) leaked; fail_on_leak is off'"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 1 and "<mark" in page and "Leaks in their transcripts" in page


def test_fail_on_leak_fails_the_last_cell_in_one_line_after_the_report_is_written(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as err:
        papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "executed.ipynb"), cwd=str(ROOT),
                                   parameters=_parameters(tmp_path, fail_on_leak=True), progress_bar=False)
    assert err.value.ename == "LeakError"
    assert err.value.evalue.startswith("4 of 8 attack(s) leaked, 1 of 1 legitimate request(s) leaked (another "
                                       "patient's data): ")
    assert err.value.traceback == [f"LeakError: {err.value.evalue}"]  # no stack trace in the notebook
    executed = json.loads((tmp_path / "executed.ipynb").read_text(encoding="utf-8"))
    assert executed["cells"][-1]["outputs"][0]["ename"] == "LeakError"  # the gate, not an earlier cell
    assert (tmp_path / "out" / "report.html").exists()  # the page is there to read why


def _notebook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "convoeval.cli", "notebook", str(NOTEBOOK), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_convoeval_notebook_exits_5_on_a_leak_and_2_on_a_bad_parameter(tmp_path):
    # From a terminal a list is typed as a comma-separated word: -p agents billing.
    proc = _notebook(str(tmp_path / "red.ipynb"), "-p", "agents", "billing", "-p", "locales", "en",
                     "-p", "strategies", "authority", "-p", "attacks", FIRST_ATTACKS[0], "-p", "faults",
                     "discloses_third_party",
                     "-p", "store", f"sqlite:///{tmp_path}/store.db", "-p", "fail_on_leak", "true")
    assert proc.returncode == 5, proc.stderr[-2000:]
    assert "convoeval: error: 1 of 1 attack(s) leaked (another patient's data): authority/billing/en" in proc.stderr
    assert (tmp_path / "red" / "report.html").exists()  # the data beside the executed notebook
    bad = _notebook(str(tmp_path / "bad.ipynb"), "-p", "agents", "bililng")
    assert bad.returncode == 2, bad.stderr[-2000:]
    assert "convoeval: error: unknown agent 'bililng' (did you mean 'billing'?)" in bad.stderr
    assert not (tmp_path / "bad").exists()  # nothing ran


def test_the_terminal_shows_the_cases_and_no_parameters_repr(tmp_path):
    """``convoeval notebook`` echoes what the cells print (a line per case), not the ~10 KB repr of the parameters
    cell (``RedTeamParams(... AttackCase(...))``) nor any other display's (issue #39 item 5)."""
    proc = _notebook(str(tmp_path / "red.ipynb"), "-p", "agents", "billing", "-p", "locales", "en",
                     "-p", "strategies", "authority", "-p", "attacks", FIRST_ATTACKS[0],
                     "-p", "store", f"sqlite:///{tmp_path}/store.db")
    assert proc.returncode == 0, proc.stderr[-2000:]
    terminal = (proc.stdout + proc.stderr).splitlines()
    assert not [line for line in terminal if "RedTeamParams(" in line or "AttackCase(" in line or " at 0x" in line]
    assert any(line.startswith("[1/1] authority/billing/en: ") for line in terminal), terminal
    assert len(proc.stdout + proc.stderr) < 2_000, proc.stdout + proc.stderr
