"""Agreement statistics, pure: tidy frames in, tidy tables with conversation-bootstrap CIs out.

Nothing here runs a conversation or calls an LLM, so a notebook, a report or another package can use the statistics
without the judges, the pipeline or LangChain. ``convoeval.agreement`` (the studies that produce the frames: fault
study, re-judging, probes, the agreement study) re-exports these names. See ``docs/agreement.md``.

Every statistic function returns a table of grouping columns (criterion, rater_a, rater_b, dimension, ...) then
``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``, and takes its interval's settings as one
``Estimation`` (replicates, level, seed, BCa or percentile, resampling unit).

Example (needs a judged run's frames, so not run as a doctest; each statistic's own example runs)::

    from convoeval.stats import binary_agreement, rubric_ratings
    binary_agreement(rubric_ratings(frames.rubric, rater="judge_model"))
"""

import warnings
from typing import Any

from convoeval._util.lazy import lazy_exports

# The statistics import SciPy (half a second): loaded on first use of a name, not when a light submodule such as
# ``convoeval.stats.goal`` (the simulator-failure gate's) is imported, which runs this file first.
__all__, _lazy_getattr, __dir__ = lazy_exports(__name__, {
    "convoeval.stats._result": ("ALL", "RESULT_COLUMNS"),
    "convoeval.stats.binary": ("binary_agreement", "cohen_kappa", "confusion_counts"),
    "convoeval.stats.bootstrap": (
        "bca_interval", "bootstrap_ci", "bootstrap_statistic", "percentile_interval", "resample_weights"
    ),
    "convoeval.stats.consistency": ("flip_rates", "score_consistency", "self_consistency"),
    "convoeval.stats.estimation": ("Estimation",),
    "convoeval.stats.effects": ("EFFECT_COLUMNS", "PAIR_COLUMNS", "mcnemar_p", "probe_effects", "wilcoxon_p"),
    "convoeval.stats.effects_plot": ("plot_probe_effects",),
    "convoeval.stats.verdicts": ("interpret",),
    "convoeval.stats.labels": (
        "LabelError", "label_ratings", "load_labels", "read_labels", "score_against_labels"
    ),
    "convoeval.stats.multi": ("fleiss_kappa", "gwet_ac1", "krippendorff_alpha", "multi_rater_agreement"),
    "convoeval.stats.noise": (
        "InsideNoiseWarning", "compare_targets", "minimum_detectable_difference", "outcome_flip_rate", "pass_hat_k",
        "run_outcomes", "trial_flip_rate"
    ),
    "convoeval.stats.ratings": ("holistic_ratings", "rubric_ratings"),
    "convoeval.stats.sample_size": (
        "CI_HALF_WIDTH_LIMIT", "ci_too_wide", "required_sample_size", "sample_size_for_half_width"
    ),
    "convoeval.stats.scores": ("ICC_FORMS", "icc", "score_agreement"),
    "convoeval.stats.truth": (
        "DATABASE", "GOAL_THRESHOLD", "database_agreement", "goal_ratings", "goal_truth", "truth_pairs", "truth_ratings"
    ),
    "convoeval.stats.weighted": ("weighted_kappa", "weighted_kappa_ci"),
})

#: The calibration names that moved to ``convoeval.stats.calibration`` (#46): still found here for one release, with
#: a ``FutureWarning``; not in ``__all__`` (one package exports a name).
_MOVED_TO_CALIBRATION = frozenset({
    "ESTIMATORS", "Estimate", "MIN_LABELS", "calibrated_estimates", "calibrated_rate_changes", "calibration_table",
    "corrected_pass_rate", "database_labels", "goal_rate_estimates", "isotonic_mean", "judge_only_mean",
    "label_values", "labels_only_mean", "pass_rate_estimates", "ppi_mean", "ppi_proportion", "rogan_gladen_rate",
})


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_CALIBRATION:
        from convoeval.stats import calibration  # noqa: PLC0415 - the moved names' new home, loaded on use

        warnings.warn(f"convoeval.stats.{name} moved to convoeval.stats.calibration.{name}; the old path goes in the "
                      "next release", FutureWarning, stacklevel=2)
        return getattr(calibration, name)
    return _lazy_getattr(name)
