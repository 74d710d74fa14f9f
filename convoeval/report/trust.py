"""How far a run's verdicts can be trusted: the judges against the database, and the simulated patient's fidelity.

The database is free ground truth: a rubric criterion that declares its assertion (``{text, assertion}``) and the
holistic judge's ``goal_completion`` can both be checked against what the agent really did. ``database_truth``
shows that agreement for every run, with its confidence interval and what the sample size allows to conclude.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from convoeval import frames as F
from convoeval._util.html_blocks import HTML, box, cell, esc, table, wrap
from convoeval._util.paths import project_root, under
from convoeval.fidelity import FIDELITY_SCHEMA, fidelity_flags
from convoeval.frames import AGENT_STATUSES
from convoeval.pipeline.results import EvalResult
from convoeval.report.problems import unjudged_reason
from convoeval.simulator.gate import simulator_failures
from convoeval.stats import database_agreement

__all__ = ["TRUST_STATISTICS", "agreement_cells", "database_truth", "database_truth_frame", "fidelity",
           "fidelity_frame"]

#: The statistics a trust table shows, in column order, with their headers.
TRUST_STATISTICS = {
    "percent_agreement": "agreement",
    "cohen_kappa": "Cohen's κ",
    "gwet_ac1": "Gwet's AC1",
    "sensitivity": "sensitivity",
    "specificity": "specificity",
    "pass_rate_a": "judge pass rate",
    "pass_rate_b": "reference pass rate",
}


def _num(x: float) -> str:
    return f"{round(x, 2) + 0.0:.2f}"  # + 0.0: no "-0.00" for a bootstrap bound of -3e-16


def _cell(value: float, low: float, high: float) -> str:
    if not np.isfinite(value):
        return "n/a"
    if np.isfinite(low) and np.isfinite(high):
        return f"{_num(value)} [{_num(low)}, {_num(high)}]"
    return _num(value)


def agreement_cells(results: pd.DataFrame, *, index: Sequence[str],
                    statistics: dict[str, str] | None = None) -> pd.DataFrame:
    """A result table (``convoeval.agreement``) pivoted for reading: one row per ``index``, one column per statistic.

    Each cell reads ``value [ci_low, ci_high]`` (``n/a`` when the statistic is undefined). Two more columns say how
    many conversations stand behind the row and whether its intervals are too wide to conclude anything.

    Args:
        results: Rows with ``statistic, value, ci_low, ci_high, n, ci_too_wide`` and the ``index`` columns.
        index: The grouping columns that make one row (e.g. ``("instrument", "criterion", "rater_a")``).
        statistics: ``{statistic: header}`` to show, in order (default ``TRUST_STATISTICS``).

    Returns:
        A frame of strings (and ``conversations``, ``conclusive``), in the order rows first appear in ``results``.
    """
    statistics = statistics or TRUST_STATISTICS
    index = list(index)
    if results.empty:
        return pd.DataFrame(columns=[*index, *statistics.values(), "conversations", "conclusive"])
    rows = []
    for keys, group in results.groupby(index, sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        by_stat = {r.statistic: r for r in group.itertuples()}
        row = dict(zip(index, keys, strict=True))
        for stat, header in statistics.items():
            r = by_stat.get(stat)
            row[header] = "—" if r is None else _cell(float(r.value), float(r.ci_low), float(r.ci_high))
        row["conversations"] = int(group["n"].max())
        row["conclusive"] = "no: CI too wide / too few" if bool(group["ci_too_wide"].any()) else "yes"
        rows.append(row)
    return pd.DataFrame(rows)


def database_truth_frame(run: EvalResult) -> pd.DataFrame:
    """``convoeval.stats.database_agreement`` of the run: judges (and the simulator) against the database."""

    return database_agreement(run.frames)


def database_truth(run: EvalResult) -> HTML:
    """The judges against the database, for this run: every criterion that declares its assertion, and the goal.

    Rows: the rubric judge per criterion with a declared assertion (and pooled), the holistic judge's
    ``goal_completion`` (≥ 5 counts as "goal met") and the simulated patient's ``[GOAL_COMPLETE]``, each against the
    database's verdict. A run of a few conversations cannot make any of these conclusive; a sweep can.
    """
    results = database_truth_frame(run)
    if results.empty:
        unjudged = unjudged_reason(run)
        if unjudged:  # nothing was judged: whether criteria declare assertions is not the reason
            text = (f"No database truth in this run: {esc(unjudged)}. With no judge verdict there is nothing to set "
                    "against the database.")
        else:
            text = ("No database truth in this run: no rubric criterion of the judged conversations declares its "
                    "assertion (<code>{text, assertion}</code>) and no holistic verdict met a database goal verdict.")
        return HTML(wrap(box(text)), text="no database truth")
    wide = agreement_cells(results, index=("instrument", "criterion", "rater_a"))
    head = ["instrument", "criterion", "rater", *TRUST_STATISTICS.values(), "conversations", "conclusive"]
    rows = [[esc(v) for v in r] for r in wide.itertuples(index=False)]
    note = ("Reference = the database (the assertion the criterion declares; for the goal, every outcome assertion "
            "of the scenario). Cells are estimates with 95% bootstrap intervals over conversations; "
            "sensitivity = the judge passes what the database passed, specificity = it fails what the database "
            "failed. See docs/agreement.md.")
    pieces = [table(rows, head), f"<div style=\"color:#57606a;font-size:12px\">{esc(note)}</div>"]
    if (wide["conclusive"] != "yes").all():
        pieces.insert(0, box("Too few conversations to conclude anything about the judges from this run alone: "
                             "read these numbers over a sweep (convoeval sweep, notebooks/agreement.ipynb).",
                             tone="warning"))
    return HTML(wrap("".join(pieces)), text=f"database truth: {len(wide)} row(s)")


def _scenarios_dir(run: EvalResult) -> str:
    """The run's scenario folder: as recorded, relative to the project holding the run (else the working folder)."""


    configured = (run.meta.get("config") or {}).get("scenarios_dir") or "evals/scenarios"
    for root in (project_root(run.out_dir), project_root()):
        folder = under(root, configured)
        if Path(folder).exists():
            return str(folder)
    return str(configured)


def fidelity_frame(run: EvalResult) -> pd.DataFrame:
    """``convoeval.fidelity.fidelity_flags`` of the run's conversations (one row per conversation × check)."""

    if not len(run.frames.runs) or not (run.frames.runs["type"] == "conversational").any():

        return F.empty_frame(FIDELITY_SCHEMA)
    return fidelity_flags(run.frames, scenarios=_scenarios_dir(run))


def simulator_failures_html(run: EvalResult) -> str:
    """The conversations (attempts) the simulator-failure gate stopped, as an HTML table; empty when none."""

    stopped = simulator_failures(run.frames)
    if stopped.empty:
        return ""
    rows = [[esc(r.scenario), cell(r.seed, "seed"), cell(r.trial, "trial"), cell(r.attempt, "attempt"),
             esc(r.check.replace("_", " ")), cell(r.turn, "turn"),
             "re-simulated" if r.resimulated else "<b>not scored</b>", esc(r.detail)]
            for r in stopped.itertuples()]
    kept = int((~stopped["resimulated"].fillna(False).astype(bool)).sum())
    text = (f"The simulator-failure gate stopped {len(stopped)} attempt(s) while they ran: {kept} conversation(s) "
            f"ended <b>simulator_failure</b> (not scored, in no pass rate or mean: the agent is not blamed) and "
            f"{len(stopped) - kept} attempt(s) were re-simulated with the next seed (the later attempt is the one "
            "scored). Thresholds and how to switch the gate off: docs/fidelity.md.")
    head = ["scenario", "seed", "trial", "attempt", "check", "turn", "outcome", "detail"]
    return box(text, tone="warning", title="Stopped by the simulator-failure gate") + table(rows, head)


def fidelity(run: EvalResult) -> HTML:
    """The simulated patient's fidelity: conversations the gate stopped, and those where it broke the scenario.

    First the attempts the simulator-failure gate stopped while they ran (``convoeval.simulator.gate``: not scored), then
    the after-the-fact checks (``docs/fidelity.md``): facts the persona does not hold, another language than the
    scenario's, a ``[GOAL_COMPLETE]`` the database contradicts, and parroting the agent. A flagged conversation says
    more about the simulator than about the agent; ``convoeval.fidelity.exclude_flagged`` recomputes any aggregate
    without it.
    """
    stopped = simulator_failures_html(run)
    try:
        flags = fidelity_frame(run)
    except ValueError as exc:  # the scenarios (personas, locales) are needed and could not be read
        return HTML(wrap(stopped + box(esc(f"Fidelity not checked: {exc}"), tone="warning")),
                    text="fidelity not checked")
    if flags.empty:
        return HTML(wrap(stopped + box("No conversational runs: nothing to check.")), text="no fidelity checks")
    flagged = flags[flags["flagged"].fillna(False).astype(bool)]
    runs = flags["run_id"].nunique()
    if flagged.empty:
        text = (f"No flags: in all {runs} conversation(s) the simulated patient kept to its scenario." if not stopped
                else f"The after-the-fact checks flag none of the {runs} conversation(s) beyond what the gate stopped.")
        return HTML(wrap(stopped + box(esc(text), tone="ok")), text="no fidelity flags")
    keys = run.frames.runs.set_index("run_id")[["seed", "trial"]]
    scores = run.scores
    scored = set(scores.loc[scores["status"].isin(AGENT_STATUSES), "run_id"]) if len(scores) else set()
    rows = []
    for r in flagged.itertuples():
        seed, trial = (keys.loc[r.run_id, "seed"], keys.loc[r.run_id, "trial"]) if r.run_id in keys.index else ("", "")
        rows.append([esc(r.scenario), cell(seed, "seed"), cell(trial, "trial"), esc(r.check.replace("_", " ")),
                     cell(r.turn, "turn"), "yes" if r.run_id in scored else "no", esc(r.detail)])
    head = ["scenario", "seed", "trial", "check", "turn", "scored", "detail"]
    n_flagged = flagged["run_id"].nunique()
    n_scored = len(set(flagged["run_id"]) & scored)
    if n_scored:
        warning = box(esc(f"{n_flagged} of {runs} conversation(s) flagged, {n_scored} of them scored: those scores "
                          "reflect the simulated patient as much as the agent. Read their transcripts before trusting "
                          "them; a stronger simulator model (--simulator-model) avoids it, and docs/fidelity.md shows "
                          "how to leave flagged conversations out of the aggregates."), tone="warning")
    else:
        warning = box(esc(f"{n_flagged} of {runs} conversation(s) flagged, none of them scored (the gate had "
                          "already stopped them): no score in this report depends on them."))
    return HTML(wrap(stopped + warning + table(rows, head)), text=f"{n_flagged} flagged conversation(s)")
