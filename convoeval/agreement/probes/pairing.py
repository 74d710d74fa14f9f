"""Before/after pairs: each original verdict or score beside the one given to the perturbed conversation.

Pairs are matched on conversation, item and judge sample; a pair whose other side is missing or errored, or whose
conversation the probe left out, is kept with the reason in ``error`` (and excluded from the effects).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from convoeval.frames import HOLISTIC_DIMENSIONS
from convoeval.stats.effects import PAIR_COLUMNS


def rubric_pairs(probe: str, before: pd.DataFrame, after: pd.DataFrame | None, *, skipped: Mapping[str, str],
                 order: Mapping[str, list[int]] | None = None) -> pd.DataFrame:
    """Pair the original rubric rows with the perturbed ones by conversation, criterion position and sample.

    Args:
        probe: The probe's name.
        before: The rubric frame of the original transcripts.
        after: The rubric frame of the perturbed ones (``None`` when nothing was judged again).
        skipped: ``{run_id: reason}`` of conversations the probe left out; their pairs carry the reason.
        order: ``{scenario: order}`` when the criteria were shuffled: shown position ``k`` is our ``order[k]``.

    Returns:
        One row per row of ``before``, in ``PAIR_COLUMNS``.
    """
    b = before.assign(item_index=before["criterion_index"])
    if after is None:
        after = before.iloc[0:0]
    a = after.assign(item_index=[
        order[s][int(i)] if order else int(i)  # shuffled position -> our position
        for s, i in zip(after["scenario"], after["criterion_index"], strict=True)
    ])
    merged = b.merge(a[["run_id", "item_index", "sample", "criterion", "passed", "error"]],
                     on=["run_id", "item_index", "sample"], how="left", suffixes=("", "_after"), indicator=True)
    mapped = merged["criterion_after"].notna()
    if (merged.loc[mapped, "criterion_after"] != merged.loc[mapped, "criterion"]).any():
        raise RuntimeError(f"{probe}: a verdict was mapped back to the wrong criterion (a bug in convoeval)")
    return _pairs(probe, "rubric", merged, merged["criterion"], merged["passed"], merged["passed_after"], skipped)


def holistic_pairs(probe: str, before: pd.DataFrame, after: pd.DataFrame | None, *,
                   skipped: Mapping[str, str]) -> pd.DataFrame:
    """Pair the original holistic rows with the perturbed ones, one pair per dimension (see ``rubric_pairs``)."""
    if after is None:
        after = before.iloc[0:0]
    keys = ["run_id", "scenario", "sample", "error"]
    b = before[[*keys, *HOLISTIC_DIMENSIONS]].melt(id_vars=keys, var_name="item", value_name="value")
    a = after[["run_id", "sample", "error", *HOLISTIC_DIMENSIONS]].melt(
        id_vars=["run_id", "sample", "error"], var_name="item", value_name="value")
    merged = b.merge(a, on=["run_id", "item", "sample"], how="left", suffixes=("", "_after"), indicator=True)
    return _pairs(probe, "holistic", merged, merged["item"], merged["value"], merged["value_after"], skipped)


def _pairs(probe: str, instrument: str, merged: pd.DataFrame, item: pd.Series, before: pd.Series, after: pd.Series,
           skipped: Mapping[str, str]) -> pd.DataFrame:
    errors: list[str | None] = []  # None: the pair is usable
    for run_id, err, err_after, found in zip(merged["run_id"], merged["error"], merged["error_after"],
                                             merged["_merge"], strict=True):
        if run_id in skipped:
            errors.append(skipped[run_id])
            continue
        parts = [f"before: {err}"] if not pd.isna(err) else []
        if found != "both":
            parts.append("after: no verdict")
        elif not pd.isna(err_after):
            parts.append(f"after: {err_after}")
        errors.append("; ".join(parts) or None)
    return pd.DataFrame({
        "probe": probe, "run_id": merged["run_id"], "scenario": merged["scenario"], "instrument": instrument,
        "item": item, "sample": merged["sample"],
        "before": pd.to_numeric(before.astype("Float64"), errors="coerce").astype(float),
        "after": pd.to_numeric(after.astype("Float64"), errors="coerce").astype(float),
        "error": errors,
    })


def pair_frame_of(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The pairs of every probe in one frame with ``PAIR_COLUMNS`` and stable dtypes."""
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(PAIR_COLUMNS))
    return frame[list(PAIR_COLUMNS)].astype({
        "probe": "string", "run_id": "string", "scenario": "string", "instrument": "string", "item": "string",
        "sample": "Int64", "before": "float64", "after": "float64", "error": "string",
    })
