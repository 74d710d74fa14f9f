"""Sweeps: the run notebook executed for every agent × seed, and an index over them (``run``; ``docs/reports.md``).

Example (runs notebooks, so not a doctest)::

    from convoeval.sweep import run_sweep
    run_sweep(["billing"], [1, 2], trials=2)
"""

from convoeval.sweep.run import (
    DONE_MARKER,
    Combination,
    SweepError,
    SweepResult,
    default_sweep_dir,
    load_sweep,
    papermill_executor,
    run_sweep,
)

__all__ = ["DONE_MARKER", "Combination", "SweepError", "SweepResult", "default_sweep_dir", "load_sweep",
           "papermill_executor", "run_sweep"]
