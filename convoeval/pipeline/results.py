"""A results folder: one JSON file per finished conversation, written atomically, read back into tidy frames once.

Layout::

    <out>/
      runs/<key>.json        one finished conversation's rows and LLM calls (see ConversationResult.payload)
      data/*.parquet, *.csv  the tidy frames of the whole run, written when it ends
      report.json            the run's settings, models and summary
      .lock                  held (flock) while a run writes here: a second live run is refused

Each finished conversation is written the moment it ends (a temporary file renamed into place), so a run killed
at any point loses nothing finished and counts nothing partial; started again on the same folder it keeps the
finished conversations and runs again those that ended in ``error`` (the evaluation's own failures). Each file also
records the settings the conversation was made with (``settings``), so a run resumed with other settings can tell
(``convoeval.pipeline.resume``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

from convoeval import frames as F
from convoeval.errors import ConvoevalError
from convoeval.llm.accounting import CALL_COLUMNS

__all__ = ["EvalResult", "FolderInUseError", "finished", "kept_conversations", "load_folders", "load_run",
           "result_folders", "results_lock", "write_conversation"]

LOCK_FILE = ".lock"
_MADE: set[Path] = set()


class FolderInUseError(ConvoevalError, RuntimeError):
    """Another live run writes into the same results folder."""


def write_conversation(out_dir: Path, key: str, payload: Mapping[str, Any], *,
                       settings: Mapping[str, Any] | None = None) -> Path:
    """Write one finished conversation atomically to ``<out_dir>/runs/<key>.json``.

    Args:
        out_dir: the results folder.
        key: the conversation's key (``Job.key``), unique within the run.
        payload: ``ConversationResult.payload()``.
        settings: what the conversation was made with (``convoeval.pipeline.resume.conversation_settings``), saved
            as its ``settings`` so that a resumed run can compare them with its own.

    Returns:
        The file written.
    """
    if settings is not None:
        payload = {**payload, "settings": dict(settings)}
    runs = out_dir / "runs"
    if runs not in _MADE:  # one mkdir per folder, not per conversation
        runs.mkdir(parents=True, exist_ok=True)
        _MADE.add(runs)
    # ``json.dumps`` then one write: ``json.dump`` encodes in pure Python and writes every token separately
    # (about 1,500 writes and 10 ms of CPU for one conversation).
    text = json.dumps(payload, ensure_ascii=False, default=str)
    try:
        fd, tmp = tempfile.mkstemp(dir=runs, prefix=f".{key}.", suffix=".tmp")
    except FileNotFoundError:  # the folder was removed meanwhile
        _MADE.discard(runs)
        return write_conversation(out_dir, key, payload)  # (settings are already in the payload)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        final = runs / f"{key}.json"
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return final


def finished(out_dir: Path, *, keep_errors: bool = False, resimulate: int = 0) -> set[str]:
    """Keys of the conversations already saved under ``out_dir`` (partial temporary files never count).

    Args:
        out_dir: the results folder.
        keep_errors: count conversations that ended in ``error`` as finished too (by default they are not, so
            a resumed run retries them).
        resimulate: a run that asks for this many re-simulations does not count a saved ``simulator_failure`` made
            with fewer attempts as finished (so ``--resimulate K`` on a finished folder re-simulates them).
    """
    runs = out_dir / "runs"
    if keep_errors:
        return {path.stem for path in runs.glob("*.json")} if runs.is_dir() else set()
    return set(kept_conversations(out_dir, resimulate=resimulate))


def kept_conversations(out_dir: Path, *, keys: Collection[str] | None = None,
                       resimulate: int = 0) -> dict[str, dict[str, Any] | None]:
    """The saved conversations a resumed run keeps (as ``finished``), each with the settings it was made with.

    Args:
        out_dir: the results folder.
        keys: only these conversations (a run's jobs); default every one saved.
        resimulate: as ``finished``.

    Returns:
        ``key -> settings`` (``None`` for a conversation saved before convoeval recorded them).
    """
    runs = out_dir / "runs"
    if not runs.is_dir():
        return {}
    kept: dict[str, dict[str, Any] | None] = {}
    wanted = None if keys is None else set(keys)
    for path in runs.glob("*.json"):
        if wanted is not None and path.stem not in wanted:
            continue  # read only the files the run is about: a folder may hold other selections' conversations
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: run it again
        if not _to_run_again(payload, resimulate):
            settings = payload.get("settings")
            kept[path.stem] = dict(settings) if isinstance(settings, Mapping) else None
    return kept


def _to_run_again(payload: Mapping[str, Any], resimulate: int) -> bool:
    """Whether a saved conversation ended in error, or in a simulator failure with fewer attempts than asked now."""
    scores, runs = payload.get("scores") or [], payload.get("runs") or []
    if any(s.get("status") == "error" for s in scores):
        return True
    stopped = any(s.get("status") == F.SIMULATOR_FAILURE for s in scores)
    attempts = (runs[0].get("attempt") or 1) if runs else 1
    return stopped and attempts < resimulate + 1


def read_payloads(out_dir: Path | str, keys: Collection[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every saved conversation's payload under ``out_dir`` (or those of ``keys`` that are saved), in key order."""
    runs = Path(out_dir) / "runs"
    wanted = None if keys is None else set(keys)
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        if wanted is None or path.stem in wanted:
            yield json.loads(path.read_text(encoding="utf-8"))


def load_run(out_dir: Path | str) -> EvalResult:
    """Read a run's results folder back: its typed frames and what the run recorded (no LLM call, no re-run).

    The loader of the ``run`` kind of ``convoeval.load_results`` (which recognises every kind of saved folder): a
    folder written by ``convoeval run``, ``notebooks/run.ipynb``, one combination of a sweep, one target of a fault
    study or ``fork(out=...)``. Several folders: ``load_folders``.

    Args:
        out_dir: the results folder (its ``runs/*.json``, and ``report.json`` when the run wrote one).

    Returns:
        An ``EvalResult``: ``result.frames.scores``, ``result.frames.rubric``, …, ``result.meta``.

    Raises:
        FileNotFoundError: the folder holds no finished conversation (no ``runs/*.json``).

    Example:
        >>> run = load_run("reports/example")
        >>> run.frames.scores["status"].value_counts().to_dict()
        {'simulator_failure': 3, 'pass': 2, 'warn': 1}
    """
    out = Path(out_dir)
    if not (out / "runs").is_dir() or not any((out / "runs").glob("*.json")):
        raise FileNotFoundError(f"{out} holds no finished conversation (no runs/*.json)")
    meta: dict[str, Any] = {}
    report = out / "report.json"
    if report.exists():
        meta = json.loads(report.read_text(encoding="utf-8")).get("meta") or {}
    return EvalResult(out_dir=out, frames=read_frames(out), meta=meta)


def result_folders(root: Path | str) -> list[Path]:
    """The results folders at or under ``root``: every folder holding ``runs/*.json`` (a run, a sweep's combinations).

    Raises:
        FileNotFoundError: ``root`` is not a folder, or holds no finished conversation; the message says which.
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder (give a results folder: a run's or a sweep's)")
    found = sorted({p.parent.parent for p in root.rglob("runs/*.json")})
    if not found:
        raise FileNotFoundError(f"{root} holds no finished conversation (no runs/*.json at or under it)")
    return found


def load_folders(folders: list[Path]) -> RunFrames:
    """Several results folders' conversations as one ``RunFrames`` (``result_folders`` finds them under a root)."""
    return F.RunFrames.merge([load_run(f).frames for f in folders], call_columns=CALL_COLUMNS)


def read_frames(out_dir: Path | str, keys: Collection[str] | None = None) -> RunFrames:
    """The typed frames of every conversation saved under ``out_dir``, or of those of ``keys`` (a run's selection);
    empty, typed, when there is none."""
    return F.RunFrames.from_payloads(read_payloads(out_dir, keys), call_columns=CALL_COLUMNS)


@contextlib.contextmanager
def results_lock(out_dir: Path) -> Iterator[None]:
    """Hold ``<out_dir>/.lock`` for the duration of a run; refuse a folder another live run holds.

    An advisory ``flock``: the kernel releases it when the holder exits, even on SIGKILL, so a killed run never
    leaves the folder locked and the next run resumes it.

    Raises:
        FolderInUseError: another live process holds the folder.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise FolderInUseError(
                f"results folder {out_dir} is in use by a live run ({holder}); wait for it or choose another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass
class EvalResult:
    """What a run leaves: its folder, the tidy frames, its metadata, the console summary and the exit code.

    The notebook's report views, the CLI and ``load_run`` (``load_results`` on a run's folder) all hand this one
    type around.

    Attributes:
        out_dir: the results folder (``runs/``, ``data/``, ``report.json``).
        frames: the run's ``RunFrames``: ``frames.runs``, ``frames.scores``, ``frames.transcripts``, ``frames.rubric``,
            ``frames.holistic``, ``frames.turns``, ``frames.assertions``, ``frames.calls``.
        meta: what the run recorded: settings, models, versions, times (empty when unknown).
        lines: the console summary lines, when the run was made in this process.
        exit_code: 0, or the CLI's code for this result (see ``convoeval.pipeline.execute.exit_code``).
    """

    out_dir: Path
    frames: RunFrames
    meta: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    exit_code: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.frames, F.RunFrames):
            raise TypeError(f"EvalResult.frames must be a RunFrames, got {type(self.frames).__name__} "
                            "(F.RunFrames.from_frames(mapping) builds one from frames by name)")
        if self.frames.calls.empty and not len(self.frames.calls.columns):
            import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
            self.frames = self.frames.replace(calls=pd.DataFrame(columns=list(CALL_COLUMNS)))

    @property
    def scores(self) -> pd.DataFrame:
        """The ``scores`` frame (``frames.scores``): one row per conversation."""
        return self.frames.scores

    @property
    def data_dir(self) -> Path:
        return self.out_dir / "data"

    def status_counts(self) -> dict[str, int]:
        """How many conversations ended pass / warn / fail / error / simulator_failure."""
        counts = self.scores["status"].value_counts().to_dict() if len(self.scores) else {}
        return {s: int(counts.get(s, 0)) for s in F.STATUSES}

    def _repr_html_(self) -> str:
        from convoeval._util.html_blocks import badge, css, esc, shown_path, wrap  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

        counts = self.status_counts()
        parts = " ".join(f"{badge(s)} {n}" for s, n in counts.items() if n)
        body = (f"<b>{len(self.scores)} conversation(s)</b> {parts or ''} &nbsp;·&nbsp; data saved in "
                f"<code>{esc(shown_path(self.data_dir))}</code>")
        if self.lines:
            lines = esc("\n".join(self.lines))
            body += (f"<details{css(margin_top='4px')}><summary>console summary</summary>"
                     f"<pre{css(white_space='pre-wrap', font_size='12px')}>{lines}</pre></details>")
        return wrap(body)

    def __repr__(self) -> str:
        return f"EvalResult({str(self.out_dir)!r}, {len(self.scores)} conversation(s), {self.status_counts()})"
