"""The interval of a proportion: Wilson's score interval, right at the small counts of fork points and red teams."""

from __future__ import annotations


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` (``(nan, nan)`` when ``n`` is 0).

    Example:
        >>> [round(x, 3) for x in wilson_interval(0, 3)]
        [0.0, 0.561]
    """
    if n == 0:
        return float("nan"), float("nan")
    from scipy.stats import binomtest  # SciPy loads on first use: most commands never need it  # noqa: PLC0415 - SciPy (half a second) loads on first statistic

    interval = binomtest(int(successes), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return float(interval.low), float(interval.high)
