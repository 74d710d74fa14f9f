"""The difference across scenarios: the average of per-scenario differences, its interval and its test.

A comparison usually has 3–6 scenarios. Resampling scenarios as clusters treats them as a random sample of
possible scenarios, and a percentile bootstrap over 3 clusters is not an interval at all: a resample made of one
unchanged scenario alone (probability (1/3)^3 ≈ 4%) put 0 inside the 95% interval of a fault that broke two
scenarios out of three (issue #27). So the scenarios compared are treated as the fixed set they are (strata):

* the estimate is the mean over scenarios of each scenario's mean pair difference (each scenario weighs the same,
  however many of its pairs survived);
* the interval resamples pairs **within** each scenario (seeds × trials), never the scenarios; each scenario's
  replicates are widened by ``sqrt(n / (n - 1))`` so that the bootstrap's variance is the unbiased one (a plain
  percentile bootstrap of a mean of 3–8 values is too narrow by that factor);
* the test is a sign-flip permutation test of that same estimate: under "no change" each pair's difference is as
  likely to be ``+d`` as ``-d``. It is exact at any size (every pattern up to 16 pairs, random patterns beyond with
  a conservative p), with or without ties.

From ``RANDOM_SCENARIOS_FROM`` scenarios on, the interval resamples the scenarios' differences instead (widened the
same way), as a sample that stands for scenarios not run, and ``method`` says which was used. The threshold comes from the simulation in
``benchmarks/bench_compare_sim.py`` (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from convoeval.stats.bootstrap import LEVEL, N_BOOT, percentile_interval

__all__ = ["FIXED", "N_PERM", "RANDOM_SCENARIOS_FROM", "SAMPLE", "interval_method", "sign_flip_p", "stratified_difference",
           "stratified_replicates"]

#: Scenarios from which the overall interval treats them as a sample of possible scenarios (bootstrap over
#: scenarios); with fewer, as the fixed set compared (bootstrap within scenarios). See the module's docstring.
RANDOM_SCENARIOS_FROM = 20
#: ``scenarios_as``: the interval resampled pairs within the scenarios, or the scenarios themselves.
FIXED, SAMPLE = "fixed set", "sample of scenarios"
#: Pairs up to which the sign-flip test enumerates every pattern (2**16 = 65,536).
EXACT_UP_TO = 16
#: Sign flips drawn by the permutation test when there are too many pairs to enumerate them all.
N_PERM = 9999


def interval_method(n_strata: int, *, over_scenarios: bool | None = None, n_boot: int = N_BOOT,
                    level: float = LEVEL) -> str:
    """How ``stratified_difference`` makes the interval for ``n_strata`` scenarios, in words (a ``method`` cell).

    Example:
        >>> interval_method(3, n_boot=1000)
        'CI: bootstrap within each of 3 scenarios (the scenarios as a fixed set), B=1000, 95%'
    """
    if over_scenarios is None:
        over_scenarios = n_strata >= RANDOM_SCENARIOS_FROM
    if over_scenarios:
        return f"CI: bootstrap over {n_strata} scenarios (as a sample of possible scenarios), B={n_boot}, {level:.0%}"
    return f"CI: bootstrap within each of {n_strata} scenarios (the scenarios as a fixed set), B={n_boot}, {level:.0%}"


def stratified_difference(a: Any, b: Any, strata: Any, *, n_boot: int = N_BOOT, level: float = LEVEL,
                          seed: int = 0, over_scenarios: bool | None = None) -> dict[str, Any]:
    """The mean over strata of each stratum's mean of ``b - a``, with its bootstrap interval.

    Pairs where either side is NaN are left out; a stratum left with no pair is not a stratum.

    Args:
        a: Baseline values, one per pair.
        b: Candidate values, one per pair.
        strata: The stratum (scenario) of each pair.
        n_boot: Bootstrap replicates.
        level: Confidence level.
        seed: Bootstrap seed.
        over_scenarios: Resample the strata themselves (scenarios as a random sample) instead of the pairs within
            each; default: from ``RANDOM_SCENARIOS_FROM`` strata on.

    Returns:
        ``baseline, candidate, difference`` (each the mean of per-stratum means), ``ci_low, ci_high``, ``sd`` (the
        pooled within-stratum standard deviation of the pair differences: the noise pairing and stratifying
        leave), ``n`` (pairs), ``n_clusters`` (strata), ``ci_method`` (in words) and ``scenarios_as`` (``FIXED``,
        ``SAMPLE``, or ``"none"`` without an interval). Within strata, a stratum with a single pair
        shows no noise, so the interval is NaN (and says why) rather than pretending to be exact.

    Example:
        >>> out = stratified_difference([5, 5, 9, 9], [3, 2, 9, 9], ["s1", "s1", "s2", "s2"], n_boot=200)
        >>> out["difference"], out["n_clusters"]
        (-1.25, 2)
    """
    a, b, codes, n_strata = _valid(a, b, strata)
    nan = float("nan")
    if not n_strata:
        return {"baseline": nan, "candidate": nan, "difference": nan, "ci_low": nan, "ci_high": nan, "sd": nan,
                "n": 0, "n_clusters": 0, "ci_method": "no pair", "scenarios_as": "none"}
    d = b - a
    # Sorted within a stratum: the same interval whatever order (or run ids) the pairs come in.
    order = np.lexsort((d, codes))
    groups = np.split(d[order], np.flatnonzero(np.diff(codes[order])) + 1)
    counts = np.bincount(codes, minlength=n_strata)
    means = np.bincount(codes, d, minlength=n_strata) / counts
    levels = [float(np.mean(np.bincount(codes, x, minlength=n_strata) / counts)) for x in (a, b)]
    reps, how, kind = _replicates(groups, n_boot=n_boot, level=level, seed=seed, over_scenarios=over_scenarios)
    low, high = percentile_interval(reps, level) if kind != "none" else (nan, nan)
    dof = sum(len(g) - 1 for g in groups)
    sd = float(np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / dof)) if dof > 0 else nan
    return {"baseline": levels[0], "candidate": levels[1], "difference": float(means.mean()), "ci_low": low,
            "ci_high": high, "sd": sd, "n": int(d.size), "n_clusters": n_strata, "ci_method": how,
            "scenarios_as": kind}


def stratified_replicates(values: Any, strata: Any, *, n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0,
                          over_scenarios: bool | None = None) -> tuple[float, np.ndarray, str, str]:
    """The mean of per-stratum means of ``values`` and its bootstrap replicates, resampled as ``stratified_difference``
    resamples (within strata; over them from ``RANDOM_SCENARIOS_FROM`` on). For one side's rate or score of
    unpaired runs (``convoeval.stats.noise.compare_targets``).

    Returns:
        ``(estimate, replicates, ci_method, scenarios_as)``; the replicates are NaN when there is no interval.

    Example:
        >>> value, reps, how, kind = stratified_replicates([1.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b"], n_boot=50)
        >>> value, reps.shape, kind
        (0.75, (50,), 'fixed set')
    """
    x = np.asarray(values, dtype=float)
    x, _, codes, n_strata = _valid(x, x, strata)
    if not n_strata:
        return float("nan"), np.full(n_boot, np.nan), "no value", "none"
    order = np.lexsort((x, codes))
    groups = np.split(x[order], np.flatnonzero(np.diff(codes[order])) + 1)
    reps, how, kind = _replicates(groups, n_boot=n_boot, level=level, seed=seed, over_scenarios=over_scenarios)
    return float(np.mean([g.mean() for g in groups])), reps, how, kind


def _replicates(groups: list[np.ndarray], *, n_boot: int, level: float, seed: int, over_scenarios: bool | None
                ) -> tuple[np.ndarray, str, str]:
    """Bootstrap replicates of the mean of the groups' means: ``(replicates, ci_method, scenarios_as)``."""
    n_strata = len(groups)
    if over_scenarios is None:
        over_scenarios = n_strata >= RANDOM_SCENARIOS_FROM
    rng = np.random.default_rng(seed)
    means = np.array([g.mean() for g in groups])
    none = np.full(n_boot, np.nan)
    if over_scenarios and n_strata < 2:
        return none, "CI: none, a single scenario cannot be resampled as a sample of scenarios", "none"
    if over_scenarios:
        draws = rng.multinomial(n_strata, np.full(n_strata, 1 / n_strata), size=n_boot)
        reps = means.mean() + (draws @ means / n_strata - means.mean()) * np.sqrt(n_strata / (n_strata - 1))
        return reps, interval_method(n_strata, over_scenarios=True, n_boot=n_boot, level=level), SAMPLE
    if min(len(g) for g in groups) < 2:
        return none, "CI: none, a scenario has a single pair (its noise cannot be seen)", "none"
    reps = np.zeros(n_boot)
    for g in groups:
        n = len(g)
        draws = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)
        # Widened by sqrt(n / (n - 1)): the bootstrap variance of a mean is (n - 1) / n of the unbiased one.
        reps += g.mean() + (draws @ g / n - g.mean()) * np.sqrt(n / (n - 1))
    return reps / n_strata, interval_method(n_strata, over_scenarios=False, n_boot=n_boot, level=level), FIXED


def _valid(a: Any, b: Any, strata: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The pairs where both sides are numbers: ``a``, ``b``, stratum codes 0..S-1 (sorted by name), S."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    codes, uniques = pd.factorize(pd.Series(np.asarray(strata, dtype=object)[ok]), sort=True)
    return a[ok], b[ok], np.asarray(codes), len(uniques)


def sign_flip_p(a: Any, b: Any, strata: Any, *, n_perm: int = N_PERM, seed: int = 0) -> tuple[float, str]:
    """Two-sided p-value of "no change" for the stratified mean difference: a sign-flip permutation test.

    Each pair's difference gets its stratum's weight ``1 / (strata × pairs in the stratum)``, so the statistic is
    exactly ``stratified_difference``'s estimate; under "no change" every sign pattern is equally likely (the null
    distribution is symmetric, so two-sided is ``|T*| >= |T|``). Exact (every pattern) up to ``EXACT_UP_TO`` pairs,
    else ``n_perm`` random patterns with the conservative ``(k + 1) / (n_perm + 1)``.

    Written as a matrix product rather than with ``scipy.stats.permutation_test`` (which gives the same p-values):
    SciPy builds a permuted copy of the data per batch and took 1.4 s for 300 pairs and 25,000 flips, this 0.05 s.

    Returns:
        ``(p_value, how)``; NaN without a pair.

    Example:
        >>> round(sign_flip_p([5] * 6, [4] * 6, ["s"] * 6)[0], 4)   # 6 pairs all one way: 2 / 2**6
        0.0312
    """
    a, b, codes, n_strata = _valid(a, b, strata)
    if not n_strata:
        return float("nan"), "no pair"
    x = (b - a) / (np.bincount(codes)[codes] * n_strata)
    x = x[x != 0]  # a zero difference is the same under either sign
    if not x.size:
        return 1.0, "sign-flip permutation test, stratified by scenario: every difference is 0"
    observed = abs(x.sum()) * (1 - 1e-9)  # the tolerance keeps patterns equal to the observed one up to rounding
    if x.size <= EXACT_UP_TO:
        patterns = 1 - 2 * ((np.arange(2 ** x.size)[:, None] >> np.arange(x.size)) & 1)
        p = float(np.mean(np.abs(patterns @ x) >= observed))
        return p, "sign-flip permutation test, stratified by scenario (exact)"
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    while done < n_perm:  # in batches: n_perm × pairs signs at once can be hundreds of MB
        size = min(n_perm - done, max(1, 2_000_000 // x.size))
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(size, x.size), dtype=np.int8)
        hits += int(np.sum(np.abs(signs @ x) >= observed))
        done += size
    return (hits + 1) / (n_perm + 1), f"sign-flip permutation test, stratified by scenario ({n_perm} random flips)"
