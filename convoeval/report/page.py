"""The report as one self-contained HTML page, readable without Jupyter: ``save_html(run)`` -> ``report.html``.

The page holds the same pieces as the executed notebook, in the same order (what ran, scores, plots, transcripts,
failures, judges against the database, the simulated patient's fidelity, errors), with the plots inlined as
images, so it can be mailed or attached to a CI job. The notebook's last cell writes it next to the run's data;
``python -m convoeval.report <folder>`` rebuilds it from a saved run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from convoeval._util.html_blocks import FONT, HTML, css, esc, shown_path, wrap
from convoeval._util.html_blocks import heading as _heading
from convoeval.pipeline.results import EvalResult
from convoeval.report.calibration import calibrated_rates, run_labels
from convoeval.report.overview import what_ran
from convoeval.report.plots import plot_components, plot_criteria, plot_holistic
from convoeval.report.problems import errors, failures
from convoeval.report.tables import score_table
from convoeval.report.transcripts import transcripts
from convoeval.report.trust import database_truth, fidelity

__all__ = ["page_html", "render_html", "save_html", "write_page"]


def _piece(value: Any) -> str:
    if hasattr(value, "to_html"):  # Styler and Chart
        return str(value.to_html())
    return str(value)


def sections(run: EvalResult) -> list[tuple[str, list[Any]]]:
    """The report's sections in reading order: (heading, displayable pieces)."""

    calibrated = [("Calibrated pass rates", [calibrated_rates(run)])] if run_labels(run) else []
    return [
        ("What ran", [what_ran(run)]),
        ("Scores", [score_table(run)]),
        ("Plots", [plot_components(run), plot_criteria(run), plot_holistic(run)]),
        ("Transcripts", [transcripts(run)]),
        ("Failures", [failures(run)]),
        ("Judges against the database", [database_truth(run)]),
        *calibrated,
        ("Simulated patient's fidelity", [fidelity(run)]),
        ("Errors", [errors(run)]),
    ]


def render_html(run: EvalResult, *, title: str | None = None) -> str:
    """The whole report as an HTML document (no external files, no scripts)."""
    return page_html(title or f"convoeval report: {run.out_dir.name}", sections(run),
                     source=f"<code>{esc(shown_path(run.out_dir))}</code>")


def page_html(title: str, parts: list[tuple[str, list[Any]]], *, source: str = "") -> str:
    """A standalone page of sections: (heading, displayable pieces), each piece ``HTML``, a ``Chart`` or a Styler.

    Every report page (a run's, a red team's) is laid out by this one function, so they read alike.

    Args:
        title: the page's title and first heading.
        parts: the sections in reading order.
        source: HTML (already escaped) saying where the data came from, shown under the title.
    """
    stamp = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    body = [f"<h1{css(font_size='22px', margin='0 0 4px')}>{esc(title)}</h1>",
            f"<div{css(color='#57606a', margin_bottom='12px')}>generated {esc(stamp)}"
            + (f" from {source}" if source else "") + "</div>"]
    for heading, pieces in parts:
        body.append(_heading(heading, margin_top="28px"))
        body.extend(f"<div{css(margin='8px 0')}>{_piece(p)}</div>" for p in pieces)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"</head><body style=\"{esc(FONT)};margin:24px auto;max-width:1100px;padding:0 16px\">"
            + "".join(body) + "</body></html>\n")


def save_html(run: EvalResult, path: Path | str | None = None, *, title: str | None = None) -> HTML:
    """Write the report page (default ``<run folder>/report.html``) and return a link to it.

    Example:
        >>> import tempfile
        >>> from convoeval import load_results
        >>> run = load_results("reports/example")
        >>> target = Path(tempfile.mkdtemp()) / "report.html"
        >>> link = save_html(run, target)   # the notebook's last cell: save_html(run), beside the run's data
        >>> target.stat().st_size > 10_000
        True
    """
    target = Path(path) if path is not None else run.out_dir / "report.html"
    return write_page(target, render_html(run, title=title))


def write_page(path: Path | str, html: str, *, what: str = "Report") -> HTML:
    """Write a page atomically (a reader never sees half of it) and return a link to it for the notebook."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(target)
    size = target.stat().st_size / 1024
    return HTML(wrap(f"{esc(what)} saved: <a href=\"{esc(target.name)}\">{esc(shown_path(target))}</a> "
                     f"({size:.0f} KB, one file, opens in any browser)"), text=str(target))
