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
    # Refused before a kernel starts, with the name meant (issue #39): no warning, no half-executed notebook.
    assert proc.stderr.splitlines() == [proc.stderr.strip()], proc.stderr
    assert "has no parameter 'agnet' (did you mean 'agent'?)" in proc.stderr
    assert not (tmp_path / "x.ipynb").exists()


def test_the_run_progress_streams_to_the_terminal_without_papermill_noise(fake_llm, tmp_path):
    out = tmp_path / "billing.ipynb"
    proc = _notebook("notebooks/run.ipynb", str(out), "-p", "agent", "billing", "-p", "scenario",
                     "billing-scripted-pix-en")
    assert proc.returncode == 0, proc.stderr[-2000:]
    # What the cells print goes to standard output, as ``convoeval run``'s summary does.
    assert "running 1 conversation(s)" in proc.stdout and "[1/1] billing-scripted-pix-en s42 t1:" in proc.stdout
    # Only the cells' own output, checked against the executed notebook rather than a list of papermill's and
    # the kernel's current wordings, so chatter reworded by a new release would still be caught.
    shown = set()
    for cell in nbformat.read(out, as_version=4).cells:
        for output in cell.get("outputs", []):
            shown.update("".join(output.get("text") or output.get("data", {}).get("text/plain", "")).splitlines())
    last = f"executed notebook: {out}"  # the command's own closing line
    stray = [line for line in (proc.stdout + proc.stderr).splitlines() if line not in shown and line != last]
    assert stray == [], stray
    assert (tmp_path / "billing" / "report.html").exists()  # the data beside the executed notebook


def test_the_terminal_shows_the_run_summary_and_no_repr(fake_llm, tmp_path):
    """What ``make run`` prints: the progress, then ``convoeval run``'s summary (issue #39 item 5), never an object's
    repr (``EvalConfig(...)``, ``<pandas…Styler at 0x…>``, ``<Chart: …>``, ``EvalResult(...)``) or a quoted string."""
    out = tmp_path / "billing.ipynb"
    proc = _notebook("notebooks/run.ipynb", str(out), "-p", "agent", "billing", "-p", "scenario",
                     "billing-scripted-pix-en")
    assert proc.returncode == 0, proc.stderr[-2000:]
    terminal = (proc.stdout + proc.stderr).splitlines()
    reprs = [line for line in terminal
             if any(mark in line for mark in ("EvalConfig(", "EvalResult(", " at 0x", "<Chart:", "<HTML:"))
             or line.startswith(("'", '"'))]
    assert reprs == [], reprs
    # convoeval run's summary: the status table's header, a row per conversation and the totals, then the folder.
    assert any(line.split()[:3] == ["STATUS", "SCORE", "RUBRIC"] for line in terminal), terminal
    assert any("billing-scripted-pix-en (seed 42, trial 1)" in line for line in terminal), terminal
    assert any(line.startswith("1 run(s): ") for line in terminal), terminal
    assert f"results: {tmp_path / 'billing'}" in terminal, terminal
