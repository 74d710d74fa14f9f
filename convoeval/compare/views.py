"""Views of a comparison (``convoeval.compare.Comparison``): the verdicts, a forest plot, the criteria and
assertions that changed, the conversations whose outcome flipped side by side, and the page that holds them all.

No statistics here: every number comes from the ``Comparison``. Text from the runs goes through ``esc``.
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import (
    FONT,
    HTML,
    MUTED,
    badge,
    box,
    cell,
    css,
    esc,
    heading,
    icon,
    missing,
    number_text,
    shown_path,
    table,
    wrap,
)
from convoeval.compare.comparison import Comparison
from convoeval.pipeline.replay import RecordedReply, same_reply
from convoeval.report.plots import Chart
from convoeval.stats import ALL

__all__ = ["calibrated_changes", "compare_sections", "details", "flipped_checks", "flipped_conversations", "plot_forest",
           "render_compare_html", "save_compare_html", "unpaired", "changed_items", "verdict_summary"]

#: verdict -> the status whose colours show it.
_TONE = {"improved": "pass", "regressed": "fail", "no detectable change": "none"}


def _verdict_badge(verdict: Any) -> str:
    return badge(_TONE.get(str(verdict), "none"), str(verdict))


def _num(value: Any, fmt: str = "{:.2f}") -> str:
    return "–" if missing(value) else fmt.format(value)


def _ci(low: Any, high: Any, fmt: Any = "{:+.2f}") -> str:
    if missing(low) or missing(high):
        return "–"
    show = fmt if callable(fmt) else fmt.format
    return f"[{show(low)}, {show(high)}]"


def _p(value: Any) -> str:
    return "–" if missing(value) else number_text(value, "p_value")  # 0.046 or <0.001, never 0.000123


def _amount(value: Any, *, signed: bool = False) -> str:
    """A usage figure: costs of a fraction of a cent and token counts in the thousands both read, never 1.2e+04."""
    if missing(value):
        return "–"
    sign = "+" if signed else ""
    size = abs(value)
    if size >= 100:
        return f"{value:{sign},.0f}"
    if size >= 1 or size == 0:
        return f"{value:{sign}.2f}"
    return f"{value:{sign}.2g}"


def _row_verdict(row: Any) -> str:
    """A score row's verdict, or "too few pairs" when it has no interval or cannot reach alpha at all."""
    return str(row["verdict"]) if row.get("testable", True) else "too few pairs"


def verdict_summary(cmp: Comparison) -> HTML:
    """The headline verdict and why in a coloured panel, the overall score, the noise floor, what a comparison too
    small to test the score should do next, and one row per scenario."""
    o = cmp.overall
    tone = {"regressed": "danger", "improved": "ok"}.get(cmp.verdict, "info")
    level = cmp.settings.get("level", 0.95)
    ci = "" if missing(o["ci_low"]) else f"{level:.0%} CI {_ci(o['ci_low'], o['ci_high'])}, "
    steps = "".join(f"<div{css(margin_top='4px')}>{_advice_html(line)}</div>" for line in cmp.advice())
    head = (f"<b>{esc(cmp.verdict.upper())}</b>: {esc(cmp.reason())}"
            f"<div{css(margin_top='4px')}>score ({esc(_row_verdict(o))}): {_num(o['baseline'])} → "
            f"{_num(o['candidate'])}, difference {_num(o['difference'], '{:+.2f}')} ({ci}p={_p(o['p_value'])}, "
            f"p (Holm) {_p(o['p_adjusted'])}) over {int(o['n_pairs'])} pair(s); {esc(cmp.interval_note())}</div>"
            f"<div{css(color=MUTED, margin_top='4px')}>{esc(cmp.noise_line())}</div>{steps}")
    sides = (f"baseline <code>{esc(cmp.baseline.label)}</code> ({esc(', '.join(cmp.baseline.targets))}) vs "
             f"candidate <code>{esc(cmp.candidate.label)}</code> ({esc(', '.join(cmp.candidate.targets))}); "
             f"{int(cmp.pairs['excluded'].notna().sum())} pair(s) left out (an error on a side), "
             f"{len(cmp.unpaired)} conversation(s) unpaired")
    rows = []
    for r in cmp.scores.to_dict("records"):
        name = "<b>all scenarios</b>" if r["scenario"] == ALL else esc(r["scenario"])
        rows.append([name, _verdict_badge(_row_verdict(r)), _num(r["baseline"]), _num(r["candidate"]),
                     _num(r["difference"], "{:+.2f}"), _ci(r["ci_low"], r["ci_high"]),
                     _p(r["p_adjusted"]), str(int(r["n_pairs"])), _num(r["mdd"])])
    header = ["scenario", "verdict", "baseline", "candidate", "difference", f"{level:.0%} CI", "p (Holm)", "pairs",
              "MDD"]
    return HTML(wrap(box(head, tone=tone, title="Verdict") + f"<div>{sides}</div>" + table(rows, header)),
                text=f"verdict: {cmp.verdict}")


def _advice_html(line: str) -> str:
    """An advice line; a command (indented by two spaces) as code a reader can copy."""
    return f"<code>{esc(line.strip())}</code>" if line.startswith("  ") else esc(line)


def flipped_checks(cmp: Comparison) -> HTML:
    """Every database or path assertion and scripted turn check that flipped within a pair, with the pair and what
    each side's check said; those that decide the headline (facts) first."""
    flips = cmp.flips
    if flips.empty:
        text = "no database or path assertion and no scripted turn check flipped in any pair"
        return HTML(wrap(f"<div{css(color=MUTED)}>{esc(text)}</div>"), text=text)
    rows = []
    for r in flips.to_dict("records"):
        seed = "-" if missing(r["seed"]) else str(int(r["seed"]))
        basis = "fact (scripted, deterministic)" if r["fact"] else f"not a fact: {r['why_not_fact']}"
        rows.append([_verdict_badge(r["verdict"]), esc(r["kind"]), f"<code>{esc(r['check'])}</code>",
                     esc(f"{r['scenario']} seed {seed} trial {int(r['trial'])}"), esc(r["baseline"]),
                     esc(r["candidate"]), esc(basis)])
    facts = int(flips["fact"].astype(bool).sum())
    note = (f"{facts} of {len(flips)} flip(s) are facts: a scripted scenario sends the same patient lines to both "
            "sides and these checks read the transcript and the database with no model, so a check that held in one "
            "conversation and fails in its pair needs no statistics. The others are left to the paired tests.")
    return HTML(wrap(box(esc(note)) + table(rows, ["verdict", "kind", "check", "conversation", "baseline",
                                                   "candidate", "counts as"])),
                text=f"{len(flips)} flipped check(s), {facts} fact(s)")


def plot_forest(cmp: Comparison) -> Chart:
    """Per-scenario score differences (candidate − baseline) with their CIs, and the overall one at the bottom."""
    import matplotlib  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    rows = cmp.scores[cmp.scores["scenario"] != ALL].sort_values("scenario", ascending=False)
    rows = pd.concat([cmp.scores[cmp.scores["scenario"] == ALL], rows])
    colors = {"improved": "#1a7f37", "regressed": "#cf222e"}
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.2))
    for y, r in enumerate(rows.itertuples()):
        color = colors.get(r.verdict, "#57606a")
        if not missing(r.ci_low):
            ax.plot([r.ci_low, r.ci_high], [y, y], color=color, lw=2)
        if not missing(r.difference):
            ax.plot([r.difference], [y], "D" if r.scenario == ALL else "o", color=color, ms=7)
    ax.axvline(0, color="#8c959f", lw=1, ls="--")
    ax.set_yticks(range(len(rows)), ["all scenarios" if s == ALL else s for s in rows["scenario"]])
    ax.set_xlabel("score difference, candidate − baseline (points)")
    ax.set_title(f"{cmp.candidate.label} vs {cmp.baseline.label}", fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return Chart(fig, "forest plot of per-scenario score differences with confidence intervals")


def changed_items(cmp: Comparison, *, only_changed: bool = True) -> HTML:
    """Rubric criteria and database assertions whose pass rate changed (regressed first), with their flips."""
    parts = []
    for kind, frame in (("criterion", cmp.criteria), ("assertion", cmp.assertions)):
        rows = frame if not only_changed else frame[(frame["pass_to_fail"] + frame["fail_to_pass"]) > 0]
        order = {"regressed": 0, "improved": 1}
        rows = rows.assign(_o=rows["verdict"].map(order).fillna(2)).sort_values(["_o", "p_value"])
        cells = [[esc(r[kind]), _verdict_badge(r["verdict"]), f"{_num(r['baseline'], '{:.0%}')} → "
                  f"{_num(r['candidate'], '{:.0%}')}", str(r["pass_to_fail"]), str(r["fail_to_pass"]),
                  str(r["n_pairs"]), _p(r["p_adjusted"]), esc(r["scenarios"]), esc(r.get("basis", "McNemar"))]
                 for r in rows.to_dict("records")]
        title = "Rubric criteria" if kind == "criterion" else "Database and path assertions (no judge needed)"
        body = table(cells, [kind, "verdict", "pass rate", "pass→fail", "fail→pass", "pairs", "p (Holm)",
                             "scenarios", "decided by"]) if cells else (
            f"<div{css(color=MUTED)}>no {kind} changed on any pair</div>")
        parts.append(f"<div{css(font_weight='600', margin_top='8px')}>{title}</div>{body}")
    return HTML(wrap("".join(parts)), text="criteria and assertions that changed")


def _messages(transcripts: pd.DataFrame, run_id: str) -> dict[int, dict[str, Any]]:
    rows = transcripts[transcripts["run_id"] == run_id]
    out: dict[int, dict[str, Any]] = {}
    for r in rows.to_dict("records"):
        out.setdefault(int(r["turn"]), {})[str(r["role"])] = r
    return out


def first_divergent_turn(a: dict[int, dict[str, Any]], b: dict[int, dict[str, Any]]) -> int | None:
    """The first turn whose patient message or agent reply differs between two conversations (replay's rule)."""
    for turn in sorted(set(a) | set(b)):
        pa, pb = a.get(turn, {}).get("patient"), b.get(turn, {}).get("patient")
        if (pa is None) != (pb is None):
            return turn
        if pa is not None and pb is not None and str(pa["text"]) != str(pb["text"]):
            return turn
        ra, rb = a.get(turn, {}).get("agent"), b.get(turn, {}).get("agent")
        if (ra is None) != (rb is None):
            return turn
        if ra is not None and rb is not None and not same_reply(RecordedReply(str(ra["text"]), tuple(ra.get("tools") or ())),
                                             str(rb["text"]), list(rb.get("tools") or ())):
            return turn
    return None


def _bubble(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    # Icons as inline SVG and roles as words: a page must not need an emoji font (#39).
    tools = "".join(f" <code>{icon('tool', title='tool call')} {esc(t)}</code>" for t in (row.get("tools") or []))
    who = "<b>patient:</b>" if row["role"] == "patient" else "<b>agent:</b>"
    return f"{who} {esc(row['text'])}{tools}"


def flipped_conversations(cmp: Comparison, *, limit: int = 10) -> HTML:
    """Pairs whose outcome changed (pass ↔ not pass), worst first, side by side, the first divergent turn marked."""
    pairs = cmp.pairs[cmp.pairs["excluded"].isna()]
    flipped = pairs[(pairs["passed_a"] != pairs["passed_b"]) | (pairs["score_a"] != pairs["score_b"])]
    flipped = flipped.assign(_d=flipped["score_b"] - flipped["score_a"]).sort_values("_d").head(limit)
    if flipped.empty:
        return HTML(wrap(f"<div{css(color=MUTED)}>no paired conversation changed its score or outcome</div>"),
                    text="no flipped conversation")
    ta, tb = cmp.baseline.frames.transcripts, cmp.candidate.frames.transcripts
    parts = [f"<div{css(color=MUTED)}>{len(flipped)} of {len(pairs)} pair(s) shown (largest drops first); "
             "the first turn where the two conversations differ is highlighted</div>"]
    for r in flipped.to_dict("records"):
        a, b = _messages(ta, r["run_id_a"]), _messages(tb, r["run_id_b"])
        diverged = r.get("divergence_turn")
        diverged = int(diverged) if not missing(diverged) else first_divergent_turn(a, b)
        rows = []
        for turn in sorted(set(a) | set(b)):
            mark = turn == diverged
            cells = [f"<b>{turn}</b>" + (" " + icon("flag", title="first turn that differs") if mark else "")]
            for side in (a, b):
                msgs = side.get(turn, {})
                cells.append("<br>".join(x for x in (_bubble(msgs.get("patient")), _bubble(msgs.get("agent"))) if x))
            if mark:
                cells = [f"<div{css(background='#fff8c5')}>{c}</div>" for c in cells]
            rows.append(cells)
        seed = "-" if missing(r["seed"]) else r["seed"]
        title = (f"{r['scenario']} s{seed} t{r['trial']}: {r['status_a']} {_num(r['score_a'])} → {r['status_b']} "
                 f"{_num(r['score_b'])}" + (f", diverged at turn {diverged}" if diverged else ""))
        parts.append(f"<details{css(margin='6px 0')}><summary>{esc(title)}</summary>"
                     + table(rows, ["turn", "baseline", "candidate"]) + "</details>")
    return HTML(wrap("".join(parts)), text=f"{len(flipped)} flipped conversation(s)")


def details(cmp: Comparison) -> HTML:
    """Pass rate, holistic dimensions, pass^k and usage: each side's value and the paired difference."""
    blocks = []
    # Each block in its own unit: rates as %, 0–10 scores to one decimal, usage as amounts; the difference and its
    # interval in the same unit as the values (a pass rate's difference is in percentage points).
    specs = (("Pass rate", cmp.pass_rates, "scenario", "{:.0%}".format, "{:+.0%}".format),
             ("Holistic dimensions", cmp.holistic, "dimension", "{:.1f}".format, "{:+.1f}".format),
             ("pass^k", cmp.pass_k, "k", "{:.0%}".format, "{:+.0%}".format),
             ("Usage per conversation", cmp.usage, "metric", _amount, partial(_amount, signed=True)))
    for title, frame, key, show, diff in specs:
        rows = [[esc("all scenarios" if r[key] == ALL else r[key]),
                 *("–" if missing(r[side]) else show(r[side]) for side in ("baseline", "candidate")),
                 "–" if missing(r["difference"]) else diff(r["difference"]), _ci(r["ci_low"], r["ci_high"], diff)]
                for r in frame.to_dict("records")]
        blocks.append(f"<div{css(font_weight='600', margin_top='8px')}>{title}</div>"
                      + table(rows, [key, "baseline", "candidate", "difference", "CI"]))
    return HTML(wrap("".join(blocks)), text="pass rate, holistic, pass^k and usage")


def calibrated_changes(cmp: Comparison) -> HTML:
    """With labels: each criterion's pass rate calibrated on each side's labels (PPI++), and the change."""
    frame = cmp.calibrated
    if frame.empty:
        text = "No labels (parameter labels), so no calibrated pass rates."
        return HTML(wrap(f"<div{css(color=MUTED)}>{esc(text)}</div>"), text=text)
    pct, signed = "{:.0%}".format, "{:+.0%}".format
    rows = []
    for r in frame.to_dict("records"):
        sides = ["–" if missing(r[s]) else f"{pct(r[s])} {_ci(r[s + '_low'], r[s + '_high'], pct)}"
                 for s in ("baseline", "candidate")]
        change = (f"refused: {r['refused']}" if r["refused"] else
                  f"{signed(r['difference'])} {_ci(r['ci_low'], r['ci_high'], signed)}")
        rows.append([esc(r["criterion"]), *(esc(x) for x in sides), esc(change),
                     cell(r["n_labelled_baseline"]), cell(r["n_labelled_candidate"])])
    note = (f"Each side's judge pass rate calibrated on its own labelled conversations ({esc(frame['estimator'].iloc[0])}"
            "; docs/agreement.md, \"Calibrated estimates\"); the change's interval adds the sides' variances. "
            "Not part of the verdict above.")
    return HTML(wrap(box(note) + table(rows, ["criterion", "baseline", "candidate", "change", "labelled (baseline)",
                                              "labelled (candidate)"])), text=f"{len(frame)} calibrated criteria")


def unpaired(cmp: Comparison) -> HTML:
    """Conversations without a partner, with the reason (never dropped silently)."""
    frame = cmp.unpaired
    if frame.empty:
        return HTML(wrap(f"<div{css(color=MUTED)}>every conversation has its partner</div>"), text="none unpaired")
    rows = [[esc(r["side"]), esc(r["scenario"]), cell(r["seed"], "seed"), cell(r["trial"], "trial"),
             esc(r["reason"])]
            for r in frame.to_dict("records")]
    return HTML(wrap(table(rows, ["side", "scenario", "seed", "trial", "reason"])),
                text=f"{len(frame)} unpaired conversation(s)")


def compare_sections(cmp: Comparison) -> list[tuple[str, list[Any]]]:
    """The comparison page's sections in reading order."""
    return [
        ("Verdict", [verdict_summary(cmp), plot_forest(cmp)]),
        *([("Deterministic checks that flipped", [flipped_checks(cmp)])] if len(cmp.flips) else []),
        ("Criteria and assertions that changed", [changed_items(cmp)]),
        ("Conversations that changed", [flipped_conversations(cmp)]),
        ("Other differences", [details(cmp)]),
        *([("Calibrated pass rates", [calibrated_changes(cmp)])] if len(cmp.calibrated) else []),
        ("Unpaired conversations", [unpaired(cmp)]),
    ]


def render_compare_html(cmp: Comparison, *, title: str | None = None) -> str:
    """The comparison as one self-contained HTML document (plots inlined, no scripts)."""
    title = title or f"convoeval comparison: {cmp.candidate.label} vs {cmp.baseline.label}"
    stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    body = [f"<h1{css(font_size='22px', margin='0 0 4px')}>{esc(title)}</h1>",
            f"<div{css(color=MUTED, margin_bottom='12px')}>generated {esc(stamp)}</div>"]
    for name, pieces in compare_sections(cmp):
        body.append(heading(name, margin_top="28px"))
        body.extend(f"<div{css(margin='8px 0')}>{p.to_html() if hasattr(p, 'to_html') else p}</div>" for p in pieces)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"</head><body style=\"{esc(FONT)};margin:24px auto;max-width:1100px;padding:0 16px\">"
            + "".join(body) + "</body></html>\n")


def save_compare_html(cmp: Comparison, path: Path | str) -> HTML:
    """Write the comparison page to ``path`` (atomically) and return a link to it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(render_compare_html(cmp), encoding="utf-8")
    tmp.replace(target)
    return HTML(wrap(f"Comparison saved: <a href=\"{esc(target.name)}\">{esc(shown_path(target))}</a>"),
                text=str(target))
