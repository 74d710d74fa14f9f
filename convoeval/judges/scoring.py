"""The composite score of a conversational run, as the seed computes it, plus ``error`` when a judge failed.

    rubric_score = passed / total × 10                    (10 when there are no criteria, as the seed)
    score        = min(rubric_score, holistic_overall) − 1.5 × failed assertions, clamped to 0–10, rounded to 0.1
    status       = fail  if score < 5 or any assertion failed
                   warn  if score < 7 or any criterion failed
                   pass  otherwise
                   error if any judge (or the conversation, or an assertion check) errored: no score is made up

Scripted runs (``score_scripted``) use the same rule with the scripted run's own instruments: a turn "passes" when
all its fixed checks hold (``rubric_passed`` / ``rubric_total`` count turns), and the per-turn judge's mean overall
stands in for the holistic score (10 when no turn asks for the judge, as the seed's empty rubric).

The seed's own test expected ``warn`` for 6.5 with one failed assertion while its code says ``fail``; we follow the
code: the database is ground truth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from convoeval.frames import SCORE_SCHEMA, typed_frame

Status = Literal["pass", "warn", "fail", "error"]
ASSERTION_PENALTY = 1.5
FAIL_BELOW = 5.0
WARN_BELOW = 7.0


@dataclass(frozen=True)
class ScoreResult:
    """The composite and its components. ``overall`` is NaN when ``status == "error"``."""

    overall: float
    status: Status
    rubric_score: float
    rubric_passed: int
    rubric_total: int
    holistic_overall: float
    assertion_failures: int
    penalty: float
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _round1(x: float) -> float:
    # JavaScript's Math.round (half up), as the seed; Python's round() would send 6.25 to 6.2.
    return math.floor(x * 10 + 0.5) / 10


def calculate_score(
    rubric_passed: int,
    rubric_total: int,
    holistic_overall: float | None,
    assertion_failures: int | Sequence[str],
    *,
    errors: Sequence[str] = (),
) -> ScoreResult:
    """The seed's ``calculateConversationalScore``, failing closed.

    Args:
        rubric_passed: Criteria passed.
        rubric_total: Criteria judged.
        holistic_overall: The holistic judge's overall (0–10); missing/NaN counts as a judge error.
        assertion_failures: The number of failed database assertions, or their messages.
        errors: Reasons the run cannot be scored (judge errors, a failed conversation); any → ``"error"``.

    Returns:
        A ``ScoreResult``.

    Example:
        >>> calculate_score(1, 1, 8, 1).status   # min(10, 8) − 1.5 = 6.5, but an assertion failed
        'fail'
    """
    failures = assertion_failures if isinstance(assertion_failures, int) else len(assertion_failures)
    rubric_score = rubric_passed / rubric_total * 10 if rubric_total > 0 else 10.0
    problems = list(errors)
    holistic = math.nan if holistic_overall is None else float(holistic_overall)
    if math.isnan(holistic) and not problems:
        problems.append("holistic score missing")
    penalty = failures * ASSERTION_PENALTY
    common = {
        "rubric_score": rubric_score,
        "rubric_passed": rubric_passed,
        "rubric_total": rubric_total,
        "holistic_overall": holistic,
        "assertion_failures": failures,
        "penalty": penalty,
    }
    if problems:
        return ScoreResult(overall=math.nan, status="error", error="; ".join(problems), **common)
    overall = _round1(max(0.0, min(10.0, min(rubric_score, holistic) - penalty)))
    if overall < FAIL_BELOW or failures > 0:
        status: Status = "fail"
    elif overall < WARN_BELOW or rubric_passed < rubric_total:
        status = "warn"
    else:
        status = "pass"
    return ScoreResult(overall=overall, status=status, **common)


# ── Over frames ──


def _errors(frame: pd.DataFrame, label: str) -> list[str]:
    if frame.empty or "error" not in frame:
        return []
    bad = frame["error"].dropna()
    return [f"{label}: {e}" for e in pd.unique(bad)]


def _rubric_summary(rows: pd.DataFrame) -> tuple[int, int, list[str]]:
    """Criteria passed and total; with several samples a criterion passes on a strict majority of them."""
    if rows.empty:
        return 0, 0, ["no rubric verdicts"]
    errors = _errors(rows, "rubric judge")
    missing = rows["passed"].isna() & rows["error"].isna()
    if missing.any():
        errors.append("rubric judge: verdict missing")
    votes = rows.dropna(subset=["passed"]).groupby("criterion_index")["passed"].agg(["sum", "count"])
    total = int(rows["criterion_index"].nunique())
    passed = int((votes["sum"] * 2 > votes["count"]).sum())
    return passed, total, errors


def _holistic_summary(rows: pd.DataFrame) -> tuple[float, list[str]]:
    """The mean of the samples' ``overall``."""
    if rows.empty:
        return math.nan, ["no holistic score"]
    errors = _errors(rows, "holistic judge")
    values = rows["overall"].dropna()
    return (float(values.mean()) if len(values) else math.nan), errors


def _assertion_summary(rows: pd.DataFrame) -> tuple[int, list[str]]:
    if rows.empty:
        return 0, []
    errors = _errors(rows, "assertion")
    unchecked = rows["passed"].isna() & (rows["error"].isna() if "error" in rows else True)
    if bool(unchecked.any()):
        errors.append("assertion: result missing")
    return int(rows["passed"].eq(False).sum()), errors  # NA (unchecked) is neither a pass nor a failure


def _select(frame: pd.DataFrame | None, run_id: Any) -> pd.DataFrame:
    """The rows of one run; a run that failed before it got an id is selected by its missing id."""
    if frame is None or frame.empty or "run_id" not in frame:
        return pd.DataFrame()
    column = frame["run_id"]
    mask = column.isna() if pd.isna(run_id) else column.eq(run_id).fillna(False)
    return frame[mask.astype(bool).to_numpy()]


def _conversation_errors(run_rows: pd.DataFrame) -> list[str]:
    if "status" in run_rows and (run_rows["status"] == "error").any():
        return [f"conversation: {_first([run_rows], 'error') or 'failed'}"]
    return []


def _first(frames: Sequence[pd.DataFrame], column: str) -> Any:
    for f in frames:
        if column in f and len(f) and not pd.isna(f[column].iloc[0]):
            value = f[column].iloc[0]
            return value.item() if hasattr(value, "item") else value
    return None


def score_frame(
    rubric: pd.DataFrame,
    holistic: pd.DataFrame,
    assertions: pd.DataFrame | None = None,
    *,
    transcripts: pd.DataFrame | None = None,
    runs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One score row per conversation, with the components beside the composite.

    Args:
        rubric: From ``judge_rubric`` (several samples: a criterion passes on a strict majority).
        holistic: From ``judge_holistic`` (several samples: their mean ``overall``).
        assertions: Rows with ``ASSERTION_COLUMNS`` (``passed`` False = a failure, missing = a check error).
        transcripts: Used for ``goal_completed`` (the simulator's ``GOAL_COMPLETE``) and the conversation columns.
        runs: Rows with ``RUN_COLUMNS``; a run with ``status == "error"`` scores ``error`` with its reason.

    Returns:
        A frame with ``SCORE_COLUMNS``, one row per ``run_id`` seen in any input, in first-seen order.

    Example:
        >>> scores = score_frame(judge_rubric(t, scenarios=s), judge_holistic(t, scenarios=s), checks)  # doctest: +SKIP
    """
    sources = [f for f in (runs, transcripts, rubric, holistic, assertions) if f is not None and not f.empty]
    run_ids = list(dict.fromkeys(r for f in sources for r in f["run_id"]))
    out = []
    for run_id in run_ids:
        run_rows = _select(runs, run_id)
        talk = _select(transcripts, run_id)
        rub, hol, asr = _select(rubric, run_id), _select(holistic, run_id), _select(assertions, run_id)
        conversation = [run_rows, talk, rub, hol, asr]
        errors = _conversation_errors(run_rows)
        passed, total, rubric_errors = _rubric_summary(rub)
        holistic_overall, holistic_errors = _holistic_summary(hol)
        failures, assertion_errors = _assertion_summary(asr)
        if not errors:  # a failed conversation was never judged; "no verdicts" would only repeat that
            errors += rubric_errors + holistic_errors
        errors += assertion_errors
        result = calculate_score(passed, total, holistic_overall, failures, errors=errors)
        goal = _first([run_rows], "goal_completed")
        if goal is None and not talk.empty and "signal" in talk:
            goal = bool((talk["signal"] == "GOAL_COMPLETE").fillna(False).any())
        out.append({
            "run_id": run_id,
            **{c: _first(conversation, c) for c in ("scenario", "agent", "seed", "trial")},
            "status": result.status,
            "score": result.overall,
            "rubric_score": result.rubric_score if total else math.nan,
            "rubric_passed": passed,
            "rubric_total": total,
            "holistic_overall": result.holistic_overall,
            "assertion_failures": result.assertion_failures,
            "goal_completed": goal,
            "error": result.error,
        })
    return typed_frame(out, SCORE_SCHEMA)


def _turn_summary(rows: pd.DataFrame) -> tuple[int, int, float, list[str]]:
    """Turns whose checks all held, turns, the mean per-turn judge overall, and judge errors."""
    if rows.empty:
        return 0, 0, math.nan, ["no scripted turns"]
    errors = _errors(rows, "turn judge")
    first = rows.drop_duplicates("turn")  # check_failures repeat on every judge sample of a turn
    clean = int(sum(1 for f in first["check_failures"] if not (isinstance(f, (list, tuple)) and len(f))))
    judged = rows.dropna(subset=["overall"])
    # Mean per turn first (samples), then over turns, so a turn judged 3 times does not weigh 3 times.
    overall = float(judged.groupby("turn")["overall"].mean().mean()) if len(judged) else 10.0
    return clean, len(first), overall, errors


def score_scripted(
    runs: pd.DataFrame,
    turns: pd.DataFrame,
    assertions: pd.DataFrame | None = None,
    *,
    error: str | None = None,
) -> pd.DataFrame:
    """One score row per scripted run (see the module docstring for the mapping onto the score columns).

    Args:
        runs: Rows with ``RUN_COLUMNS``; a run with ``status == "error"`` scores ``error``.
        turns: Rows with ``TURN_COLUMNS`` (check failures and per-turn judge scores).
        assertions: Rows with ``ASSERTION_COLUMNS``.
        error: An extra reason the run cannot be scored (e.g. the judges could not start).

    Returns:
        A frame with ``SCORE_COLUMNS``.
    """
    out = []
    for run_id in list(dict.fromkeys(runs["run_id"])) if not runs.empty else []:
        run_rows, trn, asr = _select(runs, run_id), _select(turns, run_id), _select(assertions, run_id)
        errors = _conversation_errors(run_rows)
        if error and not any(error in e for e in errors):
            errors.append(error)
        passed, total, judge_overall, turn_errors = _turn_summary(trn)
        failures, assertion_errors = _assertion_summary(asr)
        if not errors:  # a failed conversation's missing turns are not a second error
            errors += turn_errors
        errors += assertion_errors
        result = calculate_score(passed, total, judge_overall, failures, errors=errors)
        out.append({
            "run_id": run_id,
            **{c: _first([run_rows, trn], c) for c in ("scenario", "agent", "seed", "trial")},
            "status": result.status,
            "score": result.overall,
            "rubric_score": result.rubric_score if total else math.nan,
            "rubric_passed": passed,
            "rubric_total": total,
            "holistic_overall": result.holistic_overall,
            "assertion_failures": result.assertion_failures,
            "goal_completed": _first([run_rows], "goal_completed"),
            "error": result.error,
        })
    return typed_frame(out, SCORE_SCHEMA)
