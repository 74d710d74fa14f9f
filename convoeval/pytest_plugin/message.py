"""What a pytest item says about its conversation, from the run's own rows (no DataFrame, no LLM).

A failed item names what failed first by what is surest: the database assertions (ground truth), then the rubric
criteria with the judge's evidence and reasoning, then a scripted turn's failed checks; then the score and its
components, and the last turns of the transcript. The whole transcript is the item's report section.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convoeval.pipeline.jobs import Job

__all__ = ["LAST_MESSAGES", "error_message", "failure_message", "skip_reason", "transcript_text", "verdict"]

Rows = Mapping[str, Sequence[Mapping[str, Any]]]

#: How many of the last messages a failure message quotes (the report section has them all).
LAST_MESSAGES = 6
#: How much of one message a failure message quotes.
MAX_MESSAGE_CHARS = 300


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def verdict(score: Mapping[str, Any], threshold: float | None, fail_on_warn: bool) -> str | None:
    """Why the item fails, or ``None`` when it passes.

    Example:
        >>> verdict({"status": "pass", "score": 6.0}, 7.0, False)
        'score 6.0 is under the threshold 7'
        >>> verdict({"status": "warn", "score": 8.0}, None, False) is None
        True
    """
    status, value = score["status"], _number(score.get("score"))
    if status == "fail":
        return f"status fail, score {value if value is not None else 'n/a'}"
    if threshold is not None and (value is None or value < threshold):
        return f"score {value if value is not None else 'n/a'} is under the threshold {threshold:g}"
    if fail_on_warn and status == "warn":
        return f"status warn, score {value if value is not None else 'n/a'} (--convoeval-fail-on-warn)"
    return None


def _who(job: Job, rows: Rows) -> str:
    run = rows["runs"][0] if rows.get("runs") else {}
    seed = "" if job.seed is None else f"seed {job.seed}, "
    return f"{job.scenario.id} ({seed}trial {job.trial}) against {run.get('target') or '?'}"


def _shorten(text: Any, limit: int = MAX_MESSAGE_CHARS) -> str:
    one_line = " ".join(str(text or "").split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _components(score: Mapping[str, Any], scripted: bool) -> str:
    parts = []
    if score.get("rubric_total"):
        noun = "turns passing their checks" if scripted else "criteria passed"
        parts.append(f"{score.get('rubric_passed')}/{score.get('rubric_total')} {noun}")
    holistic = _number(score.get("holistic_overall"))
    if holistic is not None:
        parts.append(f"{'turn judge' if scripted else 'holistic'} {holistic:.1f}")
    if score.get("assertion_failures") is not None:
        parts.append(f"{score['assertion_failures']} failed assertion(s)")
    return ", ".join(parts)


def _failed_checks(rows: Rows) -> list[str]:
    out = []
    assertions = [a for a in rows.get("assertions", ()) if a.get("passed") is False and not a.get("superseded")]
    if assertions:
        out.append("failed assertions (the database after the conversation):")
        out += [f"  - {a.get('message') or a.get('assertion')}" for a in assertions]
    seen: set[Any] = set()
    criteria = []
    for r in rows.get("rubric", ()):
        if r.get("passed") is False and r.get("criterion") not in seen:  # one line per criterion, first sample's
            seen.add(r.get("criterion"))
            criteria.append(r)
    if criteria:
        out.append("failed criteria (the rubric judge's evidence):")
        for r in criteria:
            out.append(f"  - {r.get('criterion')}")
            out.append(f"      evidence: {_shorten(r.get('evidence'))}")
            if r.get("reasoning"):
                out.append(f"      reasoning: {_shorten(r.get('reasoning'))}")
    turns = {t.get("turn"): t.get("check_failures") for t in rows.get("turns", ()) if t.get("check_failures")}
    if turns:
        out.append("failed turn checks:")
        out += [f"  - turn {turn}: {failure}" for turn, failures in sorted(turns.items()) for failure in failures or ()]
    return out


def _message_line(m: Mapping[str, Any], limit: int | None = MAX_MESSAGE_CHARS) -> str:
    tools = f" [tools: {', '.join(m['tools'])}]" if m.get("tools") else ""
    text = _shorten(m.get("text"), limit) if limit else str(m.get("text") or "")
    return f"  [turn {m.get('turn')}] {m.get('role')}: {text}{tools}"


def _current(rows: Rows) -> list[Mapping[str, Any]]:
    """The kept attempt's messages (a re-simulated conversation also holds its superseded attempts)."""
    run_id = rows["runs"][0].get("run_id") if rows.get("runs") else None
    return [m for m in rows.get("transcripts", ()) if run_id is None or m.get("run_id") == run_id]


def failure_message(job: Job, rows: Rows, why: str) -> str:
    """The failed item's report: what failed, the score, then the last turns."""
    score = rows["scores"][0]
    lines = [f"{_who(job, rows)}: {why}"]
    components = _components(score, job.scenario.type == "scripted")
    if components:
        lines.append(f"score {score.get('score')}: {components}")
    lines += _failed_checks(rows)
    messages = _current(rows)
    if messages:
        shown = messages[-LAST_MESSAGES:]
        lines.append(f"last {len(shown)} of {len(messages)} messages (the whole transcript: 'convoeval transcript' "
                     "below):")
        lines += [_message_line(m) for m in shown]
    return "\n".join(lines)


def error_message(job: Job, rows: Rows) -> str:
    """Why the conversation could not be evaluated (status ``error``)."""
    score = rows["scores"][0]
    run = rows["runs"][0] if rows.get("runs") else {}
    return f"{_who(job, rows)}: error, not evaluated: {score.get('error') or run.get('error') or 'unknown error'}"


def skip_reason(rows: Rows) -> str:
    """Why the conversation was not scored (status ``simulator_failure``): the gate's check and detail."""
    run = rows["runs"][0] if rows.get("runs") else {}
    check, detail = run.get("simulator_failure"), run.get("simulator_failure_detail")
    said = f"{check}: {detail}" if check else "the simulated patient broke"
    return f"simulator_failure (the simulated patient broke, not the agent: not scored): {said}"


def transcript_text(rows: Rows) -> str:
    """The whole transcript, a line per message (the item's report section, shown when it fails)."""
    return "\n".join(_message_line(m, limit=None) for m in _current(rows)) or "(no message)"
