"""What ``notebooks/agreement.ipynb`` shows of a ``convoeval.agreement.study.Study``: tables, plots, conclusions.

Every piece reads ``study.tables`` (computed by ``convoeval.agreement.study.compute_tables``) or the study's saved
verdicts; nothing here calls an LLM or computes a statistic of its own, so what the notebook shows is what the
library returns.
"""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pandas as pd

from convoeval._util.html_blocks import HTML, box, cell, esc, shown_path, table, wrap
from convoeval.agreement.study import Study
from convoeval.report.calibration import calibrated_view  # noqa: F401 - the notebook's views, in one place
from convoeval.report.overview import LOCAL_DEMO_WARNING
from convoeval.report.plots import Chart, _figure, _note
from convoeval.report.trust import agreement_cells
from convoeval.stats import interpret, plot_probe_effects, required_sample_size

__all__ = [
    "calibrated_view",
    "consistency_view",
    "database_view",
    "fault_view",
    "fidelity_view",
    "judges_view",
    "labels_view",
    "plot_bland_altman",
    "plot_fault_confusion",
    "plot_judge_heatmap",
    "probe_view",
    "study_conclusions",
    "study_overview",
]

_PAIR = {"percent_agreement": "agreement", "cohen_kappa": "Cohen's κ", "gwet_ac1": "Gwet's AC1",
         "krippendorff_alpha": "Krippendorff's α", "pass_rate_a": "pass rate A", "pass_rate_b": "pass rate B"}
_DETECTION = {"sensitivity": "sensitivity", "specificity": "specificity", "cohen_kappa": "Cohen's κ",
              "gwet_ac1": "Gwet's AC1", "pass_rate_a": "judge pass rate", "pass_rate_b": "truth pass rate"}
# The holistic judge's 0–10 scores are ordinal: Krippendorff's ordinal alpha beside the ICC (#45).
_SCORES = {"icc_a1": "ICC(A,1)", "krippendorff_alpha_ordinal": "ordinal α", "weighted_kappa": "weighted κ",
           "spearman": "Spearman", "mean_bias": "mean bias", "mae": "MAE", "within_1": "within ±1"}


def _table(frame: pd.DataFrame, header: list[str] | None = None) -> str:
    """``frame`` as an HTML table; numbers read by their column (``html_blocks.number_text``: 0.67, not 0.666…)."""
    header = header or list(frame.columns)
    columns = [str(c) for c in frame.columns]
    rows = [[cell(v, c) for v, c in zip(r, columns, strict=True)] for r in frame.itertuples(index=False)]
    return table(rows, [esc(h) for h in header])


def _empty(text: str) -> HTML:
    return HTML(wrap(box(esc(text))), text=text)


def _get(study: Study, name: str) -> pd.DataFrame:
    frame = study.tables.get(name)
    return frame if frame is not None else pd.DataFrame()


def _no_fault_truth(study: Study) -> str:
    """Why a study has no known-fault truth (saved runs are not a fault study), to follow "no known-fault truth: "."""
    if not study.meta.get("params", {}).get("fault_study", True):
        return ("fault_study = False, and the results folders read hold no reference-agent run with a known fault "
                "beside its healthy counterpart; set fault_study = True to score the judges against known faults.")
    return ("no fault-study conversation completed with a verdict the database left standing (see the judge errors "
            "above and docs/fault-study.md).")


def _n_judges(study: Study) -> int:
    return len(study.meta.get("judges", {}))


def study_overview(study: Study) -> HTML:
    """What was studied: conversations (healthy / with faults), judges, samples, probes, time, and the demo caveat."""
    runs = study.frames.runs
    targets = runs["target"].fillna("?") if len(runs) else pd.Series(dtype=str)
    faulted = int(targets.str.contains(r"\?faults=", regex=True).sum()) if len(targets) else 0
    params = study.meta.get("params", {})
    rows = [
        ["conversations", esc(f"{len(runs)} ({len(runs) - faulted} healthy or external, {faulted} with known faults)")],
        ["scenarios", esc(", ".join(sorted(runs["scenario"].dropna().unique())) if len(runs) else "—")],
        ["simulator failures", esc(_stopped_text(study))],
        ["judges", esc("; ".join(f"{k} = {v!r}" for k, v in study.meta.get("judges", {}).items()))],
        ["samples per judge", esc(params.get("judge_samples", 1))],
        ["judge errors", _judge_errors(study)],
        ["bias probes", esc(", ".join(params.get("probes", [])) or "none")],
        ["results folders read", esc(", ".join(params.get("runs", [])) or "none (fault study only)")],
        ["time", esc(f"{study.meta.get('duration_s', '?')} s")],
        ["saved to", f"<code>{esc(shown_path(study.out_dir))}</code> (data/*.parquet, tables/*.csv, study.json)"],
    ]
    body = table(rows, ["", ""])
    if study.meta.get("local_demo"):
        body = box(esc(LOCAL_DEMO_WARNING), tone="warning") + body
    return HTML(wrap(body), text=f"study of {len(runs)} conversations")


def _stopped_text(study: Study) -> str:
    """How many conversations the simulator-failure gate stopped (left out of every table but their own)."""
    stopped = _get(study, "simulator_failures")
    if stopped.empty:
        return "none"
    return (f"{len(stopped)}: the simulated patient broke and the gate stopped them; not judged, in no table but "
            "the fidelity section's")


def _judge_errors(study: Study) -> str:
    """Per judge: how many verdicts are errors (left out of every statistic), with the first reason."""
    parts = []
    for kind in ("rubric", "holistic"):
        frame = study.judged.get(kind, pd.DataFrame())
        if frame.empty:
            continue
        for judge, rows in frame.groupby("judge", sort=False):
            failed = rows[rows["error"].notna()]
            if len(failed):
                reason = textwrap.shorten(str(failed["error"].iloc[0]), 160, placeholder="…")
                parts.append(f"<b>{esc(judge)}</b> {kind}: {len(failed)} of {len(rows)} verdicts failed "
                             f"(e.g. {esc(reason)})")
    if not parts:
        return "none: every judge answered every conversation"
    return box("<br>".join(parts), tone="danger")


def judges_view(study: Study) -> HTML:
    """Judge × judge agreement on pass/fail per criterion (and pooled), and on the 0–10 dimensions."""
    pairs, scores = _get(study, "judges"), _get(study, "scores")
    if pairs.empty:
        if _n_judges(study) < 2:
            return _empty("One judge configuration only: give two or more in `judges` to compare them.")
        return _empty("No judge × judge agreement: no criterion was judged by two configurations without an error.")
    wide = agreement_cells(pairs, index=("criterion", "rater_a", "rater_b"), statistics=_PAIR)
    parts = ["<h4>Pass/fail verdicts</h4>", _table(wide)]
    if not scores.empty:
        parts += ["<h4>0–10 holistic scores</h4>",
                  _table(agreement_cells(scores, index=("dimension", "rater_a", "rater_b"), statistics=_SCORES))]
    return HTML(wrap("".join(parts)), text=f"{len(wide)} judge-pair rows")


def database_view(study: Study) -> HTML:
    """Each judge against the database: criteria with a declared assertion, and the goal."""
    frame = _get(study, "database")
    if frame.empty:
        return _empty("No database truth: no criterion declares its assertion and no goal verdict was available.")
    wide = agreement_cells(frame, index=("instrument", "criterion", "rater_a"), statistics=_DETECTION)
    return HTML(wrap(_table(wide)), text=f"{len(wide)} database rows")


def fault_view(study: Study) -> HTML:
    """Each judge against the known faults: sensitivity (passes what the healthy agent does) and specificity."""
    frame = _get(study, "faults")
    if frame.empty:
        return _empty(f"No known-fault truth: {_no_fault_truth(study)}")
    index = [c for c in ("criterion", "rater_a") if c in frame.columns]
    wide = agreement_cells(frame, index=index, statistics=_DETECTION)
    note = ("Truth: a criterion a conversation's known fault breaks must fail; the same criterion on the healthy "
            "agent's conversation of the same scenario, seed and trial must pass (docs/fault-study.md). "
            "Specificity is the share of broken criteria the judge caught.")
    return HTML(wrap(_table(wide) + f"<div style=\"color:#57606a;font-size:12px\">{esc(note)}</div>"),
                text=f"{len(wide)} fault-detection rows")


def labels_view(study: Study) -> HTML:
    """Each judge against the human labels (its sensitivity, specificity and κ against each human rater).

    The pass rates those labels correct (Rogan–Gladen among them) are ``calibrated_view``'s ``human`` rows.
    """
    scored = _get(study, "labels")
    if scored.empty:
        return _empty("No human labels (parameter labels; format in evals/labels/README.md).")
    note = ("Each judge's pass rate corrected by these labels (Rogan–Gladen, PPI++, isotonic) is in the calibrated "
            "estimates below (rows labels = human).")
    table = _table(agreement_cells(scored, index=("criterion", "rater_a", "rater_b"), statistics=_DETECTION))
    return HTML(wrap(table + f"<div style=\"color:#57606a;font-size:12px\">{esc(note)}</div>"),
                text=f"{len(scored)} label rows")


def plot_fault_confusion(study: Study) -> Chart | HTML:
    """Confusion matrices per criterion (judge verdict × known-fault truth), one row of panels per judge."""
    frame = _get(study, "fault_confusion")
    if frame.empty:
        return _note(f"No confusion matrices, no known-fault truth: {_no_fault_truth(study)}")
    frame = frame[frame["criterion"] != "(all)"]
    judges = list(dict.fromkeys(frame["rater_a"]))
    criteria = list(dict.fromkeys(frame["criterion"]))
    fig = _figure(min(2.3 * len(criteria), 16), 2.4 * len(judges) + 0.6)
    axes = fig.subplots(len(judges), len(criteria), squeeze=False)
    for i, judge in enumerate(judges):
        for j, criterion in enumerate(criteria):
            ax = axes[i][j]
            cells = frame[(frame["rater_a"] == judge) & (frame["criterion"] == criterion)]
            matrix = np.zeros((2, 2))
            for r in cells.itertuples():  # rows: judge pass / fail; columns: truth pass / fail
                matrix[0 if r.a_passed else 1, 0 if r.b_passed else 1] += r.count
            ax.imshow(matrix, cmap="Blues", vmin=0, vmax=max(1.0, matrix.max()))
            for (y, x), value in np.ndenumerate(matrix):
                ax.text(x, y, f"{int(value)}", ha="center", va="center", fontsize=9)
            ax.set_xticks([0, 1], ["truth pass", "truth fail"], fontsize=7)
            ax.set_yticks([0, 1], ["judge pass", "judge fail"], fontsize=7)
            title = textwrap.shorten(str(criterion), 38, placeholder="…")
            ax.set_title(f"{title}\n{textwrap.shorten(str(judge), 30, placeholder='…')}", fontsize=7)
    fig.suptitle("Judge verdicts against known faults, per criterion (top right = a fault the judge passed)",
                 fontsize=10)
    return Chart(fig, "fault confusion matrices")


def plot_judge_heatmap(study: Study, statistic: str = "cohen_kappa") -> Chart | HTML:
    """Judge × judge heatmap of one statistic (default Cohen's kappa) per criterion, pooled in the last column."""
    pairs = _get(study, "judges")
    if pairs.empty:
        return _note("No judge × judge heatmap: " + ("one judge configuration only." if _n_judges(study) < 2 else
                                                     "no criterion was judged by two configurations."))
    rows = pairs[pairs["statistic"] == statistic]
    table_ = rows.pivot_table(index=["rater_a", "rater_b"], columns="criterion", values="value", aggfunc="first")
    fig = _figure(min(1.4 * table_.shape[1] + 3, 16), 0.6 * table_.shape[0] + 2.2)
    ax = fig.add_subplot()
    values = table_.to_numpy(dtype=float)
    with warnings.catch_warnings():  # a single pair × criterion is a 1×1 image: matplotlib warns, draws it fine
        warnings.simplefilter("ignore", UserWarning)
        image = ax.imshow(values, cmap="RdYlGn", vmin=-1, vmax=1, aspect="auto")
    for (y, x), value in np.ndenumerate(values):
        ax.text(x, y, "n/a" if np.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(table_.shape[1]), [textwrap.shorten(str(c), 28, placeholder="…") for c in table_.columns],
                  rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(table_.shape[0]), [f"{a} vs {b}" for a, b in table_.index], fontsize=8)
    fig.colorbar(image, ax=ax, shrink=0.8, label=statistic)
    ax.set_title(f"Judge × judge {statistic} per criterion (n/a: undefined, e.g. one label only)", fontsize=10,
                 loc="left")
    return Chart(fig, "judge heatmap")


def plot_bland_altman(study: Study, dimensions: tuple[str, ...] = ("overall", "goal_completion", "tone")
                      ) -> Chart | HTML:
    """Bland–Altman plots of the first two judges' 0–10 scores (mean vs difference, bias and 95% limits)."""
    holistic = study.judged.get("holistic", pd.DataFrame())
    judges = list(dict.fromkeys(holistic["judge"])) if len(holistic) else []
    if len(judges) < 2:
        return _note("No Bland–Altman plot: it needs two judge configurations.")
    from statsmodels.graphics.agreement import mean_diff_plot  # noqa: PLC0415 - statsmodels loads on first statistic

    a, b = judges[:2]
    means = holistic.groupby(["judge", "run_id"])[list(dimensions)].mean()
    both = means.loc[a].index.intersection(means.loc[b].index) if a in means.index and b in means.index else []
    if len(both) < 2:
        return _note(f"No Bland–Altman plot: it needs two or more conversations scored by both {a} and {b} "
                     f"({len(both)} here).")
    fig = _figure(4.2 * len(dimensions), 3.6)
    axes = fig.subplots(1, len(dimensions), squeeze=False)[0]
    for ax, dim in zip(axes, dimensions, strict=True):
        pair = pd.concat([means.loc[a][dim].rename("a"), means.loc[b][dim].rename("b")], axis=1).dropna()
        if len(pair) < 2:
            ax.text(0.5, 0.5, "fewer than 2 conversations\nscored by both", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
            ax.set_axis_off()
            continue
        with warnings.catch_warnings():  # identical differences (perfect agreement) give a flat y range: fine
            warnings.simplefilter("ignore", UserWarning)
            mean_diff_plot(pair["a"].to_numpy(), pair["b"].to_numpy(), ax=ax)
        ax.set_title(f"{dim}: {a} − {b} (n={len(pair)})", fontsize=8)
        ax.tick_params(labelsize=7)
    return Chart(fig, "Bland-Altman plots")


def consistency_view(study: Study) -> HTML:
    """Flip rates: one judge against itself (samples), and verdicts across seeds and trials."""
    parts = []
    for name, title in (("self_consistency", "Same judge, same conversation, several samples"),
                        ("score_consistency", "Same judge, 0–10 scores across samples"),
                        ("trial_flips", "Same scenario across seeds and trials")):
        frame = _get(study, name)
        if frame.empty:
            continue
        keep = [c for c in frame.columns if c not in ("method",)]
        parts += [f"<h4>{esc(title)}</h4>", _table(frame[keep])]
    if not parts:
        return _empty("No flip rates: set judge_samples > 1 (self-consistency) or several seeds/trials.")
    return HTML(wrap("".join(parts)), text="flip rates")


def probe_view(study: Study) -> HTML:
    """The bias probes' paired effects: after − before on the same transcripts, with CI and test."""
    frame = _get(study, "probes")
    if frame.empty:
        return _empty("No bias probes were run (probes = []).")
    keep = [c for c in ("probe", "instrument", "item", "n", "before", "after", "effect", "ci_low", "ci_high",
                        "flip_rate", "test", "p_value", "ci_too_wide") if c in frame.columns]
    return HTML(wrap(_table(frame[keep])), text=f"{len(frame)} probe rows")


def plot_probes(study: Study) -> Chart | HTML:
    """The probes' effects as a forest plot (``convoeval.stats.plot_probe_effects``)."""
    frame = _get(study, "probes")
    if frame.empty:
        return _note("No bias probes were run.")

    return Chart(plot_probe_effects(frame), "bias probe effects")


def fidelity_view(study: Study) -> HTML:
    """The simulated patient's fidelity: how many conversations each check flagged, and which."""
    summary = _get(study, "fidelity")
    flags = study.judged.get("fidelity", pd.DataFrame())
    if summary.empty:
        return _empty("No conversational runs to check.")
    parts = [_table(summary)]
    stopped = _get(study, "simulator_failures")
    if len(stopped):
        parts += ["<h4>Stopped by the simulator-failure gate (not judged, left out of every other table)</h4>",
                  _table(stopped.drop(columns=[c for c in ("run_id",) if c in stopped.columns]))]
    flagged = flags[flags["flagged"].fillna(False).astype(bool)] if len(flags) else flags
    if len(flagged):
        rows = flagged[["scenario", "run_id", "check", "turn", "detail"]]
        parts += ["<h4>Flagged conversations</h4>", _table(rows)]
    excluded = study.meta.get("params", {}).get("exclude_unfaithful")
    parts.append(f"<div style=\"color:#57606a;font-size:12px\">Flagged conversations are "
                 f"{'left out of' if excluded else 'kept in'} every table of this study "
                 "(parameter exclude_unfaithful; docs/fidelity.md).</div>")
    return HTML(wrap("".join(parts)), text=f"{len(flagged)} flags")


def study_conclusions(study: Study) -> HTML:
    """What an analyst may and may not conclude at this sample size, in words."""

    n = len(study.frames.runs)
    graded = []
    for name in ("judges", "database", "faults", "labels"):
        frame = _get(study, name)
        if frame.empty or "ci_too_wide" not in frame:
            continue
        rows = interpret(frame)
        rows = rows[rows["statistic"].isin(["cohen_kappa", "gwet_ac1", "krippendorff_alpha", "sensitivity",
                                            "specificity"])]
        graded.append((name, rows))
    conclusive = sum(int((~r["ci_too_wide"].astype(bool)).sum()) for _, r in graded)
    total = sum(len(r) for _, r in graded)
    needed = required_sample_size(kappa_min=0.8, kappa_expected=0.9, prevalence=0.5)
    may, may_not = [], []
    if not total:
        may_not.append("Anything about agreement: no statistic could be computed (one judge configuration, and no "
                       "database, known-fault or human truth for these conversations).")
    elif conclusive:
        may.append(f"{conclusive} of {total} agreement statistics have intervals narrow enough to read; their "
                   "verdicts are in the tables above.")
    else:
        may_not.append(f"None of the {total} agreement statistics is conclusive: every interval is too wide "
                       f"(half-width > 0.15) or rests on too few conversations ({n} studied).")
    may_not.append(f"Claiming a judge is reliable (κ or α ≥ 0.8) needs about {needed} conversations per criterion "
                   "at a 50% pass rate, more when pass rates are skewed (docs/agreement.md).")
    probes = _get(study, "probes")
    if not probes.empty and "p_value" in probes:
        significant = probes[(probes["p_value"] < 0.05) & (~probes["ci_too_wide"].astype(bool))]
        (may if len(significant) else may_not).append(
            f"Bias probes: {len(significant)} effect(s) significant at 5% with a usable interval"
            + (f" ({', '.join(sorted(set(significant['probe'])))})." if len(significant) else
               "; absence of evidence is not evidence of absence at this size."))
    if study.meta.get("local_demo"):
        may_not.append("Anything about judge quality: the local demo model's numbers show the pipeline works, not how "
                       "good a judge is.")
    body = ("<b>You may conclude</b><ul>" + "".join(f"<li>{esc(x)}</li>" for x in may or ["nothing yet."])
            + "</ul><b>You may not conclude</b><ul>" + "".join(f"<li>{esc(x)}</li>" for x in may_not) + "</ul>")
    title = f"What {n} conversation{'' if n == 1 else 's'} support{'s' if n == 1 else ''}"
    return HTML(wrap(box(body, tone="info", title=title)), text="conclusions")
