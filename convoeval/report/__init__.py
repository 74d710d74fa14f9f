"""Reports of evaluation runs: tables, plots, transcripts, failures and errors — no LLM calls.

Each function takes an ``EvalResult`` (``run_notebook_config(config)`` in the run notebook, or
``convoeval.load_results(folder)`` for any saved run) and returns something a notebook cell displays:
``HTML``, a pandas ``Styler`` or a ``Chart`` (a matplotlib figure). ``save_html`` writes the same pieces as one
self-contained page.

Example:
    >>> from convoeval import report
    >>> from convoeval import load_results
    >>> run = load_results("reports/example")
    >>> table = report.score_table(run)     # a notebook cell shows it
    >>> table.data.columns[:5].tolist()
    ['Scenario', 'Type', 'Seed', 'Trial', 'Status']
    >>> report.transcripts(run, status="pass")
    2 transcript(s)
"""

from convoeval._util.html_blocks import HTML
from convoeval.report.calibration import calibrated_rates, calibrated_rates_frame
from convoeval.report.overview import LOCAL_DEMO_WARNING, usage_frame, what_ran
from convoeval.report.page import render_html, save_html
from convoeval.report.plots import (
    Chart,
    criteria_frame,
    holistic_frame,
    plot_components,
    plot_criteria,
    plot_holistic,
)
from convoeval.report.problems import errors, errors_frame, failures, failures_table
from convoeval.report.tables import score_table, score_table_data
from convoeval.report.transcripts import transcripts
from convoeval.report.trust import (
    agreement_cells,
    database_truth,
    database_truth_frame,
    fidelity,
    fidelity_frame,
)

__all__ = [
    "HTML",
    "LOCAL_DEMO_WARNING",
    "Chart",
    "agreement_cells",
    "calibrated_rates",
    "calibrated_rates_frame",
    "criteria_frame",
    "database_truth",
    "database_truth_frame",
    "errors",
    "errors_frame",
    "failures",
    "failures_table",
    "fidelity",
    "fidelity_frame",
    "holistic_frame",
    "plot_components",
    "plot_criteria",
    "plot_holistic",
    "render_html",
    "save_html",
    "score_table",
    "score_table_data",
    "transcripts",
    "usage_frame",
    "what_ran",
]
