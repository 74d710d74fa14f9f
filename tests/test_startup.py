"""Start-up budget: what ``import convoeval`` and ``convoeval --help`` load, and how long they take.

The module counts are deterministic for one environment: a function-level import moved to the top of a module on
the start-up path shows up here as more modules (and is what ruff's PLC0415 allow-list in pyproject.toml protects).
The figures were measured before issue #26 and are recorded in benchmarks/RESULTS.md ("Start-up");
``benchmarks/bench_startup.py`` measures them again. Lower the budgets when start-up gets cheaper.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: probe -> (Python run in a fresh interpreter, most modules it may load, most CPU seconds it may take).
#: Modules: 103 and 1,042 before issue #26 (1,043 after: the old `gate` and `_moved` out, the `simulator` package,
#: `simulator.gate` and `_lazy` in; 1,049 with issue #25's assertion kinds and `sql:` modules and issue #24's
#: `label` command, 1,057 with issue #25's path assertions (`pathcheck`, `scenarios.path_models`, the checkpoint
#: judge): all convoeval's own small modules). CPU limits: ~4x the medians measured on 2 cores (benchmarks/RESULTS.md).
BUDGETS = {
    "import convoeval": ("import convoeval", 103, 0.5),
    "convoeval --help": ("import sys; sys.argv = ['convoeval', '--help']; from convoeval.cli import main; main()",
                         1057, 8.0),
}
#: Third-party packages ``convoeval --help`` must not load (each is loaded on first use by the command that needs it).
NOT_AT_START = ("openai", "langchain_openai", "sqlalchemy", "supabase", "scipy", "sklearn", "matplotlib", "papermill",
                "distributed", "dask", "llama_cpp", "statsmodels", "tqdm")

_DUMP = ("import atexit, sys, json, os\n"
         "atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w').write(json.dumps(sorted(sys.modules))))\n")


def _run(code: str, out: Path) -> tuple[list[str], float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "MODULES_OUT": str(out)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", _DUMP + code], env=env, capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds, not wall time: on a shared machine the wall clock measures the neighbours.
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.returncode in (0, None), done.stderr[-2000:]
    return json.loads(out.read_text()), elapsed


@pytest.mark.parametrize("probe", BUDGETS)
def test_start_up_stays_within_its_budget(probe, tmp_path):
    code, max_modules, max_seconds = BUDGETS[probe]
    modules, elapsed = _run(code, tmp_path / "modules.json")
    assert len(modules) <= max_modules, f"{probe} loads {len(modules)} modules (budget {max_modules})"
    assert elapsed <= max_seconds, f"{probe} took {elapsed:.2f} CPU s (budget {max_seconds})"
    loaded = {m.split(".")[0] for m in modules}
    assert loaded.isdisjoint(NOT_AT_START), sorted(loaded & set(NOT_AT_START))


def test_the_budget_can_fail(tmp_path):
    """The probe sees an import: loading one heavy package adds modules beyond the budget."""
    code, max_modules, _ = BUDGETS["import convoeval"]
    modules, _ = _run(code + "; import sqlalchemy", tmp_path / "modules.json")
    assert len(modules) > max_modules
