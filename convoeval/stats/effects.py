"""The effect of each probe from its before/after pairs: difference, conversation-bootstrap CI, paired test.

A *pair* is one item (a rubric criterion, or a holistic dimension) of one conversation (and judge sample), judged on
the original transcript (``before``) and on the perturbed one (``after``). Pairs with an ``error`` on either side are
left out of every statistic and counted in ``n_excluded`` — never read as a fail or a 0.

Per probe × instrument, one ``"(all)"`` row pools every item, then one row per item:

* ``effect`` = mean(after) − mean(before) over the valid pairs: a pass-rate difference for the rubric (−1…1), a
  score difference in points for the holistic judge (−10…10). For an injection it is the inflation.
* ``ci_low``/``ci_high``: percentile bootstrap resampling conversations (``run_id``), as everywhere in
  ``convoeval.stats``; ``ci_too_wide`` applies the library's rule (scale 10 for score points).
* rubric: ``flip_rate`` (share of pairs whose verdict changed) and McNemar's exact test on the discordant pairs
  (statsmodels); holistic: the Wilcoxon signed-rank test on the differences (scipy, zero differences dropped — its
  default). For the holistic ``"(all)"`` row the test runs on each conversation's mean difference over dimensions.
* Degenerate cases give NaN with the reason in ``method``: no valid pair, no discordant pair, all differences zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon
from statsmodels.stats.contingency_tables import mcnemar

from convoeval.stats._result import ALL
from convoeval.stats.bootstrap import (
    canonical_codes,
    ci_label,
    cluster_codes,
    cluster_sums,
    interval_of,
    jackknife_weights,
    resample_weights,
)
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.sample_size import ci_too_wide

#: The pairs frame: one row per probe × conversation × instrument × item × judge sample.
PAIR_COLUMNS = ("probe", "run_id", "scenario", "instrument", "item", "sample", "before", "after", "error")
#: The effects table.
EFFECT_COLUMNS = (
    "probe", "instrument", "item", "n", "n_pairs", "n_excluded", "before", "after", "effect", "ci_low", "ci_high",
    "flip_rate", "test", "p_value", "ci_too_wide", "method",
)
#: Instrument -> (test, scale of its effect relative to 0–1).
INSTRUMENTS = {"rubric": ("mcnemar", 1.0), "holistic": ("wilcoxon", 10.0)}
_REQUIRED = ("probe", "run_id", "instrument", "item", "before", "after")


def probe_effects(
    pairs: pd.DataFrame,
    *,
    probe_order: Sequence[str] | None = None,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
) -> pd.DataFrame:
    """The effects table from a pairs frame (``ProbeResult.pairs``, or one an analyst filtered or built).

    Args:
        pairs: Columns ``probe, run_id, instrument ("rubric" | "holistic"), item, before, after`` and optionally
            ``error`` (a pair with an error is excluded) and ``sample``. Rubric values are 1.0 (pass) / 0.0 (fail).
        probe_order: Order of the probes in the table (default: as they first appear).
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        A frame with ``EFFECT_COLUMNS``: per probe × instrument an ``"(all)"`` row then one row per item.

    Raises:
        ValueError: a missing column, an unknown instrument, or rubric values other than 0/1.

    Example:
        >>> pairs = pd.DataFrame({"probe": "verbosity", "run_id": ["a", "b"], "instrument": "rubric",
        ...                       "item": "polite", "before": [0.0, 1.0], "after": [1.0, 1.0]})
        >>> row = probe_effects(pairs, estimation=Estimation(n_boot=100)).iloc[0]
        >>> row["item"], float(row["effect"]), float(row["flip_rate"])
        ('(all)', 0.5, 0.5)
    """
    est = estimation_from(estimation, deprecated, "probe_effects")
    missing = [c for c in _REQUIRED if c not in pairs]
    if missing:
        raise ValueError(f"pairs frame lacks column(s) {missing}; expected {list(PAIR_COLUMNS)}")
    unknown = sorted(set(pairs["instrument"].dropna()) - set(INSTRUMENTS))
    if unknown:
        raise ValueError(f"unknown instrument(s) {unknown}; expected one of {list(INSTRUMENTS)}")
    frame = pairs.assign(
        before=pd.to_numeric(pairs["before"], errors="coerce").astype(float),
        after=pd.to_numeric(pairs["after"], errors="coerce").astype(float),
        error=pairs["error"] if "error" in pairs else pd.Series(pd.NA, index=pairs.index, dtype="string"),
    )
    frame["valid"] = frame["error"].isna() & frame["before"].notna() & frame["after"].notna()
    rubric_values = frame.loc[frame["valid"] & (frame["instrument"] == "rubric"), ["before", "after"]].to_numpy()
    if not np.isin(rubric_values, (0.0, 1.0)).all():
        raise ValueError("rubric pairs must be 1.0 (pass) or 0.0 (fail) on both sides")
    order = list(probe_order or []) + [p for p in pd.unique(frame["probe"]) if p not in (probe_order or [])]
    rows = []
    for probe in order:
        for instrument in INSTRUMENTS:
            group = frame[(frame["probe"] == probe) & (frame["instrument"] == instrument)]
            if group.empty:
                continue
            rows.append(_row(group, probe, instrument, ALL, estimation=est))
            for item in pd.unique(group["item"]):
                rows.append(_row(group[group["item"] == item], probe, instrument, item,
                                 estimation=est))
    return _table(rows)


def _row(group: pd.DataFrame, probe: str, instrument: str, item: Any, *, estimation: Estimation) -> dict[str, Any]:
    valid = group[group["valid"]]
    test, scale = INSTRUMENTS[instrument]
    n_pairs = len(valid)
    row: dict[str, Any] = {
        "probe": probe, "instrument": instrument, "item": item,
        "n": int(valid["run_id"].nunique()), "n_pairs": n_pairs, "n_excluded": len(group) - n_pairs,
        "before": np.nan, "after": np.nan, "effect": np.nan, "ci_low": np.nan, "ci_high": np.nan,
        "flip_rate": np.nan, "test": test, "p_value": np.nan,
    }
    what = "pass rate" if instrument == "rubric" else "mean score"
    notes = [f"effect = {what} after − before over {n_pairs} valid pairs"]
    if n_pairs == 0:
        notes.append("no valid pair: nothing to compare")
    else:
        diffs = (valid["after"] - valid["before"]).to_numpy()
        row.update(before=float(valid["before"].mean()), after=float(valid["after"].mean()),
                   effect=float(diffs.mean()))
        row["ci_low"], row["ci_high"] = _bootstrap(valid["run_id"], diffs, estimation=estimation)
        if instrument == "rubric":
            row["flip_rate"] = float((diffs != 0).mean())
            row["p_value"], note = mcnemar_p(valid["before"].to_numpy(), valid["after"].to_numpy())
        else:
            if item == ALL:  # one difference per conversation (and sample): dimensions of one call are not independent
                keys = ["run_id", "sample"] if "sample" in valid else ["run_id"]
                diffs = valid.assign(d=diffs).groupby(keys, sort=False, dropna=False)["d"].mean().to_numpy()
            row["p_value"], note = wilcoxon_p(diffs)
        notes.append(note)
    if n_pairs and item == ALL and instrument == "rubric":
        notes.append("the test treats criteria of one conversation as independent: read the CI")
    notes.append(ci_label("run_id", estimation))
    if len(group) > n_pairs:
        notes.append(f"{len(group) - n_pairs} pair(s) excluded for an error on either side")
    row["ci_too_wide"] = bool(ci_too_wide(row["ci_low"], row["ci_high"], n=row["n"], scale=scale))
    row["method"] = "; ".join(notes)
    return row


def mcnemar_p(before: np.ndarray, after: np.ndarray) -> tuple[float, str]:
    """McNemar's exact test on paired pass/fail verdicts (1.0/0.0): ``(p_value, how)``; NaN without discordant pairs.

    Example:
        >>> mcnemar_p([1.0, 1.0, 0.0], [1.0, 1.0, 1.0])[0]
        1.0
    """
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    b = int(((before == 1) & (after == 0)).sum())  # pass -> fail
    c = int(((before == 0) & (after == 1)).sum())  # fail -> pass
    if b + c == 0:
        return float("nan"), "McNemar undefined: no discordant pair (no verdict changed)"
    table = [[int(((before == 1) & (after == 1)).sum()), b], [c, int(((before == 0) & (after == 0)).sum())]]
    return float(mcnemar(table, exact=True).pvalue), f"McNemar exact (binomial) test, {b} pass→fail vs {c} fail→pass"


def wilcoxon_p(diffs: np.ndarray) -> tuple[float, str]:
    """Wilcoxon signed-rank test of paired differences (after − before): ``(p_value, how)``; NaN if all are zero.

    Example:
        >>> round(wilcoxon_p([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])[0], 4)
        0.0312
    """
    diffs = np.asarray(diffs, dtype=float)
    diffs = diffs[np.isfinite(diffs)]
    if diffs.size == 0:
        return float("nan"), "Wilcoxon undefined: no difference"
    if not np.any(diffs != 0):
        return float("nan"), "Wilcoxon undefined: every difference is zero"
    nonzero = int((diffs != 0).sum())
    how = f"Wilcoxon signed-rank test (scipy defaults, zeros dropped): {nonzero} nonzero of {diffs.size} differences"
    return float(wilcoxon(diffs).pvalue), how


def _bootstrap(run_ids: pd.Series, diffs: np.ndarray, *, estimation: Estimation) -> tuple[float, float]:
    """The CI of mean(diffs), resampling conversations: one matrix product over per-conversation sums."""
    codes, k = cluster_codes(run_ids)
    codes = canonical_codes(codes, k, np.column_stack([diffs, np.ones_like(diffs)]))  # whatever the run ids
    sums = cluster_sums(codes, k, diffs)
    counts = cluster_sums(codes, k, np.ones_like(diffs))
    weights, leave_out = resample_weights(k, n_boot=estimation.n_boot, seed=estimation.seed), jackknife_weights(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (weights @ sums) / (weights @ counts)
        jack = (leave_out @ sums) / (leave_out @ counts)
    return interval_of(replicates, float(sums.sum() / counts.sum()), jack, estimation)


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(EFFECT_COLUMNS))
    return frame.astype({
        "probe": "string", "instrument": "string", "item": "string", "n": "Int64", "n_pairs": "Int64",
        "n_excluded": "Int64", "before": "float64", "after": "float64", "effect": "float64", "ci_low": "float64",
        "ci_high": "float64", "flip_rate": "float64", "test": "string", "p_value": "float64", "ci_too_wide": "bool",
        "method": "string",
    }).reset_index(drop=True)
