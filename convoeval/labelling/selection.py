"""Which conversations a person should label: the judge's least certain ones, balanced across strata, or at random.

The rule (``docs/agreement.md``, "The labelling page"), per conversation that has a rubric:

- **judge disagreement** ``D``: for each criterion, the share ``p`` of the judge's valid samples that passed it gives
  ``4·p·(1-p)`` (1 when the samples split evenly, 0 when they agree); a criterion the judge never answered counts 1.
  ``D`` is the mean over the conversation's criteria. With one judge sample it is 0 unless the judge errored.
- **near a threshold** ``T``: the holistic judge's mean overall score ``s`` against the status boundaries (5 and 7:
  ``convoeval.judges.scoring``): ``T = max(0, 1 - d/2)`` with ``d`` the distance from ``s`` to the nearer one, so a
  conversation at 6.9 scores 0.95 and one at 9.5 scores 0; 0 when there is no holistic score.
- **informativeness** ``I = D + T/2``: disagreement first (a verdict the judge itself is unsure of is where a label
  corrects most), closeness to a threshold second. Ties are broken in a seeded random order, so a run where the judge
  is sure everywhere gives a random sample.

With ``stratify``, the sample is balanced: strata take turns (the stratum whose best conversation is most
informative first), each giving its next conversation, until the sample is full or every stratum is used up, so
stratum sizes differ by at most one unless a stratum runs out. ``random=True`` orders each stratum (and the strata)
by a seeded random permutation instead: use it when the labels feed an estimate that assumes a random labelled slice
(prediction-powered inference, calibration), since a most-informative sample over-represents hard conversations.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from convoeval.frames import RunFrames
from convoeval.judges.scoring import FAIL_BELOW, WARN_BELOW
from convoeval.pipeline.notebook_params import OneLineError
from convoeval.pipeline.results import load_folders, result_folders

__all__ = ["SELECTION_COLUMNS", "LabelPageError", "choose_conversations", "conversation_priority", "load_folder"]

#: Columns of ``choose_conversations``' answer, one row per chosen conversation, in the order they are shown.
SELECTION_COLUMNS = ("run_id", "conversation", "scenario", "stratum", "n_criteria", "disagreement",
                     "near_threshold", "informativeness", "method")
#: How wide the band around a status boundary is, in score points, where closeness still counts.
NEAR_BAND = 2.0


class LabelPageError(OneLineError, ValueError):
    """A labelling page that cannot be made or labels that cannot be imported; one line naming what is wrong."""


def load_folder(path: Path | str) -> RunFrames:
    """Every finished conversation at or under ``path`` (a run's results folder or a sweep's), as one ``RunFrames``.

    Raises:
        LabelPageError: ``path`` is not a folder or holds no ``runs/*.json``.
    """
    try:
        folders = result_folders(path)
    except FileNotFoundError as exc:
        raise LabelPageError(str(exc)) from None
    return load_folders(folders)


def conversation_priority(frames: RunFrames) -> pd.DataFrame:
    """Per conversation with a rubric: ``run_id, scenario, n_criteria, disagreement, near_threshold, informativeness``.

    Conversations whose run was superseded (a simulator failure re-simulated later) are left out: nobody should
    label a conversation the run itself replaced.
    """
    rubric = frames.rubric
    if rubric.empty:
        return pd.DataFrame(columns=["run_id", "scenario", "n_criteria", "disagreement", "near_threshold",
                                     "informativeness"])
    runs = frames.runs
    superseded = set(runs.loc[runs["superseded"].fillna(False).astype(bool), "run_id"]) if "superseded" in runs \
        else set()
    rubric = rubric[~rubric["run_id"].isin(superseded)]
    passed = rubric["passed"].astype("Float64")
    per_criterion = (rubric.assign(_p=passed).groupby(["run_id", "criterion_index"], dropna=False)
                     .agg(scenario=("scenario", "first"), share=("_p", "mean")).reset_index())
    share = per_criterion["share"].astype(float)
    per_criterion["u"] = np.where(share.isna(), 1.0, 4 * share * (1 - share))
    per_conv = per_criterion.groupby("run_id").agg(scenario=("scenario", "first"), n_criteria=("u", "size"),
                                                   disagreement=("u", "mean")).reset_index()
    holistic = frames.holistic
    mean_overall = holistic.groupby("run_id")["overall"].mean() if len(holistic) else pd.Series(dtype=float)
    s = per_conv["run_id"].map(mean_overall).astype(float)
    distance = np.minimum((s - FAIL_BELOW).abs(), (s - WARN_BELOW).abs())
    per_conv["near_threshold"] = np.clip(1 - distance / NEAR_BAND, 0, 1).fillna(0.0)
    per_conv["informativeness"] = per_conv["disagreement"] + per_conv["near_threshold"] / 2
    per_conv["run_id"] = per_conv["run_id"].astype(str)
    return per_conv


def choose_conversations(
    frames: RunFrames,
    *,
    sample: int = 30,
    stratify: str | None = None,
    random: bool = False,
    seed: int = 0,
) -> pd.DataFrame:
    """Pick ``sample`` conversations to label (see the module's rule), balanced across ``stratify``'s values.

    Args:
        frames: A run's ``RunFrames`` (``load_folder`` or ``EvalResult.frames``).
        sample: How many conversations; all of them when there are fewer.
        stratify: A column of the scores frame (``scenario``, ``agent``, ``status``: pass/warn/fail) or of the runs
            frame (``target``, ``type``) whose values are balanced; ``None``: one stratum.
        random: A seeded random sample instead of the most informative one.
        seed: The seed of the random order (ties, or the whole order with ``random``).

    Returns:
        ``SELECTION_COLUMNS``, one row per chosen conversation, in labelling order.

    Raises:
        LabelPageError: ``sample`` < 1, an unknown ``stratify`` column, or no conversation with a rubric.

    Example (needs a judged run, so not run as a doctest)::

        chosen = choose_conversations(load_folder("reports/billing"), sample=30, stratify="scenario")
    """
    if sample < 1:
        raise LabelPageError(f"--sample must be at least 1, got {sample}")
    priority = conversation_priority(frames)
    if priority.empty:
        statuses = frames.scores["status"].value_counts().to_dict() if len(frames.scores) else {}
        seen = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "none scored"
        raise LabelPageError(f"no conversation has rubric verdicts to label ({len(frames.runs)} conversation(s): "
                             f"{seen}; scripted runs, simulator failures and errored judges have none)")
    priority["conversation"] = priority["run_id"].map(_short_keys(frames.runs))
    priority["stratum"] = _strata(priority, frames, stratify)
    rng = np.random.default_rng(seed)
    priority["_tie"] = rng.permutation(len(priority))
    order = ["_tie"] if random else ["informativeness", "_tie"]
    ascending = [True] if random else [False, True]
    ranked = priority.sort_values(order, ascending=ascending, kind="stable")
    queues = {name: list(part.index) for name, part in ranked.groupby("stratum", sort=False)}
    names = list(queues)  # groupby(sort=False) keeps first appearance: the best (or random-first) stratum leads
    picked: list[int] = []
    while len(picked) < sample and any(queues.values()):
        for name in names:
            if queues[name] and len(picked) < sample:
                picked.append(queues[name].pop(0))
    chosen = priority.loc[picked].reset_index(drop=True)
    chosen["method"] = "random" if random else "most informative"
    return chosen.reindex(columns=list(SELECTION_COLUMNS))


def _short_keys(runs: pd.DataFrame) -> dict[str, str]:
    """``run_id -> scenario/seed/trial`` (the labels format's short key), for display."""
    keys = {}
    for rec in runs.itertuples():
        seed = "" if pd.isna(rec.seed) else int(rec.seed)
        trial = "" if pd.isna(rec.trial) else int(rec.trial)
        keys[str(rec.run_id)] = f"{rec.scenario}/{seed}/{trial}"
    return keys


def _strata(priority: pd.DataFrame, frames: RunFrames, stratify: str | None) -> pd.Series:
    if stratify is None:
        return pd.Series("all", index=priority.index)
    for frame in (frames.scores, frames.runs):  # scores first: its status is pass/warn/fail, the runs' completed/error
        if stratify in frame.columns:
            values = frame.drop_duplicates("run_id").set_index(frame.drop_duplicates("run_id")["run_id"].astype(str))
            return priority["run_id"].map(values[stratify].astype("string").fillna("(none)")).fillna("(none)")
    choices = sorted(set(_stratify_columns(frames)))
    raise LabelPageError(f"--stratify {stratify!r}: no such column; choose one of {', '.join(choices)}")


def _stratify_columns(frames: RunFrames) -> Sequence[str]:
    return [c for frame in (frames.scores, frames.runs) for c in frame.columns if c != "run_id"]
