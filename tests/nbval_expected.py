"""What the nbval replays must compute: the expected tables in tests/data/nbval-expected/, and how to update them.

``scripts/nbval.sh`` replays committed caches of real local-model calls, so the numbers the notebooks compute are
deterministic. ``--nbval-lax`` alone only proves that every cell runs; ``tests/test_notebooks_nbval.py`` also compares
what the replayed notebooks saved with the CSV files here, so a change to a scoring rule, a statistic or a judge's
parsing that moves a number fails CI with the changed lines:

* ``run-scores.csv`` — the run notebook's score table (``convoeval.report.score_table_data`` of ``build/nbval/out``);
* ``agreement-conversations.csv`` — the agreement study's conversations (target and score components);
* ``agreement-<table>.csv`` — every table of the agreement study (``build/nbval-agreement/out/tables``), without the
  ``method`` text.

Floats are written with 6 significant digits, so a rounding-level difference between machines does not count.

When a change is intended, update the files and commit them with it::

    bash scripts/nbval.sh && bash scripts/nbval.sh agreement && .venv/bin/python tests/nbval_expected.py
    git diff tests/data/nbval-expected/      # read what moved, then commit
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "tests" / "data" / "nbval-expected"
RUN_OUT = ROOT / "build" / "nbval" / "out"
AGREEMENT_OUT = ROOT / "build" / "nbval-agreement" / "out"
UPDATE = ("if the change is intended, update the expectation and commit it: bash scripts/nbval.sh && bash "
          "scripts/nbval.sh agreement && .venv/bin/python tests/nbval_expected.py (then read git diff "
          "tests/data/nbval-expected/)")
_CONVERSATION_COLUMNS = ["target", "scenario", "seed", "trial", "status", "score", "rubric_passed", "rubric_total",
                         "rubric_score", "holistic_overall", "assertion_failures", "goal_completed", "error"]


def run_tables(out: Path = RUN_OUT) -> dict[str, pd.DataFrame]:
    """The replayed run notebook's score table, as the notebook and report.html show it."""
    from convoeval import load_results
    from convoeval.report import score_table_data

    return {"run-scores": score_table_data(load_results(out))}


def agreement_tables(out: Path = AGREEMENT_OUT) -> dict[str, pd.DataFrame]:
    """The replayed agreement study: its conversations' scores and every agreement table it saved."""
    from convoeval.agreement.study import load_study

    study = load_study(out)
    runs = study.frames.runs[["run_id", "target"]]
    conversations = study.frames.scores.merge(runs, on="run_id")[_CONVERSATION_COLUMNS]
    tables = {"agreement-conversations": conversations.sort_values(["target", "scenario", "seed", "trial"])}
    for name, table in study.tables.items():
        tables[f"agreement-{name}"] = table.drop(columns=[c for c in ("method",) if c in table.columns])
    return tables


def canonical(frame: pd.DataFrame) -> str:
    """The CSV text a table is compared by (6 significant digits, no index, ``\\n`` line ends)."""
    return frame.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def differences(tables: dict[str, pd.DataFrame], expected: Path = EXPECTED, *, prefix: str = "") -> list[str]:
    """One message per table that is missing, unexpected or changed (with a unified diff of its CSV lines).

    Args:
        tables: ``run_tables()`` or ``agreement_tables()``.
        expected: The folder of expected CSV files.
        prefix: Only expected files whose name starts with it belong to ``tables`` (``"run-"``, ``"agreement-"``).
    """
    problems = []
    wanted = {p.stem for p in expected.glob(f"{prefix}*.csv")}
    for name in sorted(wanted - set(tables)):
        problems.append(f"{name}: expected (tests/data/nbval-expected/{name}.csv) but not computed any more")
    for name, frame in sorted(tables.items()):
        path = expected / f"{name}.csv"
        if not path.exists():
            problems.append(f"{name}: computed but has no expected file tests/data/nbval-expected/{name}.csv")
            continue
        old, new = path.read_text(encoding="utf-8"), canonical(frame)
        if old != new:
            diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"expected/{name}.csv",
                                             f"replayed/{name}.csv", lineterm="", n=0))
            shown = "\n".join(diff[:40]) + (f"\n… {len(diff) - 40} more diff lines" if len(diff) > 40 else "")
            problems.append(f"{name}: the replayed notebook computed other values\n{shown}")
    return problems


def report(problems: list[str], what: str) -> str:
    """The assertion message: what changed, then how to update the expectation."""
    return (f"{what} changed against tests/data/nbval-expected/ ({len(problems)} table(s)):\n\n"
            + "\n\n".join(problems) + f"\n\n{UPDATE}")


def write(tables: dict[str, pd.DataFrame], expected: Path = EXPECTED, *, prefix: str = "") -> list[Path]:
    """Write the expected files (and remove those of tables no longer computed)."""
    expected.mkdir(parents=True, exist_ok=True)
    for stale in expected.glob(f"{prefix}*.csv"):
        if stale.stem not in tables:
            stale.unlink()
    paths = []
    for name, frame in tables.items():
        path = expected / f"{name}.csv"
        path.write_text(canonical(frame), encoding="utf-8")
        paths.append(path)
    return paths


def main() -> int:
    """Update tests/data/nbval-expected/ from the last replays (run scripts/nbval.sh for both notebooks first)."""
    for out, name in ((RUN_OUT, "run"), (AGREEMENT_OUT, "agreement")):
        if not out.is_dir():
            print(f"error: {out.relative_to(ROOT)} is missing; run first: bash scripts/nbval.sh"
                  f"{'' if name == 'run' else ' agreement'}", file=sys.stderr)
            return 1
    written = write(run_tables(), prefix="run-") + write(agreement_tables(), prefix="agreement-")
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print("next: git diff tests/data/nbval-expected/, then commit the files with the change that moved them")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
