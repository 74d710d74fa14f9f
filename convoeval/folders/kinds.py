"""Every kind of saved results folder, recognised by what it holds and read by its own package's loader.

``FOLDER_KINDS`` is the one registry: a kind's name, how a folder of it is recognised, its loader and what that
returns. ``load_results`` asks the kinds in order and the first that recognises the folder loads it; the order
matters because kinds contain others (a sweep's combinations and a fault study's targets are run folders, a red-team
run is a run):

=================  =====================================================  ========================================
kind               recognised by                                          loaded by, returns
=================  =====================================================  ========================================
sweep              ``sweep.json``                                         ``sweep.load_sweep``: ``SweepResult``
agreement study    ``study.json``                                         ``agreement.load_study``: ``Study``
red-team run       ``runs/*.json`` whose conversations carry an attack    ``redteam.load_redteam``: ``RedTeamRun``
run                ``runs/*.json``                                        ``pipeline.load_run``: ``EvalResult``
fault study        a folder per target: ``clinic-<agent>/runs/``,         ``agreement.load_fault_study``:
                   ``clinic-<agent>-faults-<fault>/runs/``                ``RunFrames``
=================  =====================================================  ========================================

This package sits above every kind's (the layers in ``pyproject.toml``); each loader is imported when its kind is
asked for, so reading a run does not load the red team, the studies or papermill. The file names are the writers'
(``sweep.run.SETTINGS_FILE``, ``agreement.study``'s ``study.json``): ``tests/test_folder_kinds.py`` writes each
kind with its real writer and reads it back here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from convoeval.errors import ConvoevalError

if TYPE_CHECKING:
    from convoeval.agreement.study import Study
    from convoeval.frames import RunFrames
    from convoeval.pipeline.results import EvalResult
    from convoeval.redteam.study import RedTeamRun
    from convoeval.sweep.run import SweepResult

    #: What ``load_results`` returns: the result type of the folder's kind.
    SavedResults: TypeAlias = EvalResult | RedTeamRun | RunFrames | Study | SweepResult

__all__ = ["FOLDER_KINDS", "FolderKind", "UnknownFolderError", "folder_kind", "load_results"]


class UnknownFolderError(ConvoevalError, FileNotFoundError):
    """A folder that holds no saved results of a kind convoeval knows (or no folder at all)."""


@dataclass(frozen=True)
class FolderKind:
    """One kind of saved folder: its name, how it is recognised, how it is loaded, and what the loader returns."""

    name: str
    recognises: Callable[[Path], bool]
    load: Callable[[Path], SavedResults]
    returns: str


def _conversations(folder: Path) -> list[Path]:
    runs = folder / "runs"
    return sorted(runs.glob("*.json")) if runs.is_dir() else []


def _is_sweep(folder: Path) -> bool:
    return (folder / "sweep.json").is_file()


def _is_study(folder: Path) -> bool:
    return (folder / "study.json").is_file()


def _is_run(folder: Path) -> bool:
    return bool(_conversations(folder))


def _is_redteam(folder: Path) -> bool:
    # Every conversation of a red-team run carries its case's verdict (the `attacks` frame); one file tells.
    found = _conversations(folder)
    if not found:
        return False
    try:
        payload = json.loads(found[0].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(payload, dict) and bool(payload.get("attacks"))


def _is_fault_study(folder: Path) -> bool:
    # No conversations of its own: one run folder per target, named by agreement.faults.target_folder.
    targets = [p.name for p in folder.iterdir() if p.is_dir() and _is_run(p)] if folder.is_dir() else []
    return (not _is_run(folder) and bool(targets) and all(name.startswith("clinic-") for name in targets)
            and any("-faults-" in name for name in targets))


def _load_sweep(folder: Path) -> SweepResult:
    from convoeval.sweep.run import load_sweep  # noqa: PLC0415 - only the kind asked for loads (papermill's sweep)

    return load_sweep(folder)


def _load_study(folder: Path) -> Study:
    from convoeval.agreement.study import load_study  # noqa: PLC0415 - only the kind asked for loads (the studies)

    return load_study(folder)


def _load_redteam(folder: Path) -> RedTeamRun:
    from convoeval.redteam.study import load_redteam  # noqa: PLC0415 - only the kind asked for loads (the red team)

    return load_redteam(folder)


def _load_run(folder: Path) -> EvalResult:
    from convoeval.pipeline.results import load_run  # noqa: PLC0415 - only the kind asked for loads

    return load_run(folder)


def _load_fault_study(folder: Path) -> RunFrames:
    from convoeval.agreement.faults import load_fault_study  # noqa: PLC0415 - only the kind asked for loads

    return load_fault_study(folder)


#: Every kind of saved folder, in the order ``load_results`` asks them (a kind before the kinds it contains).
FOLDER_KINDS: tuple[FolderKind, ...] = (
    FolderKind("sweep", _is_sweep, _load_sweep, "SweepResult"),
    FolderKind("agreement study", _is_study, _load_study, "Study"),
    FolderKind("red-team run", _is_redteam, _load_redteam, "RedTeamRun"),
    FolderKind("run", _is_run, _load_run, "EvalResult"),
    FolderKind("fault study", _is_fault_study, _load_fault_study, "RunFrames"),
)
_HINT = ("no finished conversation (runs/*.json) and no study.json or sweep.json; the kinds it knows: "
         + ", ".join(k.name for k in FOLDER_KINDS))


def folder_kind(folder: Path | str) -> FolderKind:
    """The kind of a saved folder, recognised by what it holds.

    Raises:
        UnknownFolderError: not a folder, or a folder of no known kind; the message names the kinds.
    """
    path = Path(folder).expanduser()
    if path.is_dir():
        for kind in FOLDER_KINDS:
            if kind.recognises(path):
                return kind
    where = "is not a folder" if not path.exists() or not path.is_dir() else "is not a saved results folder"
    raise UnknownFolderError(f"{path} {where}: {_HINT}")


def load_results(folder: Path | str) -> SavedResults:
    """Read any saved results folder back, whatever made it: the result type of its kind (``FOLDER_KINDS``).

    A run's folder (``convoeval run``, the run notebook, a sweep's combination, ``fork(out=...)``) gives an
    ``EvalResult``; a red-team run a ``RedTeamRun``; a fault study its ``RunFrames``; an agreement study a ``Study``;
    a sweep a ``SweepResult``. Each but the fault study's has ``.frames``. No LLM call, nothing re-run.

    Args:
        folder: The folder a run, a red-team run, a fault study, an agreement study or a sweep wrote.

    Raises:
        UnknownFolderError: a folder of no known kind (a ``FileNotFoundError``; the message names the kinds).

    Example:
        >>> run = load_results("reports/example")
        >>> type(run).__name__, run.frames.scores["status"].value_counts().to_dict()
        ('EvalResult', {'simulator_failure': 3, 'pass': 2, 'warn': 1})
    """
    path = Path(folder).expanduser()
    return folder_kind(path).load(path)
