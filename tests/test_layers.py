"""The layout's rules: the layer and no-cycle contracts (import-linter, pyproject.toml), small modules, the statistics
importable on their own, and the deprecated import paths that still work for one release."""

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


#: (old path, name, new path): the deprecated paths kept for one release, and where the name lives now.
ALIASES = [
    ("convoeval.agreement.binary", "binary_agreement", "convoeval.stats.binary"),
    ("convoeval.agreement.bootstrap", "bootstrap_ci", "convoeval.stats.bootstrap"),
    ("convoeval.agreement.truth", "truth_pairs", "convoeval.stats.truth"),
    ("convoeval.agreement.sample_size", "required_sample_size", "convoeval.stats.sample_size"),
    ("convoeval.agreement.probes.effects", "probe_effects", "convoeval.stats.effects"),
    ("convoeval.agreement.probes.plot", "plot_probe_effects", "convoeval.stats.effects_plot"),
    ("convoeval.agreement", "binary_agreement", "convoeval.stats.binary"),
    ("convoeval.agreement.probes", "plot_probe_effects", "convoeval.stats.effects_plot"),
    ("convoeval.fake_server", "FakeOpenAIServer", "convoeval.testing.fake_server"),
    ("convoeval.fake_server", "Fault", "convoeval.testing.fake_server"),
    ("convoeval.testing", "FakeChatModel", "convoeval.testing.fake_model"),
    ("convoeval.pinning", "pin", "convoeval.forking.pinning"),
    ("convoeval.report", "score_frame", "convoeval.report.tables"),
    ("convoeval.models", "get_model", "convoeval.llm.models"),
    ("convoeval.cache", "resolve_cache", "convoeval.llm.cache"),
    ("convoeval.accounting", "record_calls", "convoeval.llm.accounting"),
    ("convoeval.http_transport", "async_http_client", "convoeval.llm.http_transport"),
    ("convoeval.local_llm", "ensure_server", "convoeval.llm.local.server"),
    ("convoeval.llm", "call_model", "convoeval.llm.call"),
    ("convoeval.agents.clinic", "register_agent", "convoeval.agents.clinic._registry"),
    ("convoeval.scenarios", "AGENTS", None),
    ("convoeval.scenarios", "load_scenarios", "convoeval.scenarios.loader"),
]


@pytest.mark.parametrize(("old", "name", "new"), ALIASES, ids=[f"{o}.{n}" for o, n, _ in ALIASES])
def test_a_deprecated_path_still_gives_the_same_object(old, name, new):
    value = getattr(importlib.import_module(old), name)
    if new is not None:
        assert value.__module__ == new


def test_the_renamed_names_are_the_old_objects():
    from convoeval.agents.clinic import register_agent, register_clinic_agent
    from convoeval.fake_server import FAULTS, Fault
    from convoeval.scenarios import AGENTS, REFERENCE_AGENTS
    from convoeval.testing import SERVER_FAULTS, ServerFault

    assert register_agent is register_clinic_agent
    assert Fault is ServerFault and FAULTS is SERVER_FAULTS
    assert AGENTS == REFERENCE_AGENTS

    from convoeval.report import score_frame, score_table_data

    assert score_frame is score_table_data


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


#: Modules that still import a moved module by its old path (a file other work is editing; see docs/layout.md).
OLD_PATH_USERS: set[str] = set()


def test_no_module_imports_a_moved_module_by_its_old_path():
    """An old path hides the real dependency from the layer contract (no file is there for it to see)."""
    import ast
    import inspect

    from convoeval._moved import MOVED

    users = set()
    for path in (REPO / "convoeval").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:  # `from convoeval import pinning` names a module too
                names += [f"{node.module}.{a.name}" for a in node.names
                          if f"{node.module}.{a.name}" in MOVED
                          and inspect.ismodule(getattr(importlib.import_module(node.module), a.name, None))]
            if any(name in MOVED for name in names):
                users.add(path.relative_to(REPO).as_posix())
    assert users - OLD_PATH_USERS == set()
    assert OLD_PATH_USERS - users == set(), "no longer uses an old path: remove it from OLD_PATH_USERS"


def test_the_simulator_gate_loads_no_scipy():
    """The gate runs in every conversation: importing it must not pull the statistics' SciPy (half a second)."""
    import subprocess
    import sys

    code = "import sys, convoeval.gate, convoeval.fidelity; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
