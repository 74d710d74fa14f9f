"""The composite score of a conversational run, plus ``error`` when a judge failed.

    rubric_score = passed / total × 10                    (10 when there are no criteria)
    score        = min(rubric_score, holistic_overall) − 1.5 × failed assertions, clamped to 0–10, rounded to 0.1
    status       = fail  if score < 5 or any assertion failed
                   warn  if score < 7 or any criterion failed
                   pass  otherwise
                   error if any judge (or the conversation, or an assertion check) errored: no score is made up
    simulator_failure  when the simulated patient broke and the gate stopped the run (``convoeval.simulator.gate``): it is
                   not judged and has no score; it is neither the agent's pass nor its fail

Scripted runs (``score_scripted``) use the same rule with the scripted run's own instruments: a turn "passes" when
all its fixed checks hold (``rubric_passed`` / ``rubric_total`` count turns), and the per-turn judge's mean overall
stands in for the holistic score (10 when no turn asks for the judge, as for an empty rubric).

A failed database assertion fails the run whatever the judges say (6.5 with one failed assertion is ``fail``, not
``warn``): the database is ground truth.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

from convoeval import frames as F
from convoeval.frames import SCORE_SCHEMA, SIMULATOR_FAILURE

Status = Literal["pass", "warn", "fail", "error", "simulator_failure"]
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
    # Half up (JavaScript's Math.round): scores must round the same in every implementation; Python's round() would
    # send 6.25 to 6.2.
    return math.floor(x * 10 + 0.5) / 10


def calculate_score(
    rubric_passed: int,
    rubric_total: int,
    holistic_overall: float | None,
    assertion_failures: int | Sequence[str],
    *,
    errors: Sequence[str] = (),
) -> ScoreResult:
    """The composite score of one conversational run from its parts, failing closed.

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

    def result(overall: float, status: Status, error: str | None = None) -> ScoreResult:
        # The components are the same whether the conversation scored or failed; only the verdict differs.
        return ScoreResult(overall=overall, status=status, rubric_score=rubric_score, rubric_passed=rubric_passed,
                           rubric_total=rubric_total, holistic_overall=holistic, assertion_failures=failures,
                           penalty=penalty, error=error)

    if problems:
        return result(math.nan, "error", "; ".join(problems))
    overall = _round1(max(0.0, min(10.0, min(rubric_score, holistic) - penalty)))
    if overall < FAIL_BELOW or failures > 0:
        status: Status = "fail"
    elif overall < WARN_BELOW or rubric_passed < rubric_total:
        status = "warn"
    else:
        status = "pass"
    return result(overall, status)


# ── Over one conversation's rows (what a running conversation scores from) ──

Row = Mapping[str, Any]


def _missing(value: Any) -> bool:
    # pd.NA can only exist once pandas is loaded, so a conversation's plain rows score without importing it. While
    # `execute.load_frames_meanwhile` imports it, `sys.modules` holds a partly initialised pandas: hence getattr.
    na = getattr(sys.modules.get("pandas"), "NA", None)
    return value is None or value is na or (isinstance(value, float) and math.isnan(value))


def _errors(rows: Sequence[Row], label: str) -> list[str]:
    seen = dict.fromkeys(r["error"] for r in rows if not _missing(r.get("error")))
    return [f"{label}: {e}" for e in seen]


def _rubric_summary(rows: Sequence[Row]) -> tuple[int, int, list[str]]:
    """Criteria passed and total; with several samples a criterion passes on a strict majority of them."""
    if not rows:
        return 0, 0, ["no rubric verdicts"]
    errors = _errors(rows, "rubric judge")
    if any(_missing(r.get("passed")) and _missing(r.get("error")) for r in rows):
        errors.append("rubric judge: verdict missing")
    votes: dict[Any, list[int]] = {}
    for r in rows:
        tally = votes.setdefault(r.get("criterion_index"), [0, 0])
        if not _missing(r.get("passed")):
            tally[0] += bool(r["passed"])
            tally[1] += 1
    passed = sum(1 for yes, count in votes.values() if count and yes * 2 > count)
    return passed, len(votes), errors


def _holistic_summary(rows: Sequence[Row]) -> tuple[float, list[str]]:
    """The mean of the samples' ``overall``."""
    if not rows:
        return math.nan, ["no holistic score"]
    values = [float(r["overall"]) for r in rows if not _missing(r.get("overall"))]
    return (sum(values) / len(values) if values else math.nan), _errors(rows, "holistic judge")


def _assertion_summary(rows: Sequence[Row]) -> tuple[int, list[str]]:
    if not rows:
        return 0, []
    errors = _errors(rows, "assertion")
    if any(_missing(r.get("passed")) and _missing(r.get("error")) for r in rows):
        errors.append("assertion: result missing")
    return sum(1 for r in rows if r.get("passed") is False), errors  # missing (unchecked) is neither


def _turn_summary(rows: Sequence[Row]) -> tuple[int, int, float, list[str]]:
    """Turns whose checks all held, turns, the mean per-turn judge overall, and judge errors."""
    if not rows:
        return 0, 0, math.nan, ["no scripted turns"]
    first: dict[Any, Row] = {}
    judged: dict[Any, list[float]] = {}
    for r in rows:
        first.setdefault(r.get("turn"), r)  # check_failures repeat on every judge sample of a turn
        if not _missing(r.get("overall")):
            judged.setdefault(r.get("turn"), []).append(float(r["overall"]))
    clean = sum(1 for r in first.values() if not r.get("check_failures"))
    # Mean per turn first (samples), then over turns, so a turn judged 3 times does not weigh 3 times.
    means = [sum(v) / len(v) for v in judged.values()]
    overall = sum(means) / len(means) if means else 10.0
    return clean, len(first), overall, _errors(rows, "turn judge")


def _conversation_errors(run: Row | None) -> list[str]:
    if run and run.get("status") == "error":
        return [f"conversation: {run.get('error') or 'failed'}"]
    return []


def _first(sources: Sequence[Sequence[Row]], column: str) -> Any:
    for rows in sources:
        if rows and not _missing(rows[0].get(column)):
            return rows[0][column]
    return None


def _score_row(run_id: Any, result: ScoreResult, sources: Sequence[Sequence[Row]], goal: Any) -> dict[str, Any]:
    total = result.rubric_total
    return {
        "run_id": run_id,
        **{c: _first(sources, c) for c in ("scenario", "agent", "seed", "trial")},
        "status": result.status,
        "score": result.overall,
        "rubric_score": result.rubric_score if total else math.nan,
        "rubric_passed": result.rubric_passed,
        "rubric_total": total,
        "holistic_overall": result.holistic_overall,
        "assertion_failures": result.assertion_failures,
        "goal_completed": goal,
        "error": result.error,
    }


def score_conversation(
    run: Row | None,
    rubric: Sequence[Row],
    holistic: Sequence[Row],
    assertions: Sequence[Row] = (),
    transcript: Sequence[Row] = (),
) -> dict[str, Any]:
    """The score row (``SCORE_SCHEMA`` keys) of one conversational run, from its plain rows.

    This is what a running conversation scores from: no DataFrame is built. ``score_frame`` applies the same rule
    to frames of many conversations.

    Args:
        run: The run row (``RUN_SCHEMA`` keys); ``status == "error"`` scores ``error`` with its reason.
        rubric: Rubric verdict rows (several samples: a criterion passes on a strict majority).
        holistic: Holistic rows (several samples: their mean ``overall``).
        assertions: Database assertion rows (``passed`` False = a failure, missing = a check error).
        transcript: Message rows, for ``goal_completed`` when the run row does not say.

    Returns:
        One score row as a dict.
    """
    if run and run.get("status") == SIMULATOR_FAILURE:
        return simulator_failure_score(run)
    run_rows = [run] if run else []
    errors = _conversation_errors(run)
    passed, total, rubric_errors = _rubric_summary(rubric)
    holistic_overall, holistic_errors = _holistic_summary(holistic)
    failures, assertion_errors = _assertion_summary(assertions)
    if not errors:  # a failed conversation was never judged; "no verdicts" would only repeat that
        errors += rubric_errors + holistic_errors
    errors += assertion_errors
    result = calculate_score(passed, total, holistic_overall, failures, errors=errors)
    goal = _first([run_rows], "goal_completed")
    if goal is None and transcript and any("signal" in r for r in transcript):
        goal = any(r.get("signal") == "GOAL_COMPLETE" for r in transcript)
    run_id = run["run_id"] if run else _first([transcript, rubric, holistic, assertions], "run_id")
    return _score_row(run_id, result, [run_rows, transcript, rubric, holistic, assertions], goal)


def simulator_failure_score(run: Row) -> dict[str, Any]:
    """The score row of a run the simulator-failure gate stopped: status ``simulator_failure``, nothing scored.

    The agent is neither passed nor failed on it: every component is missing, never a default, so no mean, pass
    rate or threshold can count it. Why the patient broke is in the run row (``simulator_failure*`` columns).
    """
    return {"run_id": run["run_id"], **{c: run.get(c) for c in ("scenario", "agent", "seed", "trial")},
            "status": SIMULATOR_FAILURE, "score": math.nan, "rubric_score": math.nan, "rubric_passed": None,
            "rubric_total": None, "holistic_overall": math.nan, "assertion_failures": None,
            "goal_completed": run.get("goal_completed"), "error": None}


def score_scripted_conversation(
    run: Row, turns: Sequence[Row], assertions: Sequence[Row] = (), *, error: str | None = None
) -> dict[str, Any]:
    """The score row of one scripted run, from its plain rows (see the module docstring for the mapping).

    Args:
        run: The run row; ``status == "error"`` scores ``error``.
        turns: Per-turn rows (check failures and per-turn judge scores).
        assertions: Database assertion rows.
        error: An extra reason the run cannot be scored (e.g. the judges could not start).
    """
    errors = _conversation_errors(run)
    if error and not any(error in e for e in errors):
        errors.append(error)
    passed, total, judge_overall, turn_errors = _turn_summary(turns)
    failures, assertion_errors = _assertion_summary(assertions)
    if not errors:  # a failed conversation's missing turns are not a second error
        errors += turn_errors
    errors += assertion_errors
    result = calculate_score(passed, total, judge_overall, failures, errors=errors)
    return _score_row(run["run_id"], result, [[run], turns], _first([[run]], "goal_completed"))


# ── Over frames of many conversations ──


def _by_run(frame: pd.DataFrame | None) -> dict[Any, list[dict[str, Any]]]:
    """A frame's rows grouped by ``run_id`` (a run that failed before it got an id is keyed ``None``)."""

    grouped: dict[Any, list[dict[str, Any]]] = {}
    if frame is None or frame.empty or "run_id" not in frame:
        return grouped
    for row in F.records(frame):
        grouped.setdefault(row["run_id"], []).append(row)
    return grouped


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

    Example (calls the judge model, so not run as a doctest)::

        scores = score_frame(judge_rubric(t, scenarios=s), judge_holistic(t, scenarios=s), checks)
    """
    parts = [_by_run(f) for f in (runs, transcripts, rubric, holistic, assertions)]
    by_run, by_talk, by_rubric, by_holistic, by_assertion = parts
    run_ids = list(dict.fromkeys(r for part in parts for r in part))
    out = []
    for run_id in run_ids:
        runs_of = by_run.get(run_id)
        run = runs_of[0] if runs_of else None
        row = score_conversation(run, by_rubric.get(run_id, []), by_holistic.get(run_id, []),
                                 by_assertion.get(run_id, []), by_talk.get(run_id, []))
        row["run_id"] = run_id
        out.append(row)
    return F.typed_frame(out, SCORE_SCHEMA)


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
    by_turn, by_assertion = _by_run(turns), _by_run(assertions)
    out = [score_scripted_conversation(rows[0], by_turn.get(run_id, []), by_assertion.get(run_id, []), error=error)
           for run_id, rows in _by_run(runs).items()]
    return F.typed_frame(out, SCORE_SCHEMA)
