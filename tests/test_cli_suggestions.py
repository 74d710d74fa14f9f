"""A mistyped name is one line that names what was meant, exit 2, and nothing left behind (issue #39, item 7).

Agents (``--agent``, a ``clinic:`` target), faults (``?faults=``, ``--faults``), a notebook's
parameters (``convoeval notebook -p``), and argparse's own refusals: one line, never the usage block.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from convoeval import cli
from convoeval.scenarios import did_you_mean

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    """State in tmp_path and a model endpoint nobody answers: a refusal must come before any model is asked."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.chdir(ROOT)
    return tmp_path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``convoeval argv``; it must exit 2 with exactly one line on stderr, which is returned."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    assert code == 2, (code, captured.err)
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err  # no usage block above it, no traceback
    assert "usage:" not in captured.err and "Traceback" not in captured.err
    return lines[0]


def test_did_you_mean_names_a_close_name_and_nothing_for_a_far_one():
    assert did_you_mean("biling", ["support", "billing"]) == " (did you mean 'billing'?)"
    assert did_you_mean("dentist", ["support", "billing"]) == ""


@pytest.mark.parametrize(("argv", "wanted"), [
    (["run", "--agent", "biling"], "argument --agent: invalid choice: 'biling' (did you mean 'billing'?)"),
    (["run", "--target", "clinic:biling"], "unknown clinic agent 'biling' (did you mean 'billing'?)"),
    (["run", "--target", "clinic:billing?faults=invented_paymen_url"],
     "invented_paymen_url (did you mean 'invented_payment_url'?)"),
    (["sweep", "--agent", "billing,biling", "--seed", "1"], "unknown agent(s) biling (did you mean 'billing'?)"),
    (["redteam", "--agents", "biling"], "unknown agent 'biling' (did you mean 'billing'?)"),
    (["redteam", "--faults", "invented_paymen_url"],
     "unknown fault 'invented_paymen_url' (did you mean 'invented_payment_url'?)"),
])
def test_a_mistyped_agent_or_fault_is_one_line_with_the_name_meant(argv, wanted, offline, capsys):
    line = _refused([*argv, "--out", str(offline / "out")], capsys)
    assert wanted in line, line
    assert not (offline / "out").exists()  # nothing ran, no folder left behind


@pytest.mark.parametrize("argv", [["run", "--bogus"], ["run", "--trials", "x"], ["label"], ["compare"],
                                  ["llm", "start"], ["notebook", "-p", "agent"]])
def test_every_command_refuses_its_arguments_in_one_line_not_the_usage_block(argv, offline, capsys):
    line = _refused(argv, capsys)
    assert line.startswith("convoeval") and ": error: " in line and line.endswith("--help)"), line


def test_a_mistyped_notebook_parameter_is_refused_before_a_kernel_starts(offline, capsys):
    out = offline / "reports" / "x.ipynb"
    line = _refused(["notebook", "notebooks/run.ipynb", str(out), "-p", "agnet", "billing"], capsys)
    assert line.startswith("convoeval: error: notebooks/run.ipynb has no parameter 'agnet' (did you mean 'agent'?)")
    assert "Error:" not in line  # no Python class name (ParameterError: …)
    assert not out.exists() and not out.parent.exists()  # no half-executed notebook, no folder made for it


@pytest.mark.notebook
def test_a_bad_notebook_value_is_one_line_without_a_class_name_and_leaves_no_notebook(fake_llm, tmp_path):
    out = tmp_path / "x.ipynb"
    proc = subprocess.run([sys.executable, "-m", "convoeval.cli", "notebook", "notebooks/run.ipynb", str(out),
                           "-p", "trials", "0"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert errors == ["convoeval: error: trials must be from 1 to 1,000, got 0 (no notebook written)"], proc.stderr
    assert not out.exists()


def test_a_mistyped_agent_parameter_of_the_run_notebook_names_the_agent_meant():
    """``-p agent biling`` reaches EvalConfig's own check, which now suggests the name too (#39 item 7)."""
    from convoeval.pipeline.config import ConfigError, EvalConfig

    with pytest.raises(ConfigError, match=r"did you mean 'billing'\?"):
        EvalConfig.checked(agent="biling")
