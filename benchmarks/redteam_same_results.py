"""The red team's verdicts of one source tree, as JSON: run it in two git worktrees and compare (issue #36).

Every scripted attack of the tree's ``evals/attacks`` against the reference agents, healthy and with each privacy
fault, in memory; per case its status, leak kinds, served and benign-served flags and number of leaks, with the CPU
and wall time of the whole library.

Usage (the numbers of benchmarks/RESULTS.md, "issue #36"):
    git worktree add /tmp/wt-old <old>; git worktree add /tmp/wt-new <new>
    (cd /tmp/wt-old && PYTHONPATH=$PWD python benchmarks/redteam_same_results.py $PWD > /tmp/old.json)
    (cd /tmp/wt-new && PYTHONPATH=$PWD python benchmarks/redteam_same_results.py $PWD > /tmp/new.json)
    python -c "import json; o, n = (json.load(open(f))['verdicts'] for f in ('/tmp/old.json', '/tmp/new.json'));
               print(sorted(k for k in o if o[k] != n.get(k)))"
"""

from __future__ import annotations

import inspect
import json
import sys
import tempfile
import time

from convoeval.agents.clinic import FAULTS
from convoeval.redteam.study import run_redteam
from convoeval.store import open_store


def main(root: str) -> None:
    """Print the verdicts of ``root``'s attack library as JSON."""
    faults = [[]] + [[f] for f in sorted({f.name for f in FAULTS.values() if f.leaks})]
    verdicts = {}
    cpu, wall = time.process_time(), time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for chosen in faults:
            store = open_store(f"sqlite:///{tmp}/store.db")
            try:
                # Before #36 the setting was named ``out``: older trees are compared too.
                memory = {"output_dir": None} if "output_dir" in inspect.signature(run_redteam).parameters else {"out": None}
                red = run_redteam([f"{root}/evals/attacks"], faults=chosen, store=store, **memory)
            finally:
                store.close()
            for r in red.results:
                verdicts[f"{','.join(chosen) or 'healthy'}|{r.case}"] = [r.status, r.leak_kinds, r.served,
                                                                         r.benign_served, len(r.leaks)]
    print(json.dumps({"cpu_s": time.process_time() - cpu, "wall_s": time.time() - wall, "cases": len(verdicts),
                      "verdicts": verdicts}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
