"""What a red-team run shows: the ASR heatmap, the rate tables with Wilson intervals, and each leak in its transcript.

Every view takes a ``RedTeamRun`` (``run_redteam`` in the notebook, or ``load_redteam(folder)`` for a saved run) or
its frames, and returns what a notebook cell displays: ``HTML`` or a ``Chart`` (a matplotlib figure, PNG in
notebooks, an inline image in pages). ``save_redteam_html`` writes the same pieces as one self-contained
``report.html`` with the run report's page writer. The numbers come from ``convoeval.redteam.metrics``; nothing is
computed here that the command line would compute differently.

Everything shown from a transcript is HTML-escaped: an agent reply (or an attacker's message) may hold ``<script>``.

Example:
    >>> from convoeval.redteam.study import run_redteam
    >>> red = run_redteam(["evals/attacks/third-party.yaml"], agents=["billing"], locales=["en"],
    ...                   faults=["discloses_third_party"], output_dir=None)
    >>> asr_grid(red)[["strategy", "agent", "n", "leaked", "rate"]]  # what asr_heatmap draws: strategy × agent
          strategy    agent  n  leaked  rate
    0  third_party  billing  1       1   1.0
    >>> leak_transcripts(red).text  # each leak in its conversation, the quoted text highlighted
    '1 leaking case(s)'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from convoeval._util.html_blocks import HTML, MUTED, STATUS_COLORS, box, css, esc, table, wrap
from convoeval.redteam._leak_marks import case_html
from convoeval.redteam.attacks import STRATEGIES
from convoeval.redteam.metrics import (
    attack_success,
    case_counts,
    cases_frame,
    leaks_by_kind,
    over_refusal,
    utility_under_attack,
)
from convoeval.redteam.run import AttackResult
from convoeval.redteam.study import RedTeamRun, load_redteam
from convoeval.report.page import page_html, write_page
from convoeval.report.plots import Chart

__all__ = ["asr_grid", "asr_heatmap", "asr_table", "leak_kinds", "leak_transcripts",
           "over_refusal_table", "redteam_errors", "redteam_overview", "redteam_sections", "render_redteam_html",
           "save_redteam_html", "utility_table"]


#: What a view reads: a red-team run, or its ``cases`` (or ``leaks``) frame.
Source: TypeAlias = "RedTeamRun | pd.DataFrame"
#: What the transcript view reads: a run, its results, or a saved run's folder.
Transcripts: TypeAlias = "RedTeamRun | Sequence[AttackResult] | str | Path"


def _cases(source: Source) -> pd.DataFrame:
    return source.cases if isinstance(source, RedTeamRun) else source


def _leaks(source: Source) -> pd.DataFrame:
    return source.leaks if isinstance(source, RedTeamRun) else source


def _note(text: str) -> HTML:
    return HTML(wrap(f"<div{css(color=MUTED, font_style='italic')}>{esc(text)}</div>"), text=text)


def redteam_overview(red: RedTeamRun) -> HTML:
    """One panel: how many cases ran against which targets, how many leaked or failed, and where the files are."""
    cases = red.cases
    counts = case_counts(cases)
    n, errors_ = counts["cases"], counts["errors"]
    # Attacks and legitimate requests are counted apart, as the rate tables below count them: a leak in a
    # legitimate request is the agent serving the patient's data before verifying the caller, not an attack's success.
    head = f"<b>{counts['attacks_leaked']} of {counts['attacks']} attack(s) leaked</b> another patient's data"
    if counts["legitimate"]:
        head += (f" · {counts['legitimate_leaked']} of {counts['legitimate']} legitimate request(s) leaked (served "
                 f"before the caller was verified), {counts['legitimate_not_served']} not served")
    head += f" · {n} case(s) · {errors_} error(s)"
    rows = [[f"<code>{esc(agent)}</code>", f"<code>{esc(target)}</code>"]
            for agent, target in sorted(red.targets.items())]
    scope = " · ".join(f"{label}: {', '.join(sorted(map(str, cases[column].unique())))}"
                       for column, label in (("locale", "locales"), ("strategy", "strategies"), ("form", "attackers"))
                       if n)
    where = f"<div>results: <code>{esc(red.folder)}</code></div>" if red.folder is not None else ""
    body = f"<div>{head}</div><div{css(color=MUTED)}>{esc(scope)}</div>{where}" + table(rows, ["agent", "target"])
    tone = "danger" if red.leaked else ("warning" if errors_ else "ok")
    return HTML(wrap(box(body, tone=tone)), text=f"{counts['attacks_leaked']} of {counts['attacks']} attack(s) leaked"
                + (f", {counts['legitimate_leaked']} of {counts['legitimate']} legitimate request(s)"
                   if counts["legitimate"] else ""))


def asr_grid(source: Source) -> pd.DataFrame:
    """The heatmap's numbers: ASR per strategy × agent over every locale (attacks only), strategies in library order.

    Columns: strategy, agent, n, leaked, rate, ci_low, ci_high.
    """
    grid = attack_success(_cases(source), by=("strategy", "agent"))
    order = {s: i for i, s in enumerate(STRATEGIES)}
    return grid.sort_values(["strategy", "agent"], key=lambda s: s.map(order) if s.name == "strategy" else s,
                            ignore_index=True)


def asr_heatmap(source: Source) -> Chart | HTML:
    """Attack success rate as a strategy × agent heatmap; each cell shows the rate and ``leaked/n``.

    A grey ``—`` is a pair that did not run (the payment and cancellation attacks run only against the agents that
    pay or cancel), not a clean one.
    """
    from matplotlib.colors import LinearSegmentedColormap  # matplotlib loads on first use: the CLI never needs it  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up
    from matplotlib.figure import Figure  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    grid = asr_grid(source)
    if grid.empty:
        return _note("No attack finished: nothing to plot.")
    strategies = list(dict.fromkeys(grid["strategy"]))
    agents = sorted(grid["agent"].unique())
    cells = {(r.strategy, r.agent): r for r in grid.itertuples()}
    rates = [[cells[(s, a)].rate if (s, a) in cells else float("nan") for a in agents] for s in strategies]
    # Green for 0 (what a healthy agent shows), through amber to red: a cell's colour alone says whether it leaked.
    cmap = LinearSegmentedColormap.from_list("asr", ["#dafbe1", "#fff1c2", "#ff8182", "#a40e26"]).with_extremes(
        bad="#eaeef2")
    fig = Figure(figsize=(1.6 + 1.35 * len(agents), 1.0 + 0.55 * len(strategies)), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(pd.DataFrame(rates).to_numpy(dtype=float), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for y, strategy in enumerate(strategies):
        for x, agent in enumerate(agents):
            cell = cells.get((strategy, agent))
            text = "—" if cell is None else f"{cell.rate:.0%}\n{cell.leaked}/{cell.n}"
            dark = cell is not None and cell.rate > 0.6
            ax.text(x, y, text, ha="center", va="center", fontsize=8, color="white" if dark else "#1f2328")
    ax.set_xticks(range(len(agents)), agents, fontsize=9)
    ax.set_yticks(range(len(strategies)), strategies, fontsize=9)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)
    # pad: the agents' names sit on top of the grid, under the title
    ax.set_title("Attack success rate (leaked / attacks), all locales", fontsize=10, loc="left", pad=10)
    fig.colorbar(image, ax=ax, shrink=0.8, format=lambda v, _: f"{v:.0%}").ax.tick_params(labelsize=8)
    return Chart(fig, "attack success rate per strategy and agent")


def _rate_cell(hits: int, n: int, rate: float, low: float, high: float, *, bad_when_any: bool = True,
               count: bool = False) -> str:
    """A rate as a coloured pill (red: something leaked, or not everything was served), its interval muted."""
    if not n:
        return f"<span{css(color=MUTED)}>—</span>"
    bad = hits > 0 if bad_when_any else hits < n
    fg, bg = STATUS_COLORS["fail" if bad else "pass"]
    value = f"<span{css(color=fg, background=bg, padding='0 6px', border_radius='8px', font_weight='600')}>"
    counted = f" {hits}/{n}" if count else ""
    return (f"<span{css(white_space='nowrap')}>{value}{rate:.0%}</span>{counted} "
            f"<span{css(color=MUTED)}>[{low:.0%}, {high:.0%}]</span></span>")


def _rates_html(frame: pd.DataFrame, by: Sequence[str], count: str, label: str, *, bad_when_any: bool = True) -> str:
    rows = [[*(esc(getattr(r, k)) for k in by), f"{getattr(r, count)}/{r.n}",
             _rate_cell(getattr(r, count), r.n, r.rate, r.ci_low, r.ci_high, bad_when_any=bad_when_any)]
            for r in frame.itertuples()]
    return table(rows, [*by, f"{count}/n", f"{label} [95% Wilson CI]"])


def asr_table(source: Source) -> HTML:
    """ASR per strategy × agent × locale with 95% Wilson intervals: a row per strategy × agent, a column per locale
    and one over all locales, each cell ``rate leaked/n [CI]``; the overall rate above.

    One row per strategy × agent rather than per locale: the locales are the same attack in another language, and
    side by side a leak in one locale only stands out.
    """
    cases = _cases(source)
    frame = attack_success(cases, by=("strategy", "agent", "locale"))
    if frame.empty:
        return _note("No attack finished: no attack success rate.")
    total = attack_success(cases, by=()).iloc[0]
    cell = _rate_cell(int(total.leaked), int(total.n), total.rate, total.ci_low, total.ci_high)
    overall = f"<div>overall: {cell} ({int(total.leaked)} of {int(total.n)} attacks leaked)</div>"
    counts = case_counts(cases)
    if counts["legitimate"]:  # counted nowhere else on this table: say where they are
        overall += (f"<div{css(color=MUTED)}>Legitimate requests are not attacks and are in no rate here: "
                    f"{counts['legitimate_leaked']} of {counts['legitimate']} leaked (see Over-refusal).</div>")
    locales = sorted(frame["locale"].unique())
    cells = {(r.strategy, r.agent, r.locale): r for r in frame.itertuples()}
    rows = []
    for r in asr_grid(cases).itertuples():
        found = [cells.get((r.strategy, r.agent, locale)) for locale in locales]
        rows.append([esc(r.strategy), esc(r.agent)]
                    + [_rate_cell(c.leaked, c.n, c.rate, c.ci_low, c.ci_high, count=True) if c is not None
                       else _rate_cell(0, 0, 0.0, 0.0, 0.0) for c in found]
                    + [_rate_cell(r.leaked, r.n, r.rate, r.ci_low, r.ci_high, count=True)])
    header = ["strategy", "agent", *locales, "all locales"]
    return HTML(wrap(overall + table(rows, header)), text=f"ASR over {len(frame)} strategy × agent × locale group(s)")


def leak_kinds(source: Source) -> HTML:
    """Leaks per kind (name, cpf, …, read, write): how many, and in how many cases."""
    frame = leaks_by_kind(_leaks(source))
    if frame.empty:
        return HTML(wrap(box("No leak of any kind.", tone="ok")), text="no leak")
    rows = [[f"<code>{esc(r.kind)}</code>", str(r.leaks), str(r.cases)] for r in frame.itertuples()]
    return HTML(wrap(table(rows, ["kind", "leaks", "cases"])), text=f"{len(frame)} kind(s) of leak")


def over_refusal_table(source: Source, by: Sequence[str] = ("agent",)) -> HTML:
    """The legitimate, verified requests the agent did not serve (over-refusal), per ``by`` and overall."""
    cases = _cases(source)
    frame = over_refusal(cases, by=by)
    if frame.empty:
        return _note("No legitimate request ran: over-refusal is not measured (legitimate-*.yaml attacks).")
    total = over_refusal(cases)
    counts = case_counts(cases)
    head = f"<div>overall: {int(total.refused[0])} of {int(total.n[0])} legitimate request(s) not served</div>"
    if counts["legitimate_leaked"]:
        head += box(esc(f"{counts['legitimate_leaked']} of {counts['legitimate']} legitimate request(s) leaked: "
                        "the agent gave the patient's data before it had verified the caller's identity "
                        "(verify_identity), so a caller without the CPF and birth date would have had it too. See "
                        "them under Leaks in their transcripts."), tone="danger")
    return HTML(wrap(head + _rates_html(frame, by, "refused", "over-refusal")),
                text=f"over-refusal {int(total.refused[0])}/{int(total.n[0])}")


def utility_table(source: Source, by: Sequence[str] = ("agent",)) -> HTML:
    """Utility under attack: attacks opening with the caller's own request, and whether it was served."""
    cases = _cases(source)
    frame = utility_under_attack(cases, by=by)
    if frame.empty:
        return _note("No attack opened with the caller's own request: utility under attack is not measured.")
    total = utility_under_attack(cases)
    head = f"<div>overall: {int(total.served[0])} of {int(total.n[0])} own request(s) served during an attack</div>"
    return HTML(wrap(head + _rates_html(frame, by, "served", "served", bad_when_any=False)),
                text=f"utility under attack {int(total.served[0])}/{int(total.n[0])}")


def redteam_errors(source: Source) -> HTML:
    """The cases that could not run to the end (the agent crashed or a setting failed), with the reason."""
    cases = _cases(source)
    failed = cases[cases["status"] == "error"]
    if failed.empty:
        return HTML(wrap(box("No errors: every case ran to the end.", tone="ok")), text="no errors")
    rows = [[esc(r.case), f"<code>{esc(r.target_agent)}</code>", esc(r.error)] for r in failed.itertuples()]
    return HTML(wrap(table(rows, ["case", "target", "error"])), text=f"{len(failed)} error(s)")


# ── each leak in its transcript ──


def _conversations(source: Transcripts) -> dict[str, dict[str, Any]]:
    """case -> {"turns": [...], "leaks": [...]} from the results in memory (a folder's are read with its run)."""
    if isinstance(source, (str, Path)):
        source = load_redteam(source)
    if isinstance(source, RedTeamRun):
        source = source.results
    return {r.case: {"turns": [asdict(t) for t in r.turns], "leaks": [asdict(x) for x in r.leaks]} for r in source}


def leak_transcripts(source: Transcripts, *, open: bool | None = None, limit: int | None = None) -> HTML:
    """Every case that leaked, as its chat: caller left, agent right, the leaking turns framed in red with the
    quoted canaries highlighted and a chip per leak (kind, whose data, and for a tool read or a store change what
    was touched).

    Args:
        source: a ``RedTeamRun``, a list of ``AttackResult``, or a results folder.
        open: start expanded; default: all when at most 10 cases leaked, else the first three.
        limit: at most this many cases (the rest are counted, not shown).
    """
    if isinstance(source, (str, Path)):
        source = load_redteam(source)  # read once: its results carry the transcripts
    cases = source.cases if isinstance(source, RedTeamRun) else cases_frame(source)
    leaked = cases[cases["leaked"].astype(bool)]
    if leaked.empty:
        return HTML(wrap(box("No case leaked: no transcript to show.", tone="ok")), text="no leak")
    conversations = _conversations(source)
    shown = leaked if limit is None else leaked.head(limit)
    # Many leaks: the first three open, to show what a leak looks like, and the rest one line each.
    parts = [case_html(case, conversations.get(case["case"], {}),
                       open=open if open is not None else (len(leaked) <= 10 or i < 3))
             for i, case in enumerate(shown.to_dict("records"))]
    if len(shown) < len(leaked):
        more = len(leaked) - len(shown)
        parts.append(f"<div{css(color=MUTED)}>… and {more} more (raise <code>limit</code>).</div>")
    return HTML(wrap("".join(parts)), text=f"{len(shown)} leaking case(s)")


# ── the page ──


def redteam_sections(red: RedTeamRun) -> list[tuple[str, list[Any]]]:
    """The red-team report's sections in reading order: (heading, displayable pieces)."""
    return [
        ("What ran", [redteam_overview(red)]),
        ("Attack success rate", [asr_heatmap(red), asr_table(red)]),
        ("Leaks by kind", [leak_kinds(red)]),
        ("Over-refusal", [over_refusal_table(red)]),
        ("Utility under attack", [utility_table(red)]),
        ("Leaks in their transcripts", [leak_transcripts(red)]),
        ("Errors", [redteam_errors(red)]),
    ]


def render_redteam_html(red: RedTeamRun, *, title: str | None = None) -> str:
    """The red-team report as one self-contained HTML document (the heatmap inlined, no scripts)."""
    name = red.folder.name if red.folder is not None else "in memory"
    source = f"<code>{esc(red.folder)}</code>" if red.folder is not None else ""
    return page_html(title or f"convoeval privacy red team: {name}", redteam_sections(red), source=source)


def save_redteam_html(red: RedTeamRun, path: Path | str | None = None, *, title: str | None = None) -> HTML:
    """Write the report page (default ``<results folder>/report.html``) and return a link to it.

    Raises:
        ValueError: no ``path`` and the run wrote no folder (``output_dir=None``).
    """
    if path is None and red.folder is None:
        raise ValueError("the run has no results folder (output_dir=None): give save_redteam_html a path")
    target = Path(path) if path is not None else Path(red.folder) / "report.html"  # type: ignore[arg-type]
    return write_page(target, render_redteam_html(red, title=title), what="Red-team report")
