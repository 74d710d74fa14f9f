"""The labelling page: one self-contained HTML file a clinician opens offline, labels with the keyboard, and exports.

The page is a static shell (``label_page.css``, ``label_page.js``, package data) plus the chosen conversations as
JSON in a ``<script type="application/json">`` block. Nothing in it is fetched: no external script, font, style or
image, so it works when emailed. The transcript is untrusted (an agent's reply may contain ``<script>``), so:

- the JSON is written with ``<``, ``>`` and ``&`` as ``\\u003c``/``\\u003e``/``\\u0026``: no text can close the block;
- the script builds every element with ``textContent``, never ``innerHTML`` with data;
- a Content-Security-Policy allows only this page's own script and style (by their SHA-256), so even markup that
  slipped through could run nothing and load nothing.

The judge's verdicts are not on the page: the labeller should not be anchored by the answer being checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import esc, missing
from convoeval.fidelity import fidelity_flags
from convoeval.frames import RunFrames
from convoeval.frames.spreadsheet import safe_cell
from convoeval.labelling.selection import LabelPageError

__all__ = ["SCENARIO_FREE_CHECKS", "label_page_html", "page_data", "patient_problems", "write_label_page"]


def page_data(frames: RunFrames, chosen: pd.DataFrame, *, source: str = "",
              scenarios: str | Path | None = None) -> dict[str, Any]:
    """What the page shows: the chosen conversations' messages and rubric criteria, and the page's id.

    Args:
        frames: The run's frames (``load_folder``).
        chosen: From ``choose_conversations`` (its order is the labelling order).
        source: Where the run came from (a folder name), shown on the page and in the file name of the export.
        scenarios: The scenario folder, for the fidelity checks that need the persona and locale (default
            ``evals/scenarios``; when it cannot be read, only the checks that need no scenario run).

    Returns:
        A JSON-ready dict: ``id`` (from the content: the same selection gives the same id, so progress survives
        regenerating the page; another selection gets another id, so two pages never share progress), ``source``,
        ``created``, ``method`` and ``conversations`` (each with ``patient``: how its simulated patient broke, if
        it did — the gate's ``simulator_failure`` and the after-the-fact fidelity flags — so the labeller knows).
    """
    transcripts, rubric = frames.transcripts, frames.rubric
    broke = patient_problems(frames, [str(r) for r in chosen["run_id"]], scenarios=scenarios)
    conversations = []
    for rec in chosen.itertuples():
        run_id = str(rec.run_id)
        messages = transcripts[transcripts["run_id"] == run_id].sort_values("turn", kind="stable")
        criteria = (rubric[rubric["run_id"] == run_id].drop_duplicates("criterion_index")
                    .sort_values("criterion_index"))
        texts = [str(t) for t in criteria["criterion"]]
        conversations.append({
            "id": run_id, "key": str(rec.conversation), "scenario": str(rec.scenario), "stratum": str(rec.stratum),
            "messages": [_message(m) for m in messages.to_dict("records")],
            # The CSV names a criterion by its text (readable); by its 0-based index when the rubric has the same
            # text twice, since the text would then match the first one only.
            # A text a spreadsheet would read as a formula is named by its index too: the export neutralises every
            # such cell (a leading '), and the index matches exactly where the prefixed text would not.
            "criteria": [{"index": int(i), "text": t,
                          "csv": t if texts.count(t) == 1 and safe_cell(t) == t else str(int(i))}
                         for i, t in zip(criteria["criterion_index"], texts, strict=True)],
            "patient": broke.get(run_id, []),
        })
    if not conversations:
        raise LabelPageError("no conversation chosen: nothing to label")
    content = json.dumps([source, conversations], sort_keys=True, ensure_ascii=False, default=str)
    return {"id": hashlib.sha256(content.encode()).hexdigest()[:16], "source": source,
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "method": str(chosen["method"].iloc[0]), "conversations": conversations}


def patient_problems(frames: RunFrames, run_ids: list[str], *,
                     scenarios: str | Path | None = None) -> dict[str, list[str]]:
    """``run_id -> sentences``: how each conversation's simulated patient broke, for the labeller to see.

    The gate's verdict (``runs.simulator_failure``: check, turn, the patient's words) and every fidelity flag
    (``convoeval.fidelity.fidelity_flags``: parroting, another language, an invented fact, a goal claim the database
    contradicts). A conversation with none of them is missing from the answer.
    """
    out: dict[str, list[str]] = {}
    runs = frames.runs
    for r in runs[runs["run_id"].astype(str).isin(run_ids)].to_dict("records") if len(runs) else []:
        if not missing(r.get("simulator_failure")):
            turn = "" if missing(r.get("simulator_failure_turn")) else f" at turn {int(r['simulator_failure_turn'])}"
            detail = "" if missing(r.get("simulator_failure_detail")) else f": {r['simulator_failure_detail']}"
            out.setdefault(str(r["run_id"]), []).append(
                f"stopped by the simulator-failure gate ({r['simulator_failure']}{turn}){detail}")
    subset = frames.only(run_ids)
    try:
        flags = fidelity_flags(subset, scenarios=scenarios)
    except ValueError:  # the scenarios cannot be read: the checks that need none still run
        flags = fidelity_flags(subset, checks=SCENARIO_FREE_CHECKS)
    for f in flags[flags["flagged"].fillna(False).astype(bool)].to_dict("records") if len(flags) else []:
        out.setdefault(str(f["run_id"]), []).append(f"{str(f['check']).replace('_', ' ')}: {f['detail']}")
    return out


#: The fidelity checks that read only the run (no persona, no locale): they run when the scenarios cannot be read.
SCENARIO_FREE_CHECKS = ("false_goal_complete", "parroting")


def _message(row: dict[str, Any]) -> dict[str, Any]:
    bubbles: Any = row.get("bubbles")  # a list or an array of texts, or missing
    if missing(bubbles) or not len(bubbles):
        bubbles = [] if missing(row.get("text")) else [str(row["text"])]
    calls: Any = row.get("tool_calls")
    tools = [] if missing(calls) else [
        {"name": str(c.get("name", "")),
         "arguments": json.dumps(c.get("arguments"), ensure_ascii=False, default=str),
         "result": json.dumps(c.get("result"), ensure_ascii=False, default=str)} for c in calls]
    return {"role": str(row.get("role")), "turn": None if missing(row.get("turn")) else int(row["turn"]),
            "bubbles": [str(b) for b in bubbles], "tools": tools}


def _asset(name: str) -> str:
    return files("convoeval.labelling").joinpath(name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON that cannot end its ``<script>`` block or open a comment, whatever the strings hold."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def label_page_html(data: dict[str, Any], *, title: str | None = None) -> str:
    """The whole page as one HTML string (``page_data``'s dict inside, the CSS and script inlined)."""
    style, script = _asset("label_page.css"), _asset("label_page.js")
    csp = (f"default-src 'none'; script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    n = len(data["conversations"])
    title = title or f"Label {n} conversation(s) — {data['source']}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{esc(csp)}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{style}</style></head>\n<body>"
        f"<noscript><p class=\"noscript\">This labelling page needs JavaScript. Open the file in Chrome, Edge, Firefox "
        f"or Safari (not in the e-mail preview).</p></noscript>"
        f"<script type=\"application/json\" id=\"label-data\">{_script_json(data)}</script>"
        f"<script>{script}</script></body></html>\n"
    )


def write_label_page(data: dict[str, Any], out: Path | str) -> Path:
    """Write ``label_page_html(data)`` to ``out`` (folders made as needed); returns the path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(label_page_html(data), encoding="utf-8")
    return out
