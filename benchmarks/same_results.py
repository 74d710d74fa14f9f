"""Same results? ``convoeval run`` of this tree and of another checkout, on the same seeds, file by file.

Each agent's scenarios (``--agents``) run twice against one deterministic stub (``benchmarks/stub_llm.py``, no
latency, the response cache off): once with this tree's ``convoeval``, once with ``--checkout``'s. Then every
``data/*.csv`` of the two results folders is compared after masking what differs between any two runs: generated
ids (uuid4 hex), clock times, and the measured columns (``latency_s``, ``started_at``, ``duration_s``); scores,
probabilities and costs are compared as written. A change meant to be invisible in results (a faster
store, a lazier import) must print ``same`` for every file; the exit code is 1 when a file differs.

Usage:
    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/same_results.py --checkout /tmp/before --agents billing,scheduling
"""

from __future__ import annotations

import argparse
import csv
import difflib
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_peers import CHECKOUT_ENTRY
from benchmarks.common import REPO, FakeLLM, clean_env, temp_folder

#: Columns measured anew by every run: their values are blanked, every other value must match.
MEASURED = frozenset({"latency_s", "started_at", "duration_s"})
_ID = re.compile(r"[0-9a-f]{32}")  # generated ids (uuid4 hex), wherever they appear
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")  # clock times inside text


def masked(path: Path) -> str:
    """The file's rows with the measured columns blanked and generated ids and clock times masked."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return ""
    header, lines = rows[0], []
    for row in rows[1:]:
        cells = ["" if column in MEASURED else _TIME.sub("<time>", _ID.sub("<id>", cell))
                 for column, cell in zip(header, row, strict=False)]
        lines.append(",".join(cells))
    return "\n".join([",".join(header), *lines])


def run(tree: Path, agent: str, folder: Path, base_url: str, name: str) -> Path:
    """``convoeval run --agent AGENT --seed 1,2`` with ``tree``'s package; its results folder."""
    out = folder / f"{name}-{agent}"
    env = clean_env(PYTHONPATH=str(tree), CONVOEVAL_HOME=str(folder / f"state-{name}"), CONVOEVAL_CACHE="off",
                    CONVOEVAL_STORE_URL=f"sqlite:///{folder / name}.db", OPENAI_BASE_URL=base_url,
                    OPENAI_MODEL="fake-model")
    # -P: the tree on PYTHONPATH comes first, not the working folder; its own entry point, whatever the installed script
    command = [sys.executable, "-P", "-c", CHECKOUT_ENTRY, "run",
               "--agent", agent, "--seed", "1,2", "--scenarios-dir", str(REPO / "evals" / "scenarios"),
               "--out", str(out), "--no-progress", "--allow-errors"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=folder, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{name} ({tree}) failed for {agent}: {done.stderr[-1500:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, required=True, help="the other convoeval tree (a git worktree)")
    parser.add_argument("--agents", default="billing,scheduling,confirmation,nps,recall,support")
    args = parser.parse_args(argv)
    differing = 0
    with temp_folder("same") as folder, FakeLLM(latency=0.0, turns=5, lean=True) as llm:
        for agent in args.agents.split(","):
            before = run(args.checkout.resolve(), agent, folder, llm.base_url, "before")
            after = run(REPO, agent, folder, llm.base_url, "after")
            names = {p.name for p in (before / "data").glob("*.csv")}
            if names != {p.name for p in (after / "data").glob("*.csv")}:
                differing += 1
                print(f"{agent:13} the data files differ: {sorted(names)} against "
                      f"{sorted(p.name for p in (after / 'data').glob('*.csv'))}")
            for path in sorted((before / "data").glob("*.csv")):
                a, b = masked(path), masked(after / "data" / path.name)
                print(f"{agent:13} {path.name:18} {'same' if a == b else 'DIFFERENT'}")
                if a != b:
                    differing += 1
                    print("\n".join(list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm=""))[:20]))
    print(f"files differing: {differing}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
