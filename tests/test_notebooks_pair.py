"""The committed notebooks: paired with their jupytext py:percent file, output-free, thin, declared parameters."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import jupytext
import nbformat
import papermill
import pytest

from convoeval.agreement.study_params import StudyConfig
from convoeval.compare.notebook import CompareParams
from convoeval.forking.views import DebugParams
from convoeval.pipeline import EvalConfig
from convoeval.production.notebook import ProductionParams
from convoeval.redteam.notebook import RedTeamParams

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUN = ROOT / "notebooks" / "run.ipynb"
AGREEMENT = ROOT / "notebooks" / "agreement.ipynb"
DEBUG = ROOT / "notebooks" / "debug.ipynb"
COMPARE = ROOT / "notebooks" / "compare.ipynb"
REDTEAM = ROOT / "notebooks" / "redteam.ipynb"
PRODUCTION = ROOT / "notebooks" / "production.ipynb"
ALLOWED_METADATA = {"kernelspec", "jupytext"}
#: notebook -> (its parameters' model, the library modules its cells may call, by the name they are imported as)
CONTRACTS = {
    RUN: (EvalConfig, {"report", "pipeline"}),
    AGREEMENT: (StudyConfig, {"agreement_study", "views"}),
    DEBUG: (DebugParams, {"debug"}),
    COMPARE: (CompareParams, {"compare", "views"}),
    REDTEAM: (RedTeamParams, {"redteam", "views"}),
    PRODUCTION: (ProductionParams, {"production"}),
}


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


def test_there_are_the_run_agreement_debug_compare_and_redteam_notebooks_and_each_has_a_contract():
    assert {RUN, AGREEMENT, DEBUG, COMPARE, REDTEAM, PRODUCTION} <= set(NOTEBOOKS)
    assert set(NOTEBOOKS) == set(CONTRACTS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_ipynb_and_py_percent_pair_have_not_drifted(path):
    paired = path.with_suffix(".py")
    assert paired.exists(), f"{path.name} has no pair; create it: jupytext --set-formats ipynb,py:percent {path}"
    from_py = jupytext.read(paired, fmt="py:percent")
    from_ipynb = nbformat.read(path, as_version=4)
    assert _cells(from_py) == _cells(from_ipynb), (
        f"{path.name} and {paired.name} differ; sync them with: jupytext --sync {path}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebooks_are_output_free_with_stripped_metadata(path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    extra = set(raw["metadata"]) - ALLOWED_METADATA
    assert not extra, f"strip notebook metadata: {extra}"
    for cell in raw["cells"]:
        assert set(cell["metadata"]) <= {"tags"}, cell["metadata"]
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, "clear the outputs before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_declares_exactly_the_library_parameters(path):
    declared = papermill.inspect_notebook(str(path))
    assert list(declared) == CONTRACTS[path][0].parameter_names()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_cell_holds_only_literals(path):
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, ast.unparse(node)
        ast.literal_eval(node.value)  # raises on anything but a literal


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_other_cells_only_call_the_library(path):
    """No logic in the notebook: imports from convoeval, and single calls of its modules (optionally assigned)."""
    modules = CONTRACTS[path][1]
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]
    assert len(code) >= 10
    for cell in code:
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.ImportFrom):
                assert node.module.split(".")[0] == "convoeval"
                assert {a.asname or a.name for a in node.names} <= modules
                continue
            value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
            assert value is not None, f"not a call: {ast.unparse(node)}"
            if isinstance(value, ast.Name):  # displaying a result
                continue
            assert isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[0] in modules, ast.unparse(node)
            assert all(isinstance(a, (ast.Name, ast.Call)) for a in value.args), ast.unparse(node)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_defaults_are_its_models_defaults(path):
    """One model per notebook: the parameters cell's defaults are its model's, nothing else."""
    declared = {name: ast.literal_eval(p["default"]) for name, p in papermill.inspect_notebook(str(path)).items()}
    assert declared == CONTRACTS[path][0].defaults()


def test_run_notebook_defaults_are_the_configuration_defaults():
    """One configuration object: the notebook's parameters and their defaults are EvalConfig's, nothing else."""
    declared = {name: ast.literal_eval(p["default"]) for name, p in papermill.inspect_notebook(str(RUN)).items()}
    assert declared == EvalConfig().model_dump()
