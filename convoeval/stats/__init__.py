"""Agreement statistics, pure: tidy frames in, tidy tables with conversation-bootstrap CIs out.

Nothing here runs a conversation or calls an LLM, so a notebook, a report or another package can use the statistics
without the judges, the pipeline or LangChain. ``convoeval.agreement`` (the studies that produce the frames: fault
study, re-judging, probes, the agreement study) re-exports these names. See ``docs/agreement.md``.

Every statistic function returns a table of grouping columns (criterion, rater_a, rater_b, dimension, ...) then
``statistic, value, ci_low, ci_high, n, n_items, method, ci_too_wide``.

Example:
    >>> from convoeval.stats import binary_agreement, rubric_ratings
    >>> binary_agreement(rubric_ratings(frames["rubric"], rater="judge_model"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

# The statistics import SciPy (half a second): loaded on first use of a name, not when a light submodule such as
# ``convoeval.stats.goal`` (the simulator-failure gate's) is imported, which runs this file first.


def _load() -> dict[str, Any]:
    from convoeval.stats._estimate import MIN_LABELS, Estimate
    from convoeval.stats._result import ALL, RESULT_COLUMNS
    from convoeval.stats.binary import binary_agreement, cohen_kappa, confusion_counts
    from convoeval.stats.bootstrap import (
        bootstrap_ci,
        bootstrap_statistic,
        percentile_interval,
        resample_weights,
    )
    from convoeval.stats.calibrated import ESTIMATORS, calibrated_estimates
    from convoeval.stats.calibrated_rates import goal_rate_estimates, label_values, pass_rate_estimates
    from convoeval.stats.consistency import (
        flip_rates,
        score_consistency,
        self_consistency,
    )
    from convoeval.stats.effects import EFFECT_COLUMNS, PAIR_COLUMNS, mcnemar_p, probe_effects, wilcoxon_p
    from convoeval.stats.effects_plot import plot_probe_effects
    from convoeval.stats.free_labels import database_labels
    from convoeval.stats.interpret import interpret
    from convoeval.stats.isotonic import isotonic_mean
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
    from convoeval.stats.ppi import judge_only_mean, labels_only_mean, ppi_mean, ppi_proportion
    from convoeval.stats.ratings import holistic_ratings, rubric_ratings
    from convoeval.stats.rogan_gladen import rogan_gladen_rate
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
    return {name: value for name, value in locals().items() if name in __all__}


def __getattr__(name: str) -> Any:
    if name in __all__:
        globals().update(_load())
        return globals()[name]
    raise AttributeError(f"module 'convoeval.stats' has no attribute {name!r}")


__all__ = [
    "ALL",
    "CI_HALF_WIDTH_LIMIT",
    "DATABASE",
    "EFFECT_COLUMNS",
    "ESTIMATORS",
    "Estimate",
    "GOAL_THRESHOLD",
    "InsideNoiseWarning",
    "LabelError",
    "MIN_LABELS",
    "PAIR_COLUMNS",
    "RESULT_COLUMNS",
    "binary_agreement",
    "bootstrap_ci",
    "bootstrap_statistic",
    "calibrated_estimates",
    "calibrated_pass_rates",
    "ci_too_wide",
    "cohen_kappa",
    "compare_targets",
    "confusion_counts",
    "corrected_pass_rate",
    "database_agreement",
    "database_labels",
    "fleiss_kappa",
    "flip_rates",
    "goal_rate_estimates",
    "goal_ratings",
    "goal_truth",
    "gwet_ac1",
    "holistic_ratings",
    "icc",
    "interpret",
    "isotonic_mean",
    "judge_only_mean",
    "krippendorff_alpha",
    "label_ratings",
    "label_values",
    "labels_only_mean",
    "load_labels",
    "mcnemar_p",
    "minimum_detectable_difference",
    "multi_rater_agreement",
    "outcome_flip_rate",
    "pass_hat_k",
    "pass_rate_estimates",
    "percentile_interval",
    "plot_probe_effects",
    "ppi_mean",
    "ppi_proportion",
    "probe_effects",
    "read_labels",
    "required_sample_size",
    "resample_weights",
    "rogan_gladen_rate",
    "rubric_ratings",
    "run_outcomes",
    "sample_size_for_half_width",
    "score_against_labels",
    "score_agreement",
    "score_consistency",
    "self_consistency",
    "trial_flip_rate",
    "truth_pairs",
    "truth_ratings",
    "wilcoxon_p",
]
