"""Print the Markdown tables of RESULTS.md from ``benchmarks/results/*.json`` (after a new run, paste them in).

Usage:
    .venv/bin/python benchmarks/tables.py [NAME ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, markdown_table

#: Per results file: the lists of rows (or single rows) to print, by key.
SECTIONS: dict[str, list[str]] = {
    "overhead": ["layers", "sweep", "sweep.by_package_profiled", "sweep.by_stage_sampled"],
    "concurrency": ["rows"],
    "concurrency_latency5": ["rows"],
    "replay": ["rows"],
    "scale": ["milestones", "summary"],
    "local_model": ["rows"],
    "peers": ["startup", "table", "summary"],
    "profile_peers": ["headline", "by_package", "by_stage", "top_functions"],
    "workers": ["processes", "cluster", "cluster_checks"],
    "compare_sim": ["rows", "issue", "items", "threshold"],
    "calibration_coverage": ["coverage", "efficiency"],
}


def _pick(record: dict[str, Any], path: str) -> list[dict[str, Any]]:
    value: Any = record
    for part in path.split("."):
        value = value.get(part, []) if isinstance(value, dict) else []
    if isinstance(value, dict):
        return [{k: v for k, v in value.items() if not isinstance(v, (list, dict))}]
    return list(value)


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(SECTIONS)
    for name in names:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            print(f"## {name}: no results ({path} missing)\n")
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        machine = record.get("machine", {})
        print(f"## {name}\n\n`{record.get('command')}` — {machine.get('date')}, commit {machine.get('commit')}, "
              f"load {machine.get('loadavg')}\n")
        # a variant saved under another name (``--save peers_quiet``) has the sections of its benchmark
        keys = SECTIONS.get(name) or next((v for k, v in SECTIONS.items() if name.startswith(k + "_")), ["rows"])
        for key in keys:
            print(markdown_table(_pick(record, key)), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
