"""Same results? ``convoeval run`` of this tree and of another checkout, on the same seeds, file by file.

Each agent's scenarios (``--agents``) run twice against one deterministic stub (``benchmarks/stub_llm.py``, no
latency, the response cache off): once with this tree's ``convoeval``, once with ``--checkout``'s. Then every
``data/*.csv`` of the two results folders is compared after masking what differs between any two runs: generated
ids (uuid4 hex), timestamps and measured durations (floats). A change meant to be invisible in results (a faster
store, a lazier import) must print ``same`` for every file; the exit code is 1 when a file differs.

Usage:
    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/same_results.py --checkout /tmp/before --agents billing,scheduling
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import REPO, FakeLLM, clean_env, temp_folder

_MASKS = (
    (re.compile(r"[0-9a-f]{32}"), "<id>"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), "<time>"),
    (re.compile(r"\d+\.\d+(e-\d+)?"), "<float>"),
)


def masked(path: Path) -> str:
    """The file's text without ids, times and measured floats."""
    text = path.read_text(encoding="utf-8")
    for pattern, token in _MASKS:
        text = pattern.sub(token, text)
    return text


def run(tree: Path, agent: str, folder: Path, base_url: str, name: str) -> Path:
    """``convoeval run --agent AGENT --seed 1,2`` with ``tree``'s package; its results folder."""
    out = folder / f"{name}-{agent}"
    env = clean_env(PYTHONPATH=str(tree), CONVOEVAL_HOME=str(folder / f"state-{name}"), CONVOEVAL_CACHE="off",
                    CONVOEVAL_STORE_URL=f"sqlite:///{folder / name}.db", OPENAI_BASE_URL=base_url,
                    OPENAI_MODEL="fake-model")
    # -P: the tree on PYTHONPATH comes first, not the working folder; its own main(), whatever its console script
    command = [sys.executable, "-P", "-c", "import sys; from convoeval.cli import main; sys.exit(main())", "run",
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
