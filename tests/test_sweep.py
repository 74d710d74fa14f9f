"""Sweeps with a fake notebook executor: order, done markers, failures, resume after SIGKILL, the index, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from report_support import conversation, merge, write_run_folder

from convoeval.cli import main
from convoeval.sweep import DONE_MARKER, SweepError, default_sweep_dir, run_sweep

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(ROOT)


class FakeExecutor:
    """Writes a finished run (pass on seed 1, fail on seed 2) instead of executing the notebook; can fail on cue."""

    def __init__(self, fail: set[str] = frozenset()):
        self.fail = fail
        self.calls: list[dict] = []

    def __call__(self, notebook: Path, output: Path, parameters: dict, cwd: Path) -> None:
        self.calls.append(parameters)
        name = f"{parameters['agent']}-s{parameters['seed']}"
        if name in self.fail:
            raise RuntimeError(f"kernel died in {name}\nsecond line of the traceback")
        folder = Path(parameters["output_dir"])
        agent, seed = parameters["agent"], parameters["seed"]
        passed = [seed == 1 or t == 1 for t in range(1, parameters["trials"] + 1)]
        rows = merge(*[conversation(f"{name}-t{t}", f"{agent}-conv-x", agent=agent, seed=seed, trial=t,
                                    status="pass" if ok else "fail", score=8.5 if ok else 3.0,
                                    rubric=[True, seed == 1]) for t, ok in enumerate(passed, start=1)])
        write_run_folder(folder, rows, meta={"local_demo": True})
        (folder / "report.html").write_text("<html></html>")
        output.write_text("{}")


def _names(executor: FakeExecutor) -> list[str]:
    return [f"{p['agent']}-s{p['seed']}" for p in executor.calls]


def test_every_combination_runs_into_its_folder_with_a_done_marker(tmp_path):
    executor = FakeExecutor()
    result = run_sweep(["billing", "support"], [1, 2], trials=2, out=tmp_path, executor=executor, progress=False,
                       parameters={"type": "conversational"})
    assert _names(executor) == ["billing-s1", "billing-s2", "support-s1", "support-s2"]
    assert executor.calls[0] == {"agent": "billing", "seed": 1, "trials": 2, "type": "conversational",
                                 "output_dir": str((tmp_path / "billing-s1").resolve())}
    assert all((tmp_path / n / DONE_MARKER).exists() for n in _names(executor))
    assert not result.failed and result.index == tmp_path / "index.html"


def test_a_failed_combination_is_reported_and_the_sweep_goes_on(tmp_path):
    executor = FakeExecutor(fail={"billing-s2"})
    result = run_sweep(["billing", "support"], [1, 2], out=tmp_path, executor=executor, progress=False)
    assert len(executor.calls) == 4
    assert [c.name for c in result.failed] == ["billing-s2"]
    assert result.failed[0].error == "RuntimeError: kernel died in billing-s2"  # one line
    assert not (tmp_path / "billing-s2" / DONE_MARKER).exists()
    assert "kernel died" in json.loads((tmp_path / "billing-s2" / "failed.json").read_text())["error"]
    assert any("billing-s2" in line and "failed" in line for line in result.lines())
    index = (tmp_path / "index.html").read_text()
    assert "1 combination(s) failed" in index and "kernel died in billing-s2" in index
    # started again: only the failed combination runs
    again = FakeExecutor()
    result = run_sweep(["billing", "support"], [1, 2], out=tmp_path, executor=again, progress=False)
    assert _names(again) == ["billing-s2"] and not result.failed
    assert not (tmp_path / "billing-s2" / "failed.json").exists()
    assert [c.status for c in result.combinations] == ["skipped", "done", "skipped", "skipped"]


def test_index_aggregates_scores_pass_hat_k_flips_and_spread(tmp_path):
    run_sweep(["billing", "support"], [1, 2], trials=2, out=tmp_path, executor=FakeExecutor(), progress=False)
    data = tmp_path / "data"
    by_seed = pd.read_csv(data / "by_agent_seed.csv").set_index(["agent", "sweep_seed"])
    assert by_seed.loc[("billing", 1), "passed"] == 2 and by_seed.loc[("billing", 2), "passed"] == 1
    # per agent one scenario with 4 conversations, 3 passing: pass^1 = 3/4, pass^2 = C(3,2)/C(4,2) = 1/2
    phk = pd.read_csv(data / "pass_hat_k.csv").set_index(["agent", "k"])["value"]
    assert phk[("billing", 1)] == pytest.approx(0.75) and phk[("billing", 2)] == pytest.approx(0.5)
    assert phk[("billing", 4)] == 0.0
    flips = pd.read_csv(data / "flip_rates.csv").set_index(["agent", "criterion", "statistic"])["value"]
    assert flips[("billing", "criterion 0 <i>", "flip_rate")] == 0.0
    # criterion 1 passes on seed 1 and fails on seed 2: 2 pass / 2 fail -> 4 of the 6 pairs disagree
    assert flips[("billing", "criterion 1 <i>", "flip_rate")] == 1.0
    assert flips[("billing", "criterion 1 <i>", "pairwise_disagreement")] == pytest.approx(4 / 6)
    spread = pd.read_csv(data / "spread.csv").set_index("agent")
    assert spread.loc["billing", "conversations"] == 4 and spread.loc["billing", "range"] == pytest.approx(5.5)
    index = (tmp_path / "index.html").read_text()
    assert 'href="billing-s1/report.html"' in index and "pass^2" in index and "Local demo model" in index
    assert "data:image/png;base64," in index  # the spread chart is inlined
    assert "criterion 1 &lt;i&gt;" in index and "criterion 1 <i>" not in index  # criteria are data, escaped


def test_killed_sweep_rerun_finishes_only_the_rest(tmp_path):
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT / 'tests')!r})
from test_sweep import FakeExecutor
from convoeval.sweep import run_sweep

class Killer(FakeExecutor):
    def __call__(self, notebook, output, parameters, cwd):
        if len(self.calls) == 2:  # the third combination: die midway, as kill -9 would
            os.kill(os.getpid(), signal.SIGKILL)
        super().__call__(notebook, output, parameters, cwd)

run_sweep(["billing", "support"], [1, 2], out={str(tmp_path)!r}, executor=Killer(), progress=False)
"""
    proc = subprocess.run([sys.executable, "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert sorted(p.parent.name for p in tmp_path.glob(f"*/{DONE_MARKER}")) == ["billing-s1", "billing-s2"]
    executor = FakeExecutor()
    result = run_sweep(["billing", "support"], [1, 2], out=tmp_path, executor=executor, progress=False)
    assert _names(executor) == ["support-s1", "support-s2"]
    assert [c.status for c in result.combinations] == ["skipped", "skipped", "done", "done"]
    assert len(pd.read_csv(tmp_path / "data" / "scores.csv")) == 4  # the index covers all four


def test_rerun_runs_done_combinations_again(tmp_path):
    run_sweep(["billing"], [1], out=tmp_path, executor=FakeExecutor(), progress=False)
    executor = FakeExecutor()
    run_sweep(["billing"], [1], out=tmp_path, executor=executor, progress=False, rerun=True)
    assert _names(executor) == ["billing-s1"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"agents": ["billing", "nope"]}, "unknown agent(s) nope"),
    ({"seeds": []}, "seeds must be integers"),
    ({"seeds": [1, 1]}, "must not repeat"),
    ({"parameters": {"agnet": "x"}}, "declares no parameter(s) agnet"),
    ({"parameters": {"seed": 3}}, "seed are set by the sweep itself"),
    ({"parameters": {"judge_samples": 0}}, "judge_samples must be from 1 to 50"),
])
def test_bad_sweeps_fail_before_any_kernel_starts(tmp_path, kwargs, message):
    executor = FakeExecutor()
    args = {"agents": ["billing"], "seeds": [1], **kwargs}
    with pytest.raises(SweepError) as err:
        run_sweep(args.pop("agents"), args.pop("seeds"), out=tmp_path, executor=executor, progress=False, **args)
    assert message in str(err.value) and not executor.calls


def test_a_folder_holding_another_sweep_is_refused(tmp_path):
    run_sweep(["billing"], [1], trials=1, out=tmp_path, executor=FakeExecutor(), progress=False)
    with pytest.raises(SweepError, match="other settings"):
        run_sweep(["billing"], [1], trials=3, out=tmp_path, executor=FakeExecutor(), progress=False)


def test_default_folder_is_the_same_for_the_same_command():
    first = default_sweep_dir(["billing", "scheduling"], [1, 2, 3], 2)
    assert first == default_sweep_dir(["billing", "scheduling"], [1, 2, 3], 2)
    assert first == ROOT / "reports" / "sweep-billing-scheduling-s1-2-3-t2"


def test_cli_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", "--agent", "billing", "--seed", "1,x"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip() == "convoeval: error: --seed takes values separated by commas, got '1,x'"
    with pytest.raises(SystemExit):
        main(["sweep", "--agent", "billing,nope", "--seed", "1"])
    assert capsys.readouterr().err.strip().startswith("convoeval: error: unknown agent(s) nope")


def test_cli_exit_code_is_1_when_a_combination_fails(tmp_path, monkeypatch, capsys):
    from convoeval.sweep import run as sweep

    monkeypatch.setattr(sweep, "papermill_executor", FakeExecutor(fail={"billing-s2"}))
    code = main(["sweep", "--agent", "billing", "--seed", "1,2", "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1 and "1 failed" in out and f"index: {tmp_path / 'index.html'}" in out
    assert os.path.exists(tmp_path / "billing-s1" / DONE_MARKER)


def test_the_sweep_takes_every_run_setting_by_runs_names_and_hands_it_to_each_notebook(tmp_path, monkeypatch):
    # Its flags are built from EvalConfig, as convoeval run's (one name per setting): all but the sweep's own.
    from convoeval.cli import build_parser
    from convoeval.cli.config_flags import flag_for
    from convoeval.cli.sweep_command import SWEEP_FIELDS
    from convoeval.pipeline.config import EvalConfig
    from convoeval.sweep import run as sweep

    flags = {a for action in build_parser()._subparsers._group_actions[0].choices["sweep"]._actions  # noqa: SLF001
             for a in action.option_strings}
    assert {flag_for(name) for name in EvalConfig.model_fields} - flags == set()  # --agent, --seed, --out, … too
    assert SWEEP_FIELDS == ("agent", "seed", "output_dir", "trials")
    fake = FakeExecutor()
    monkeypatch.setattr(sweep, "papermill_executor", fake)
    code = main(["sweep", "--agent", "billing", "--seed", "1", "--out", str(tmp_path), "--no-progress",
                 "--simulator", "agenda", "--judge-samples", "2", "--no-simulator-gate"])
    assert code == 0
    [parameters] = fake.calls
    assert (parameters["simulator"], parameters["judge_samples"], parameters["simulator_gate"]) == ("agenda", 2, False)
