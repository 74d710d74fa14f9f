"""Start-up cost: the modules ``import convoeval`` and ``convoeval --help`` load, and their wall time.

The module count is deterministic for one environment (``tests/test_startup.py`` holds it); the wall time is the
median of fresh interpreters on a shared machine.

    .venv/bin/python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: What a user types, as Python run in a fresh interpreter; each prints the modules loaded when it exits.
PROBES = {
    "import convoeval": "import convoeval",
    "convoeval --help": "import sys; sys.argv = ['convoeval', '--help']; from convoeval.cli import main; main()",
}
_DUMP = ("import atexit, sys, json, os\n"
         "atexit.register(lambda: open(os.environ['CONVOEVAL_MODULES_OUT'], 'w').write(json.dumps(sorted(sys.modules))))\n")


def loaded_modules(probe: str, out: Path) -> list[str]:
    """The modules in ``sys.modules`` when ``probe`` (Python code) ends in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "CONVOEVAL_MODULES_OUT": str(out)}
    subprocess.run([sys.executable, "-c", _DUMP + probe], env=env, capture_output=True, check=False, cwd=REPO)
    return json.loads(out.read_text())


def wall_time(probe: str) -> float:
    """Seconds for a fresh interpreter to run ``probe``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, check=False, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    out = Path("/tmp/convoeval-startup-modules.json")
    baseline = wall_time("pass")
    for name, probe in PROBES.items():
        modules = loaded_modules(probe, out)
        times = [wall_time(probe) for _ in range(args.runs)]
        print(json.dumps({"probe": name, "modules": len(modules),
                          "convoeval_modules": sum(m.split(".")[0] == "convoeval" for m in modules),
                          "wall_median_s": round(statistics.median(times), 3), "wall_max_s": round(max(times), 3),
                          "bare_python_s": round(baseline, 3), "runs": args.runs}))


if __name__ == "__main__":
    main()
