"""Compare two versions of an agent: is the candidate better than the baseline, and can we trust the difference?

Conversations are paired by scenario, seed and trial (``pairing``); the statistics are paired differences with
bootstrap CIs and exact tests (``stats``, built on ``convoeval.stats``); each scenario, criterion, assertion and
the whole comparison get a verdict — improved, regressed or no detectable change — with the minimum detectable
difference at this sample size (``verdict``). ``run_candidate`` runs a candidate now on exactly the baseline's
conversations, optionally replaying the baseline's patient. See ``docs/compare.md``.

Example (runs the candidate, so not run as a doctest)::

    from convoeval.compare import compare, run_candidate
    candidate = run_candidate("reports/v1", "clinic:billing?faults=wrong_amount", replay=True)
    result = compare("reports/v1", candidate)
    result.verdict, result.regressions()
"""

from convoeval.compare import notebook  # noqa: E402 - the notebook's steps, after what they use
from convoeval.compare.candidate import baseline_target, candidate_jobs, run_candidate
from convoeval.compare.comparison import Comparison, compare
from convoeval.compare.pairing import CompareError, Pairing, Side, find_result_folders, load_side, pair_sides
from convoeval.compare.verdict import IMPROVED, NO_CHANGE, REGRESSED

__all__ = [
    "IMPROVED",
    "NO_CHANGE",
    "REGRESSED",
    "CompareError",
    "Comparison",
    "Pairing",
    "Side",
    "baseline_target",
    "candidate_jobs",
    "compare",
    "find_result_folders",
    "load_side",
    "notebook",
    "pair_sides",
    "run_candidate",
]
