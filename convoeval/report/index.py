"""The index of a sweep: every agent × seed combination side by side, and how stable the numbers are.

``write_index(folder, combinations)`` reads each finished combination's saved data (no LLM calls), writes the
aggregated tables to ``<folder>/data/`` (CSV) and one self-contained ``<folder>/index.html`` with: the
combinations and links to their reports, scores by agent and seed, pass^k over trials, the spread of scores,
and per-criterion flip rates across seeds. pass^k and the flip rates are ``convoeval.agreement``'s, with bootstrap
intervals over scenarios.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import FONT, MUTED, badge, box, css, esc, table
from convoeval._util.html_blocks import heading as _heading
from convoeval.frames import AGENT_STATUSES, SIMULATOR_FAILURE, STATUSES, to_spreadsheet_csv
from convoeval.pipeline.results import EvalResult, load_run
from convoeval.report.overview import LOCAL_DEMO_WARNING
from convoeval.report.plots import Chart
from convoeval.report.stability import score_spread
from convoeval.report.tables import _score_style
from convoeval.stats import pass_hat_k, trial_flip_rate

__all__ = ["CombinationRow", "SweepData", "sweep_data", "write_index"]


@dataclass
class CombinationRow:
    """One combination as the index lists it: where it is, how it ended, and why it failed."""

    name: str
    agent: str
    seed: int
    folder: Path
    status: str  # "done" | "skipped" (finished by an earlier invocation) | "failed" | "pending"
    seconds: float | None = None
    error: str | None = None


@dataclass
class SweepData:
    """The finished combinations' frames, concatenated, with ``combination`` and ``sweep_seed`` columns."""

    scores: pd.DataFrame
    rubric: pd.DataFrame
    runs: dict[str, EvalResult]


def sweep_data(combinations: Sequence[CombinationRow]) -> SweepData:
    """Read every finished combination's data (failed ones are left out of the aggregates)."""
    runs: dict[str, EvalResult] = {}
    scores, rubric = [], []
    for combo in combinations:
        if combo.status not in ("done", "skipped"):
            continue
        try:
            run = load_run(combo.folder)
        except FileNotFoundError:
            continue
        runs[combo.name] = run
        extra = {"combination": combo.name, "sweep_seed": combo.seed}
        scores.append(run.scores.assign(**extra))
        rubric.append(run.frames.rubric.assign(**extra))
    return SweepData(
        scores=pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(
            columns=["agent", "scenario", "seed", "trial", "status", "score", "combination", "sweep_seed"]),
        rubric=pd.concat(rubric, ignore_index=True) if rubric else pd.DataFrame(
            columns=["agent", "scenario", "criterion_index", "criterion", "run_id", "passed"]),
        runs=runs,
    )


def write_index(folder: Path | str, combinations: Sequence[CombinationRow], *, title: str | None = None,
                settings: dict[str, Any] | None = None) -> Path:
    """Aggregate the combinations into ``<folder>/data/*.csv`` and ``<folder>/index.html``; return the page's path.

    Args:
        folder: the sweep folder.
        combinations: every combination of the sweep with its status.
        title: the page title (default: the folder's name).
        settings: the sweep's settings (trials, parameters), shown at the top.
    """
    folder = Path(folder)
    data = sweep_data(combinations)
    tables = {
        "combinations": _combinations_frame(combinations, data),
        "scores": data.scores,
        "by_agent_seed": _by_agent_seed(data.scores),
        "pass_hat_k": _pass_hat_k(data.scores),
        "spread": score_spread(data.scores),
        "flip_rates": _flip_rates(data.rubric),
    }
    out = folder / "data"
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        to_spreadsheet_csv(frame, out / f"{name}.csv")  # errors and criteria may quote a transcript
    page = folder / "index.html"
    tmp = page.with_name(".index.html.tmp")
    tmp.write_text(_render(folder, combinations, data, tables, title=title or f"convoeval sweep: {folder.name}",
                           settings=settings or {}), encoding="utf-8")
    tmp.replace(page)
    return page


def _combinations_frame(combinations: Sequence[CombinationRow], data: SweepData) -> pd.DataFrame:
    rows = []
    for c in combinations:
        run = data.runs.get(c.name)
        counts = run.status_counts() if run else {}
        mean = run.scores["score"].mean() if run else float("nan")
        rows.append({"combination": c.name, "agent": c.agent, "seed": c.seed, "status": c.status,
                     "conversations": len(run.scores) if run else 0,
                     **{s: counts.get(s, 0) for s in STATUSES}, "mean_score": mean,
                     "seconds": c.seconds, "reason": c.error, "folder": str(c.folder)})
    return pd.DataFrame(rows)


def _pass_hat_k(scores: pd.DataFrame) -> pd.DataFrame:
    """pass^k per agent for k = 1 … the most conversations any scenario has (``convoeval.agreement``)."""

    counted = scores[scores["status"].isin(AGENT_STATUSES)] if len(scores) else scores
    if counted.empty:
        return pd.DataFrame(columns=["agent", "k", "statistic", "value", "ci_low", "ci_high", "n", "n_items"])
    most = int(counted.groupby(["agent", "scenario"]).size().max())
    return pass_hat_k(counted, k=list(range(1, min(most, 8) + 1)), by="agent")


def _flip_rates(rubric: pd.DataFrame) -> pd.DataFrame:
    """Per agent and criterion (and pooled): flip rates across seeds and trials (``convoeval.agreement``)."""

    parts = []
    judged = rubric[rubric["passed"].notna()] if len(rubric) else rubric
    for agent, rows in judged.groupby("agent", sort=True) if len(judged) else []:
        if "judge_model" not in rows or rows["judge_model"].isna().all():
            rows = rows.assign(judge_model="judge")
        parts.append(trial_flip_rate(rows, by="criterion").assign(agent=agent))
    if not parts:
        return pd.DataFrame(columns=["agent", "rater", "criterion", "statistic", "value", "ci_low", "ci_high",
                                     "n", "n_items"])
    out = pd.concat(parts, ignore_index=True)
    return out[["agent", *[c for c in out.columns if c != "agent"]]]


def _by_agent_seed(scores: pd.DataFrame) -> pd.DataFrame:
    """Per agent and seed: conversations, those that scored the agent (pass/warn/fail), passes, errors, simulator
    failures and the mean score (of the scored ones only)."""
    cols = ["agent", "sweep_seed", "conversations", "scored", "passed", "errors", "simulator_failures", "mean_score"]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    scored = scores["status"].isin(AGENT_STATUSES)
    frame = scores.assign(ok=scores["status"] == "pass", is_error=scores["status"] == "error", scored=scored,
                          broke=scores["status"] == SIMULATOR_FAILURE, score=scores["score"].where(scored))
    out = frame.groupby(["agent", "sweep_seed"], sort=True).agg(
        conversations=("status", "size"), scored=("scored", "sum"), passed=("ok", "sum"),
        errors=("is_error", "sum"), simulator_failures=("broke", "sum"), mean_score=("score", "mean")).reset_index()
    return out[cols]


def _render(folder: Path, combinations: Sequence[CombinationRow], data: SweepData, tables: dict[str, pd.DataFrame],
            *, title: str, settings: dict[str, Any]) -> str:
    stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = [f"<h1{css(font_size='22px', margin='0 0 4px')}>{esc(title)}</h1>",
             f"<div{css(color=MUTED)}>generated {esc(stamp)}; settings: {esc(_settings(settings))}</div>"]
    if any(r.meta.get("local_demo") for r in data.runs.values()):
        parts.append(box(esc(LOCAL_DEMO_WARNING), tone="warning", title="Local demo model"))
    broke = int((data.scores["status"] == SIMULATOR_FAILURE).sum()) if len(data.scores) else 0
    if broke:
        parts.append(box(f"{broke} conversation(s) ended simulator_failure: the simulated patient broke and the gate "
                         "stopped them. They are counted apart and left out of every score, pass rate and pass^k "
                         "below (each combination's report lists them with the reason).", tone="warning",
                         title="Simulated patient broke"))
    failed = [c for c in combinations if c.status == "failed"]
    if failed:
        parts.append(box("<br>".join(f"<b>{esc(c.name)}</b>: {esc(c.error)}" for c in failed), tone="danger",
                         title=f"{len(failed)} combination(s) failed; they are left out of every aggregate below"))
    sections = [
        ("Combinations", _combinations_html(folder, tables["combinations"])),
        ("Scores by agent and seed", _scores_by_seed_html(tables["by_agent_seed"])),
        ("pass^k over seeds and trials", _pass_hat_k_html(tables["pass_hat_k"])),
        ("Spread of scores per scenario", _spread_html(tables["spread"])),
        ("Per-criterion flip rates across seeds and trials", _flips_html(tables["flip_rates"])),
    ]
    chart = _spread_chart(data.scores)
    if chart is not None:
        sections.insert(2, ("Scores of every conversation", chart.to_html()))
    for heading, html in sections:
        parts.append(_heading(heading) + html)
    parts.append(f"<p{css(color=MUTED)}>The tables are also in <code>data/</code> as CSV.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title></head><body style=\"{esc(FONT)};margin:24px auto;max-width:1100px;"
            "padding:0 16px\">" + "".join(parts) + "</body></html>\n")


def _settings(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "defaults"


def _num(value: Any, fmt: str = "{:.1f}") -> str:
    return "—" if value is None or pd.isna(value) else fmt.format(value)


def _score_cell(value: Any) -> str:
    style = _score_style(value)
    return f"<span style=\"{esc(style)}padding:1px 6px;border-radius:4px\">{_num(value)}</span>"


def _combinations_html(folder: Path, frame: pd.DataFrame) -> str:
    rows = []
    for r in frame.to_dict("records"):  # records, not itertuples: "pass" is a Python keyword
        report = Path(r["folder"]) / "report.html"
        link = (f"<a href=\"{esc(report.relative_to(folder.resolve()).as_posix())}\">report</a>"
                if report.exists() and report.is_relative_to(folder.resolve()) else "—")
        tone = {"done": "pass", "skipped": "pass", "failed": "error"}.get(r["status"], "warn")
        counts = " ".join(f"{badge(s)} {int(r[s])}" for s in STATUSES
                          if not pd.isna(r.get(s)) and int(r[s]))
        rows.append([esc(r["combination"]), badge(tone, r["status"]), esc(r["conversations"]), counts or "—",
                     _score_cell(r["mean_score"]), _num(r["seconds"], "{:.0f} s"), link,
                     esc(r["reason"]) if isinstance(r["reason"], str) else ""])
    head = ["combination", "status", "conversations", "statuses", "mean score", "time", "", "why it failed"]
    return table(rows, head)


def _scores_by_seed_html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return _empty()
    seeds = sorted(frame["sweep_seed"].unique())
    rows = []
    for agent, group in frame.groupby("agent", sort=True):
        cells = [f"<b>{esc(agent)}</b>"]
        for seed in seeds:
            hit = group[group["sweep_seed"] == seed]
            if hit.empty:
                cells.append("—")
                continue
            r = hit.iloc[0]
            cells.append(f"{_score_cell(r['mean_score'])} <span{css(color=MUTED)}>{int(r['passed'])}/"
                         f"{int(r['scored'])} pass" + (f", {int(r['errors'])} error" if r["errors"] else "")
                         + (f", {int(r['simulator_failures'])} simulator failure" if r["simulator_failures"] else "")
                         + "</span>")
        means = group["mean_score"]
        cells.append(f"{_num(means.mean())} ± {_num(means.std(), '{:.2f}')}")
        rows.append(cells)
    head = ["agent", *[f"seed {esc(s)}" for s in seeds], "mean ± SD across seeds"]
    return (table(rows, head) + f"<div{css(color=MUTED)}>Mean composite score per combination (errors and "
            "simulator failures have no score and are counted apart); x/y pass = passing conversations among those "
            "that scored the agent (pass, warn or fail).</div>")


def _pass_hat_k_html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return _empty()
    ks = sorted(frame["k"].unique())
    rows = []
    for agent, group in frame.groupby("agent", sort=True):
        by_k = {r["k"]: r for r in group.to_dict("records")}
        rows.append([f"<b>{esc(agent)}</b>", *[_estimate(by_k.get(k)) for k in ks]])
    return (table(rows, ["agent", *[f"pass^{k}" for k in ks]])
            + f"<div{css(color=MUTED)}>pass^k = mean over scenarios of C(c,k)/C(n,k), n conversations of a "
            "scenario across seeds and trials (errors and simulator failures left out), c of them passing: the "
            "chance that k tries in a row "
            "all pass. In brackets the 95% bootstrap interval over scenarios; grey when it is too wide to conclude "
            "anything.</div>")


def _estimate(row: dict[str, Any] | None, fmt: str = "{:.2f}") -> str:
    """``value [low–high]``, greyed when the interval is too wide to conclude anything."""
    if row is None or pd.isna(row.get("value")):
        return "—"
    interval = f"[{_num(row['ci_low'], fmt)}–{_num(row['ci_high'], fmt)}]"
    text = f"{_num(row['value'], fmt)} <span{css(color=MUTED)}>{interval}</span>"
    return f"<span{css(color=MUTED)}>{text}</span>" if row.get("ci_too_wide") is True else text


def _spread_html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return _empty()
    rows = [[esc(r.agent), esc(r.scenario), esc(r.conversations), esc(r.errors), esc(r.simulator_failures),
             _score_cell(r.mean), _num(r.std, "{:.2f}"), _num(r.min), _num(r.max), _num(r.range)]
            for r in frame.itertuples()]
    return table(rows, ["agent", "scenario", "conversations", "errors", "simulator failures", "mean", "SD", "min",
                        "max", "range"])


def _flips_html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return _empty("No rubric verdicts (scripted scenarios only, or every judge call failed).")
    wide: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in frame.to_dict("records"):
        wide.setdefault((r["agent"], r["rater"], r["criterion"]), {})[r["statistic"]] = r

    def order(key: tuple) -> tuple:  # per agent and judge: the pooled row first, then the least stable criteria
        pair = wide[key].get("pairwise_disagreement", {}).get("value")
        return (key[0], key[1], key[2] != "(all)", -(0 if pair is None or pd.isna(pair) else pair))

    rows = []
    for key in sorted(wide, key=order):
        agent, rater, criterion = key
        stats = wide[key]
        flip = stats.get("flip_rate", {}).get("value")
        rate = 0.0 if flip is None or pd.isna(flip) else float(flip)  # unknown: the green of "no flips"
        tone = "#a40e26" if rate >= 0.3 else "#7d4e00" if rate > 0 else "#116329"
        label = "<i>all criteria</i>" if criterion == "(all)" else esc(criterion)
        rows.append([esc(agent), esc(rater), label, esc(stats.get("flip_rate", {}).get("n_items")),
                     f"<b{css(color=tone)}>{_num(flip, '{:.2f}')}</b>",
                     _estimate(stats.get("pairwise_disagreement")),
                     _num(stats.get("pass_rate", {}).get("value"), "{:.0%}")])
    head = ["agent", "judge", "criterion", "scenarios", "flip rate", "pairwise disagreement", "pass rate"]
    return (table(rows, head)
            + f"<div{css(color=MUTED)}>Flip rate = share of scenarios whose verdicts on the criterion are not the same "
            "for every seed and trial; pairwise disagreement = the chance that two of those conversations got "
            "different verdicts (0 = stable, around 0.5 = a coin toss), with its 95% bootstrap interval over "
            "scenarios. Computed by <code>convoeval.stats.trial_flip_rate</code>.</div>")


def _spread_chart(scores: pd.DataFrame) -> Chart | None:
    usable = scores[scores["score"].notna()] if len(scores) else scores
    if usable.empty:
        return None
    from matplotlib.figure import Figure  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    agents = sorted(usable["agent"].unique())
    seeds = sorted(usable["sweep_seed"].unique())
    fig = Figure(figsize=(9, 0.8 + 0.6 * len(agents)), layout="constrained")
    ax = fig.add_subplot()
    colors = ["#0969da", "#cf222e", "#2da44e", "#8250df", "#bf8700", "#1b7c83", "#e16f24", "#57606a"]
    for i, seed in enumerate(seeds):
        hit = usable[usable["sweep_seed"] == seed]
        ys = [agents.index(a) + (i - (len(seeds) - 1) / 2) * 0.12 for a in hit["agent"]]
        ax.scatter(hit["score"], ys, s=22, alpha=0.8, color=colors[i % len(colors)], label=f"seed {seed}")
    ax.set_yticks(range(len(agents)), agents)
    ax.invert_yaxis()
    ax.set_xlim(-0.3, 10.3)
    for x, color in ((5, "#cf222e"), (7, "#d4a72c")):
        ax.axvline(x, color=color, linestyle="--", linewidth=0.8)
    ax.set_xlabel("composite score (0–10), one dot per conversation")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    return Chart(fig, "scores of every conversation by agent and seed")


def _empty(text: str = "No finished combination.") -> str:
    return f"<div{css(color=MUTED, font_style='italic')}>{esc(text)}</div>"
