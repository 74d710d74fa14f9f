"""The console summary and the saved JSON report of a run, over the tidy frames.

No LLM calls here: everything is read from a run's ``RunFrames`` (``load_results(folder).frames``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

from convoeval._util.html_blocks import number_text
from convoeval.frames import HOLISTIC_DIMENSIONS, SIMULATOR_FAILURE
from convoeval.simulator.gate import exclude_simulator_failures, simulator_failures

ICONS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "error": "ERROR", SIMULATOR_FAILURE: "SIMFAIL"}


def _value(x: Any) -> Any:
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    return None if x is None or (not isinstance(x, (list, dict, str)) and pd.isna(x)) else x


def first_failure(run_id: str, frames: RunFrames) -> str:
    """The first thing that went wrong in a run, in the order an analyst reads: error, assertion, criterion, turn.

    A simulator failure is the simulated patient's, not the agent's: its reason comes from the run row.
    """
    return first_failures(frames).get(run_id, "score below threshold")


def first_failures(frames: RunFrames) -> dict[str, str]:
    """``first_failure`` of every run at once (one pass per frame; a run that had none is absent).

    Per run, the first of: its simulator failure, its error, its first failed assertion, its first failed
    criterion, its first turn with a failed check.
    """
    found: dict[str, str] = {}

    def first_per_run(frame: pd.DataFrame, mask: Any, describe: Callable[[Any], str]) -> None:
        for row in frame[mask].drop_duplicates("run_id").itertuples(index=False):
            found.setdefault(row.run_id, describe(row))

    scores = frames.scores
    if len(scores):
        for run_id in scores.loc[scores["status"] == SIMULATOR_FAILURE, "run_id"]:
            found[run_id] = _simulator_failure(run_id, frames)
        first_per_run(scores, scores["error"].map(lambda e: bool(_value(e))), lambda r: str(r.error))
    asr = frames.assertions
    if len(asr):
        first_per_run(asr, asr["passed"] == False, lambda r: str(r.message))  # noqa: E712 - nullable boolean
    rub = frames.rubric
    if len(rub):
        first_per_run(rub, rub["passed"] == False, lambda r: f"criterion failed: {r.criterion}")  # noqa: E712
    turns = frames.turns
    if len(turns):
        failing = turns["check_failures"].map(lambda f: f is not None and len(f) > 0)
        first_per_run(turns, failing, lambda r: f"turn {r.turn}: {r.check_failures[0]}")
    return found


def _simulator_failure(run_id: str, frames: RunFrames) -> str:
    runs = frames.runs
    row = runs[runs["run_id"] == run_id]
    if not len(row) or "simulator_failure" not in row or not _value(row["simulator_failure"].iloc[0]):
        return "simulator failure: the simulated patient broke (not scored)"
    r = row.iloc[0]
    again = f" (after {int(r['attempt']) - 1} re-simulation(s))" if (_value(r.get("attempt")) or 1) > 1 else ""
    return f"simulator failure, {r['simulator_failure']}: {r['simulator_failure_detail']}{again}"


def summary_lines(frames: RunFrames, *, fail_threshold: float | None = None) -> list[str]:
    """The console summary: one row per run with the score's components, then the totals.

    Columns: status, score, rubric passed/total (conversational) or turns passing their checks (scripted), holistic
    overall, assertions passed / assertions checked (``ASSERTS PASSED``, the report's "Assertions passed"), goal
    reached, messages, the run, and what went wrong first (for a passing conversational run,
    ``(N msgs, rubric x/y, goal: yes/no)``). Conversations the simulator-failure gate stopped (``SIMFAIL``) are
    counted apart: they are in no mean and no threshold.
    """
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    scores, runs, asr = frames.scores, frames.runs, frames.assertions
    msgs = dict(zip(runs["run_id"], runs["n_messages"], strict=False)) if len(runs) else {}
    types = dict(zip(runs["run_id"], runs["type"], strict=False)) if len(runs) else {}
    checked = asr.groupby("run_id").size().to_dict() if len(asr) else {}
    failures = first_failures(frames)
    # Counted from the assertions, not the score: a simulator failure's score has no components, yet its database
    # was checked and must not read as passed.
    failed_by_run = asr[asr["passed"] == False].groupby("run_id").size().to_dict() if len(asr) else {}  # noqa: E712
    header = (f"  {'STATUS':<7} {'SCORE':>5} {'RUBRIC':>6} {'HOLIST':>6} {'ASSERTS PASSED':>14} {'GOAL':>4} "
              f"{'MSGS':>4}  RUN")
    lines = [header]
    for _, row in scores.sort_values(["agent", "scenario", "seed", "trial"], na_position="first").iterrows():
        status = str(row["status"])
        run_id = row["run_id"]
        score = "-" if pd.isna(row["score"]) else f"{row['score']:.1f}"
        rubric = f"{row['rubric_passed']}/{row['rubric_total']}" if _value(row["rubric_total"]) else "-"
        holistic = "-" if pd.isna(row["holistic_overall"]) else f"{row['holistic_overall']:.1f}"
        n_checked = checked.get(run_id, 0)
        failed = failed_by_run.get(run_id, 0)
        assertions = f"{n_checked - failed}/{n_checked}" if n_checked else "-"
        goal = {True: "yes", False: "no"}.get(_value(row["goal_completed"]), "-")
        label = f"{row['scenario']} (seed {_value(row['seed'])}, trial {row['trial']})"
        if status == "pass" and types.get(run_id) == "conversational":
            suffix = f"({msgs.get(run_id, 0)} msgs, rubric {rubric}, goal: {goal})"
        elif status == "pass":
            suffix = ""
        else:
            suffix = failures.get(run_id, "score below threshold")
        lines.append(f"  {ICONS.get(status, status):<7} {score:>5} {rubric:>6} {holistic:>6} {assertions:>14} "
                     f"{goal:>4} {msgs.get(run_id, 0):>4}  {label}  {suffix}".rstrip())
    counts = scores["status"].value_counts().to_dict() if len(scores) else {}
    mean = scores["score"].mean()
    shown = ("pass", "warn", "fail", "error") + ((SIMULATOR_FAILURE,) if counts.get(SIMULATOR_FAILURE) else ())
    total = (f"{len(scores)} run(s): " + ", ".join(f"{counts.get(s, 0)} {s}" for s in shown)
             + ("" if pd.isna(mean) else f"; mean score {mean:.1f}"))
    lines.append(total)
    lines.extend(_simulator_failure_lines(scores, frames))
    if fail_threshold is not None:
        below = below_threshold(scores, fail_threshold)
        if len(below):
            lines.append(f"{len(below)} run(s) below the fail threshold {fail_threshold:g} or in error")
    return lines


def _simulator_failure_lines(scores: pd.DataFrame, frames: RunFrames) -> list[str]:
    """How many conversations the gate stopped (and re-simulated), said apart from the agent's totals."""
    stopped = int((scores["status"] == SIMULATOR_FAILURE).sum()) if len(scores) else 0
    attempts = simulator_failures(frames)
    redone = int(attempts["resimulated"].fillna(False).sum()) if len(attempts) else 0
    lines = []
    if stopped:
        lines.append(f"{stopped} simulator_failure: the simulated patient broke, so the agent was not scored on "
                     f"{'it' if stopped == 1 else 'them'} (re-simulate: --resimulate K; docs/fidelity.md)")
    if redone:
        lines.append(f"{redone} attempt(s) stopped by the simulator-failure gate were re-simulated with the next seed")
    return lines


def below_threshold(scores: pd.DataFrame, fail_threshold: float) -> pd.DataFrame:
    """Runs scoring below ``fail_threshold``, plus runs in error (an error never passes a threshold).

    A ``simulator_failure`` has no score: it is neither below nor above (``convoeval.pipeline.execute.exit_code``
    gives it its own exit code).
    """
    return scores[(scores["status"] == "error") | (scores["score"] < fail_threshold)]


def failures_frame(frames: RunFrames) -> pd.DataFrame:
    """The analyst step: failures across runs, grouped by what failed, with the judges' suggestions.

    Returns:
        One row per (kind, item): kind is ``assertion``, ``criterion``, ``dimension`` (a holistic dimension scored
        below 7) or ``turn_check``; with the number of runs it failed in, the scenarios, and example evidence and
        suggestions. Conversations that ended ``simulator_failure`` are left out: they are not the agent's.
    """
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    rows: list[dict[str, Any]] = []
    frames = exclude_simulator_failures(frames)  # the agent's failures only: never one the patient caused
    asr = frames.assertions
    for _, r in asr[asr["passed"] == False].iterrows():  # noqa: E712
        rows.append({"kind": "assertion", "item": r["assertion"], "run_id": r["run_id"], "scenario": r["scenario"],
                     "evidence": r["message"], "suggestion": None})
    rub = frames.rubric
    for _, r in rub[rub["passed"] == False].iterrows():  # noqa: E712
        rows.append({"kind": "criterion", "item": r["criterion"], "run_id": r["run_id"], "scenario": r["scenario"],
                     "evidence": r["evidence"], "suggestion": None})
    hol = frames.holistic
    suggestions = dict(zip(hol["run_id"], hol["suggestion"], strict=False)) if len(hol) else {}

    for _, r in hol.iterrows():
        for d in HOLISTIC_DIMENSIONS:
            if not pd.isna(r[d]) and r[d] < 7:
                rows.append({"kind": "dimension", "item": d, "run_id": r["run_id"], "scenario": r["scenario"],
                             "evidence": f"{d} = {number_text(r[d], d)}; issues: {'; '.join(map(str, r['issues'] or []))}",
                             "suggestion": r["suggestion"]})
    turns = frames.turns
    for _, r in turns.iterrows():
        for failure in r["check_failures"] or []:
            rows.append({"kind": "turn_check", "item": failure.split(":")[0], "run_id": r["run_id"],
                         "scenario": r["scenario"], "evidence": f"turn {r['turn']}: {failure}",
                         "suggestion": r["suggestion"]})
    if not rows:
        return pd.DataFrame(columns=["kind", "item", "runs", "scenarios", "example_evidence", "suggestions"])
    for row in rows:
        if row["suggestion"] is None:  # assertions and criteria carry the run's holistic suggestion
            row["suggestion"] = suggestions.get(row["run_id"])
    df = pd.DataFrame(rows)
    grouped = df.groupby(["kind", "item"], sort=False).agg(
        runs=("run_id", "nunique"),
        scenarios=("scenario", lambda s: sorted(set(s))),
        example_evidence=("evidence", "first"),
        suggestions=("suggestion", lambda s: sorted({str(x) for x in s if _value(x)})[:3]),
    )
    return grouped.reset_index().sort_values(["runs", "kind"], ascending=[False, True], ignore_index=True)


def save_json_report(frames: RunFrames, path: Path | str, *, meta: Mapping[str, Any]) -> Path:
    """Save the whole run as one JSON file: metadata, scores, and per run its transcript, rubric, judges, assertions."""
    def records(df: pd.DataFrame) -> list[dict[str, Any]]:
        return json.loads(df.to_json(orient="records", date_format="iso", default_handler=str)) if len(df) else []

    by_run: dict[str, dict[str, Any]] = {}
    for name, frame in frames.items():
        if name == "calls":  # the calls are in the data folder, not per conversation
            continue
        for rec in records(frame):
            entry = by_run.setdefault(str(rec["run_id"]), {})
            if name in ("runs", "scores"):
                entry[name[:-1]] = rec
            else:
                entry.setdefault(name, []).append(rec)
    report = {"meta": dict(meta), "scores": records(frames.scores), "runs": list(by_run.values())}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    return path
