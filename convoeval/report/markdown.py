"""A run as a short GitHub-flavoured Markdown summary: ``convoeval run --format markdown``, a CI job's step summary.

The headline comes first (what the worst conversation did), then the conversations that did not pass, each with what
went wrong first, then their evidence (failed assertions, the judge's evidence for failed criteria, failed turn
checks) folded away, then every conversation folded away, and the link to the full report. No LLM call: everything
is read from the run's frames (``EvalResult``). ``cell`` and ``link`` are shared with the comparison's Markdown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from convoeval.frames import SIMULATOR_FAILURE
from convoeval.pipeline.execute import LOCAL_MODEL_NOTE
from convoeval.pipeline.summary import below_threshold, first_failures

if TYPE_CHECKING:
    from convoeval.frames import RunFrames
    from convoeval.pipeline.results import EvalResult

__all__ = ["MAX_ROWS", "cell", "link", "run_markdown"]

#: How many conversations a table lists before "… and N more" (a PR comment must stay readable; GitHub caps it too).
MAX_ROWS = 20
#: How many failed checks the evidence lists per conversation.
MAX_EVIDENCE = 4
#: How much of one piece of evidence a cell quotes.
MAX_CELL = 200
#: The headline's mark per outcome, worst first.
_HEADLINES = (("error", "🛑", "ERROR"), ("below", "❌", "BELOW THRESHOLD"), ("fail", "❌", "FAIL"),
              (SIMULATOR_FAILURE, "⚠️", "SIMULATOR FAILURE"), ("warn", "⚠️", "WARN"), ("pass", "✅", "PASS"))


def cell(value: object, limit: int = MAX_CELL) -> str:
    """``value`` as one table cell: on one line, its pipes escaped, cut at ``limit`` characters, ``–`` if missing.

    Example:
        >>> cell("expected true | got false\\nsecond line")
        'expected true \\\\| got false second line'
        >>> cell(float("nan"))
        '–'
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|") or "–"


def link(report_url: str | None, where: object = None) -> str:
    """The line that points at the full report: its URL when there is one, else where it is on disk.

    Example:
        >>> link("https://ci.example/run/7"), link(None, "reports/billing")
        ('📄 [Full report](https://ci.example/run/7)', '📄 Full report: `reports/billing`')
    """
    if report_url:
        return f"📄 [Full report]({report_url})"
    return f"📄 Full report: `{where}`" if where is not None else ""


def _number(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(number) else f"{number:.1f}"


def _seed(value: Any) -> str:
    try:
        return "–" if value is None or math.isnan(float(value)) else str(int(value))
    except (TypeError, ValueError):
        return str(value)


def _headline(frames: RunFrames, fail_threshold: float | None) -> tuple[str, str]:
    scores = frames.scores
    statuses = set(scores["status"].dropna().astype(str)) if len(scores) else set()
    if fail_threshold is not None and len(below_threshold(scores, fail_threshold)):
        statuses.add("below")
    for key, mark, word in _HEADLINES:
        if key in statuses:
            return mark, word
    return "❔", "NO CONVERSATION"


def _evidence(run_id: str, frames: RunFrames) -> list[str]:
    """What failed in one conversation: assertions, criteria with the judge's evidence, scripted turn checks."""
    out = []
    asr = frames.assertions
    for row in asr[(asr["run_id"] == run_id) & (asr["passed"] == False)].itertuples():  # noqa: E712 - nullable
        message = str(row.message)  # without the assertion's name in front: the line names it already
        said = message[len(str(row.assertion)) + 2:] if message.startswith(f"{row.assertion}: ") else message
        out.append(f"assertion `{row.assertion}`: {cell(said)}")
    rub = frames.rubric
    failed = rub[(rub["run_id"] == run_id) & (rub["passed"] == False)].drop_duplicates("criterion")  # noqa: E712
    for row in failed.itertuples():
        out.append(f"criterion “{cell(row.criterion)}” — judge's evidence: {cell(row.evidence)}")
    turns = frames.turns
    for row in turns[turns["run_id"] == run_id].itertuples():
        for failure in row.check_failures if row.check_failures is not None else ():
            out.append(f"turn {row.turn}: {cell(failure)}")
    return out


def run_markdown(result: EvalResult, *, report_url: str | None = None,
                 fail_threshold: float | None = None) -> str:
    """The run's Markdown summary (see the module docstring).

    Args:
        result: the run (``run_eval``'s result, or ``load_results(folder)``).
        report_url: where the full report can be read (a CI artifact, a published page); default: the folder.
        fail_threshold: the score under which a conversation fails the run (default: the run's own setting).

    Returns:
        GitHub-flavoured Markdown, ending with a newline.
    """
    frames = result.frames
    recorded = result.meta.get("config")
    config: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    if fail_threshold is None and isinstance(config.get("fail_threshold"), (int, float)):
        fail_threshold = float(config["fail_threshold"])
    scores = frames.scores.sort_values(["agent", "scenario", "seed", "trial"], na_position="first")
    mark, word = _headline(frames, fail_threshold)
    counts = scores["status"].value_counts().to_dict() if len(scores) else {}
    shown = ("pass", "warn", "fail", "error") + ((SIMULATOR_FAILURE,) if counts.get(SIMULATOR_FAILURE) else ())
    targets = sorted(str(t) for t in frames.runs["target"].dropna().unique()) if len(frames.runs) else []
    mean = scores["score"].mean() if len(scores) else math.nan
    lines = [f"## {mark} convoeval run: {word}", "",
             f"**{len(scores)} conversation(s)** against {', '.join(f'`{t}`' for t in targets) or '?'}: "
             + ", ".join(f"{counts.get(s, 0)} {s}" for s in shown)
             + ("" if math.isnan(mean) else f"; mean score {mean:.1f}")
             + ("" if fail_threshold is None else f"; fail threshold {fail_threshold:g}"), ""]
    if result.meta.get("local_demo"):
        lines += [f"> {LOCAL_MODEL_NOTE}", ""]
    failures = first_failures(frames)
    bad = scores[scores["status"] != "pass"]
    if fail_threshold is not None:
        bad = scores[(scores["status"] != "pass") | scores["run_id"].isin(below_threshold(scores, fail_threshold)
                                                                             ["run_id"])]
    if len(bad):
        lines += ["### Conversations that did not pass", "", "| status | scenario | seed | trial | score | what went "
                  "wrong first |", "|---|---|---|---|---|---|"]
        for row in bad.head(MAX_ROWS).itertuples():
            lines.append(f"| {str(row.status).upper()} | {cell(row.scenario)} | {_seed(row.seed)} | {row.trial} | "
                         f"{_number(row.score)} | {cell(failures.get(str(row.run_id), 'score below threshold'))} |")
        if len(bad) > MAX_ROWS:
            lines.append(f"\n… and {len(bad) - MAX_ROWS} more (the full report lists them all)")
        evidence = [(row, _evidence(str(row.run_id), frames)) for row in bad.head(MAX_ROWS).itertuples()]
        evidence = [(row, found) for row, found in evidence if found]
        if evidence:
            lines += ["", "<details><summary>Evidence</summary>", ""]
            for row, found in evidence:
                lines.append(f"- **{cell(row.scenario)}** (seed {_seed(row.seed)}, trial {row.trial})")
                lines += [f"  - {item}" for item in found[:MAX_EVIDENCE]]
                if len(found) > MAX_EVIDENCE:
                    lines.append(f"  - … and {len(found) - MAX_EVIDENCE} more")
            lines += ["", "</details>"]
        lines.append("")
    lines += [f"<details><summary>All conversations ({len(scores)})</summary>", "",
              "| status | scenario | seed | trial | score |", "|---|---|---|---|---|"]
    lines += [f"| {str(r.status).upper()} | {cell(r.scenario)} | {_seed(r.seed)} | {r.trial} | {_number(r.score)} |"
              for r in scores.head(MAX_ROWS * 5).itertuples()]
    lines += ["", "</details>", "", link(report_url, result.out_dir)]
    return "\n".join(lines).rstrip() + "\n"
