"""The Sim2Real fidelity table and plot: a simulated run beside an imported one (``fidelity.sim2real``), as a page.

``sim2real_sections(simulated, production)`` gives the page's pieces (the table, each measure with the setting that
moves it, and a plot of every measure production against simulated); ``save_sim2real_html`` writes them as one
self-contained page, laid out by the report's ``page_html``. ``convoeval compare SIMULATED IMPORTED`` prints the
table and writes the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import HTML, css, esc, wrap
from convoeval.fidelity.sim2real import sim2real_table
from convoeval.pipeline.results import EvalResult
from convoeval.report.page import page_html
from convoeval.report.plots import Chart

__all__ = ["plot_sim2real", "save_sim2real_html", "sim2real_sections", "sim2real_table_html"]

_SHARES = {"media_share", "voice_share", "informal_share", "other_language_share", "ended_goal", "ended_handover",
           "ended_abandoned"}


def _value(key: str, value: float) -> str:
    if pd.isna(value):
        return "—"
    return f"{value:.0%}" if key in _SHARES else f"{value:.1f}"


def sim2real_table_html(table: pd.DataFrame) -> HTML:
    """The fidelity table as HTML: measure, simulated, production, difference, the setting that moves it."""
    head = "".join(f"<th{css(text_align='left', padding='4px 8px')}>{esc(h)}</th>"
                   for h in ("measure", "simulated", "production", "difference", "the setting that moves it"))
    body = []
    for row in table.itertuples():
        diff = "—" if pd.isna(row.difference) else (f"{row.difference:+.0%}" if row.key in _SHARES
                                                    else f"{row.difference:+.1f}")
        cells = [esc(row.measure), _value(row.key, row.simulated), _value(row.key, row.production), diff,
                 f"<code>{esc(row.setting)}</code>"]
        body.append("<tr>" + "".join(f"<td{css(padding='4px 8px', border_top='1px solid #d0d7de')}>{c}</td>"
                                     for c in cells) + "</tr>")
    n = f"{int(table['n_simulated'].iloc[0])} simulated, {int(table['n_production'].iloc[0])} real conversation(s)"
    text = table[["measure", "simulated", "production", "difference", "setting"]].to_string(index=False)
    return HTML(wrap(f"<div{css(margin_bottom='6px')}>{esc(n)}</div><table{css(border_collapse='collapse')}>"
                     f"<tr>{head}</tr>{''.join(body)}</table>"), text=text)


def plot_sim2real(table: pd.DataFrame) -> Chart:
    """Every measure, simulated against production, each scaled to the larger of the two (a bar pair per measure)."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    figure = Figure(figsize=(8, 0.45 * len(table) + 1), layout="constrained")
    ax = figure.add_subplot()
    top = table[["simulated", "production"]].abs().max(axis=1).replace(0, 1)
    positions = range(len(table))
    ax.barh([p + 0.2 for p in positions], table["simulated"] / top, height=0.4, label="simulated", color="#8250df")
    ax.barh([p - 0.2 for p in positions], table["production"] / top, height=0.4, label="production", color="#1a7f37")
    ax.set_yticks(list(positions), list(table["measure"]))
    ax.invert_yaxis()
    ax.set_xlabel("each measure relative to the larger of its two values")
    ax.legend(loc="lower right")
    ax.set_title("Sim2Real: simulated patients against real ones")
    return Chart(figure, "Sim2Real: every measure, simulated against production")


def sim2real_sections(simulated: EvalResult, production: EvalResult) -> list[tuple[str, list[Any]]]:
    """The page's sections: the fidelity table and its plot."""
    table = sim2real_table(simulated.frames.transcripts, production.frames.transcripts)
    return [("Sim2Real fidelity", [sim2real_table_html(table), plot_sim2real(table)])]


def save_sim2real_html(simulated: EvalResult, production: EvalResult, path: Path | str) -> Path:
    """Write the Sim2Real page (a simulated run beside an imported one) to ``path``."""
    out = Path(path)
    title = f"Sim2Real: {simulated.out_dir.name} (simulated) beside {production.out_dir.name} (production)"
    out.write_text(page_html(title, sim2real_sections(simulated, production)), encoding="utf-8")
    return out
