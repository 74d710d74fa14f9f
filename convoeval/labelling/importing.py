"""Labels back from the page: check an exported CSV against the run, line by line, then file it with the others.

The checks are ``convoeval.stats.labels``' own (``read_labels`` for the format, ``label_ratings`` for the run), made
on each line separately so that a file with five mistakes gets five errors, each naming its line, instead of the
first one only. A label whose conversation is not in the run is an error here (``label_ratings`` only warns, since a
labels folder may cover several sweeps; a file exported from this run's page must match it).
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from convoeval.frames import RunFrames
from convoeval.labelling.selection import LabelPageError, load_folder
from convoeval.stats.labels import LABEL_COLUMNS, LABELS_DIR, LabelError, label_ratings, load_labels, read_labels

__all__ = ["LabelCheck", "LabelImportError", "check_labels", "import_labels"]


@dataclass
class LabelCheck:
    """What checking a labels CSV found.

    Attributes:
        path: the file checked.
        errors: one line per problem, each naming the file and line (the header is line 1).
        labels: the file read by ``read_labels`` when it has no error (else empty).
        ratings: the labels resolved against the run (``label_ratings``: pass/fail verdicts; ``unsure`` left out).
    """

    path: Path
    errors: list[str] = field(default_factory=list)
    labels: pd.DataFrame = field(default_factory=pd.DataFrame)
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """One line: how many labels, verdicts, unsure, raters; or how many errors."""
        if self.errors:
            return f"{self.path}: {len(self.errors)} error(s)"
        unsure = int(self.labels["label"].isna().sum())
        raters = ", ".join(sorted(self.labels["rater"].unique()))
        return (f"{self.path}: {len(self.labels)} label(s) on {self.labels['conversation'].nunique()} "
                f"conversation(s) ({len(self.ratings)} pass/fail, {unsure} unsure) by {raters or 'nobody'}; 0 errors")


class LabelImportError(LabelPageError):
    """A labels file with errors: ``check.errors`` has each, naming its line; nothing was imported."""

    def __init__(self, check: LabelCheck) -> None:
        super().__init__(f"{len(check.errors)} error(s), nothing imported:\n" + "\n".join(check.errors))
        self.check = check


def check_labels(path: Path | str, frames: RunFrames) -> LabelCheck:
    """Check every line of a labels CSV against the run's frames; collect the errors instead of stopping at one.

    Args:
        path: The CSV (the page's export, or any file in the labels format).
        frames: The run's frames (``load_folder``), whose ``rubric`` the labels must match.

    Returns:
        A ``LabelCheck``; ``ok`` when the file loads with 0 errors.
    """
    path = Path(path)
    check = LabelCheck(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        check.errors.append(f"{path}: cannot read as CSV ({exc})")
        return check
    columns = [str(c).strip().lower() for c in raw.columns]
    absent = [c for c in LABEL_COLUMNS if c not in columns]
    if absent:
        check.errors.append(f"{path}, line 1: missing column(s) {absent}; expected {list(LABEL_COLUMNS)} "
                            "(+ optional note, source)")
        return check
    if raw.empty:
        check.errors.append(f"{path}: no labels (a header only): label at least one criterion before exporting")
        return check
    rubric = frames.rubric
    whole = _check_whole_file(path, rubric)
    if whole is not None:  # the usual case, a clean export: one read, no per-line pass
        check.labels, check.ratings = whole
        return check
    by_conversation = _rubric_by_conversation(rubric)
    with tempfile.TemporaryDirectory(prefix="convoeval-labels-") as tmp:
        for i in range(len(raw)):
            error = _check_line(raw.iloc[[i]], Path(tmp) / "line.csv", path, i + 2, by_conversation,
                                rubric["run_id"].nunique())
            if error:
                check.errors.append(error)
    if not check.errors:  # every line is fine alone: what is left is across lines (one rater labelling twice)
        try:
            load_labels([path])
        except LabelError as exc:
            check.errors.append(str(exc))
    return check


def _check_whole_file(path: Path, rubric: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """``(labels, ratings)`` when the file loads against the run with no error and no unmatched conversation."""
    try:
        labels = load_labels([path])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ratings = label_ratings(labels, rubric)
    except LabelError:
        return None
    return None if caught else (labels, ratings)


def _rubric_by_conversation(rubric: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The rubric rows a label may name, by ``run_id`` and by ``scenario/seed/trial`` (all the runs that key has)."""
    out: dict[str, pd.DataFrame] = {}
    short: dict[str, list[pd.DataFrame]] = {}
    for run_id, rows in rubric.groupby(rubric["run_id"].astype(str)):
        out[run_id] = rows
        first = rows.iloc[0]
        if pd.notna(first["seed"]) and pd.notna(first["trial"]):
            short.setdefault(f"{first['scenario']}/{int(first['seed'])}/{int(first['trial'])}", []).append(rows)
    for key, parts in short.items():
        out.setdefault(key, pd.concat(parts))  # several runs under one key: label_ratings names the clash
    return out


def _check_line(row: pd.DataFrame, scratch: Path, path: Path, line: int,
                by_conversation: dict[str, pd.DataFrame], n_runs: int) -> str | None:
    """One line through ``read_labels`` and ``label_ratings`` (as a one-line file), its error with its real line."""
    row.to_csv(scratch, index=False)
    try:
        one = read_labels(scratch).assign(file=str(path), line=line)
        conversation = str(one["conversation"].iloc[0])
        if conversation not in by_conversation:
            return (f"{path}, line {line}: conversation {conversation!r} is not in this run "
                    f"({n_runs} conversation(s) with a rubric)")
        label_ratings(one, by_conversation[conversation])
    except LabelError as exc:
        message = str(exc)
        prefix = f"{scratch}, line 2"  # read_labels names the scratch file: name the real one and line
        return message.replace(prefix, f"{path}, line {line}") if prefix in message else f"{path}, line {line}: " \
            f"{message.replace(str(scratch), str(path))}"
    return None


def import_labels(path: Path | str, results: Path | str, *, dest: Path | str | None = None) -> tuple[LabelCheck, Path]:
    """Check a labels CSV against a results folder and copy it into the labels folder.

    Args:
        path: The CSV to import.
        results: The results folder (a run's or a sweep's) the labels were made on.
        dest: A folder (the file keeps its name) or a file path; default ``evals/labels/``.

    Returns:
        The check and the path written.

    Raises:
        LabelImportError: the file has errors (all of them, in ``check.errors``).
        LabelPageError: the destination exists, or
        the labels clash with the destination folder's (the same rater labelling an item twice).
    """
    source = Path(path)
    check = check_labels(source, load_folder(results))
    if not check.ok:
        raise LabelImportError(check)
    target = Path(dest) if dest is not None else LABELS_DIR
    if target.suffix.lower() != ".csv":
        target = target / source.name
    if target.exists():
        raise LabelPageError(f"{target} exists; give another --out, or remove it first")
    folder = target.parent
    existing = sorted(p for p in folder.glob("*.csv") if not p.name.lower().startswith("example")) \
        if folder.is_dir() else []
    try:
        load_labels([*existing, source])  # one rater may label an item once, across every file of the folder
    except LabelError as exc:
        raise LabelPageError(f"{source} clashes with the labels in {folder}: {exc}") from None
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return check, target
