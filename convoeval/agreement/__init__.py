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
from convoeval.stats._result import ALL, RESULT_COLUMNS
from convoeval.stats.binary import binary_agreement, cohen_kappa, confusion_counts
from convoeval.stats.bootstrap import (
    bootstrap_ci,
    bootstrap_statistic,
    percentile_interval,
    resample_weights,
)
from convoeval.stats.consistency import (
    flip_rates,
    score_consistency,
    self_consistency,
)
from convoeval.stats.interpret import interpret
from convoeval.stats.labels import (
    LabelError,
    calibrated_pass_rates,
    corrected_pass_rate,
    label_ratings,
    load_labels,
    read_labels,
    score_against_labels,
)
from convoeval.stats.multi import (
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    multi_rater_agreement,
)
from convoeval.stats.noise import (
    InsideNoiseWarning,
    compare_targets,
    minimum_detectable_difference,
    outcome_flip_rate,
    pass_hat_k,
    run_outcomes,
    trial_flip_rate,
)
from convoeval.stats.ratings import holistic_ratings, rubric_ratings
from convoeval.stats.sample_size import (
    CI_HALF_WIDTH_LIMIT,
    ci_too_wide,
    required_sample_size,
    sample_size_for_half_width,
)
from convoeval.stats.scores import icc, score_agreement
from convoeval.stats.truth import (
    DATABASE,
    GOAL_THRESHOLD,
    database_agreement,
    goal_ratings,
    goal_truth,
    truth_pairs,
    truth_ratings,
)

# The probes and the study pull in the judges (and LangChain): imported on first use, so the statistics stay light.
_LAZY = {
    **dict.fromkeys(("PROBES", "ProbeResult", "arun_probes", "inject", "pad_verbosity", "plot_probe_effects",
                     "probe_effects", "run_probes", "translate_transcripts"), "convoeval.agreement.probes"),
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
    "ALL",
    "CI_HALF_WIDTH_LIMIT",
    "DATABASE",
    "GOAL_THRESHOLD",
    "KNOWN_FAULTS",
    "PROBES",
    "RESULT_COLUMNS",
    "InsideNoiseWarning",
    "LabelError",
    "ProbeResult",
    "Study",
    "arun_probes",
    "binary_agreement",
    "bootstrap_ci",
    "bootstrap_statistic",
    "calibrated_pass_rates",
    "check_study_parameters",
    "ci_too_wide",
    "cohen_kappa",
    "compare_targets",
    "compute_tables",
    "confusion_counts",
    "corrected_pass_rate",
    "database_agreement",
    "fault_confusion",
    "fault_detection",
    "fault_study_plan",
    "fault_targets",
    "fault_truth",
    "fleiss_kappa",
    "flip_rates",
    "goal_ratings",
    "goal_truth",
    "gwet_ac1",
    "holistic_ratings",
    "icc",
    "inject",
    "interpret",
    "krippendorff_alpha",
    "label_ratings",
    "load_labels",
    "load_study",
    "minimum_detectable_difference",
    "multi_rater_agreement",
    "outcome_flip_rate",
    "pad_verbosity",
    "pass_hat_k",
    "percentile_interval",
    "plot_probe_effects",
    "probe_effects",
    "read_labels",
    "rejudge",
    "required_sample_size",
    "resample_weights",
    "rubric_ratings",
    "run_fault_study",
    "run_outcomes",
    "run_probes",
    "run_study",
    "sample_size_for_half_width",
    "score_against_labels",
    "score_agreement",
    "score_consistency",
    "self_consistency",
    "translate_transcripts",
    "trial_flip_rate",
    "truth_pairs",
    "truth_ratings",
]
