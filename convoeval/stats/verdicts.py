"""What a result row lets an analyst conclude, in words: thresholds applied to the CI's lower bound.

* kappa, alpha, AC1, Fleiss' kappa (Krippendorff 2004): lower bound >= .800 reliable; >= .667 tentative (draw only
  tentative conclusions); below, unreliable.
* ICC (Koo & Li 2016): lower bound < .5 poor, .5–.75 moderate, .75–.9 good, > .9 excellent.
* Any statistic whose ``ci_too_wide`` flag is set: inconclusive, whatever its value.
* Other statistics (rates, biases, correlations) describe rather than grade: no verdict (NA).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def _reliability(low: float) -> str:
    if low >= 0.800:
        return "reliable (lower bound >= .800)"
    if low >= 0.667:
        return "tentative (lower bound .667-.800)"
    return "unreliable (lower bound < .667)"


def _icc(low: float) -> str:
    for bound, word in ((0.9, "excellent"), (0.75, "good"), (0.5, "moderate")):
        if low >= bound:
            return f"{word} (lower bound >= {bound})"
    return "poor (lower bound < 0.5)"


#: statistic -> how its CI lower bound reads. Register a statistic here to grade it.
VERDICTS: dict[str, Callable[[float], str]] = {
    "cohen_kappa": _reliability,
    "krippendorff_alpha": _reliability,
    "gwet_ac1": _reliability,
    "fleiss_kappa": _reliability,
    "weighted_kappa": _reliability,
    "icc_a1": _icc,
    "icc_c1": _icc,
}


def interpret(results: pd.DataFrame) -> pd.DataFrame:
    """Add a ``verdict`` column to a result table.

    Example:
        >>> rows = pd.DataFrame({"statistic": ["cohen_kappa", "cohen_kappa"], "ci_low": [0.82, 0.2],
        ...                      "ci_too_wide": [False, True]})
        >>> interpret(rows)["verdict"].tolist()
        ['reliable (lower bound >= .800)', 'inconclusive: CI too wide or too few conversations']
    """
    verdicts: list[str | None] = []
    for stat, low, wide in zip(results["statistic"], results["ci_low"], results["ci_too_wide"], strict=True):
        grade = VERDICTS.get(str(stat))
        if bool(wide) and (grade is not None or not np.isfinite(low)):
            verdicts.append("inconclusive: CI too wide or too few conversations")
        elif grade is not None and np.isfinite(low):
            verdicts.append(grade(float(low)))
        else:
            verdicts.append(None)
    return results.assign(verdict=pd.Series(verdicts, index=results.index, dtype="string"))
