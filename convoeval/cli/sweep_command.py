"""``convoeval sweep``: the run notebook for every agent × seed, then an index report.

Its settings are ``convoeval run``'s, built from the same ``EvalConfig`` fields (``cli/config_flags.py``), so each has
one name on both commands and every run setting reaches each combination's notebook: ``--agent`` and ``--seed`` take
several values separated by commas (the sweep's two axes), ``--out`` is the sweep's folder, and ``--notebook``,
``--rerun`` and ``--no-progress`` are the sweep's own.
"""

from __future__ import annotations

import argparse
from typing import Any

from convoeval.cli._base import UsageError, _list, command
from convoeval.cli.config_flags import add_config_flags, given_settings

#: The ``EvalConfig`` fields the sweep sets itself: its axes (agent, seed), its folder, and the trials it records.
SWEEP_FIELDS = ("agent", "seed", "output_dir", "trials")


def _add_sweep_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="run the run notebook for every agent × seed, then write an index report",
                       description="Run notebooks/run.ipynb for every agent × seed (each a results folder), continue "
                                   "past failures, skip finished combinations, and write an index page. The same "
                                   "command resumes. Every setting of convoeval run applies to each combination.")
    p.add_argument("--agent", required=True, metavar="A[,A...]",
                   help="the agents, separated by commas, e.g. billing,scheduling")
    p.add_argument("--seed", required=True, metavar="N[,N...]",
                   help="the simulator seeds, separated by commas, e.g. 1,2,3")
    p.add_argument("--trials", type=int, default=1, metavar="N", help="repeat each scenario N times per seed")
    p.add_argument("--out", metavar="DIR",
                   help="sweep folder (default: reports/sweep-<agents>-s<seeds>-t<trials>; the same command resumes)")
    p.add_argument("--notebook", metavar="FILE", help="the notebook to run (default: notebooks/run.ipynb)")
    p.add_argument("--rerun", action="store_true", help="run combinations again even when they are done")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_config_flags(p, exclude=SWEEP_FIELDS)


@command("sweep")
def _sweep(args: argparse.Namespace) -> int:
    from convoeval.sweep import SweepError, run_sweep

    parameters = {k: v for k, v in given_settings(args).items() if k not in SWEEP_FIELDS}
    try:
        result = run_sweep(_list(args.agent, "--agent"), _list(args.seed, "--seed", int), trials=args.trials,
                           out=args.out, parameters=parameters, notebook=args.notebook,
                           progress=not args.no_progress, rerun=args.rerun)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    for line in result.lines():
        print(line)
    return 1 if result.failed else 0
