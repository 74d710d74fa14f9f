"""``python -m convoeval.report FOLDER [--out FILE]``: rebuild a saved run's ``report.html`` without re-running it."""

from __future__ import annotations

import argparse
import sys

from convoeval.pipeline.results import load_run
from convoeval.report import save_html


def main(argv: list[str] | None = None) -> int:
    """Write a results folder's HTML report; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m convoeval.report", description=__doc__)
    parser.add_argument("folder", help="a results folder (holding runs/*.json)")
    parser.add_argument("--out", metavar="FILE", help="where to write the page (default: FOLDER/report.html)")
    args = parser.parse_args(argv)
    try:
        run = load_run(args.folder)
    except FileNotFoundError as exc:
        parser.exit(2, f"error: {exc}\n")
    print(save_html(run, args.out).text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
