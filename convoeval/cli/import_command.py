"""``convoeval import``: real conversations (WhatsApp exports, Cloud API logs, OTLP spans, tables) into a results folder."""

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

    try:
        settings = ImportSettings(agent_name=args.agent_name, agent_phone=args.agent_phone, agent=args.agent,
                                  target=args.target, date_order=args.date_order,
                                  split_after=parse_split_after(args.split_after))
        summary = import_conversations(args.sources, args.out, settings, keep_original=args.keep_original,
                                       force=args.force)
    except (ImportSettingError, UnrecognisedFileError, OutputExistsError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    for line in summary.lines():
        print(line)
    return 0
