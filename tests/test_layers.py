"""The layout's rules: the layer and no-cycle contracts (import-linter, pyproject.toml), small modules, the statistics
importable on their own, and one path per name (the old paths of moved modules are gone)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_the_import_contracts_hold():
    """``lint-imports`` checks every contract in pyproject.toml: layers one way, no cycles in any package."""
    done = _run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache"])
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_an_upward_import_breaks_the_layer_contract(tmp_path):
    """The contract can fail: the same layers with the scenarios moved to the top are broken by today's imports."""
    config = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    start = config.index("[tool.importlinter]")
    end = config.index('[[tool.importlinter.contracts]]\nid = "acyclic"')
    broken = config[start:end].replace('    "cli",\n', '    "scenarios",\n    "cli",\n', 1).replace(
        '    "scenarios : frames', '    "frames', 1)
    path = tmp_path / "contracts.toml"
    path.write_text(broken, encoding="utf-8")
    done = _run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--config", str(path)])
    assert done.returncode != 0
    assert "is not allowed to import convoeval.scenarios" in done.stdout


#: Modules allowed over the size limit (each waiting for a split); a listed one back under the limit fails too.
OVER_THE_LIMIT: set[str] = set()
MAX_LINES = 400


def test_no_module_is_over_400_lines():
    sizes = {p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in (REPO / "convoeval").rglob("*.py")}
    over = {path for path, n in sizes.items() if n > MAX_LINES}
    assert over - OVER_THE_LIMIT == set(), {p: sizes[p] for p in over - OVER_THE_LIMIT}
    assert OVER_THE_LIMIT - over == set(), "back under the limit: remove from OVER_THE_LIMIT"


def test_the_statistics_import_without_llm_judges_or_pipeline():
    code = ("import sys, convoeval.stats as s; s.binary_agreement; s.probe_effects; "
            "print(' '.join(m for m in sys.modules if m.startswith(('langchain', 'openai', 'convoeval.llm', "
            "'convoeval.judges', 'convoeval.pipeline', 'convoeval.agents', 'convoeval.agreement'))))")
    done = _run([sys.executable, "-c", code])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


#: Paths and names that moved (0.1.0 was never released, so nothing was kept for "one release").
GONE_MODULES = [
    "convoeval.batch", "convoeval.conversation", "convoeval.runs", "convoeval.fake_server", "convoeval.gate",
    "convoeval.summary", "convoeval.report.execute", "convoeval.report.params", "convoeval._moved",
    "convoeval.agreement.binary", "convoeval.agreement.truth", "convoeval.agreement.probes.effects", "convoeval.pinning",
    "convoeval.models", "convoeval.cache", "convoeval.accounting", "convoeval.http_transport", "convoeval.local_llm",
    "convoeval.report._html", "convoeval.pipeline.sweep",
    "convoeval.report.agreement_views", "convoeval.report.compare_views",
    # The loose top-level modules, placed in packages (issue #36).
    "convoeval._aio", "convoeval._lazy", "convoeval.paths", "convoeval.urls", "convoeval.html_blocks", "convoeval.plugins",
    "convoeval.sql_schema", "convoeval.local_idle", "convoeval._fork_server",
    # The conversation as one object (issue #46): its timed agent call is Conversation.ask.
    "convoeval.pipeline.agent_call",
    # Calibration as one subpackage (issue #46): convoeval.stats.calibration, and one report module for its views.
    "convoeval.stats.ppi", "convoeval.stats.isotonic", "convoeval.stats.rogan_gladen", "convoeval.stats.calibrated",
    "convoeval.stats.calibrated_rates", "convoeval.stats.calibrated_change", "convoeval.stats.free_labels",
    "convoeval.stats._estimate", "convoeval.agreement.calibration", "convoeval.report.calibrated",
    "convoeval.report.calibration_views",
]
GONE_NAMES = [
    ("convoeval.report", "score_frame"), ("convoeval.report", "execute"), ("convoeval.report", "check_parameters"),
    ("convoeval.agents.clinic", "register_agent"), ("convoeval.scenarios", "AGENTS"), ("convoeval.testing", "Fault"),
    ("convoeval.agreement", "binary_agreement"),
    # One notebook-parameters mechanism (issue #36): each notebook's parameters are a model now.
    ("convoeval.agreement.study_params", "STUDY_PARAMETERS"), ("convoeval.agreement.study_params", "StudyParams"),
    ("convoeval.agreement.study_params", "study_defaults"), ("convoeval.compare.notebook", "COMPARE_PARAMETERS"),
    ("convoeval.redteam.notebook", "REDTEAM_PARAMETERS"), ("convoeval.forking.views", "DEBUG_PARAMETERS"),
    ("convoeval.forking.views", "DebugParameters"), ("convoeval.pipeline.config", "is_parameter_like"),
    # One function reads every kind of saved folder (issue #36): convoeval.load_results; a run's is load_run.
    ("convoeval.pipeline", "load_results"), ("convoeval.pipeline.results", "load_results"),
    ("convoeval.report.index", "load_sweep"),
    # Calibration: one public function per question (issue #36).
    ("convoeval.stats", "calibrated_pass_rates"), ("convoeval.stats.labels", "corrected_pass_rate"),
    # The conversation as one object (issue #46): no Task copy of a Job, no Protocol stand-in for the conversation.
    ("convoeval.pipeline.distributed", "Task"), ("convoeval.pipeline.channel_talk", "ChannelConversation"),
    ("convoeval.pipeline.channel_talk", "ChannelState"), ("convoeval.pipeline.talk", "RunKeys"),
    ("convoeval.agreement", "calibration_table"),
]


def test_the_calibration_names_moved_from_stats_warn_for_one_release():
    """``convoeval.stats.pass_rate_estimates`` still works for one release (issue #46), with a FutureWarning, and is
    ``convoeval.stats.calibration``'s object; it is not in ``convoeval.stats.__all__``."""
    import convoeval.stats as stats
    from convoeval.stats import calibration

    with pytest.warns(FutureWarning, match="moved to convoeval.stats.calibration.pass_rate_estimates"):
        assert stats.pass_rate_estimates is calibration.pass_rate_estimates
    assert "pass_rate_estimates" not in stats.__all__ and "pass_rate_estimates" in calibration.__all__


@pytest.mark.parametrize("old", GONE_MODULES)
def test_an_old_module_path_is_gone(old):
    """One path per name: an old path fails to import instead of handing out the module under a second name."""
    relative = Path(*old.split("."))
    assert not (REPO / relative.with_suffix(".py")).exists() and not (REPO / relative / "__init__.py").exists()
    try:  # an editable install of another checkout may still hold the old file: never this one's
        module = importlib.import_module(old)
    except ModuleNotFoundError:
        return
    assert not Path(module.__file__).resolve().is_relative_to(REPO), module.__file__


@pytest.mark.parametrize(("module", "name"), GONE_NAMES, ids=[f"{m}.{n}" for m, n in GONE_NAMES])
def test_an_old_name_is_gone(module, name):
    assert not hasattr(importlib.import_module(module), name)


def test_every_module_of_the_package_is_in_a_layer():
    """A new top-level module or package must be placed in the layers, or the contract would not see it."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = config["tool"]["importlinter"]["contracts"][0]["layers"]
    placed = {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}
    package = REPO / "convoeval"
    top = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    top |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert top - placed == set()
    assert placed - top == set()


def test_the_simulator_gate_loads_no_scipy():
    """The gate runs in every conversation: importing it must not pull the statistics' SciPy (half a second)."""
    import subprocess
    import sys

    code = "import sys, convoeval.simulator.gate, convoeval.fidelity; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
