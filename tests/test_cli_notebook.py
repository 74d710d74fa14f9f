"""``convoeval notebook``: papermill with the run's progress in the terminal and a bad parameter as one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.notebook


def _notebook(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "convoeval.cli", "notebook", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_a_bad_parameter_is_one_line_and_exit_2(fake_llm, tmp_path):
    proc = _notebook("notebooks/run.ipynb", str(tmp_path / "x.ipynb"), "-p", "agnet", "billing")
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("convoeval: error:")]
    assert errors == [errors[0]] and "unknown setting(s) agnet" in errors[0]
    assert "convoeval: warning: notebooks/run.ipynb declares no parameter agnet (passed anyway)" in proc.stderr
    assert "Traceback" not in proc.stderr and "PapermillExecutionError" not in proc.stderr


def test_the_run_progress_streams_to_the_terminal_without_papermill_noise(fake_llm, tmp_path):
    out = tmp_path / "billing.ipynb"
    proc = _notebook("notebooks/run.ipynb", str(out), "-p", "agent", "billing", "-p", "scenario",
                     "billing-scripted-pix-en")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "running 1 conversation(s)" in proc.stderr and "[1/1] billing-scripted-pix-en s42 t1:" in proc.stderr
    # Only the cells' own output, checked against the executed notebook rather than a list of papermill's and
    # the kernel's current wordings, so chatter reworded by a new release would still be caught.
    shown = set()
    for cell in nbformat.read(out, as_version=4).cells:
        for output in cell.get("outputs", []):
            shown.update("".join(output.get("text") or output.get("data", {}).get("text/plain", "")).splitlines())
    stray = [line for line in proc.stderr.splitlines() if line not in shown]
    assert stray == [], stray
    assert (tmp_path / "billing" / "report.html").exists()  # the data beside the executed notebook
