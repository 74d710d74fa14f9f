"""Human labels: read ``evals/labels/*.csv``, resolve them against the runs, and score any judge against them.

The CSV format is documented in ``evals/labels/README.md``: columns ``conversation`` (a ``run_id``, or
``scenario/seed/trial``), ``criterion`` (the criterion's text, or its 0-based ``criterion_index``), ``label``
(``pass``/``fail``, or ``unsure``: kept, but not a verdict) and ``rater``; optional ``note`` and ``source`` (who
decided: ``human``, the default, ``database`` or ``fault``). Every error names the file and line.

A judge's pass rate corrected by the labels (Rogan–Gladen, PPI++, isotonic) is
``calibrated_rates.pass_rate_estimates`` (the map of the calibration functions: ``docs/agreement.md``, "Calibration: one function per question").
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Unpack

import pandas as pd

from convoeval.errors import ConvoevalError
from convoeval.stats.binary import binary_agreement
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.ratings import RATING_COLUMNS, rubric_ratings

#: Required CSV columns, in the documented order.
LABEL_COLUMNS = ("conversation", "criterion", "label", "rater")
#: The folder ``load_labels`` reads by default (relative to the working directory, i.e. the project root).
LABELS_DIR = Path("evals/labels")
_PASS = frozenset({"pass", "passed", "true", "yes", "1"})
_FAIL = frozenset({"fail", "failed", "false", "no", "0"})
#: A labeller who could not decide; the row is kept (it counts as labelled work) but carries no verdict.
UNSURE = "unsure"
#: Where a label comes from: a person, the database (a criterion linked to an assertion), or a known injected fault.
LABEL_SOURCES = ("human", "database", "fault")
_KEY = re.compile(r"^(?P<scenario>[^/]+)/(?P<seed>-?\d+)/(?P<trial>-?\d+)$")


class LabelError(ConvoevalError, ValueError):
    """A human-label file is malformed or does not match the runs; the message names the file and line."""


def read_labels(path: str | Path) -> pd.DataFrame:
    """Read and validate one label CSV.

    Returns:
        ``conversation, criterion, label (boolean; <NA> for unsure), rater, note, source, file, line`` (``line`` is
        the 1-based line in the file; the header is line 1; ``source`` is ``human`` when the file has no such column).

    Raises:
        LabelError: a missing column, an empty cell, a label that is not pass/fail/unsure, or an unknown source.
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise LabelError(f"{path}: cannot read as CSV ({exc})") from exc
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in LABEL_COLUMNS if c not in raw]
    if missing:
        raise LabelError(f"{path}: missing column(s) {missing}; expected {list(LABEL_COLUMNS)} (+ optional note)")
    rows = []
    for i, rec in enumerate(raw.to_dict("records")):
        line = i + 2
        values = {c: str(rec[c]).strip() for c in LABEL_COLUMNS}
        empty = [c for c, v in values.items() if not v]
        if empty:
            raise LabelError(f"{path}, line {line}: empty {', '.join(empty)}")
        label = values["label"].lower()
        if label not in _PASS | _FAIL | {UNSURE}:
            raise LabelError(f"{path}, line {line}: label must be pass, fail or {UNSURE}, got {values['label']!r}")
        source = str(rec.get("source", "")).strip().lower() or "human"
        if source not in LABEL_SOURCES:
            raise LabelError(f"{path}, line {line}: source must be one of {', '.join(LABEL_SOURCES)}, got {source!r}")
        rows.append({**values, "label": pd.NA if label == UNSURE else label in _PASS,
                     "note": str(rec.get("note", "")).strip(), "source": source, "file": str(path), "line": line})
    frame = pd.DataFrame(rows, columns=[*LABEL_COLUMNS, "note", "source", "file", "line"])
    return frame.astype({"label": "boolean", "line": "int64"})


def load_labels(source: str | Path | Iterable[str | Path] = LABELS_DIR) -> pd.DataFrame:
    """Read every label CSV of a folder (or the given files) and check that no item is labelled twice by one rater.

    In a folder, files named ``example*.csv`` are documentation and skipped (name the file to read it).

    Returns:
        The concatenated ``read_labels`` frames.

    Raises:
        LabelError: a malformed file, or one rater labelling the same conversation and criterion twice.
    """
    if isinstance(source, (str, Path)) and Path(source).is_dir():
        paths = sorted(p for p in Path(source).glob("*.csv") if not p.name.lower().startswith("example"))
    else:
        paths = [Path(source)] if isinstance(source, (str, Path)) else [Path(p) for p in source]
    frames = [read_labels(p) for p in paths]
    labels = pd.concat(frames, ignore_index=True) if frames else read_labels_empty()
    dup = labels.duplicated(["conversation", "criterion", "rater"], keep=False)
    if dup.any():
        first = labels[dup].iloc[0]
        same = labels[dup & (labels["conversation"] == first["conversation"])
                      & (labels["criterion"] == first["criterion"]) & (labels["rater"] == first["rater"])]
        where = "; ".join(f"{r.file}, line {r.line}" for r in same.itertuples())
        raise LabelError(f"rater {first['rater']!r} labelled conversation {first['conversation']!r}, criterion "
                         f"{first['criterion']!r} more than once ({where})")
    return labels


def read_labels_empty() -> pd.DataFrame:
    """A zero-row labels frame."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in {
        "conversation": "object", "criterion": "object", "label": "boolean", "rater": "object", "note": "object",
        "source": "object", "file": "object", "line": "int64"}.items()})


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def label_ratings(labels: pd.DataFrame, rubric: pd.DataFrame) -> pd.DataFrame:
    """Resolve labels against the runs' rubric frame into a pass/fail ratings frame (rater = the label's rater).

    A label whose conversation is not among the rubric's runs is left out (label files may cover other sweeps), with
    a warning counting them. ``unsure`` labels are checked like the others (conversation and criterion must exist)
    and then left out: they are not verdicts.

    Raises:
        LabelError: a ``scenario/seed/trial`` key that matches several runs, or a criterion the conversation's rubric
        does not have.
    """
    needed = ["run_id", "scenario", "seed", "trial", "criterion_index", "criterion", "assertion"]
    missing = [c for c in needed if c not in rubric]
    if missing:
        raise ValueError(f"label_ratings needs a rubric frame (RUBRIC_SCHEMA); missing column(s) {missing}")
    items = rubric.drop_duplicates(["run_id", "criterion"])
    run_ids = set(items["run_id"].astype(str))
    by_key: dict[tuple[str, int, int], list[str]] = {}
    for rec in items.drop_duplicates("run_id").itertuples():
        if pd.notna(rec.seed) and pd.notna(rec.trial):
            by_key.setdefault((str(rec.scenario), int(rec.seed), int(rec.trial)), []).append(str(rec.run_id))
    criteria: dict[str, list[tuple[int | None, str]]] = {}
    for rec in items.itertuples():
        index = int(rec.criterion_index) if pd.notna(rec.criterion_index) else None
        criteria.setdefault(str(rec.run_id), []).append((index, str(rec.criterion)))
    first = items.drop_duplicates("run_id").set_index(items.drop_duplicates("run_id")["run_id"].astype(str))
    rows, unmatched = [], 0
    for rec in labels.itertuples():
        where = f"{rec.file}, line {rec.line}"
        run_id = _run_of(str(rec.conversation), run_ids, by_key, where)
        if run_id is None:
            unmatched += 1
            continue
        text = _criterion_of(str(rec.criterion), criteria[run_id], where, run_id)
        if pd.isna(rec.label):
            continue
        conv = first.loc[run_id]
        rows.append({"run_id": run_id, "scenario": conv["scenario"], "seed": conv["seed"], "trial": conv["trial"],
                     "criterion": text, "rater": rec.rater, "passed": rec.label})
    if unmatched:
        warnings.warn(f"{unmatched} label(s) name conversations that are not in these runs; left out", stacklevel=2)
    out = pd.DataFrame(rows).reindex(columns=list(RATING_COLUMNS))
    meta = items[["run_id", "criterion", "criterion_index", "assertion"]].astype({"run_id": str})
    out = out.drop(columns=["criterion_index", "assertion"]).merge(meta, on=["run_id", "criterion"], how="left")
    out["passed"] = out["passed"].astype("boolean")
    return out.reindex(columns=list(RATING_COLUMNS))


def _run_of(key: str, run_ids: set[str], by_key: dict, where: str) -> str | None:
    if key in run_ids:
        return key
    match = _KEY.match(key)
    if not match:
        return None
    found = by_key.get((match["scenario"], int(match["seed"]), int(match["trial"])), [])
    if len(found) > 1:
        raise LabelError(f"{where}: conversation {key!r} matches {len(found)} runs (several targets?); use the run_id")
    return found[0] if found else None


def _criterion_of(criterion: str, options: list[tuple[int | None, str]], where: str, run_id: str) -> str:
    if criterion.isdigit():
        for index, text in options:
            if index == int(criterion):
                return text
        raise LabelError(f"{where}: run {run_id} has no criterion_index {criterion} (0-based; it has "
                         f"{sorted(i for i, _ in options if i is not None)})")
    for _, text in options:
        if _norm(text) == _norm(criterion):
            return text
    raise LabelError(f"{where}: run {run_id} has no criterion {criterion!r}; its criteria are "
                     f"{[t for _, t in options]}")


def score_against_labels(
    rubric: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    by: str | Sequence[str] = ("criterion",),
    overall: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """Every judge (A) against every human rater (B, the reference): the ``binary_agreement`` table.

    Args:
        rubric: The rubric frame of the runs the labels refer to.
        labels: From ``load_labels``.
        rater: Column(s) naming the judge configuration.
        samples: How several judge samples become one verdict.
        by: Grouping columns.
        overall: Also pool the criteria.
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).
    """
    est = estimation_from(estimation, deprecated, "score_against_labels")
    judges = rubric_ratings(rubric, rater=rater, samples=samples)
    humans = label_ratings(labels, rubric)
    clash = sorted(set(judges["rater"]) & set(humans["rater"]))
    if clash:
        raise LabelError(f"human rater name(s) {clash} equal judge names; rename the raters in the label files")
    pairs = [(j, h) for j in sorted(judges["rater"].unique()) for h in sorted(humans["rater"].unique())]
    return binary_agreement(pd.concat([judges, humans], ignore_index=True), pairs=pairs, by=by, overall=overall,
                            estimation=est)
