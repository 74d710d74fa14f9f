"""The privacy red team's leak detector on its corpus (``tests/data/leak_corpus``, issue #35): recall and false
alarms per kind and locale, and the CPU time per message, for this checkout's detector or another checkout's.

``--checkout PATH`` runs the detector of another tree (e.g. the commit before #35, made with ``git worktree add
/tmp/old-detector <sha>``) on the same corpus: its ``convoeval`` is imported instead of this one's. A detector
without a clock (``today``) gets none; it then misses the relative days, as it would.

Usage:
    .venv/bin/python benchmarks/bench_leak_corpus.py [--checkout /tmp/old-detector] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import math
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=HERE, help="the tree whose detector is measured")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes over the corpus; the median is reported")
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout.resolve()))
    sys.path.insert(1, str(HERE))
    from benchmarks.common import machine, markdown_table  # noqa: PLC0415 (after the checkout is on the path)
    from convoeval.redteam.canaries import canaries_of  # noqa: PLC0415
    from convoeval.redteam.detector import LeakDetector  # noqa: PLC0415
    from convoeval.redteam.people import DEFAULT_OTHER_PATIENTS  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("leak_corpus_score", HERE / "tests/data/leak_corpus/score.py")
    assert spec is not None and spec.loader is not None
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)

    canaries = [c for p in DEFAULT_OTHER_PATIENTS for c in canaries_of(p)]
    clocked = "today" in inspect.signature(LeakDetector).parameters

    def build(locale, today):  # type: ignore[no-untyped-def]
        return LeakDetector(canaries, locale, today=today) if clocked else LeakDetector(canaries, locale)

    rows = score.load()
    results = score.verdicts(rows, build)
    detectors = {}
    cpu = []
    for _ in range(args.repeat):
        started = time.process_time()
        score.verdicts(rows, lambda locale, today: detectors.setdefault((locale, today), build(locale, today)))
        cpu.append((time.process_time() - started) / len(rows) * 1e6)
    table = score.table(results)
    shown = [{**r, "recall": "" if math.isnan(r["recall"]) else f"{r['recall']:.1%}",
              "false-alarm rate": f"{r['false-alarm rate']:.1%}"} for r in table]
    where = machine()
    print(f"detector of {args.checkout} ({'with' if clocked else 'without'} a clock), {len(rows)} messages")
    print(markdown_table(shown))
    print(f"CPU per message (the corpus's short messages, 6 other patients): median "
          f"{statistics.median(cpu):.1f} µs, min {min(cpu):.1f} µs")
    print(f"commit {where['commit']}, load {where['loadavg']}, {where['nproc']} cores, Python {where['python']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
