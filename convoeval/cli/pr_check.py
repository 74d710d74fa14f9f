"""The GitHub Action's script (``action.yml``): baseline and candidate compared, the verdict where reviewers look.

``python -m convoeval.cli.pr_check`` takes two results folders, or runs either side now (``--baseline-target``,
``--candidate-target``, with ``--agent``/``--scenario``/``--type``/``--seeds``/``--trials``), then:

1. compares them (``convoeval compare --format markdown``: the verdict first, the regressed rows with their evidence,
   the link to the report);
2. appends that summary to ``$GITHUB_STEP_SUMMARY`` (or ``--summary FILE``) and writes ``verdict=…`` to
   ``$GITHUB_OUTPUT``;
3. with a token (``$GITHUB_TOKEN``) on a pull request, posts the summary as one comment, or updates the one it
   posted before (``github_comment``); a comment that cannot be written is a warning, not the verdict;
4. exits 1 when the verdict is REGRESSED (unless ``--no-fail-on-regression``), 2 for a setting that cannot work.

Nothing here is specific to GitHub's runners: the tests run it with a fake GitHub environment and API on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from convoeval.cli import main as convoeval
from convoeval.cli._base import OneLineParser
from convoeval.cli.github_comment import MARKER, CommentError, pull_request_number, upsert_comment

__all__ = ["build_parser", "main"]

_VERDICT = re.compile(r"^## \S+ convoeval compare: (.+)$", re.M)


def build_parser() -> argparse.ArgumentParser:
    """The script's arguments (``action.yml`` passes its inputs as these)."""
    p = OneLineParser(prog="python -m convoeval.cli.pr_check",
                      description="Compare a candidate with a baseline, write the Markdown verdict to the step "
                                  "summary and one pull-request comment, exit 1 on a regression.")
    base = p.add_mutually_exclusive_group(required=True)
    base.add_argument("--baseline", metavar="DIR", help="the baseline's results folder")
    base.add_argument("--baseline-target", metavar="TARGET", help="run the baseline now against this target")
    cand = p.add_mutually_exclusive_group(required=True)
    cand.add_argument("--candidate", metavar="DIR", help="the candidate's results folder")
    cand.add_argument("--candidate-target", metavar="TARGET",
                      help="run the candidate now against this target, on the baseline's conversations")
    p.add_argument("--agent", help="runs made now, and the comparison: only this agent's scenarios")
    p.add_argument("--scenario", metavar="ID", help="only the scenario with this id")
    p.add_argument("--type", choices=("scripted", "conversational"), help="only this scenario type")
    p.add_argument("--seeds", metavar="N[,N...]", help="the baseline run made now: its seeds (default: its own)")
    p.add_argument("--trials", metavar="N", help="the baseline run made now: trials per scenario × seed")
    p.add_argument("--simulator-model", metavar="SPEC", help="runs made now: the simulated patient's model")
    p.add_argument("--judge-model", metavar="SPEC", help="runs made now: the judges' model")
    p.add_argument("--out", metavar="DIR", default="convoeval-pr-check",
                   help="where runs made now and the comparison page go (default: ./convoeval-pr-check)")
    p.add_argument("--report-url", metavar="URL", help="where the full report can be read (e.g. the run's artifacts)")
    p.add_argument("--summary", metavar="FILE", help="append the Markdown here (default: $GITHUB_STEP_SUMMARY)")
    p.add_argument("--pr", type=int, metavar="N", help="the pull request to comment on (default: the event's)")
    p.add_argument("--no-comment", action="store_true", help="do not comment, even with $GITHUB_TOKEN set")
    p.add_argument("--no-fail-on-regression", action="store_true", help="exit 0 on a regression too")
    return p


def _scope(args: argparse.Namespace) -> list[str]:
    words: list[str] = []
    for flag, value in (("--agent", args.agent), ("--scenario", args.scenario), ("--type", args.type)):
        if value:
            words += [flag, value]
    return words


def _models(args: argparse.Namespace) -> list[str]:
    words: list[str] = []
    for flag, value in (("--simulator-model", args.simulator_model), ("--judge-model", args.judge_model)):
        if value:
            words += [flag, value]
    return words


def _run_baseline(args: argparse.Namespace, out: Path) -> int:
    """``convoeval run`` of the baseline target into ``out/baseline``; its summary goes to the log (stderr)."""
    argv = ["run", "--target", args.baseline_target, "--out", str(out / "baseline"), "--no-progress",
            "--allow-errors", "--no-resume", *_scope(args), *_models(args)]
    argv += ["--seed", args.seeds] if args.seeds else []
    argv += ["--trials", args.trials] if args.trials else []
    with contextlib.redirect_stdout(sys.stderr):
        return _call(argv)


def _call(argv: list[str]) -> int:
    """A ``convoeval`` command in this process; a usage error (argparse's exit) is its exit code."""
    try:
        return convoeval(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2


def _write(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check (see the module docstring) and return its exit code."""
    args = build_parser().parse_args(argv)
    out = Path(args.out).expanduser().absolute()
    baseline = args.baseline
    if args.baseline_target:
        code = _run_baseline(args, out)
        if code == 2:
            return 2  # its one line is on stderr already
        baseline = str(out / "baseline")
    argv_compare = ["compare", baseline, *([args.candidate] if args.candidate else
                                           ["--candidate-target", args.candidate_target, "--out",
                                            str(out / "candidate"), "--no-progress", *_models(args)]),
                    *_scope(args), "--format", "markdown", "--html", str(out / "compare.html"),
                    "--fail-on-regression", *(["--report-url", args.report_url] if args.report_url else [])]
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = _call(argv_compare)
    markdown = captured.getvalue()
    if code == 2 or not (found := _VERDICT.search(markdown)):
        print("convoeval: error: the comparison did not run (see above)", file=sys.stderr)
        return 2
    verdict = found.group(1).lower()
    sys.stdout.write(markdown)
    _write(args.summary or os.environ.get("GITHUB_STEP_SUMMARY"), markdown)
    _write(os.environ.get("GITHUB_OUTPUT"), f"verdict={verdict}")
    token = os.environ.get("GITHUB_TOKEN", "")
    number = args.pr or pull_request_number()
    if token and not args.no_comment:
        if number is None:
            print("convoeval: no pull request in this event: no comment posted", file=sys.stderr)
        else:
            try:
                done, comment = upsert_comment(f"{MARKER}\n{markdown}", token=token, number=number,
                                               repository=os.environ.get("GITHUB_REPOSITORY", ""))
                print(f"convoeval: pull request #{number}: comment {comment} {done}", file=sys.stderr)
            except CommentError as exc:
                # A pull request from a fork gets a read-only token: say so, and let the verdict decide the job.
                print(f"convoeval: warning: the pull-request comment could not be written: {exc}", file=sys.stderr)
    return 1 if code == 1 and not args.no_fail_on_regression else 0


if __name__ == "__main__":
    sys.exit(main())
