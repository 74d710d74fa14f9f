"""Small HTML building blocks: escaped text, inline styles, status colours, and a value notebooks display.

Styles are inline (``style="…"``) rather than in a ``<style>`` block because Jupyter sanitizes the HTML of
untrusted notebooks (every notebook papermill executes) and GitHub strips style blocks; inline styles survive both.
Every piece of text that comes from a run goes through ``esc``: transcripts, judge evidence and error messages are
untrusted (an agent reply may contain ``<script>``).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: status -> (text colour, background colour), shared by tables, badges and plots.
STATUS_COLORS: dict[str, tuple[str, str]] = {
    "pass": ("#116329", "#dafbe1"),
    "warn": ("#7d4e00", "#fff1c2"),
    "fail": ("#a40e26", "#ffdcd7"),
    "error": ("#ffffff", "#a40e26"),
    "simulator_failure": ("#6639ba", "#fbefff"),  # the simulated patient's, not the agent's: its own colour
}
MUTED = "#57606a"
FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:13px;line-height:1.4"


def missing(value: Any) -> bool:
    """True for None / NaN / NA (lists, dicts and strings are never missing)."""
    if value is None:
        return True
    if isinstance(value, (list, tuple, dict, str)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def esc(value: Any) -> str:
    """``value`` as HTML-safe text; missing values become an empty string."""
    return "" if missing(value) else escape(str(value), quote=True)


#: Columns of 0–10 scores, shown with one decimal (as the composite score is rounded), by name in any case; not the
#: score frame's columns (``frames.SCORE_COLUMNS``).
ONE_DECIMAL_COLUMNS = frozenset({"score", "rubric_score", "rubric score", "holistic", "holistic_overall",
                                 "mean_score", "mean score", "overall", "correctness", "helpfulness", "tone", "safety",
                                 "conciseness", "goal_completion"})
#: Columns of counts and identifiers: whole numbers, even when a missing value made pandas store them as floats.
COUNT_COLUMNS = frozenset({"n", "n_items", "n_pairs", "n_excluded", "count", "conversations", "flagged",
                           "undecided", "seed", "trial", "turn", "attempt", "fork_turn", "errors", "failed", "passed",
                           "total", "rubric_passed", "rubric_total", "assertion_failures", "n_messages", "messages",
                           "k", "scenarios", "pairs"})
#: Columns of p-values: three decimals, since 0.05 and 0.049 must read apart.
P_VALUE_COLUMNS = frozenset({"p_value", "p_adjusted", "p (holm)", "p"})


def number_text(value: Any, column: str = "") -> str:
    """A number as a table shows it, by its column (``ONE_DECIMAL_COLUMNS``, ``COUNT_COLUMNS``, ``P_VALUE_COLUMNS``).

    Scores read with one decimal, p-values with three, counts as whole numbers, and every other number that is
    not whole (rates, shares, agreement statistics, effects, interval bounds) with two: a table shows 0.67, not
    0.6666666666666666. Anything else (text, booleans, lists) is ``str(value)``; missing values are ``""``.

    Example:
        >>> number_text(2 / 3, "share_flagged"), number_text(7.33, "score"), number_text(3.0, "seed")
        ('0.67', '7.3', '3')
    """
    if missing(value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    name = str(column).lower()
    if name in COUNT_COLUMNS and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(value)
    if name in P_VALUE_COLUMNS:
        return f"{value:.3f}" if value >= 0.001 else "<0.001"
    digits = 1 if name in ONE_DECIMAL_COLUMNS else 2
    return f"{round(float(value), digits) + 0.0:.{digits}f}"  # + 0.0: no "-0.00" for a bound of -3e-16


def cell(value: Any, column: str = "") -> str:
    """``value`` as the HTML of a table cell in ``column``: ``number_text``, escaped."""
    return escape(number_text(value, column), quote=True)


def shown_path(path: Any) -> str:
    """A path as a reader should see it: relative to the working directory when inside it (pages get shared)."""

    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def css(**props: Any) -> str:
    """A ``style`` attribute from keyword properties (``font_size="12px"`` -> ``font-size:12px``)."""
    body = ";".join(f"{k.replace('_', '-')}:{v}" for k, v in props.items() if v is not None)
    return f' style="{escape(body, quote=True)}"'


def badge(status: Any, label: str | None = None) -> str:
    """A coloured status label (pass / warn / fail / error), optionally with another text in that colour."""
    label = esc(label if label is not None else status) or "?"
    fg, bg = STATUS_COLORS.get(str(status), (MUTED, "#eaeef2"))
    style = css(color=fg, background=bg, border_radius="10px", padding="1px 8px", font_weight="600",
                font_size="12px", white_space="nowrap")
    return f"<span{style}>{label.upper()}</span>"


def box(body: str, *, tone: str = "info", title: str | None = None) -> str:
    """A coloured panel: ``info`` (grey), ``ok`` (green), ``warning`` (amber) or ``danger`` (red)."""
    colors = {"info": ("#d0d7de", "#f6f8fa"), "ok": ("#4ac26b", "#dafbe1"), "warning": ("#d4a72c", "#fff8c5"),
              "danger": ("#cf222e", "#ffebe9")}
    border, bg = colors[tone]
    head = f"<div{css(font_weight='700', margin_bottom='4px')}>{esc(title)}</div>" if title else ""
    style = css(border=f"1px solid {border}", border_left=f"6px solid {border}", background=bg, padding="8px 12px",
                margin="6px 0", border_radius="6px")
    return f"<div{style}>{head}{body}</div>"


#: Icons drawn as inline SVG (16×16 view box), so a page shows them whatever fonts the reader's machine has: a
#: Chromium without an emoji font draws 🔧, ✓ or ⚠ as empty boxes. Each is a path, stroked or filled in the text's
#: colour (``currentColor``), so it takes the colour of the text around it.
_ICONS: dict[str, tuple[str, str]] = {  # name -> (SVG path, "stroke" | "fill")
    "check": ("M2.5 8.5l3.5 3.5 7.5-8", "stroke"),
    "cross": ("M3.5 3.5l9 9M12.5 3.5l-9 9", "stroke"),
    "warning": ("M8 1.2l7.2 13.3H.8zM7.1 5.6v4.6h1.8V5.6zm0 5.9v1.8h1.8v-1.8z", "fill"),
    "tool": ("M11.3 1a3.7 3.7 0 0 0-3.5 4.9L1.6 12.1a1.3 1.3 0 0 0 0 1.8l.5.5a1.3 1.3 0 0 0 1.8 0l6.2-6.2A3.7 3.7 "
             "0 0 0 15 4.7l-2.3 2.3-2.1-.5-.5-2.1L12.4 2A3.7 3.7 0 0 0 11.3 1z", "fill"),
    "stop": ("M3.5 3.5h9v9h-9z", "fill"),
    "flag": ("M3 1.5v13.5M3 2.2h9.5l-2.2 3.3 2.2 3.3H3", "stroke"),
    "question": ("M5.2 5.6a2.8 2.8 0 1 1 4 2.5c-.8.4-1.2 1-1.2 1.9v.6M8 12.6v.4", "stroke"),
}


def icon(name: str, *, title: str | None = None, size: str = "1em") -> str:
    """An inline SVG icon (``check``, ``cross``, ``warning``, ``tool``, ``stop``, ``flag``, ``question``) in the
    surrounding text's colour, sized like a letter; ``title`` is its tooltip and what a screen reader says.

    Example:
        >>> icon("check").startswith("<svg")
        True
    """
    path, mode = _ICONS[name]
    paint = ('fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"'
             if mode == "stroke" else 'fill="currentColor"')
    label = (f' role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>' if title
             else ' aria-hidden="true">')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="{size}" height="{size}" '
            f'style="vertical-align:-0.125em;flex:none"{label}<path d="{path}" {paint}/></svg>')


def heading(text: str, *, margin_top: str = "26px") -> str:
    """A section heading of a standalone page."""
    style = css(font_size="17px", border_bottom="1px solid #d0d7de", padding_bottom="4px", margin_top=margin_top)
    return f"<h2{style}>{esc(text)}</h2>"


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain table of already-escaped cell HTML (callers escape; this only lays out)."""
    th = css(text_align="left", padding="4px 8px", border_bottom="2px solid #d0d7de", background="#f6f8fa",
             vertical_align="bottom")
    td = css(text_align="left", padding="4px 8px", border_bottom="1px solid #eaeef2", vertical_align="top")
    head = "".join(f"<th{th}>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td{td}>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f"<table{css(border_collapse='collapse', margin='4px 0', max_width='100%')}>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def wrap(body: str) -> str:
    """The common outer element of every report piece (font, spacing)."""
    return f"<div class=\"convoeval-report\" style=\"{escape(FONT, quote=True)}\">{body}</div>"


class HTML:
    """HTML that notebooks display (``_repr_html_``) and pages embed (``str``); made by the report functions."""

    def __init__(self, html: str, *, text: str = "") -> None:
        self.html = html
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text or f"<HTML: {len(self.html)} characters>"
