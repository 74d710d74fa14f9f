"""Long ratings to an items × raters table, rater pairs, and the per-group (plus pooled) iteration."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

import pandas as pd

from convoeval.stats._result import ALL


def as_tuple(columns: str | Sequence[str] | None) -> tuple[str, ...]:
    if columns is None:
        return ()
    return (columns,) if isinstance(columns, str) else tuple(columns)


def pivot(ratings: pd.DataFrame, *, value: str, item: Sequence[str], by: Sequence[str],
          cluster: str = "run_id") -> pd.DataFrame:
    """``items × raters`` values; the index holds ``run_id``, the item columns, the grouping columns and ``cluster``
    (the resampling unit, ``Estimation.cluster``).

    Raises:
        ValueError: a missing column, two ratings of one item by one rater (pick one sample first), or a cluster
            column that is not constant within a conversation.
    """
    index = list(dict.fromkeys(["run_id", *item, *by, cluster]))
    if cluster != "run_id" and cluster in ratings:
        spread = ratings.groupby("run_id", sort=False)[cluster].nunique(dropna=False)
        if (spread > 1).any():
            raise ValueError(f"the resampling unit {cluster!r} must be one value per conversation; run "
                             f"{spread[spread > 1].index[0]!r} has {int(spread.max())}")
    missing = [c for c in [*index, "rater", value] if c not in ratings]
    if missing:
        raise ValueError(f"the ratings frame needs column(s) {missing}; it has {list(ratings.columns)}")
    dup = ratings.duplicated([*index, "rater"], keep=False)
    if dup.any():
        example = ratings.loc[dup, [*index, "rater"]].iloc[0].to_dict()
        raise ValueError(
            f"{int(dup.sum())} ratings share an item and rater (e.g. {example}); keep one verdict per item and rater "
            "(rubric_ratings(samples='majority' | 'first' | n), or samples='each' to make every sample a rater)"
        )
    frame = ratings[[*index, "rater", value]].copy()
    return frame.pivot(index=index, columns="rater", values=value)


def resolve_pairs(
    raters: Sequence[str],
    pairs: Sequence[tuple[str, str]] | None,
    reference: str | None,
) -> list[tuple[str, str]]:
    """Which (rater_a, rater_b) pairs to compare: given, every rater against ``reference``, or all unordered pairs."""
    known = list(raters)
    if pairs is not None:
        out = [tuple(p) for p in pairs]
        unknown = sorted({r for p in out for r in p} - set(known))
        if unknown:
            raise ValueError(f"unknown rater(s) {unknown}; the ratings hold {known}")
        return out  # type: ignore[return-value]
    if reference is not None:
        if reference not in known:
            raise ValueError(f"reference rater {reference!r} is not in the ratings ({known})")
        return [(r, reference) for r in known if r != reference]
    return list(combinations(sorted(known), 2))


def iter_groups(frame: pd.DataFrame, by: Sequence[str], overall: bool) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """``(group values, rows)`` per group of ``by`` (index levels), then the pooled group when there are several."""
    if not by:
        yield {}, frame
        return
    levels = list(by)
    keys = frame.index.to_frame(index=False)[levels]
    grouped = list(frame.groupby([keys[c].to_numpy() for c in levels], sort=True, dropna=False))
    for key, rows in grouped:
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(levels, key, strict=True)), rows
    if overall and len(grouped) > 1:
        yield {c: ALL for c in levels}, frame
