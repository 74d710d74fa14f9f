"""A comparison as a short GitHub-flavoured Markdown summary: ``convoeval compare --format markdown``, the pull-request
comment and step summary of the GitHub Action (``action.yml``).

The verdict comes first (REGRESSED, IMPROVED or NO DETECTABLE CHANGE, and why), then the overall score, then every
regressed row with its evidence: for a deterministic check that broke in a scripted pair, what the candidate's check
said; for a criterion, the candidate's judge's evidence; for an assertion, the candidate's failed message. The
improvements, the per-scenario table and the noise floor are folded away; the link to the full report ends it.
Everything is read from the ``Comparison``: no LLM call, no statistics of its own.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval.compare.console import num, p_text, signed
from convoeval.compare.shape import ComparisonView
from convoeval.compare.verdict import IMPROVED, REGRESSED
from convoeval.report.markdown import MAX_ROWS, cell, link
from convoeval.stats import ALL

__all__ = ["comparison_markdown"]

_MARKS = {REGRESSED: "🔴", IMPROVED: "🟢"}


def _findings_table(found: pd.DataFrame) -> list[str]:
    lines = ["| kind | what | change | p (Holm) |", "|---|---|---|---|"]
    for row in found.head(MAX_ROWS).itertuples():
        p = "a fact (scripted pairs)" if row.fact else p_text(row.p_adjusted)
        lines.append(f"| {row.kind} | {cell(row.name)} | {cell(row.detail)} | {p} |")
    if len(found) > MAX_ROWS:
        lines.append(f"\n… and {len(found) - MAX_ROWS} more (the full report lists them all)")
    return lines


def _where(row: Any) -> str:
    seed = "" if pd.isna(row["seed"]) else f" seed {int(row['seed'])}"
    return f"{row['scenario']}{seed} trial {int(row['trial'])}"


def _said(message: object, check: str) -> str:
    """A check's message without its own name in front (the bullet names the check already)."""
    text = str(message)
    return text[len(check) + 2:] if text.startswith(check + ": ") else text


def _regression_evidence(cmp: ComparisonView) -> list[str]:
    """What the candidate's own records say about each regressed row, one bullet each (at most ``MAX_ROWS``)."""
    out: list[str] = []
    flips = cmp.flips
    if len(flips):
        broke = flips[(flips["verdict"] == REGRESSED) & flips["fact"].astype(bool)]
        # One bullet per check (a fault breaks the same check in every seed): how often, and the first example.
        for (kind, check), group in list(broke.groupby(["kind", "check"], sort=False))[:MAX_ROWS]:
            first = group.iloc[0]
            more = f" and {len(group) - 1} more pair(s)" if len(group) > 1 else ""
            out.append(f"- {kind} `{cell(check)}` broke in {cell(_where(first))}{more}: "
                       f"{cell(_said(first['candidate'], str(check)))}")
    candidate = cmp.candidate.frames
    for row in cmp.regressions().itertuples():
        if row.fact or row.kind not in ("criterion", "assertion"):
            continue
        if row.kind == "criterion":
            rub = candidate.rubric
            failed = rub[(rub["criterion"] == row.name) & (rub["passed"] == False)]  # noqa: E712 - nullable
            if len(failed):
                first = failed.iloc[0]
                out.append(f"- criterion “{cell(row.name)}” failed in {cell(first['scenario'])}; the judge's "
                           f"evidence: {cell(first['evidence'])}")
        else:
            asr = candidate.assertions
            failed = asr[(asr["assertion"] == row.name) & (asr["passed"] == False)]  # noqa: E712 - nullable
            if len(failed):
                first = failed.iloc[0]
                out.append(f"- assertion `{cell(row.name)}` failed in {cell(first['scenario'])}: "
                           f"{cell(_said(first['message'], str(row.name)))}")
    return out[: MAX_ROWS * 2]


def comparison_markdown(cmp: ComparisonView, *, report_url: str | None = None, report_path: object = None) -> str:
    """The comparison's Markdown summary (see the module docstring).

    Args:
        cmp: the ``Comparison`` (``convoeval.compare.compare``).
        report_url: where the full comparison page can be read (a CI artifact, a published page).
        report_path: else, where it was written on disk (``--html``), shown as a path.

    Returns:
        GitHub-flavoured Markdown, ending with a newline.
    """
    verdict = cmp.verdict
    o = cmp.overall
    lines = [f"## {_MARKS.get(verdict, '⚪')} convoeval compare: {verdict.upper()}", "",
             f"**{cell(cmp.reason(), 600)}**", "",
             f"Candidate {', '.join(f'`{t}`' for t in cmp.candidate.targets) or cmp.candidate.label} against "
             f"baseline {', '.join(f'`{t}`' for t in cmp.baseline.targets) or cmp.baseline.label}: "
             f"{len(cmp.pairs)} pair(s) by scenario × seed × trial.", "",
             "| | baseline | candidate | difference | CI | p (Holm) | verdict |", "|---|---|---|---|---|---|---|"]
    ci = "–" if pd.isna(o["ci_low"]) else f"{signed(o['ci_low'])} to {signed(o['ci_high'])}"
    tested = o["verdict"] if o.get("testable", True) else "untested (too few pairs)"
    lines += [f"| **score** | {num(o['baseline'])} | {num(o['candidate'])} | {signed(o['difference'])} | {ci} | "
              f"{p_text(o['p_adjusted'])} | {tested} |", ""]
    regressions = cmp.regressions()
    if len(regressions):
        lines += ["### Regressed", "", *_findings_table(regressions), ""]
        evidence = _regression_evidence(cmp)
        if evidence:
            lines += ["**Evidence** (the candidate's own records):", "", *evidence, ""]
    improvements = cmp.improvements()
    if len(improvements):
        lines += [f"<details><summary>Improved ({len(improvements)})</summary>", "",
                  *_findings_table(improvements), "", "</details>", ""]
    per_scenario = cmp.scores[cmp.scores["scenario"] != ALL]
    if len(per_scenario):
        lines += [f"<details><summary>Per scenario ({len(per_scenario)})</summary>", "",
                  "| scenario | difference | p (Holm) | pairs | verdict |", "|---|---|---|---|---|"]
        for row in per_scenario.head(MAX_ROWS * 5).itertuples():
            verdict_shown = row.verdict if getattr(row, "testable", True) else "too few pairs"
            lines.append(f"| {cell(row.scenario)} | {signed(row.difference)} | {p_text(row.p_adjusted)} | "
                         f"{row.n_pairs} | {verdict_shown} |")
        lines += ["", "</details>", ""]
    lines += [f"<sub>{cell(cmp.noise_line(), 400)}</sub>", "", link(report_url, report_path)]
    return "\n".join(lines).rstrip() + "\n"
