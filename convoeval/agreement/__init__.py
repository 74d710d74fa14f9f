"""How far the judges' numbers can be trusted: the studies (fault study, re-judging, probes, the agreement study).

The statistics they report live in ``convoeval.stats`` (pure, no LLM) and are re-exported here.

Every statistic function takes tidy frames (the runs' frames, or the long *ratings* frames built from them) and
returns a tidy table: grouping columns (criterion, rater_a, rater_b, dimension, ...) then
``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``. See ``docs/agreement.md``.

Example:
    >>> from convoeval.batch import load_results                                   # doctest: +SKIP
    >>> frames = load_results("reports/sweep")                                      # doctest: +SKIP
    >>> database_agreement(frames)                                                  # doctest: +SKIP
    >>> binary_agreement(rubric_ratings(frames["rubric"], rater=("judge_model", "prompt_version")))  # doctest: +SKIP
"""

from convoeval.agreement.calibration import calibration_table, free_labels
from convoeval.agreement.fault_labels import fault_labels
from convoeval.agreement.faults import (
    KNOWN_FAULTS,
    fault_confusion,
    fault_detection,
    fault_study_plan,
    fault_targets,
    fault_truth,
    run_fault_study,
)
from convoeval.agreement.rejudge import rejudge
from convoeval.stats import *  # noqa: F403 - the statistics the studies report, re-exported
from convoeval.stats import __all__ as _STATISTICS

# The probes and the study pull in the judges (and LangChain): imported on first use, so the statistics stay light.
_LAZY = {
    **dict.fromkeys(("PROBES", "ProbeResult", "arun_probes", "inject", "pad_verbosity", "run_probes",
                     "translate_transcripts"), "convoeval.agreement.probes"),
    **dict.fromkeys(("Study", "check_study_parameters", "compute_tables", "load_study", "run_study"),
                    "convoeval.agreement.study"),
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'convoeval.agreement' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    *_STATISTICS,
    *_LAZY,
    "KNOWN_FAULTS",
    "calibration_table",
    "fault_confusion",
    "fault_detection",
    "fault_labels",
    "fault_study_plan",
    "fault_targets",
    "fault_truth",
    "free_labels",
    "rejudge",
    "run_fault_study",
]
