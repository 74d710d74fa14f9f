"""CPU to read a results folder back with ``load_results`` (typed ``RunFrames`` plus ``report.json``), per call.

Usage: ``.venv/bin/python benchmarks/bench_load_results.py [FOLDER] [-n N]`` (default ``reports/example``, 20 calls).
pandas is imported before the clock starts: this times building the frames, not the import.
"""

from __future__ import annotations

import argparse
import time

import pandas  # noqa: F401 - imported before timing (see the docstring)

from convoeval import load_results


def main() -> None:
    """Print the mean CPU milliseconds of ``load_results(folder)`` over ``n`` calls."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", nargs="?", default="reports/example")
    parser.add_argument("-n", type=int, default=20)
    args = parser.parse_args()
    load_results(args.folder)  # warm: first-use imports (pyarrow, the frames' modules)
    started = time.process_time()
    for _ in range(args.n):
        run = load_results(args.folder)
    per_call = (time.process_time() - started) / args.n * 1000
    print(f"{per_call:.1f} ms CPU per load_results({args.folder!r}): {run.frames!r}")


if __name__ == "__main__":
    main()
