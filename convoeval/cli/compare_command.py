"""``convoeval compare``: two versions of an agent, the verdict, the report and the regression gate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from convoeval.cli._base import UsageError, command
from convoeval.cli.config_flags import add_shared_flags, given_options
from convoeval.scenarios import agent_names

#: The candidate run's options whose default is the baseline's recorded value (``compare.candidate.INHERITED``).
INHERITED_OPTIONS = ("simulator_model", "judge_model", "judge_samples", "concurrency")


def _add_compare_parser(sub: Any) -> None:
    p = sub.add_parser(
        "compare", help="compare a candidate with a baseline, conversation by conversation, with verdicts",
        description="Pair the baseline's and the candidate's conversations by scenario, seed and trial, and report "
                    "whether the candidate improved, regressed or showed no detectable change (per scenario, "
                    "criterion, assertion and overall), with CIs and the minimum detectable difference. The "
                    "candidate is a results folder, or a target run now on exactly the baseline's conversations "
                    "(--candidate-target, --aa). The headline is regressed when any of these regressed. Exit codes: 0 "
                    "done; 1 --fail-on-regression and the headline is regressed; 2 a setting that cannot work.")
    p.add_argument("baseline", metavar="BASELINE", help="results folder of the baseline (a run's or a sweep's)")
    p.add_argument("candidate", nargs="?", metavar="CANDIDATE", help="results folder of the candidate")
    p.add_argument("--candidate-target", metavar="TARGET",
                   help="run this target now on the baseline's scenarios × seeds × trials, e.g. "
                        "'clinic:billing?faults=wrong_amount' or my_bot.v2:respond")
    p.add_argument("--aa", action="store_true",
                   help="A/A: run the baseline's own target again (the noise floor of this comparison)")
    p.add_argument("--replay", action="store_true",
                   help="with a target run now: replay the baseline's patient until the candidate's first "
                        "divergent reply, then the simulator continues with the same seed")
    p.add_argument("--out", metavar="DIR", help="the candidate's results folder when it runs now "
                                                "(default: reports/candidate-<target>-<time>-<id>)")
    p.add_argument("--html", metavar="FILE",
                   help="write the comparison page here (default, when the candidate runs now: <its folder>/"
                        "compare.html)")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when the headline is regressed (a statistically supported regression of the "
                        "overall score, a scenario, a criterion or an assertion), naming them")
    p.add_argument("--format", choices=("text", "markdown"), default="text",
                   help="text: the console lines (default); markdown: a compact GitHub-flavoured summary, the verdict "
                        "first, for a pull-request comment or $GITHUB_STEP_SUMMARY (other lines go to stderr)")
    p.add_argument("--report-url", metavar="URL",
                   help="with --format markdown: where the full report can be read (e.g. the CI run's artifacts)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="P", help="significance level (default 0.05)")
    p.add_argument("--detect", type=float, default=1.0, metavar="POINTS",
                   help="a score difference to size the sample for (default 1 point)")
    p.add_argument("--labels", metavar="CSV",
                   help="human labels (a label CSV or folder, conversations by run id): also show each criterion's "
                        "pass rate calibrated on them on each side (PPI++) and its change; not part of the verdict")
    p.add_argument("--agent", choices=agent_names(), help="only this agent's scenarios")
    p.add_argument("--scenario", metavar="ID", help="only the scenario with this id")
    p.add_argument("--type", choices=("scripted", "conversational"), help="only this scenario type")
    baseline = "the baseline's"
    add_shared_flags(p, title="the candidate run's options (--candidate-target, --aa), shared with fork and the fault "
                              "study", shown={name: baseline for name in INHERITED_OPTIONS})


@command("compare")
def _compare(args: argparse.Namespace) -> int:
    from convoeval.compare import CompareError, baseline_target, compare, load_side, run_candidate
    from convoeval.compare.advice import few_seeds_warning
    from convoeval.llm import LLMError
    from convoeval.pipeline import ConfigError
    from convoeval.pipeline.execute import build_agents
    from convoeval.stats.labels import LabelError
    from convoeval.store import StoreError

    ways = [bool(args.candidate), bool(args.candidate_target), args.aa]
    if sum(ways) != 1:
        raise UsageError("give exactly one candidate: a results folder, --candidate-target TARGET, or --aa")
    if args.candidate and _redteam_folders(args.baseline, args.candidate):
        return _compare_redteam(args)
    if args.candidate and _production_folders(args.baseline, args.candidate):
        return _compare_samples(args)  # real conversations pair with nothing: two independent samples
    if args.replay and args.candidate:
        raise UsageError("--replay needs a candidate run now (--candidate-target or --aa), not a results folder")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be between 0 and 1, got {args.alpha}")
    scope = {"agent": args.agent, "scenario": args.scenario, "type": args.type}
    html = Path(args.html).expanduser().absolute() if args.html else None
    try:
        baseline = load_side(args.baseline).select(**scope)
        candidate: Any = args.candidate
        options = _options(args)
        target = (args.candidate_target or baseline_target(baseline)) if candidate is None else None
        if target is not None:
            build_agents(target, [])  # a target that cannot work is its one line, before the warning below
        # Before anything runs: one seed leaves the judges' scores untestable, whatever the candidate does.
        if warning := few_seeds_warning(baseline, alpha=args.alpha, compare_args=options,
                                        candidate_runs_now=candidate is None, scope=scope):
            print(f"convoeval: warning: {warning}", file=sys.stderr)
        if target is not None:
            candidate = run_candidate(baseline, target, out=args.out, replay=args.replay, **given_options(args))
            html = html or candidate.out_dir / "compare.html"
            print(f"candidate: {target} ran {len(candidate.scores)} conversation(s) into {candidate.out_dir}",
                  file=sys.stderr if args.format == "markdown" else sys.stdout)
        labels = Path(args.labels).expanduser() if args.labels else None
        if labels is not None and not labels.exists():
            raise UsageError(f"--labels: {labels} does not exist (a label CSV or a folder of them)")
        result = compare(baseline, candidate, alpha=args.alpha, detect=args.detect, labels=labels, **scope)
    except (CompareError, ConfigError, LLMError, StoreError, LabelError) as exc:
        raise UsageError(str(exc)) from None
    result.rerun = {"compare_args": options, "candidate_runs_now": args.candidate is None}
    if args.format == "text":
        for line in result.lines(**result.rerun):
            print(line)
    if html is not None:
        from convoeval.compare.views import save_compare_html

        saved = save_compare_html(result, html).text
        print(f"report: {saved}", file=sys.stderr if args.format == "markdown" else sys.stdout)
    if args.format == "markdown":
        from convoeval.compare.markdown import comparison_markdown

        sys.stdout.write(comparison_markdown(result, report_url=args.report_url, report_path=html))
    code = result.exit_code(args.fail_on_regression)
    if code:
        print(f"convoeval: {result.regression_summary()}", file=sys.stderr)
    return code


def _options(args: argparse.Namespace) -> list[str]:
    """The comparison's own options as typed (not its folders, nor --out and --html, which name this run's
    files), to repeat in a suggested command."""
    words: list[str] = []
    for flag, value in (("--candidate-target", args.candidate_target), ("--agent", args.agent),
                        ("--scenario", args.scenario), ("--type", args.type), ("--labels", args.labels)):
        if value is not None:
            words += [flag, str(value)]
    for flag, on in (("--aa", args.aa), ("--replay", args.replay),
                     ("--fail-on-regression", args.fail_on_regression)):
        if on:
            words.append(flag)
    if args.alpha != 0.05:
        words += ["--alpha", f"{args.alpha:g}"]
    if args.detect != 1.0:
        words += ["--detect", f"{args.detect:g}"]
    return words


def _redteam_folders(baseline: str, candidate: str) -> bool:
    from convoeval.redteam.compare import is_redteam_folder

    return is_redteam_folder(baseline) and is_redteam_folder(candidate)


def _compare_redteam(args: argparse.Namespace) -> int:
    """Two ``convoeval redteam`` results folders: the attacks that newly leak, and ASR per strategy."""
    from convoeval.redteam.compare import compare_redteam

    result = compare_redteam(args.baseline, args.candidate, alpha=args.alpha)
    for line in result.lines():
        print(line)
    if args.fail_on_regression and result.verdict == "REGRESSED":
        print(f"--fail-on-regression: {'; '.join(result.reasons)}", file=sys.stderr)
        return 1
    return 0


def _production_folders(baseline: str, candidate: str) -> bool:
    from convoeval.production.comparing import is_production_folder

    return is_production_folder(baseline) or is_production_folder(candidate)


def _compare_samples(args: argparse.Namespace) -> int:
    """An imported folder on either side (docs/production.md): two independent samples of judged conversations."""
    from convoeval.production.comparing import compare_samples

    try:
        result = compare_samples(args.baseline, args.candidate)
    except (ValueError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    for line in result.lines():
        print(line)
    _sim2real(args)
    regressed = (result.table["verdict"] == "regressed").any() if len(result.table) else False
    return 1 if args.fail_on_regression and regressed else 0


def _sim2real(args: argparse.Namespace) -> None:
    """A simulated run beside an imported one: the fidelity table, and its page (``--html``, default beside the
    imported folder's report)."""
    from convoeval.fidelity.sim2real import sim2real_table
    from convoeval.pipeline.results import load_run
    from convoeval.production.comparing import is_production_folder
    from convoeval.report.sim2real import save_sim2real_html

    real = [is_production_folder(args.baseline), is_production_folder(args.candidate)]
    if real[0] == real[1]:
        return  # two imported folders: no simulated side
    simulated, production = (load_run(args.candidate), load_run(args.baseline)) if real[0] else (
        load_run(args.baseline), load_run(args.candidate))
    table = sim2real_table(simulated.frames.transcripts, production.frames.transcripts)
    print("Sim2Real (simulated → production; the setting that moves each):")
    for row in table.itertuples():
        print(f"  {row.measure:46} {row.simulated:7.2f} → {row.production:7.2f}   {row.setting}")
    page = save_sim2real_html(simulated, production, args.html or production.out_dir / "sim2real.html")
    print(f"Sim2Real page: {page}")
