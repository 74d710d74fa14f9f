"""Transcripts as a chat: patient on the left, agent on the right, one bubble per WhatsApp message.

Each conversation is a collapsible ``<details>`` whose summary line gives status, score and how it ended. Inside,
tool calls are chips above the agent's reply (click to see arguments and result), WhatsApp messages other than text
(buttons, lists, media, templates) are drawn as WhatsApp draws them (``chat.py``), stop signals (``GOAL_COMPLETE``,
``STUCK``) are chips under the patient's message, scripted turns show the fixed checks that failed, and the
verdicts (rubric, assertions, holistic) follow the chat.

Everything shown comes from the run's data and is HTML-escaped: an agent reply containing ``<script>`` is text.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import (
    HTML,
    MUTED,
    STATUS_COLORS,
    badge,
    css,
    esc,
    icon,
    missing,
    number_text,
    wrap,
)
from convoeval.frames import AGENT_STATUSES, HOLISTIC_DIMENSIONS, SIMULATOR_FAILURE, TURN_DIMENSIONS
from convoeval.pipeline.results import EvalResult
from convoeval.report.chat import CHAT_BG, chip, message_html
from convoeval.report.chat_channel import ChannelLook, channel_looks
from convoeval.report.problems import LOW_DIMENSION

__all__ = ["transcript_html", "transcripts"]

_SIGNAL_TONE = {"GOAL_COMPLETE": ("#116329", "#dafbe1"), "STUCK": ("#7d4e00", "#fff1c2")}


def transcripts(run: EvalResult, *, scenario: str | None = None, status: str | None = None, open: bool = False,
                limit: int | None = None) -> HTML:
    """Every conversation of the run as a collapsible chat.

    Args:
        run: the run.
        scenario: only this scenario's conversations.
        status: only conversations with this status (``pass``, ``warn``, ``fail``, ``error``).
        open: start expanded (default collapsed: one summary line each).
        limit: at most this many conversations (the rest are counted, not shown).

    Example:
        >>> from convoeval import load_results
        >>> transcripts(load_results("reports/example"), status="pass")   # a notebook cell shows them
        2 transcript(s)
    """
    scores = run.scores.sort_values(["agent", "scenario", "seed", "trial"], na_position="first")
    if scenario is not None:
        scores = scores[scores["scenario"] == scenario]
    if status is not None:
        scores = scores[scores["status"] == status]
    shown = scores if limit is None else scores.head(limit)
    parts = [transcript_html(run, str(row.run_id), open=open) for row in shown.itertuples()]
    if not parts:
        return HTML(wrap(f"<div{css(color=MUTED)}>No conversation matches.</div>"), text="no transcripts")
    if len(shown) < len(scores):
        more = len(scores) - len(shown)
        parts.append(f"<div{css(color=MUTED)}>… and {more} more (raise <code>limit</code>).</div>")
    return HTML(wrap("".join(parts)), text=f"{len(shown)} transcript(s)")


def transcript_html(run: EvalResult, run_id: str, *, open: bool = False) -> str:
    """One conversation's ``<details>`` block (summary line, chat, verdicts)."""
    score = _row(run.scores, run_id)
    meta = _row(run.frames.runs, run_id)
    messages = run.frames.transcripts
    messages = messages[messages["run_id"] == run_id]
    turns = run.frames.turns
    checks = _turn_checks(turns[turns["run_id"] == run_id]) if len(turns) else {}
    rows = messages.to_dict("records")
    # A turn's failed checks go under its last agent message (through the channel, a turn may hold several).
    last_reply = {_int(m["turn"]): i for i, m in enumerate(rows) if m["role"] == "agent"}
    chat = "".join(_message(m, checks.get(_int(m["turn"])) if last_reply.get(_int(m["turn"])) == i else None, look)
                   for i, (m, look) in enumerate(zip(rows, channel_looks(rows), strict=True)))
    stop = meta.get("stop_reason")
    if not missing(meta.get("simulator_failure_detail")):
        stop = f"{stop}: {meta['simulator_failure_detail']}"
    if not missing(stop):
        end = chip(f"conversation ended: {stop}", "#57606a", "#ffffff")
        chat += f"<div{css(text_align='center', margin='8px 0 2px')}>{end}</div>"
    if not chat:
        chat = f"<div{css(color=MUTED)}>No messages were exchanged.</div>"
    body = (f"<div{css(background=CHAT_BG, padding='10px 12px', border_radius='8px', max_width='820px')}>{chat}</div>"
            + _verdicts(run, run_id))
    frame = css(margin="6px 0", border="1px solid #d0d7de", border_radius="8px", padding="6px 10px")
    return (f"<details{' open' if open else ''}{frame}>"
            f"<summary{css(cursor='pointer')}>{_summary(score, meta)}</summary>"
            f"<div{css(margin_top='8px')}>{body}</div></details>")


def _row(frame: pd.DataFrame, run_id: str) -> dict[str, Any]:
    found = frame[frame["run_id"] == run_id] if len(frame) else frame
    return found.iloc[0].to_dict() if len(found) else {}


def _int(value: Any) -> int | None:
    return None if missing(value) else int(value)


def _summary(score: dict[str, Any], meta: dict[str, Any]) -> str:
    value = score.get("score")
    parts = [
        badge(score.get("status")),
        f"<b>{esc(score.get('scenario'))}</b>",
        f"seed {esc(score.get('seed'))}" if not missing(score.get("seed")) else "scenario's seed",
        f"trial {esc(score.get('trial'))}",
        "no score" if missing(value) else f"score {value:.1f}",
    ]
    if meta:
        parts.append(f"{esc(meta.get('n_messages'))} messages")
        if not missing(meta.get("simulator_failure")):
            parts.append(f"ended: simulator_failure ({esc(meta['simulator_failure'])}, turn "
                         f"{esc(_int(meta.get('simulator_failure_turn')))})")
        elif not missing(meta.get("stop_reason")):
            parts.append(f"ended: {esc(meta.get('stop_reason'))}")
        if not missing(meta.get("target")):
            parts.append(f"<span{css(color=MUTED)}>{esc(meta.get('target'))}</span>")
    return " · ".join(parts)


def _tool_chip(call: Any) -> str:
    """A tool call: its name as a chip; click to see the arguments and the result."""
    if not isinstance(call, dict):
        return chip(str(call), "#0550ae", "#ddf4ff", mark="tool")
    details = json.dumps({"arguments": call.get("arguments"), "result": call.get("result")}, ensure_ascii=False,
                         indent=1, default=str)
    if len(details) > 4000:  # a tool may return a large list; the chip stays readable
        details = details[:4000] + "\n…"
    name = chip(str(call.get('name')), "#0550ae", "#ddf4ff", mark="tool")
    pre = css(white_space="pre-wrap", font_size="11px", background="#ffffff", padding="6px", border_radius="6px",
              max_width="560px", text_align="left")
    return (f"<details{css(display='inline-block', vertical_align='top', margin='2px')}>"
            f"<summary{css(list_style='none', cursor='pointer')}>{name}</summary>"
            f"<pre{pre}>{esc(details)}</pre></details>")


def _bubbles(entry: Any) -> list[str]:
    bubbles = entry.get("bubbles")
    if isinstance(bubbles, (list, tuple)) and bubbles:
        return [str(b) for b in bubbles]
    text = entry.get("text")
    return [] if missing(text) else [str(text)]


def _message(entry: Any, failed_checks: list[str] | None, channel: ChannelLook | None) -> str:
    patient = entry["role"] == "patient"
    who = "Patient" if patient else "Agent"
    turn = _int(entry.get("turn"))
    latency = entry.get("latency_s")
    label = f"{who} · turn {turn}" + ("" if patient or missing(latency) else f" · {latency:.1f} s")
    calls = entry.get("tool_calls")
    calls = list(calls) if isinstance(calls, (list, tuple)) else []
    if not calls and isinstance(entry.get("tools"), (list, tuple)):
        calls = list(entry["tools"])
    below = []
    signal = entry.get("signal")
    if not missing(signal):
        fg, bg = _SIGNAL_TONE.get(str(signal), ("#57606a", "#ffffff"))
        below.append(chip(str(signal), fg, bg, title="stop signal sent by the simulated patient", mark="stop"))
    below += [chip(failure, *STATUS_COLORS["fail"], mark="cross") for failure in failed_checks or []]
    parts = entry.get("parts")
    return message_html(esc(label), _bubbles(entry), patient=patient,
                        tools_html="".join(_tool_chip(c) for c in calls), below=below,
                        parts=parts if isinstance(parts, (list, tuple)) else None, channel=channel)


def _turn_checks(turns: pd.DataFrame) -> dict[int | None, list[str]]:
    out: dict[int | None, list[str]] = {}
    for _, row in turns.iterrows():
        failures = row.get("check_failures")
        if isinstance(failures, (list, tuple)) and failures:
            out.setdefault(_int(row["turn"]), [])
            out[_int(row["turn"])].extend(str(f) for f in failures if str(f) not in out[_int(row["turn"])])
    return out


def _verdicts(run: EvalResult, run_id: str) -> str:
    """The judges' and the database's verdicts on this conversation, under the chat."""
    parts = []
    status = _row(run.scores, run_id).get("status")
    scored = status in AGENT_STATUSES
    rub = run.frames.rubric
    rub = rub[rub["run_id"] == run_id] if len(rub) else rub
    if len(rub):
        lines = []
        for _, r in rub.sort_values(["criterion_index", "sample"]).iterrows():
            mark = _mark(r["passed"], r["error"])
            several = rub["sample"].nunique() > 1
            sample = f" <span{css(color=MUTED)}>(sample {int(r['sample'])})</span>" if several else ""
            detail = esc(r["error"]) if not missing(r["error"]) else esc(r["evidence"])
            lines.append(f"<li>{mark} {esc(r['criterion'])}{sample}<br><span{css(color=MUTED)}>{detail}</span></li>")
        parts.append(_section("Rubric", "".join(lines)))
    turns = run.frames.turns
    turns = turns[turns["run_id"] == run_id] if len(turns) else turns
    if len(turns):
        parts.append(_turn_judge(turns))
    asr = run.frames.assertions
    asr = asr[asr["run_id"] == run_id] if len(asr) else asr
    if len(asr):
        # A conversation that was not scored (the patient broke, or it ended in error) counts for nothing: its
        # database checks are shown for the record, in grey, never as the agent's green or red.
        lines = [f"<li>{_mark(r['passed'], r['error'], neutral=not scored)} "
                 f"{esc(r['message'] if missing(r['error']) else r['error'])}</li>" for _, r in asr.iterrows()]
        title = "Database assertions"
        if not scored:
            why = ("the simulated patient broke" if status == SIMULATOR_FAILURE
                   else "the conversation ended in error" if status == "error" else "it has no score")
            title += f" (not scored: {why}; shown for the record, they count for nothing)"
        parts.append(_section(title, "".join(lines)))
    hol = run.frames.holistic
    hol = hol[hol["run_id"] == run_id] if len(hol) else hol
    for _, h in hol.iterrows():
        if not missing(h["error"]):
            parts.append(_section("Holistic judge", f"<li>{_mark(None, h['error'])} {esc(h['error'])}</li>"))
            continue
        # A dimension is a mean over samples when judge_samples > 1: one decimal, as every score.
        dims = ", ".join(f"{d.replace('_', ' ')} {number_text(h[d], d)}" for d in HOLISTIC_DIMENSIONS
                         if not missing(h[d]))
        issues = "; ".join(map(str, h["issues"])) if isinstance(h["issues"], (list, tuple)) else ""
        text = f"<li>overall {h['overall']:.1f}: {esc(dims)}"
        text += f"<br><span{css(color=MUTED)}>issues: {esc(issues)}</span>" if issues else ""
        if not missing(h["suggestion"]):
            text += f"<br><span{css(color=MUTED)}>suggestion: {esc(h['suggestion'])}</span>"
        title = "Holistic judge" + (f" (sample {int(h['sample'])})" if len(hol) > 1 else "")
        parts.append(_section(title, text + "</li>"))
    error = _row(run.frames.runs, run_id).get("error")
    if not missing(error):
        parts.append(_section("Conversation error", f"<li>{_mark(None, error)} {esc(error)}</li>"))
    return f"<div{css(margin_top='8px', max_width='820px')}>{''.join(parts)}</div>"


def _turn_judge(turns: pd.DataFrame) -> str:
    """The scripted per-turn judge, turn by turn: its five dimensions (those below 7 in red), issues, suggestion.

    Its mean is the scripted conversation's "holistic" score, so a turn scored low is why a scripted run warns.
    """
    lines = []
    several = turns["sample"].nunique() > 1 if "sample" in turns else False
    for _, t in turns.sort_values(["turn", "sample"]).iterrows():
        where = f"turn {_int(t['turn'])}" + (f" (sample {int(t['sample'])})" if several else "")
        if not missing(t.get("error")):
            lines.append(f"<li>{_mark(None, t['error'])} {esc(where)}: {esc(t['error'])}</li>")
            continue
        if missing(t.get("overall")):
            continue  # the judge was not asked about this turn
        dims = ", ".join(
            (f"<b{css(color=STATUS_COLORS['fail'][0])}>{esc(d)} {number_text(t[d], d)}</b>" if t[d] < LOW_DIMENSION
             else f"{esc(d)} {number_text(t[d], d)}")
            for d in TURN_DIMENSIONS if not missing(t[d]))
        low = any(not missing(t[d]) and t[d] < LOW_DIMENSION for d in TURN_DIMENSIONS)
        text = f"<li>{_mark(not low, None)} {esc(where)}: overall {t['overall']:.1f} ({dims})"
        issues = "; ".join(map(str, t["issues"])) if isinstance(t.get("issues"), (list, tuple)) else ""
        if low and issues:
            text += f"<br><span{css(color=MUTED)}>issues: {esc(issues)}</span>"
        if low and not missing(t.get("suggestion")):
            text += f"<br><span{css(color=MUTED)}>suggestion: {esc(t['suggestion'])}</span>"
        lines.append(text + "</li>")
    if not lines:
        return ""
    return _section(f"Per-turn judge (a dimension below {LOW_DIMENSION} is a failure)", "".join(lines))


def _section(title: str, items: str) -> str:
    return (f"<div{css(margin_top='6px')}><b>{esc(title)}</b>"
            f"<ul{css(margin='2px 0', padding_left='20px', list_style='none')}>{items}</ul></div>")


def _mark(passed: Any, error: Any, *, neutral: bool = False) -> str:
    """A verdict's mark: green check, red cross, an error, or ``?``; ``neutral`` draws pass and fail in grey."""
    if not missing(error):
        return f"<b{css(color=STATUS_COLORS['error'][1])}>{icon('warning')} error</b>"
    if missing(passed):
        return f"<b{css(color=MUTED)}>{icon('question', title='no verdict')}</b>"
    if bool(passed):
        return f"<b{css(color=MUTED if neutral else '#1a7f37')}>{icon('check', title='held')}</b>"
    return f"<b{css(color=MUTED if neutral else '#cf222e')}>{icon('cross', title='failed')}</b>"
