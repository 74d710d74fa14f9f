"""From the runs' frames to long *ratings* frames: one verdict per item and rater, the input of every statistic.

A pass/fail ratings frame has one row per conversation (``run_id``) × criterion × rater with ``passed`` (nullable
boolean); a score ratings frame has one row per conversation × dimension × rater with ``score`` (float, NaN when
missing). A rater is a judge configuration (by default its ``judge_model``), a human (``labels.label_ratings``) or the
database (``truth.truth_ratings``); concatenate ratings frames to compare them.

A judge asked several times per conversation (``judge_samples``) has several samples per item; ``samples`` picks how
they become one verdict, or keeps each sample as its own rater (``"each"``) for self-consistency.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from convoeval.frames import HOLISTIC_DIMENSIONS

#: Columns of a pass/fail ratings frame.
RATING_COLUMNS = ("run_id", "scenario", "seed", "trial", "criterion_index", "criterion", "assertion", "rater",
                  "sample", "passed")
#: Columns of a 0–10 score ratings frame.
SCORE_RATING_COLUMNS = ("run_id", "scenario", "seed", "trial", "dimension", "rater", "sample", "score")
#: The dimensions ``holistic_ratings`` keeps by default: the six judged ones and the computed overall.
SCORE_DIMENSIONS = (*HOLISTIC_DIMENSIONS, "overall")
_UNKNOWN = "<unknown>"


def rater_names(frame: pd.DataFrame, rater: str | Sequence[str]) -> pd.Series:
    """The rater of each row: one column's value, or several columns joined with `` | ``.

    Args:
        frame: Any frame holding the rater column(s).
        rater: A column name (``"judge_model"``) or names (``("judge_model", "prompt_version")``) that together tell
            judge configurations apart. Add a column first (``frame.assign(config="A")``) to name one yourself.
    """
    columns = [rater] if isinstance(rater, str) else list(rater)
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"rater column(s) {missing} not in the frame (columns: {list(frame.columns)})")
    parts = [frame[c].astype("string").fillna(_UNKNOWN) for c in columns]
    out = parts[0]
    for part in parts[1:]:
        out = out + " | " + part
    return out.astype(object)


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"{what} needs column(s) {missing}; it has {list(frame.columns)}")


def _check_samples(samples: str | int) -> None:
    if isinstance(samples, bool) or not (isinstance(samples, int) or samples in _SAMPLE_MODES):
        raise ValueError(f"samples must be one of {sorted(_SAMPLE_MODES)} or a sample number, got {samples!r}")


_SAMPLE_MODES = {"majority", "mean", "first", "each"}


def _sample_numbers(frame: pd.DataFrame) -> pd.Series:
    return frame["sample"].astype("Int64").fillna(0) if "sample" in frame else pd.Series(0, index=frame.index,
                                                                                         dtype="Int64")


def rubric_ratings(
    rubric: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
) -> pd.DataFrame:
    """The rubric judge's verdicts as a pass/fail ratings frame.

    Args:
        rubric: A rubric frame (``RUBRIC_SCHEMA``), possibly several judges' concatenated.
        rater: Column(s) naming the judge configuration (see ``rater_names``).
        samples: ``"majority"`` (default; a strict majority of the non-missing samples passes, as the composite
            score counts it; a tie fails), ``"first"`` (the lowest sample number), an ``int`` (that sample only), or
            ``"each"`` (every sample is its own rater, named ``"<rater> #<sample>"``, with the judge kept in
            ``judge``).

    Returns:
        ``RATING_COLUMNS`` (plus ``judge`` with ``"each"``); ``passed`` is NA where the judge erred on every sample.

    Example (needs a judged run, so not run as a doctest)::

        ratings = rubric_ratings(rubric_frame, samples="first")
    """
    _require(rubric, ("run_id", "criterion", "passed"), "rubric_ratings")
    _check_samples(samples)
    frame = pd.DataFrame({
        "run_id": rubric["run_id"].astype(object),
        "scenario": rubric["scenario"] if "scenario" in rubric else pd.NA,
        "seed": rubric["seed"] if "seed" in rubric else pd.NA,
        "trial": rubric["trial"] if "trial" in rubric else pd.NA,
        "criterion_index": rubric["criterion_index"] if "criterion_index" in rubric else pd.NA,
        "criterion": rubric["criterion"].astype(object),
        "assertion": rubric["assertion"] if "assertion" in rubric else pd.NA,
        "rater": rater_names(rubric, rater),
        "sample": _sample_numbers(rubric),
        "passed": rubric["passed"].astype("boolean"),
    }, index=rubric.index)
    if samples == "each":
        frame["judge"] = frame["rater"]
        frame["rater"] = frame["rater"] + " #" + frame["sample"].astype(str)
        return frame.reset_index(drop=True)
    if isinstance(samples, int):
        return frame[frame["sample"] == samples].reset_index(drop=True)
    keys = ["run_id", "criterion", "rater"]
    if samples == "first":
        first = frame.sort_values("sample", kind="stable").drop_duplicates(keys)
        return first.sort_index().reset_index(drop=True)
    # majority: counts of pass votes among non-missing samples
    votes = frame.assign(_pass=frame["passed"].astype("Float64"))
    agg = votes.groupby(keys, sort=False, dropna=False).agg(_sum=("_pass", "sum"), _count=("_pass", "count"))
    first = frame.drop_duplicates(keys).set_index(keys)
    majority = [bool(s * 2 > c) if c > 0 else None for s, c in zip(agg["_sum"], agg["_count"], strict=True)]
    first["passed"] = pd.Series(pd.array(majority, dtype="boolean"), index=agg.index)
    first["sample"] = pd.NA
    return first.reset_index()[list(RATING_COLUMNS)]


def holistic_ratings(
    holistic: pd.DataFrame,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "mean",
    dimensions: Sequence[str] = SCORE_DIMENSIONS,
) -> pd.DataFrame:
    """The holistic judge's 0–10 scores as a long ratings frame (one row per conversation × dimension × rater).

    Args:
        holistic: A holistic frame (``HOLISTIC_SCHEMA``) or any frame with ``run_id`` and the dimension columns.
        rater: Column(s) naming the judge configuration.
        samples: ``"mean"`` (default; the mean of the non-missing samples, as the composite score uses),
            ``"first"``, an ``int`` (that sample), or ``"each"`` (every sample its own rater ``"<rater> #<sample>"``,
            judge kept in ``judge``).
        dimensions: The score columns to keep.

    Returns:
        ``SCORE_RATING_COLUMNS`` (plus ``judge`` with ``"each"``).
    """
    _require(holistic, ("run_id", *dimensions), "holistic_ratings")
    _check_samples(samples)
    base = pd.DataFrame({
        "run_id": holistic["run_id"].astype(object),
        "scenario": holistic["scenario"] if "scenario" in holistic else pd.NA,
        "seed": holistic["seed"] if "seed" in holistic else pd.NA,
        "trial": holistic["trial"] if "trial" in holistic else pd.NA,
        "rater": rater_names(holistic, rater),
        "sample": _sample_numbers(holistic),
    }, index=holistic.index)
    wide = pd.concat([base, holistic[list(dimensions)].astype(float)], axis=1)
    long = wide.melt(id_vars=list(base.columns), value_vars=list(dimensions), var_name="dimension",
                     value_name="score")
    if samples == "each":
        long["judge"] = long["rater"]
        long["rater"] = long["rater"] + " #" + long["sample"].astype(str)
        return long[[*SCORE_RATING_COLUMNS, "judge"]]
    if isinstance(samples, int):
        return long[long["sample"] == samples][list(SCORE_RATING_COLUMNS)].reset_index(drop=True)
    keys = ["run_id", "dimension", "rater"]
    if samples == "first":
        out = long.sort_values("sample", kind="stable").drop_duplicates(keys)
        return out[list(SCORE_RATING_COLUMNS)].reset_index(drop=True)
    means = long.groupby(keys, sort=False, dropna=False)["score"].mean()
    out = long.drop_duplicates(keys).set_index(keys)
    out["score"] = means
    out["sample"] = pd.NA
    return out.reset_index()[list(SCORE_RATING_COLUMNS)]
