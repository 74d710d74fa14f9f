"""Small typed frames for the agreement tests, built through the real column contracts (convoeval.frames)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from convoeval.frames import (
    ASSERTION_SCHEMA,
    HOLISTIC_DIMENSIONS,
    HOLISTIC_SCHEMA,
    RUBRIC_SCHEMA,
    RUN_SCHEMA,
    SCORE_SCHEMA,
    typed_frame,
)

# irrCAC's raw_4raters (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., p. 120): 12 items × 4 raters,
# categories 1..5, None = missing. Published: AC1 0.77544, Fleiss' kappa 0.76117 (Krippendorff's alpha 0.743).
RAW_4RATERS = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
], dtype=object).T


def rubric(verdicts: dict[str, Sequence[bool | None]], *, criteria: Sequence[str] = ("c1",),
           assertions: dict[str, str] | None = None, samples: int = 1, scenario: str = "s",
           run_prefix: str = "r") -> pd.DataFrame:
    """A rubric frame: ``verdicts[judge]`` lists verdicts run by run, criterion by criterion, sample by sample."""
    rows = []
    for judge, values in verdicts.items():
        it = iter(values)
        n_runs = len(values) // (len(criteria) * samples)
        for r in range(n_runs):
            for ci, criterion in enumerate(criteria):
                for s in range(samples):
                    rows.append({
                        "run_id": f"{run_prefix}{r}", "scenario": scenario, "agent": "billing", "seed": r, "trial": 0,
                        "criterion_index": ci, "criterion": criterion,
                        "assertion": (assertions or {}).get(criterion), "passed": next(it),
                        "judge_model": judge, "sample": s,
                    })
    return typed_frame(rows, RUBRIC_SCHEMA)


def holistic(scores: dict[str, Sequence[float]], *, dimension: str = "goal_completion", samples: int = 1,
             fill: float = 7.0) -> pd.DataFrame:
    """A holistic frame: ``scores[judge]`` lists one dimension's scores, run by run, sample by sample."""
    rows = []
    for judge, values in scores.items():
        for i, value in enumerate(values):
            r, s = divmod(i, samples)
            dims = {d: fill for d in HOLISTIC_DIMENSIONS}
            dims[dimension] = value
            rows.append({"run_id": f"r{r}", "scenario": "s", "agent": "billing", "seed": r, "trial": 0, **dims,
                         "overall": float(np.mean(list(dims.values()))), "judge_model": judge, "sample": s})
    return typed_frame(rows, HOLISTIC_SCHEMA)


def assertion_rows(results: Iterable[tuple[str, str, bool | None]]) -> pd.DataFrame:
    """An assertion frame from ``(run_id, assertion, passed)``."""
    return typed_frame([{"run_id": r, "scenario": "s", "assertion": a, "passed": p} for r, a, p in results],
                       ASSERTION_SCHEMA)


def scores(statuses: dict[str, Sequence[str]], *, score: float | None = None) -> pd.DataFrame:
    """A score frame: ``statuses[scenario]`` lists each trial's status."""
    rows = []
    for scenario, values in statuses.items():
        for t, status in enumerate(values):
            rows.append({"run_id": f"{scenario}-{t}", "scenario": scenario, "agent": "billing", "seed": 0,
                         "trial": t, "status": status,
                         "score": score if score is not None else (8.0 if status == "pass" else 3.0)})
    return typed_frame(rows, SCORE_SCHEMA)


def runs(goal: dict[str, bool | None], *, kind: str = "conversational") -> pd.DataFrame:
    """A runs frame with the simulator's ``goal_completed`` per run."""
    return typed_frame([{"run_id": r, "scenario": "s", "type": kind, "seed": i, "trial": 0, "status": "completed",
                         "goal_completed": g} for i, (r, g) in enumerate(goal.items())], RUN_SCHEMA)
