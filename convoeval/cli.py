"""The ``convoeval`` command line.

Each sub-command is a small function registered in ``COMMANDS``; errors the user can fix are printed as one line
(``convoeval: error: …``) with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from convoeval.scenarios import json_schema, validate_paths

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


class UsageError(Exception):
    """A mistake in what the user asked for; printed as one line."""


def command(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = fn
        return fn

    return register


# ── validate / schema ──


@command("validate")
def _validate(args: argparse.Namespace) -> int:
    report = validate_paths(args.paths or ["evals/scenarios"])
    for error in report.errors:
        print(f"error: {error.one_line()}", file=sys.stderr)
    if not args.quiet:
        kinds = {"conversational": 0, "scripted": 0}
        for s in report:
            kinds[s.type] += 1
        print(
            f"{len(report)} scenario(s) valid ({kinds['conversational']} conversational, {kinds['scripted']} scripted); "
            f"{len(report.errors)} invalid file(s)"
        )
    return 1 if report.errors else 0


@command("schema")
def _schema(args: argparse.Namespace) -> int:
    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


# ── parser ──


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="convoeval", description="Conversational evaluation of chat agents.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("validate", help="check scenario files or folders; exit 1 on any error")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: evals/scenarios)")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")

    p = sub.add_parser("schema", help="print the JSON Schema of scenario files")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``convoeval`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        parser.exit(2, f"convoeval: error: {exc}\n")
    except KeyboardInterrupt:
        print("convoeval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
