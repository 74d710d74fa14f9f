"""Where convoeval keeps local state: the SQLite store, the response cache, the local model and its server."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path


def state_dir() -> Path:
    """The local state folder: ``$CONVOEVAL_HOME``, else ``$XDG_STATE_HOME/convoeval``, else ``~/.local/state/convoeval``.

    Created on first use.
    """
    root = os.environ.get("CONVOEVAL_HOME")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
        path = Path(base) / "convoeval"
    path.mkdir(parents=True, exist_ok=True)
    return path


#: Where a project keeps its scenario files, relative to the project's folder.
SCENARIOS_SUBDIR = Path("evals") / "scenarios"
SCENARIOS_ENV = "CONVOEVAL_SCENARIOS_DIR"


def project_root(start: Path | str | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the working directory) holding ``evals/scenarios``.

    Notebooks run with the notebook's folder (Jupyter, nbval) or the caller's (papermill) as working directory;
    both find the project this way. Outside a project it falls back to ``start`` itself.
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / SCENARIOS_SUBDIR).is_dir():
            return folder
    return here


def default_scenarios_dir() -> Path:
    """The scenario folder used when none is given: ``$CONVOEVAL_SCENARIOS_DIR``, else the project's
    ``evals/scenarios`` found from the working directory or any folder above it (``notebooks/`` included)."""
    configured = os.environ.get(SCENARIOS_ENV)
    return Path(configured).expanduser() if configured else project_root() / SCENARIOS_SUBDIR


def under(root: Path, path: str | Path) -> Path:
    """``path`` itself when absolute (``~`` expanded), else ``root / path``."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


@contextlib.contextmanager
def file_lock(path: Path, *, blocking: bool = True) -> Iterator[None]:
    """An exclusive lock between processes (``flock`` on POSIX, ``msvcrt.locking`` on Windows).

    Args:
        path: The lock file (created with its folder if missing).
        blocking: Wait for the lock; ``False`` raises ``BlockingIOError`` at once when another process holds it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if sys.platform == "win32":  # pragma: no cover - Windows only (the checker then skips it elsewhere)
            import msvcrt  # noqa: PLC0415 - Windows only

            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK, 1)
            except OSError as exc:
                raise BlockingIOError(str(exc)) from exc
            try:
                yield
            finally:
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl  # noqa: PLC0415 - POSIX only

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
