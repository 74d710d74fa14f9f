"""Path assertions and checkpoints: the time to check all of a conversation's, on SQLite.

Every shipped billing, scheduling and confirmation scenario that carries path assertions is played against its
healthy reference agent with the rule-following patients of ``tests/path_faults_support.py`` (no LLM); then all of
its path assertions and checkpoints are checked ``--repeat`` times on the recorded turns, with the run's SQLite store
and seeded ids (the payment URLs and amounts are looked up there), as the runner does after each conversation.

The table gives, per scenario, the number of path rows and the median CPU time of one check (the whole
``check_path`` + ``check_checkpoints``, ``time.process_time``): *cold*, with the claims of every message read anew
(``agent_claims``' per-message cache emptied before each check: a run with the simulator gate off), and *warm*, with
them cached (the gate, on by default, read every agent message while the run talked). The JSON keeps every figure
with the machine (load, commit).

Usage:
    .venv/bin/python benchmarks/bench_path_assertions.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from path_faults_support import PATH_FAULTS, play, shipped  # the scenarios' patients, shared with the tests

from benchmarks.common import machine, markdown_table, save
from convoeval.fidelity import claims
from convoeval.store import open_store


async def measure(repeat: int) -> list[dict[str, object]]:
    rows = []
    with tempfile.TemporaryDirectory() as folder, open_store(f"sqlite:///{folder}/store.db") as store:
        for agent in PATH_FAULTS:
            for path in shipped(agent):
                cold = await play(store, path, repeat=repeat, before_check=claims._claims.cache_clear)
                warm = await play(store, path, repeat=repeat)
                rows.append({"scenario": path, "turns": sum(r["role"] == "agent" for r in cold.rows),
                             "path rows": cold.checked, "failed": len(cold.failed),
                             "cold median ms": round(1000 * statistics.median(cold.seconds or []), 2),
                             "warm median ms": round(1000 * statistics.median(warm.seconds or []), 2)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rows = asyncio.run(measure(args.repeat))
    print(markdown_table(rows))
    for kind in ("cold", "warm"):
        medians = [float(str(r[f"{kind} median ms"])) for r in rows]
        print(f"{kind}: median of the medians {statistics.median(medians):.2f} ms, worst {max(medians):.2f} ms")
    path = save("path_assertions", {"repeat": args.repeat, "rows": rows, "machine": machine()})
    print(f"saved {path}")


if __name__ == "__main__":
    main()
