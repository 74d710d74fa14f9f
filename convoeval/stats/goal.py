"""The database's goal verdict per conversation: light enough for the simulator-failure gate to use while it runs.

No SciPy here (``convoeval.stats.truth``, which builds agreement tables on top of it, needs it): the gate imports
this module in every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from convoeval.scenarios.path_models import PATH_PREFIXES

__all__ = ["PROCESS_ASSERTIONS", "goal_truth"]

#: Assertions about the agent's process rather than the outcome; not part of the database's goal verdict by default.
PROCESS_ASSERTIONS = ("tools_called", "tools_not_called")


def goal_truth(assertions: pd.DataFrame, *, exclude: Sequence[str] = PROCESS_ASSERTIONS) -> pd.DataFrame:
    """The database's goal verdict per run: every outcome assertion passed.

    Args:
        assertions: The assertion frame.
        exclude: Assertion keys that are not about the outcome (default: the tool-use checks).

    Returns:
        ``run_id, scenario, goal_met, n_assertions``; ``goal_met`` is False when any outcome assertion failed, NA
        when none failed but one could not be checked, True otherwise. Runs without outcome assertions are left out.
    """
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    # Path and checkpoint rows (path:…, checkpoint:…) are about the process too, never the goal.
    keys = assertions["assertion"].astype(str)
    rows = assertions[~keys.isin(list(exclude)) & ~keys.str.startswith(PATH_PREFIXES)]
    passed = rows["passed"].astype("boolean")
    frame = pd.DataFrame({"run_id": rows["run_id"], "scenario": rows["scenario"],
                          "_fail": (passed == False).fillna(False),  # noqa: E712 (nullable boolean)
                          "_unknown": passed.isna()})
    per = frame.groupby("run_id", sort=False).agg(scenario=("scenario", "first"), _fail=("_fail", "any"),
                                                  _unknown=("_unknown", "any"), n_assertions=("_fail", "size"))
    goal = [False if f else (None if u else True) for f, u in zip(per["_fail"], per["_unknown"], strict=True)]
    per["goal_met"] = pd.array(goal, dtype="boolean")
    return per.reset_index()[["run_id", "scenario", "goal_met", "n_assertions"]]
