"""The committed notebooks: paired with their jupytext py:percent file, output-free, thin, declared parameters."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import jupytext
import nbformat
import papermill
import pytest

from convoeval.report import NOTEBOOK_PARAMETERS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUN = ROOT / "notebooks" / "run.ipynb"
ALLOWED_METADATA = {"kernelspec", "jupytext"}


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]


def test_there_is_a_run_notebook():
    assert RUN in NOTEBOOKS


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


def test_run_notebook_declares_exactly_the_library_parameters():
    declared = papermill.inspect_notebook(str(RUN))
    assert list(declared) == list(NOTEBOOK_PARAMETERS)


def test_parameters_cell_holds_only_literals():
    nb = nbformat.read(RUN, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, ast.unparse(node)
        ast.literal_eval(node.value)  # raises on anything but a literal


def test_other_cells_only_call_the_library():
    """No logic in the notebook: imports, and single calls of convoeval.report (optionally assigned)."""
    nb = nbformat.read(RUN, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]
    assert len(code) >= 10
    for cell in code:
        for node in ast.parse(cell.source).body:
            if isinstance(node, ast.ImportFrom):
                assert node.module == "convoeval"
                continue
            value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
            assert value is not None, f"not a call: {ast.unparse(node)}"
            if isinstance(value, ast.Name):  # displaying a result
                continue
            assert isinstance(value, ast.Call) and ast.unparse(value.func).startswith("report."), ast.unparse(node)
            assert all(isinstance(a, (ast.Name, ast.Call)) for a in value.args), ast.unparse(node)
