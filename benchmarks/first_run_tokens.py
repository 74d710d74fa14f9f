"""Prompt tokens sent and evaluated per conversation of a run on the local model (issue #49, item 1).

The local server logs one line per request: ``prompt N tokens (M evaluated), G generated, S s``. It serves one
request at a time, so its lines follow the calls in the order they ended; each call of ``data/calls.csv`` (prompt and
completion tokens) is matched to an unused log line with the same prompt count and the closest generated count.

Usage:
    python benchmarks/first_run_tokens.py RESULTS_FOLDER SERVER_LOG [--from-line N]
"""

from __future__ import annotations

import argparse
import csv
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"prompt (\d+) tokens \((\d+) evaluated\), (\d+) generated, ([\d.]+) s")


def main() -> None:
    """Print a Markdown table: per conversation, judge and simulator calls, tokens sent and evaluated."""
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("log", type=Path)
    parser.add_argument("--from-line", type=int, default=0, help="skip the log's first N lines (earlier runs)")
    args = parser.parse_args()
    lines = args.log.read_text(encoding="utf-8").splitlines()[args.from_line:]
    served = [tuple(map(float, m.groups())) for m in map(LINE.search, lines) if m]
    used = [False] * len(served)
    calls = sorted(csv.DictReader((args.folder / "data" / "calls.csv").open(encoding="utf-8")),
                   key=lambda r: float(r["started_at"]) + float(r["latency_s"]))
    table: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for call in calls:
        if call["cache_hit"] == "True" or not call["prompt_tokens"]:
            continue
        sent, generated = int(float(call["prompt_tokens"])), int(float(call["completion_tokens"] or 0))
        # The server counts the end-of-text token it generated; the client's usage may not: the closest count wins.
        candidates = [i for i, s in enumerate(served) if not used[i] and s[0] == sent]
        match = min(candidates, key=lambda i: (abs(served[i][2] - generated), i)) if candidates else None
        if match is None:
            raise SystemExit(f"no log line for {call['scenario']} {call['extra']} ({sent} / {generated} tokens)")
        used[match] = True
        row = table[call["scenario"]]
        role = call["role"]
        row[f"{role}_calls"] += 1
        row[f"{role}_sent"] += sent
        row[f"{role}_evaluated"] += served[match][1]
        row[f"{role}_generated"] += generated
        row[f"{role}_server_s"] += served[match][3]
    print("| conversation | judge calls | judge tokens sent | judge tokens evaluated | judge tokens generated "
          "| judge server s | simulator calls | simulator evaluated |")
    print("|---|---|---|---|---|---|---|---|")
    total: dict[str, float] = defaultdict(float)
    for scenario, row in sorted(table.items()):
        for key, value in row.items():
            total[key] += value
        print(_row(scenario, row))
    print(_row("whole run", total))


def _row(name: str, row: dict[str, float]) -> str:
    keys = ("judge_calls", "judge_sent", "judge_evaluated", "judge_generated", "judge_server_s", "simulator_calls",
            "simulator_evaluated")
    return f"| {name} | " + " | ".join(f"{row.get(k, 0):,.0f}" for k in keys) + " |"


if __name__ == "__main__":
    main()
