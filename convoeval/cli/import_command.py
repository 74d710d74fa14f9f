"""``convoeval import``: real conversations (WhatsApp exports, Cloud API logs, OTLP spans, tables) into a results folder;
``convoeval judge``: the judges on such a folder. One module for the two: they are one feature (docs/production.md)."""

from __future__ import annotations

import argparse
from typing import Any

from convoeval.cli._base import UsageError, command


def _add_import_parser(sub: Any) -> None:
    p = sub.add_parser(
        "import", help="read real conversations into a results folder (WhatsApp exports, Cloud API, OTLP, CSV)",
        description="Read production conversations into an ordinary results folder (runs/*.json, data/, "
                    "source = production) that load_results, the report, label, compare and the studies read as a "
                    "run. Formats, recognised by content: WhatsApp chat exports (.txt, .zip; Android and iOS; "
                    "pt-BR, en, es), WhatsApp Cloud API webhook and sent-message JSON lines, OpenTelemetry spans "
                    "as OTLP JSON (convoeval's own, Phoenix's), and a CSV or JSON Lines table (conversation_id, "
                    "role, text, time, tool_calls). A line that cannot be read is reported (file:line) and skipped; "
                    "an unrecognised file or a failed import writes nothing. Text is scrubbed of personal data "
                    "unless the judge is the local model (--scrub / --no-scrub). See docs/production.md.")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="files or folders of files to import")
    p.add_argument("--out", required=True, metavar="FOLDER", help="the results folder to write (must not exist)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--agent-name", metavar="NAME", help="chat exports: the clinic's sender name (the other side is "
                                                         "the patient)")
    p.add_argument("--agent-phone", metavar="PHONE", help="chat exports: the clinic's phone number, any format")
    p.add_argument("--agent", default="production", metavar="FAMILY",
                   help="the agent family (billing, scheduling, …): the agent column, and the scenario rubric "
                        "`convoeval judge` uses (default: production)")
    p.add_argument("--target", default="production", metavar="NAME",
                   help="what the target column names as the bot that spoke (default: production)")
    p.add_argument("--date-order", choices=("dmy", "mdy"),
                   help="chat exports whose dates cannot tell (every day ≤ 12): day or month first "
                        "(default: guessed from the file)")
    p.add_argument("--split-after", default="24h", metavar="DURATION",
                   help="a silence longer than this starts a new conversation (default 24h: WhatsApp's window)")
    scrub = p.add_mutually_exclusive_group()
    scrub.add_argument("--scrub", dest="scrub", action="store_true", default=None,
                       help="replace names, CPFs, phones, e-mails, dates, addresses and amounts with consistent "
                            "stand-ins (default whenever the judge is not the local model)")
    scrub.add_argument("--no-scrub", dest="scrub", action="store_false",
                       help="keep the text as it is (the judge must then be the local model: convoeval judge checks)")
    p.add_argument("--keep-original", action="store_true",
                   help="also keep the original text, file names and ids in the folder (personal data)")


@command("import")
def _cmd_import(args: argparse.Namespace) -> int:
    from convoeval.production import (
        ImportSettingError,
        ImportSettings,
        OutputExistsError,
        UnrecognisedFileError,
        import_conversations,
        parse_split_after,
    )
    from convoeval.production.scrub import Scrubber

    try:
        settings = ImportSettings(agent_name=args.agent_name, agent_phone=args.agent_phone, agent=args.agent,
                                  target=args.target, date_order=args.date_order,
                                  split_after=parse_split_after(args.split_after))
        scrubber = Scrubber(keep_original=args.keep_original) if _scrubs(args.scrub) else None
        summary = import_conversations(args.sources, args.out, settings, keep_original=args.keep_original,
                                       force=args.force, transform=scrubber,
                                       report=scrubber.report if scrubber is not None else None)
    except (ImportSettingError, UnrecognisedFileError, OutputExistsError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    for line in summary.lines():
        print(line)
    return 0


def _scrubs(asked: bool | None) -> bool:
    """``--scrub`` / ``--no-scrub``, else: scrub unless the judge (``CONVOEVAL_JUDGE_MODEL``, ``OPENAI_*``) is the
    local model, the one judge that sends nothing off the machine."""
    if asked is not None:
        return asked
    from convoeval.llm.models import resolve_model

    return resolve_model("judge").info.provider != "local"


def _add_judge_parser(sub: Any) -> None:
    p = sub.add_parser(
        "judge", help="judge the conversations of an imported folder (rubric and holistic judges, scores, report)",
        description="Judge every conversation of a results folder convoeval import wrote: the rubric judge on the "
                    "criteria (--criteria FILE, --scenario ID, or the agent family's scenario rubric), the holistic "
                    "judge, the composite score and the statuses a run has (pass, warn, fail, error). Every call "
                    "is cached and accounted; each conversation is saved as soon as it is judged, so a killed judge "
                    "resumes; the frames, report.json and report.html are written at the end. A hosted judge on a "
                    "folder imported with --no-scrub is refused unless --allow-unscrubbed. Exit codes: 0 done; "
                    "2 a setting that cannot work; 3 a conversation ended in error. See docs/production.md.")
    p.add_argument("folder", metavar="FOLDER", help="an imported results folder")
    p.add_argument("--criteria", metavar="FILE", help="a YAML list of criteria, {criteria: [...], goal: ...}, or a "
                                                       "scenario file (its rubric and goal)")
    p.add_argument("--scenario", metavar="ID", help="one conversational scenario's rubric and goal")
    p.add_argument("--scenarios-dir", metavar="DIR", help="scenario files (default: the project's evals/scenarios)")
    p.add_argument("--judge-model", metavar="MODEL", help="the judge (default: CONVOEVAL_JUDGE_MODEL or the local "
                                                          "model)")
    p.add_argument("--judge-samples", type=int, default=1, metavar="N", help="judge samples per conversation")
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help="conversations judged at once")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="judge on N local Dask worker processes (default 1: in this process)")
    p.add_argument("--cluster", metavar="ADDRESS", help="judge on the workers of this Dask scheduler (tcp://host:8786)")
    p.add_argument("--no-resume", action="store_true", help="judge again conversations already judged")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--allow-unscrubbed", action="store_true",
                   help="send a folder imported with --no-scrub to a hosted judge anyway")


@command("judge")
def _cmd_judge(args: argparse.Namespace) -> int:
    from convoeval.llm import LLMError
    from convoeval.llm.models import resolve_model
    from convoeval.pipeline.results import load_run
    from convoeval.pipeline.summary import summary_lines
    from convoeval.production.judging import judge_folder
    from convoeval.production.rubric import JudgeFolderError, production_rubric

    try:
        run = load_run(args.folder)
        agents = sorted({str(a) for a in run.frames.runs["agent"].dropna()})
        rubric = production_rubric(agents[0] if agents else None, criteria_file=args.criteria,
                                   scenario=args.scenario, scenarios_dir=args.scenarios_dir)
        hosted = resolve_model("judge", args.judge_model).info.provider != "local"
        print(f"judging {len(run.frames.runs)} conversation(s) of {args.folder} on {len(rubric.criteria)} "
              f"criteria ({rubric.source})")
        result = judge_folder(args.folder, rubric, model=args.judge_model, samples=args.judge_samples,
                              resume=not args.no_resume, progress="off" if args.no_progress else "bar",
                              concurrency=args.concurrency, allow_unscrubbed=args.allow_unscrubbed, hosted=hosted,
                              workers=args.workers, scheduler=args.cluster)
    except (JudgeFolderError, FileNotFoundError, LLMError) as exc:
        raise UsageError(str(exc)) from None
    for line in summary_lines(result.frames):
        print(line)
    print(f"report: {result.out_dir / 'report.html'}")
    return 3 if (result.scores["status"] == "error").any() else 0
