"""Calibration: the true rate behind a judge's verdicts, from a labelled slice — one function per question.

| question | the one function |
|---|---|
| the true rate implied by an observed rate and a judge's sensitivity and specificity (the formula) | ``corrected_pass_rate`` |
| one label per conversation × criterion (the raters' strict majority; by source) | ``label_values`` |
| a run's pass rate per criterion raw, from the labels alone and calibrated, each with its interval | ``pass_rate_estimates`` |
| the goal rate (the holistic ``goal_completion`` score against the database's truth), the same way | ``goal_rate_estimates`` |
| one estimator on arrays | ``rogan_gladen_rate``, ``ppi_mean`` (``ppi_proportion``), ``isotonic_mean``, ``labels_only_mean``, ``judge_only_mean`` |
| several estimators side by side on the same arrays (optionally stratified) | ``calibrated_estimates`` (names: ``ESTIMATORS``) |
| how a calibrated pass rate changed between a baseline and a candidate | ``calibrated_rate_changes`` |
| a run's free labels: the database's verdicts | ``database_labels`` |
| a run's or a study's calibrated table (free and human labels, the goal row) | ``calibration_table`` |

How good a judge is against the labels (sensitivity, specificity, κ with intervals) is ``convoeval.stats.
score_against_labels``; a fault study's free labels are ``convoeval.agreement.fault_labels`` (they need the reference
agents' faults, above this layer); the report's and the notebook's views are ``convoeval.report.calibration``.
Every interval's settings are one ``convoeval.stats.Estimation``. See ``docs/agreement.md``, "Calibrated estimates".

Example (needs a judged run and labels, so not run as a doctest)::

    from convoeval.stats.calibration import pass_rate_estimates
    pass_rate_estimates(frames.rubric, load_labels(), sources="human")
"""

from convoeval._util.lazy import lazy_exports

# SciPy and scikit-learn load on first use, as for ``convoeval.stats``.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.stats.calibration._items": ("MIN_LABELS", "Estimate"),
    "convoeval.stats.calibration.change": ("CHANGE_COLUMNS", "calibrated_rate_changes"),
    "convoeval.stats.calibration.estimators": ("ESTIMATORS", "calibrated_estimates"),
    "convoeval.stats.calibration.free_labels": ("database_labels",),
    "convoeval.stats.calibration.isotonic": ("isotonic_mean",),
    "convoeval.stats.calibration.ppi": ("judge_only_mean", "labels_only_mean", "ppi_mean", "ppi_proportion"),
    "convoeval.stats.calibration.rates": ("goal_rate_estimates", "label_values", "pass_rate_estimates"),
    "convoeval.stats.calibration.rogan_gladen": ("corrected_pass_rate", "rogan_gladen_rate"),
    "convoeval.stats.calibration.table": ("calibration_table",),
})
