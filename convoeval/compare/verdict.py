"""Verdicts: improved, regressed or no detectable change, and what this sample size can and cannot detect.

A change is called only when both hold: its confidence interval excludes 0, and a paired test rejects "no change"
at ``alpha`` (for a family of tests — the scenarios, the criteria, the assertions — after Holm's correction, so that
in an A/A comparison a family calls a change no more often than ``alpha``). Everything else is "no detectable
change", which is not "no change": the minimum detectable difference says how large a change this comparison could
have missed, and ``more_runs`` how many more conversations would detect a given one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

__all__ = ["IMPROVED", "NO_CHANGE", "REGRESSED", "decide", "flip_verdict", "holm", "min_pairs_for_significance",
           "paired_minimum_detectable_difference", "pairs_needed"]

IMPROVED = "improved"
REGRESSED = "regressed"
NO_CHANGE = "no detectable change"


def decide(difference: float, ci_low: float, ci_high: float, p_value: float, alpha: float) -> str:
    """The verdict of one candidate − baseline difference (higher is better).

    Example:
        >>> decide(-1.2, -2.0, -0.4, 0.01, 0.05)
        'regressed'
        >>> decide(-1.2, -2.0, 0.1, 0.01, 0.05)
        'no detectable change'
    """
    if not (np.isfinite(p_value) and p_value < alpha and np.isfinite(ci_low) and np.isfinite(ci_high)):
        return NO_CHANGE
    if ci_high < 0 and difference < 0:
        return REGRESSED
    if ci_low > 0 and difference > 0:
        return IMPROVED
    return NO_CHANGE


def flip_verdict(pass_to_fail: int, fail_to_pass: int, p_value: float, alpha: float) -> str:
    """The verdict of a pass/fail item from its discordant pairs and its (adjusted) McNemar p-value.

    Example:
        >>> flip_verdict(8, 0, 0.008, 0.05)
        'regressed'
    """
    if not (np.isfinite(p_value) and p_value < alpha) or pass_to_fail == fail_to_pass:
        return NO_CHANGE
    return REGRESSED if pass_to_fail > fail_to_pass else IMPROVED


def holm(p_values: Sequence[float] | np.ndarray, testable: Sequence[bool] | np.ndarray | None = None) -> np.ndarray:
    """Holm-adjusted p-values of one family of tests; an undefined p-value (NaN) stays NaN and is not counted.

    Args:
        p_values: The family's p-values.
        testable: Which tests can reach ``p < alpha`` at all (default: every one). An exact test on few informative
            pairs cannot (6 pairs all one way give at best ``2 / 2**6``); it can never make a false alarm, so it is
            left out of the count, as in Tarone's refinement for discrete tests, and keeps its own p-value.

    Example:
        >>> holm([0.01, 0.04, float("nan")]).round(3).tolist()[:2]
        [0.02, 0.04]
        >>> holm([0.01, 0.04, 0.25], testable=[True, True, False]).round(3).tolist()
        [0.02, 0.04, 0.25]
    """
    # Written out rather than statsmodels' multipletests, which runs gc.collect() on every call (0.1 s each).
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    if testable is not None:
        keep = np.asarray(testable, dtype=bool)
        out[~keep] = p[~keep]
        p = np.where(keep, p, np.nan)
    defined = np.flatnonzero(np.isfinite(p))
    order = defined[np.argsort(p[defined], kind="stable")]
    m = len(order)
    steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(steps) if m else steps
    return out


def min_pairs_for_significance(alpha: float) -> int:
    """Fewest non-tied pairs with which a paired sign or signed-rank test can reach ``p < alpha`` at all.

    With n pairs all changing the same way, the exact two-sided p-value is ``2 / 2**n``.

    Example:
        >>> min_pairs_for_significance(0.05)
        6
    """
    return max(1, math.floor(math.log2(2 / alpha)) + 1)


def paired_minimum_detectable_difference(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true mean difference that ``n`` pairs detect with probability ``power`` (two-sided ``alpha``).

    ``(z[1 - alpha/2] + z[power]) · sd / sqrt(n)`` with ``sd`` the standard deviation of the paired differences
    (the noise that pairing leaves). NaN when ``n`` pairs can never reach significance or ``sd`` is unknown.

    Example:
        >>> round(paired_minimum_detectable_difference(2.0, 40), 3)
        0.886
    """
    if n < min_pairs_for_significance(alpha) or not np.isfinite(sd):
        return float("nan")
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * sd / math.sqrt(n))


def pairs_needed(sd: float, difference: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Pairs needed to detect a true mean ``difference`` with this ``sd`` of paired differences; None if unknown.

    Example:
        >>> pairs_needed(2.0, 0.5)
        126
    """
    if not np.isfinite(sd) or not difference:
        return None
    n = float(((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * sd / abs(difference)) ** 2)  # scipy is untyped
    return max(min_pairs_for_significance(alpha), math.ceil(n))
