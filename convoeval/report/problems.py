"""What went wrong: failures with their evidence and the judges' suggestions, and every error in plain sight.

A *failure* is the agent's: a failed assertion or criterion, a low holistic dimension, a failed scripted check.
An *error* is the evaluation's: the agent crashed, an LLM call failed after its retries, a judge's answer could
not be used, an assertion could not be checked. Errors get a red box that lists each one with its reason, because a
report that hides them would be read as a score.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval._util.html_blocks import HTML, box, esc, missing, number_text, table, wrap
from convoeval.frames import AGENT_STATUSES, SIMULATOR_FAILURE, TURN_DIMENSIONS
from convoeval.judges.scoring import WARN_BELOW
from convoeval.pipeline.results import EvalResult
from convoeval.pipeline.summary import failures_frame

__all__ = ["ERROR_COLUMNS", "LOW_DIMENSION", "errors", "errors_frame", "failures", "failures_table",
           "not_scored_reason", "unjudged_reason"]

#: A judge dimension (holistic, or the scripted per-turn judge's) below this is a failure: the warn threshold.
LOW_DIMENSION = WARN_BELOW

ERROR_COLUMNS = ["kind", "scenario", "seed", "trial", "where", "reason"]


def failures_table(run: EvalResult) -> pd.DataFrame:
    """What failed, grouped: ``convoeval.pipeline.summary.failures_frame`` plus the scripted per-turn judge.

    The per-turn judge scores each scripted turn on five dimensions; their mean is a scripted conversation's
    holistic score, so a turn scored low (one turn's correctness 0) is why a scripted conversation warns. Such a
    dimension is a failure here (``kind`` ``turn_dimension``), below ``LOW_DIMENSION`` as the holistic judge's are.

    Returns:
        ``kind, item, runs, scenarios, example_evidence, suggestions``, the most widespread first.
    """
    frame = failures_frame(run.frames)
    extra = _turn_dimension_failures(run)
    if not extra.empty:
        frame = extra if frame.empty else pd.concat([frame, extra], ignore_index=True)
        frame = frame.sort_values(["runs", "kind"], ascending=[False, True], ignore_index=True)
    return frame


def _turn_dimension_failures(run: EvalResult) -> pd.DataFrame:
    turns = run.frames.turns
    columns = ["kind", "item", "runs", "scenarios", "example_evidence", "suggestions"]
    if turns.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for _, r in turns.iterrows():
        if not missing(r.get("error")):
            continue  # an unusable judge answer is an error (listed under Errors), not the agent's failure
        for d in TURN_DIMENSIONS:
            if not missing(r[d]) and r[d] < LOW_DIMENSION:
                issues = "; ".join(map(str, r["issues"])) if isinstance(r["issues"], (list, tuple)) else ""
                rows.append({"item": d, "run_id": r["run_id"], "scenario": r["scenario"], "value": float(r[d]),
                             "evidence": f"{r['scenario']}, turn {int(r['turn'])}: {d} = {number_text(r[d], d)}"
                                         + (f"; issues: {issues}" if issues else ""),
                             "suggestion": None if missing(r.get("suggestion")) else str(r["suggestion"])})
    if not rows:
        return pd.DataFrame(columns=columns)
    # The lowest score is the example: a turn's correctness 0 says more than another turn's 6.
    lowest_first = pd.DataFrame(rows).sort_values("value", kind="stable")
    grouped = lowest_first.groupby("item", sort=False).agg(
        runs=("run_id", "nunique"), scenarios=("scenario", lambda s: sorted(set(s))),
        example_evidence=("evidence", "first"), suggestions=("suggestion", lambda s: sorted({x for x in s if x})[:3]))
    return grouped.reset_index().assign(kind="turn_dimension")[columns]


def failures(run: EvalResult) -> HTML:
    """The analyst's table: what failed, in how many conversations, an example of the evidence, and suggestions.

    Built from ``failures_table``; sorted by the number of conversations affected. When nothing failed, the line
    says so only if some conversation was scored at all, and never beside a conversation that warns or fails.
    """

    frame = failures_table(run)
    if frame.empty:
        return _no_failures(run)
    rows = []
    for r in frame.itertuples():
        scenarios = ", ".join(map(str, r.scenarios)) if isinstance(r.scenarios, (list, tuple)) else str(r.scenarios)
        suggestions = r.suggestions if isinstance(r.suggestions, (list, tuple)) else []
        rows.append([
            esc(_KINDS.get(r.kind, r.kind.replace("_", " "))),
            esc(r.item),
            esc(r.runs),
            esc(scenarios),
            esc(r.example_evidence),
            "<br>".join(f"• {esc(s)}" for s in suggestions) or "—",
        ])
    head = ["kind", "what failed", "conversations", "scenarios", "example evidence", "judges' suggestions"]
    return HTML(wrap(table(rows, head)), text=f"{len(frame)} failure group(s)")


#: How the table names each kind of failure.
_KINDS = {"dimension": f"holistic dimension (< {LOW_DIMENSION:g})",
          "turn_dimension": f"per-turn judge (< {LOW_DIMENSION:g})", "turn_check": "scripted check"}


def _no_failures(run: EvalResult) -> HTML:
    scores = run.scores
    scored = scores[scores["status"].isin(AGENT_STATUSES)] if len(scores) else scores
    if scored.empty:
        text = f"Nothing to show: no conversation was scored ({not_scored_reason(run)})."
        return HTML(wrap(box(esc(text))), text="no failures: nothing scored")
    below = scored[scored["status"] != "pass"]
    if len(below):  # a warn or fail with nothing above to show for it: never claim that everything held
        names = ", ".join(sorted(set(map(str, below["scenario"]))))
        text = (f"{len(below)} conversation(s) scored warn or fail ({names}) but no single assertion, criterion, "
                "check or judge dimension failed: see their scores and transcripts above.")
        return HTML(wrap(box(esc(text), tone="warning")), text="no failure groups")
    text = (f"No failures in the {len(scored)} scored conversation(s): every assertion, criterion, scripted check, "
            f"holistic dimension and per-turn judge dimension (≥ {LOW_DIMENSION:g}) held.")
    return HTML(wrap(box(esc(text), tone="ok")), text="no failures")


def not_scored_reason(run: EvalResult) -> str:
    """Why conversations have no score, in counts: ``3 simulator_failure, 1 error``."""
    scores = run.scores
    counts = scores["status"].value_counts() if len(scores) else pd.Series(dtype=int)
    parts = [f"{int(counts[s])} {s}" for s in (SIMULATOR_FAILURE, "error") if s in counts]
    return ", ".join(parts) if parts else "no conversation ran"


def unjudged_reason(run: EvalResult) -> str:
    """Why the run has no rubric or holistic verdict, in plain words; ``""`` when a conversation was judged.

    Only conversational scenarios meet the rubric and holistic judges; a conversation the simulator-failure gate
    stopped, or one that ended in error, meets neither. Scripted scenarios have fixed checks and the per-turn judge.
    """
    runs = run.frames.runs
    judged = set(run.frames.rubric["run_id"]) | set(run.frames.holistic["run_id"])
    talked = runs[runs["type"] == "conversational"] if len(runs) else runs
    if len(talked) and talked["run_id"].isin(judged).any():
        return ""
    status = run.scores.set_index("run_id")["status"] if len(run.scores) else pd.Series(dtype=str)
    counts = (talked["run_id"].map(status).astype(object).fillna("not scored").value_counts() if len(talked)
              else pd.Series())
    why = {SIMULATOR_FAILURE: "the simulated patient broke, so the gate stopped them before any judge ran",
           "error": "they ended in error"}
    parts = [f"{int(n)} {s} ({why.get(str(s), 'not judged')})" for s, n in counts.items()]
    text = (f"none of the {len(talked)} conversational conversation(s) was judged: {'; '.join(parts)}"
            if len(talked) else "no conversational scenario ran")
    scripted = int((runs["type"] == "scripted").sum()) if len(runs) else 0
    if scripted:
        text += (f"; the {scripted} scripted one(s) are scored by fixed checks and the per-turn judge, never by the "
                 "rubric or holistic judge")
    return text


def errors_frame(run: EvalResult) -> pd.DataFrame:
    """Every error of the run, one row each: kind, scenario, seed, trial, where (criterion, turn…), reason.

    Kinds: ``conversation`` (the run ended in error: agent, store or LLM failure), ``rubric judge``,
    ``holistic judge``, ``turn judge``, ``assertion check``, ``LLM call`` (failed after its retries).
    """
    rows: list[dict[str, Any]] = []
    keys = _keys(run)
    runs = run.frames.runs
    for r in runs[runs["error"].notna()].itertuples() if len(runs) else []:
        rows.append(_err("conversation", r, "", r.error))
    for kind, frame, where in (("rubric judge", run.frames.rubric, _criterion),
                               ("holistic judge", run.frames.holistic, _sample), ("turn judge", run.frames.turns, _turn)):
        for _, r in frame[frame["error"].notna()].iterrows() if len(frame) else []:
            rows.append(_err(kind, r, where(r), r["error"]))
    asr = run.frames.assertions
    for _, r in asr[asr["error"].notna()].iterrows() if len(asr) else []:
        seed, trial = keys.get(r["run_id"], (None, None))
        rows.append({"kind": "assertion check", "scenario": r["scenario"], "seed": seed, "trial": trial,
                     "where": r["assertion"], "reason": r["error"]})
    calls = run.frames.calls
    failed = calls[calls["error"].notna()] if len(calls) and "error" in calls else calls.iloc[0:0]
    for _, c in failed.iterrows():
        place = f"{c['role']} · {c['provider']}/{c['model']}"
        place += "" if missing(c.get("turn")) else f" · turn {int(c['turn'])}"
        rows.append({"kind": "LLM call", "scenario": c["scenario"], "seed": c["seed"], "trial": c["trial"],
                     "where": place, "reason": c["error"]})
    covered = {_conversation(r["scenario"], r["seed"], r["trial"]) for r in rows}
    scores = run.scores
    for r in scores[scores["error"].notna()].itertuples() if len(scores) else []:
        # A score's error repeats one of the rows above; it is listed only when nothing else explains it.
        if _conversation(r.scenario, r.seed, r.trial) not in covered:
            rows.append(_err("score", r, "", r.error))
    return pd.DataFrame(rows, columns=ERROR_COLUMNS)


def errors(run: EvalResult) -> HTML:
    """A red box listing every error with its reason (a green line when there is none)."""
    frame = errors_frame(run)
    if frame.empty:
        return HTML(wrap(box("No errors: every conversation finished and every judge answered.", tone="ok")),
                    text="no errors")
    counts = frame["kind"].value_counts()
    summary = ", ".join(f"{n} {esc(kind)}" for kind, n in counts.items())
    rows = [[esc(r.kind), esc(r.scenario), esc(_plain(r.seed)), esc(_plain(r.trial)), esc(r.where), esc(r.reason)]
            for r in frame.itertuples()]
    body = (f"<div>{len(frame)} error(s): {summary}. A conversation with an error has no score and never counts "
            "as a pass.</div>" + table(rows, ["kind", "scenario", "seed", "trial", "where", "reason"]))
    return HTML(wrap(box(body, tone="danger", title="Errors")), text=f"{len(frame)} error(s)")


def _conversation(scenario: Any, seed: Any, trial: Any) -> tuple[str, str, str]:
    return str(scenario), str(_plain(seed)), str(_plain(trial))


def _keys(run: EvalResult) -> dict[str, tuple[Any, Any]]:
    runs = run.frames.runs
    return {r.run_id: (r.seed, r.trial) for r in runs.itertuples()} if len(runs) else {}


def _err(kind: str, r: Any, where: str, reason: Any) -> dict[str, Any]:
    get = r.get if isinstance(r, pd.Series) else (lambda k: getattr(r, k, None))
    return {"kind": kind, "scenario": get("scenario"), "seed": get("seed"), "trial": get("trial"), "where": where,
            "reason": reason}


def _criterion(r: pd.Series) -> str:
    return f"criterion {int(r['criterion_index']) + 1}: {r['criterion']}" + _sample_suffix(r)


def _sample(r: pd.Series) -> str:
    return f"sample {int(r['sample'])}" if not missing(r.get("sample")) else ""


def _turn(r: pd.Series) -> str:
    return f"turn {int(r['turn'])}" + _sample_suffix(r)


def _sample_suffix(r: pd.Series) -> str:
    return f" (sample {int(r['sample'])})" if not missing(r.get("sample")) and int(r["sample"]) > 0 else ""


def _plain(value: Any) -> Any:
    if missing(value):
        return None
    try:
        return int(value) if float(value).is_integer() else value
    except (TypeError, ValueError):
        return value
