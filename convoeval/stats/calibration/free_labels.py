"""Free labels in the labels format: verdicts the database already gives, ready to calibrate a judge on.

A labels frame (``load_labels``) has ``conversation, criterion, label, rater, note, source, file, line``. Human CSV
labels say ``source = "human"``; this module turns the database's verdicts into the same frame with ``source =
"database"`` (and ``convoeval.agreement.fault_labels`` does it for the known faults, ``source = "fault"``), so
``pass_rate_estimates(rubric, pd.concat([...]), sources="database")`` calibrates on free labels and
``sources="human"`` checks on the human ones.
"""

from __future__ import annotations

import pandas as pd

from convoeval.stats.labels import LABEL_SOURCES, read_labels_empty
from convoeval.stats.truth import DATABASE, truth_ratings

__all__ = ["database_labels", "ratings_to_labels"]


def ratings_to_labels(ratings: pd.DataFrame, *, source: str, origin: str, note: pd.Series | str = "") -> pd.DataFrame:
    """A pass/fail ratings frame (``RATING_COLUMNS``) as a labels frame.

    Args:
        ratings: One verdict per ``run_id`` × ``criterion`` × ``rater`` (``passed`` NA = unknown: an ``unsure`` row).
        source: ``human``, ``database`` or ``fault``.
        origin: What the ``file`` column says the labels came from (e.g. ``"(database)"``).
        note: A note per row (a Series aligned with ``ratings``) or one for all.

    Returns:
        The ``read_labels`` columns; ``conversation`` is the ``run_id``, ``line`` the 1-based row number.
    """
    if source not in LABEL_SOURCES:
        raise ValueError(f"source must be one of {list(LABEL_SOURCES)}, got {source!r}")
    if ratings.empty:
        return read_labels_empty()
    notes = note.astype(object).fillna("").astype(str).to_numpy() if isinstance(note, pd.Series) else note
    frame = pd.DataFrame({
        "conversation": ratings["run_id"].astype(str).to_numpy(),
        "criterion": ratings["criterion"].astype(str).to_numpy(),
        "label": ratings["passed"].astype("boolean").to_numpy(),
        "rater": ratings["rater"].astype(str).to_numpy(),
        "note": notes,
        "source": source,
        "file": origin,
        "line": range(1, len(ratings) + 1),
    })
    return frame.astype({"label": "boolean", "line": "int64"})


def database_labels(rubric: pd.DataFrame, assertions: pd.DataFrame) -> pd.DataFrame:
    """The database's verdict on every criterion that declares an ``assertion``, as labels (``source="database"``).

    A check that errored gives an ``unsure`` label (``label`` NA): no verdict, never a fail.

    Args:
        rubric: The rubric frame (its ``assertion`` column links criteria to assertions).
        assertions: The assertion frame of the same runs.

    Returns:
        A labels frame; ``rater`` is ``"database"``, ``note`` names the assertion.

    Example (needs a judged run, so not run as a doctest)::

        labels = database_labels(frames.rubric, frames.assertions)
        pass_rate_estimates(frames.rubric, labels)
    """
    truth = truth_ratings(rubric, assertions)
    return ratings_to_labels(truth.assign(rater=DATABASE), source="database", origin="(database)",
                             note="assertion " + truth["assertion"].astype(str))
