"""Known-fault truth as free labels (``source = "fault"``), in the format of human label files.

A conversation run with a documented fault fails the criteria the fault breaks; its healthy counterpart passes them
(see ``fault_truth``). Those verdicts cost nothing, so they can calibrate a judge (``convoeval.stats.
pass_rate_estimates``) while human labels check it.
"""

from __future__ import annotations

import pandas as pd

from convoeval.agreement.fault_truth import KNOWN_FAULTS, fault_truth
from convoeval.frames import RunFrames
from convoeval.stats.calibration.free_labels import database_labels, ratings_to_labels

__all__ = ["fault_labels", "free_labels"]


def fault_labels(frames: RunFrames, *, database_check: bool = True) -> pd.DataFrame:
    """The known-fault truth of a fault study as labels: ``rater = "known_faults"``, ``source = "fault"``.

    A verdict the database contradicts (``fault_truth``'s ``database_check``) becomes ``unsure`` (``label`` NA) with
    the reason in ``note``; it counts in no estimate.

    Args:
        frames: The study's frames (``runs``, ``rubric``, ``assertions``).
        database_check: See ``fault_truth``.

    Returns:
        A labels frame (``read_labels`` columns); empty when the frames hold no known-fault run.

    Example (runs the fault study, so not run as a doctest)::

        labels = fault_labels(run_fault_study(scenarios, "reports/faults"))
    """
    truth = fault_truth(frames, database_check=database_check)
    return ratings_to_labels(truth.assign(rater=KNOWN_FAULTS), source="fault", origin="(known faults)",
                             note=truth["reason"])


def free_labels(frames: RunFrames) -> pd.DataFrame:
    """Every free label of a set of runs: the database's verdicts (criteria with an assertion) and, in a fault
    study, the known faults' — one labels frame, ``source`` telling them apart (``calibration_table``'s ``free``)."""
    parts = []
    if len(frames.rubric):
        parts.append(database_labels(frames.rubric, frames.assertions))
        parts.append(fault_labels(frames))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
