"""Bytecode caches for whole-process benchmarks: measure imports as a user's installed environment runs them.

An interpreter that finds no ``.pyc`` beside a module compiles it from source on every import. A user's environment
has them: pip compiles at install, ``make setup`` passes ``uv sync --compile-bytecode``, and Python writes the missing
ones on the first run. A benchmark machine may have neither: uv (before ``make setup`` asked for it) installs no
``.pyc``, and with ``PYTHONDONTWRITEBYTECODE`` set (as in the helpers' shells here) nothing is ever written, so every
``convoeval run`` compiled its ~2,000 third-party modules anew — ~2.9 s of the 7.7 s of CPU of a 60-conversation
peer run (``RESULTS.md``, 2026-11-26), while the peers' pip-installed virtualenv had all its ``.pyc``.

``prepare`` compiles what a run imports (the interpreter's ``site-packages`` and each convoeval source tree) once
before measuring, as an install would; ``state`` records how many modules had a cache, so a figure says which case
it measured.
"""

from __future__ import annotations

import compileall
import sysconfig
from collections.abc import Iterable
from pathlib import Path


def site_packages() -> Path:
    """This interpreter's ``site-packages`` (the shared venv's when run with its Python)."""
    return Path(sysconfig.get_paths()["purelib"])


def state(folder: Path | None = None) -> dict[str, int]:
    """Modules in ``folder`` (default: ``site-packages``) and how many have a current-interpreter ``.pyc``."""
    root = folder or site_packages()
    sources = list(root.rglob("*.py"))
    tag = sysconfig.get_config_var("py_version_nodot")
    cached = sum(1 for path in sources
                 if (path.parent / "__pycache__" / f"{path.stem}.cpython-{tag}.pyc").exists())
    return {"modules": len(sources), "with_pyc": cached}


def prepare(trees: Iterable[Path]) -> dict[str, dict[str, int]]:
    """Compile ``site-packages`` and each tree's ``convoeval`` package (idempotent: up-to-date files are skipped).

    Returns the cache state of each folder afterwards, to store beside the figures.
    """
    folders = [site_packages(), *(Path(tree) / "convoeval" for tree in trees)]
    for folder in folders:
        # quiet=2: no listing; compile errors in vendored test files of third-party packages are theirs, not ours
        compileall.compile_dir(folder, quiet=2, workers=1)
    return {str(folder): state(folder) for folder in folders}
