"""The score table: one row per conversation, the composite beside its components, styled for reading.

    score = min(rubric score, holistic overall) − 1.5 × failed assertions      (0–10; see convoeval.judges.scoring)

Colours follow the status thresholds (fail below 5 or any failed assertion, warn below 7 or any failed criterion).
Cell text is HTML-escaped: scenario ids and error messages are data, not markup.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval._util.html_blocks import STATUS_COLORS, missing
from convoeval.frames import AGENT_STATUSES
from convoeval.pipeline.results import EvalResult

__all__ = ["score_table", "score_table_data"]

_SCORE_COLUMNS = ["Score", "Rubric score", "Holistic"]


def score_table_data(run: EvalResult) -> pd.DataFrame:
    """The score table's data: one row per conversation, in reading order.

    Columns: Agent, Scenario, Type, Seed, Trial, Status, Score, Rubric (passed/total), Rubric score, Holistic,
    Assertions passed (passed/checked, as on the console), Goal, Messages, Stopped, Error. For scripted scenarios
    "Rubric" counts turns whose fixed checks held and "Holistic" is the per-turn judge's mean. "Goal" is the
    simulated patient's ``[GOAL_COMPLETE]``: ``—`` for a scripted scenario (no patient to claim it) and for a
    conversation that was not scored. A conversation the
    simulator-failure gate stopped has status ``simulator_failure``, no score, and its reason under "Stopped".
    """
    scores, runs, asr = run.scores, run.frames.runs, run.frames.assertions
    by_run = runs.set_index("run_id") if len(runs) else pd.DataFrame()
    totals = asr.groupby("run_id").size() if len(asr) else pd.Series(dtype=int)
    # From the assertions, not the score: a simulator failure's score has no components, yet its database was checked.
    failures = asr[asr["passed"] == False].groupby("run_id").size() if len(asr) else pd.Series(dtype=int)  # noqa: E712
    rows = []
    for s in scores.sort_values(["agent", "scenario", "seed", "trial"], na_position="first").itertuples():
        r = by_run.loc[s.run_id] if s.run_id in by_run.index else None
        n_asr = int(totals.get(s.run_id, 0))
        failed = int(failures.get(s.run_id, 0))
        rows.append({
            "Agent": s.agent,
            "Scenario": s.scenario,
            "Type": None if r is None else r["type"],
            "Seed": s.seed,
            "Trial": s.trial,
            "Status": s.status,
            "Score": s.score,
            "Rubric": _ratio(s.rubric_passed, s.rubric_total),
            "Rubric score": s.rubric_score,
            "Holistic": s.holistic_overall,
            "Assertions passed": f"{n_asr - failed}/{n_asr}" if n_asr else "—",
            "Goal": _goal(s.goal_completed) if _has_goal(r, s.status) else "—",
            "Messages": None if r is None else r["n_messages"],
            "Stopped": None if r is None else _stopped(r),
            "Error": _short(s.error),
        })
    columns = ["Agent", "Scenario", "Type", "Seed", "Trial", "Status", *_SCORE_COLUMNS[:1], "Rubric",
               *_SCORE_COLUMNS[1:], "Assertions passed", "Goal", "Messages", "Stopped", "Error"]
    return pd.DataFrame(rows, columns=columns)


def score_table(run: EvalResult, *, caption: str | None = None) -> Any:
    """The per-conversation score table as a pandas ``Styler`` (displays in notebooks; ``.to_html()`` for pages).

    Example:
        >>> from convoeval import load_results
        >>> table = score_table(load_results("reports/example"))   # a notebook cell shows it
        >>> table.data[["Scenario", "Status"]].head(2)
                                Scenario             Status
        0  billing-conv-confused-patient  simulator_failure
        1     billing-conv-happy-payment  simulator_failure
    """
    frame = score_table_data(run)
    if frame["Agent"].nunique() <= 1:
        frame = frame.drop(columns="Agent")
    if frame["Error"].isna().all():
        frame = frame.drop(columns="Error")
    styler = frame.style
    # One call: a second Styler.format without precision resets every other column to six decimals (10.000000).
    styler = styler.format({"Seed": _int, "Trial": _int, "Messages": _int}, precision=1, na_rep="—", escape="html")
    styler = styler.map(_status_style, subset=["Status"])
    styler = styler.map(_score_style, subset=_SCORE_COLUMNS)
    styler = styler.map(_goal_style, subset=["Goal"])
    styler = styler.hide(axis="index")
    styler = styler.set_caption(caption or (
        "One row per conversation. Score = min(rubric score, holistic) − 1.5 × failed assertions; "
        "fail below 5 or on a failed assertion, warn below 7 or on a failed criterion; simulator_failure: the "
        "simulated patient broke, so the agent is not scored. "
        "Scripted scenarios: Rubric counts turns whose checks held, Holistic is the per-turn judge's mean. "
        "Goal: the simulated patient said [GOAL_COMPLETE] (— for scripted scenarios and unscored conversations)."))
    styler = styler.set_table_styles([
        {"selector": "", "props": "border-collapse:collapse;font-size:13px;"},
        {"selector": "caption", "props": "caption-side:bottom;text-align:left;color:#57606a;font-size:12px;"
                                         "padding-top:6px;"},
        {"selector": "th", "props": "background:#f6f8fa;border-bottom:2px solid #d0d7de;padding:4px 8px;"
                                    "text-align:left;"},
        {"selector": "td", "props": "border-bottom:1px solid #eaeef2;padding:4px 8px;"},
    ])
    return styler


def _stopped(run: Any) -> Any:
    """How the conversation ended; for a simulator failure, which check stopped it and at which turn."""
    check = run.get("simulator_failure") if hasattr(run, "get") else None
    if missing(check):
        return run["stop_reason"]
    turn = run.get("simulator_failure_turn")
    attempt = run.get("attempt")
    again = f", attempt {int(attempt)}" if not missing(attempt) and int(attempt) > 1 else ""
    return f"simulator_failure ({check}, turn {'?' if missing(turn) else int(turn)}{again})"


def _has_goal(run: Any, status: Any) -> bool:
    """Whether "Goal" means anything here: only a scored conversational run has a patient that could claim it."""
    return run is not None and run["type"] == "conversational" and status in AGENT_STATUSES


def _ratio(passed: Any, total: Any) -> str:
    if missing(total) or int(total) == 0:
        return "—"
    return f"{0 if missing(passed) else int(passed)}/{int(total)}"


def _goal(value: Any) -> str:
    if missing(value):
        return "—"
    return "yes" if bool(value) else "no"


def _short(text: Any, limit: int = 140) -> str | None:
    if missing(text):
        return None
    shown = str(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _int(value: Any) -> str:
    return "—" if missing(value) else str(int(value))


def _status_style(value: Any) -> str:
    fg, bg = STATUS_COLORS.get(str(value), ("#57606a", "#eaeef2"))
    return f"color:{fg};background-color:{bg};font-weight:600;text-transform:uppercase;"


def _score_style(value: Any) -> str:
    if missing(value):
        return "color:#57606a;"
    status = "fail" if value < 5 else "warn" if value < 7 else "pass"
    fg, bg = STATUS_COLORS[status]
    return f"color:{fg};background-color:{bg};"


def _goal_style(value: Any) -> str:
    return {"yes": "color:#116329;font-weight:600;", "no": "color:#a40e26;"}.get(str(value), "color:#57606a;")

