"""How far the judges' numbers can be trusted: the studies (fault study, re-judging, probes, the agreement study).

The statistics they report live in ``convoeval.stats`` (pure, no LLM): import them from there. The bias probes'
names (``run_probes``, ``translate_transcripts``, …) are exported by ``convoeval.agreement.probes`` alone.

Every statistic function there takes tidy frames (the runs' frames, or the long *ratings* frames built from them) and
returns a tidy table: grouping columns (criterion, rater_a, rater_b, dimension, ...) then
``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``. See ``docs/agreement.md``.

Example (needs a sweep's judged frames, so not run as a doctest)::

    from convoeval import stats
    from convoeval import load_results
    frames = load_results("reports/sweep").frames   # a sweep's finished combinations
    stats.database_agreement(frames)
    ratings = stats.rubric_ratings(frames.rubric, rater=("judge_model", "prompt_version"))
    stats.binary_agreement(ratings)
"""

from convoeval.agreement.fault_labels import fault_labels, free_labels
from convoeval.agreement.faults import (
    KNOWN_FAULTS,
    fault_confusion,
    fault_detection,
    fault_study_plan,
    fault_targets,
    fault_truth,
    load_fault_study,
    run_fault_study,
)
from convoeval.agreement.rejudge import rejudge
from convoeval.agreement.study import Study, compute_tables, load_study, run_study
from convoeval.agreement.study_params import check_study_parameters

__all__ = [
    "Study",
    "check_study_parameters",
    "compute_tables",
    "load_study",
    "run_study",
    "KNOWN_FAULTS",
    "fault_confusion",
    "fault_detection",
    "fault_labels",
    "fault_study_plan",
    "fault_targets",
    "fault_truth",
    "free_labels",
    "load_fault_study",
    "rejudge",
    "run_fault_study",
]
