"""Plots: score components per conversation, per-criterion pass rates, holistic dimensions per scenario.

Figures are built with matplotlib's object API (``matplotlib.figure.Figure``, never ``pyplot``): no global figure
state, no GUI backend, nothing shown twice in a notebook. Each function returns a ``Chart`` (displayed as a PNG in
notebooks, embedded as an inline image in HTML pages) or, when the run has nothing to plot, a short note saying why.
"""

from __future__ import annotations

import base64
import io
import textwrap
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import HTML, MUTED, STATUS_COLORS, css, esc, wrap
from convoeval.frames import HOLISTIC_DIMENSIONS, TURN_DIMENSIONS
from convoeval.pipeline.results import EvalResult
from convoeval.report.problems import unjudged_reason

__all__ = ["Chart", "criteria_frame", "holistic_frame", "plot_components", "plot_criteria", "plot_holistic"]

_GREEN, _AMBER, _RED = "#2da44e", "#d4a72c", "#cf222e"


class Chart:
    """A matplotlib figure that notebooks show as a PNG and HTML pages embed inline.

    Attributes:
        figure: the ``matplotlib.figure.Figure`` (change it, then display the chart again).
        title: a one-line description (the image's alt text).
    """

    def __init__(self, figure: Any, title: str) -> None:
        self.figure = figure
        self.title = title

    def png(self) -> bytes:
        """The figure as PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        return buffer.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()

    def to_html(self) -> str:
        """An ``<img>`` with the PNG inlined (base64), so the page needs no other file."""
        data = base64.b64encode(self.png()).decode("ascii")
        return f'<img alt="{esc(self.title)}" src="data:image/png;base64,{data}"{css(max_width="100%")}>'

    def __repr__(self) -> str:
        return f"<Chart: {self.title}>"


def _note(text: str) -> HTML:
    return HTML(wrap(f"<div{css(color=MUTED, font_style='italic')}>{esc(text)}</div>"), text=text)


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    return Figure(figsize=(width, height), layout="constrained")


def _label(scenario: Any, seed: Any, trial: Any, *, many_trials: bool) -> str:
    seed_text = "" if pd.isna(seed) else f" s{int(seed)}"
    trial_text = f" t{int(trial)}" if many_trials and not pd.isna(trial) else ""
    return f"{scenario}{seed_text}{trial_text}"


def plot_components(run: EvalResult) -> Chart | HTML:
    """Grouped horizontal bars per conversation: rubric score, holistic overall and the composite score (0–10).

    Dashed lines mark the warn (7) and fail (5) thresholds; a conversation in error or stopped by the
    simulator-failure gate has no composite and says so.
    """
    scores = run.scores.sort_values(["agent", "scenario", "seed", "trial"], na_position="first")
    if scores.empty:
        return _note("No conversation finished: nothing to plot.")
    many = scores["trial"].nunique() > 1
    labels = [_label(r.scenario, r.seed, r.trial, many_trials=many) for r in scores.itertuples()]
    n = len(scores)
    fig = _figure(9, 0.9 + 0.55 * n)
    ax = fig.add_subplot()
    bar = 0.26
    series = [("rubric score", "rubric_score", "#8c959f"), ("holistic", "holistic_overall", "#54aeff"),
              ("composite", "score", "#0969da")]
    for i, (name, column, color) in enumerate(series):
        values = pd.to_numeric(scores[column], errors="coerce").to_numpy()
        positions = [y + (1 - i) * bar for y in range(n)]
        ax.barh(positions, [0 if pd.isna(v) else v for v in values], height=bar, color=color, label=name)
    for y, row in enumerate(scores.itertuples()):
        text = {"error": "error", "simulator_failure": "simulator failure: not scored"}.get(
            row.status, f"{row.score:.1f}  {row.status}")
        failed = 0 if pd.isna(row.assertion_failures) else int(row.assertion_failures)
        text += f"  (−{1.5 * failed:g}: {failed} failed assertion{'s' if failed > 1 else ''})" if failed else ""
        fg = STATUS_COLORS.get(row.status, (MUTED, ""))[0]
        ax.text(10.2, y, text, va="center", fontsize=8, color=fg if row.status != "error" else STATUS_COLORS["fail"][0])
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 14)
    ax.set_xticks(range(0, 11, 2))
    for x, color in ((5, _RED), (7, _AMBER)):
        ax.axvline(x, color=color, linestyle="--", linewidth=0.8)
    ax.set_xlabel("0–10")
    ax.set_title("Score components per conversation", fontsize=10, loc="left")
    handles, names = ax.get_legend_handles_labels()  # listed top-down, as the bars are drawn
    ax.legend(handles[::-1], names[::-1], fontsize=8, loc="lower right", ncols=3, bbox_to_anchor=(1.0, 1.0),
              frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return Chart(fig, "score components per conversation")


def criteria_frame(run: EvalResult) -> pd.DataFrame:
    """Pass rate per scenario × criterion over conversations and judge samples (judge errors left out).

    Columns: scenario, criterion_index, criterion, assertion, passed, judged, errors, pass_rate.
    """
    rub = run.frames.rubric
    cols = ["scenario", "criterion_index", "criterion", "assertion", "passed", "judged", "errors", "pass_rate"]
    if rub.empty:
        return pd.DataFrame(columns=cols)
    frame = rub.assign(ok=rub["passed"].astype("float"), err=rub["error"].notna())
    grouped = frame.groupby(["scenario", "criterion_index", "criterion"], dropna=False, sort=True).agg(
        assertion=("assertion", "first"), passed=("ok", "sum"), judged=("ok", "count"), errors=("err", "sum"))
    grouped = grouped.reset_index()
    grouped["pass_rate"] = grouped["passed"] / grouped["judged"].where(grouped["judged"] > 0)
    return grouped[cols]


def plot_criteria(run: EvalResult) -> Chart | HTML:
    """Horizontal bars: the share of verdicts that passed, per scenario × rubric criterion (``passed/judged``)."""
    frame = criteria_frame(run)
    if frame.empty:
        unjudged = unjudged_reason(run)
        return _note(f"No rubric verdicts in this run: {unjudged}." if unjudged else
                     "No rubric verdicts in this run (scripted scenarios have fixed checks instead; see the table).")
    n = len(frame)
    fig = _figure(9, 0.9 + 0.42 * n)
    ax = fig.add_subplot()
    rates = frame["pass_rate"].fillna(0).to_numpy() * 100
    colors = [_MUTED_BAR if pd.isna(r) else _GREEN if r >= 0.999 else _AMBER if r >= 0.5 else _RED
              for r in frame["pass_rate"]]
    ax.barh(range(n), rates, color=colors, height=0.6)
    labels = []
    for row in frame.itertuples():
        tag = f" [db: {row.assertion}]" if isinstance(row.assertion, str) else ""
        labels.append(textwrap.shorten(f"{row.scenario}: {row.criterion}{tag}", 90, placeholder="…"))
    for y, row in enumerate(frame.itertuples()):
        note = f"{int(row.passed)}/{int(row.judged)}" + (f"  ({int(row.errors)} judge error)" if row.errors else "")
        ax.text(101, y, note if row.judged else f"not judged ({int(row.errors)} error)", va="center", fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 125)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("% of verdicts that passed")
    ax.set_title("Rubric: pass rate per criterion", fontsize=10, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    return Chart(fig, "rubric pass rate per criterion")


_MUTED_BAR = "#d0d7de"


def holistic_frame(run: EvalResult) -> pd.DataFrame:
    """Mean 0–10 score per scenario × dimension: the holistic judge, or for scripted scenarios the per-turn judge."""
    parts = []
    hol = run.frames.holistic
    if not hol.empty:
        parts.append(hol.groupby("scenario")[list(HOLISTIC_DIMENSIONS)].mean())
    turns = run.frames.turns
    if not turns.empty:
        judged = turns[list(TURN_DIMENSIONS)].notna().any(axis=1)
        if judged.any():
            parts.append(turns[judged].groupby("scenario")[list(TURN_DIMENSIONS)].mean())
    if not parts:
        return pd.DataFrame(columns=list(HOLISTIC_DIMENSIONS))
    frame = pd.concat(parts).reindex(columns=list(HOLISTIC_DIMENSIONS))
    return frame.groupby(level=0).mean().sort_index()


def plot_holistic(run: EvalResult) -> Chart | HTML:
    """A heatmap of the judges' 0–10 dimensions per scenario (mean over conversations and samples)."""
    frame = holistic_frame(run)
    if frame.empty or frame.isna().all().all():
        return _note("No holistic or per-turn judge scores in this run.")
    from matplotlib import colormaps  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    n = len(frame)
    fig = _figure(9, 1.2 + 0.45 * n)
    ax = fig.add_subplot()
    cmap = colormaps["RdYlGn"].with_extremes(bad="#eaeef2")
    values = frame.to_numpy(dtype=float)
    image = ax.imshow(values, cmap=cmap, vmin=0, vmax=10, aspect="auto")
    for y, row in enumerate(values):
        for x, value in enumerate(row):
            ax.text(x, y, "–" if pd.isna(value) else f"{value:.1f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(frame.columns)), [c.replace("_", " ") for c in frame.columns], fontsize=8)
    ax.set_yticks(range(n), [textwrap.shorten(str(s), 60, placeholder="…") for s in frame.index], fontsize=8)
    ax.xaxis.tick_top()
    fig.colorbar(image, ax=ax, shrink=0.8, label="0–10")
    ax.set_title("Judges' dimensions per scenario (scripted: per-turn judge; – = not scored)", fontsize=10,
                 loc="left", pad=24)
    return Chart(fig, "holistic dimensions per scenario")
