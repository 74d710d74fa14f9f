"""What went wrong: failures with their evidence and the judges' suggestions, and every error in plain sight.

A *failure* is the agent's: a failed assertion or criterion, a low holistic dimension, a failed scripted check.
An *error* is the evaluation's: the agent crashed, an LLM call failed after its retries, a judge's answer could
not be used, an assertion could not be checked. Errors get a red box that lists each one with its reason, because a
report that hides them would be read as a score.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval.html_blocks import HTML, box, esc, missing, table, wrap
from convoeval.pipeline.results import EvalResult
from convoeval.pipeline.summary import failures_frame

__all__ = ["ERROR_COLUMNS", "errors", "errors_frame", "failures"]

ERROR_COLUMNS = ["kind", "scenario", "seed", "trial", "where", "reason"]


def failures(run: EvalResult) -> HTML:
    """The analyst's table: what failed, in how many conversations, an example of the evidence, and suggestions.

    Built from ``convoeval.pipeline.summary.failures_frame``; sorted by the number of conversations affected.
    """

    frame = failures_frame(run.frames)
    if frame.empty:
        text = "No failures: every assertion, criterion, scripted check and judge dimension (≥ 7) held."
        return HTML(wrap(box(text, tone="ok")), text="no failures")
    rows = []
    for r in frame.itertuples():
        scenarios = ", ".join(map(str, r.scenarios)) if isinstance(r.scenarios, (list, tuple)) else str(r.scenarios)
        suggestions = r.suggestions if isinstance(r.suggestions, (list, tuple)) else []
        rows.append([
            esc(r.kind.replace("_", " ")),
            esc(r.item),
            esc(r.runs),
            esc(scenarios),
            esc(r.example_evidence),
            "<br>".join(f"• {esc(s)}" for s in suggestions) or "—",
        ])
    head = ["kind", "what failed", "conversations", "scenarios", "example evidence", "judges' suggestions"]
    return HTML(wrap(table(rows, head)), text=f"{len(frame)} failure group(s)")


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
