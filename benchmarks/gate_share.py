"""How conversations end under the simulator-failure gate, with and without re-simulation (issue #29).

For each results folder (``convoeval run --out``): the conversations (jobs), how many ended scored and how many
``simulator_failure``, for the kept attempt (what ``--resimulate K`` reports) and for the first attempt (what a run
without ``--resimulate`` reports: the first attempts are the same conversations, same seeds, same cache); and the
**unearned fails**: scored ``fail``s ended by the patient's ``[GOAL_COMPLETE]`` whose failed outcome assertions the
agent never claimed (``convoeval.fidelity.goal.unearned`` over ``agent_claims`` of its messages) — the fails issue
#29 is about, which must be 0.

Usage: python benchmarks/gate_share.py build/measure/after-r3-s1 build/measure/after-r3-s2 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

from convoeval import load_results
from convoeval.fidelity import agent_claims
from convoeval.fidelity.goal import unearned
from convoeval.stats.goal import PROCESS_ASSERTIONS


def summarize(folder: Path) -> dict:
    """One row: the folder's conversations by how their kept and first attempts ended, and the unearned fails."""
    frames = load_results(folder).frames
    runs, scores = frames.runs, frames.scores.set_index("run_id")
    kept = runs[~runs["superseded"].astype(bool)]
    first = runs[runs["attempt"] == 1]
    status = {rid: (scores.loc[rid, "status"] if rid in scores.index else st)
              for rid, st in zip(runs["run_id"], runs["status"], strict=True)}
    unearned_fails = 0
    for rid, stop in zip(kept["run_id"], kept["stop_reason"], strict=True):
        if status[rid] != "fail" or stop != "GOAL_COMPLETE":
            continue
        a = frames.assertions
        failed = a[(a["run_id"] == rid) & (a["passed"] == False) & ~a["assertion"].isin(PROCESS_ASSERTIONS)]  # noqa: E712
        t = frames.transcripts
        claimed = {c.kind for text in t.loc[(t["run_id"] == rid) & (t["role"] == "agent"), "text"]
                   for c in agent_claims(str(text))}
        unearned_fails += unearned(failed.to_dict("records"), claimed)

    def count(rows) -> tuple[int, int]:
        ended = [status[r] for r in rows["run_id"]]
        return sum(s in ("pass", "warn", "fail") for s in ended), sum(s == "simulator_failure" for s in ended)

    scored_k, simfail_k = count(kept)
    scored_1, simfail_1 = count(first)
    fails = sum(status[r] == "fail" for r in kept["run_id"])
    return {"folder": folder.name, "conversations": len(kept), "attempts": len(runs),
            "scored (no resimulate)": scored_1, "simulator_failure (no resimulate)": simfail_1,
            "scored (resimulate)": scored_k, "simulator_failure (resimulate)": simfail_k, "fail": fails,
            "unearned fail": unearned_fails}


def main(argv: list[str]) -> int:
    """Print one Markdown row per folder and the total."""
    rows = [summarize(Path(p)) for p in argv]
    if not rows:
        print(__doc__)
        return 2
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    print("| total | " + " | ".join(str(sum(r[k] for r in rows)) for k in keys[1:]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
