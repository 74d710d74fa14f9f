"""The two sides of a comparison and their pairs: the same scenario, seed and trial, run by each side.

A side is a results folder (a run's, a sweep's, or any folder whose sub-folders hold ``runs/*.json``), an
``EvalResult``, or a ``RunFrames`` already loaded. A conversation is paired with the one of the other side that has the same
``(scenario, seed, trial)``; every conversation without a partner is listed in ``Pairing.unpaired`` with the reason,
never dropped silently: present on one side only, or its key occurs twice on one side (two folders merged), where
no partner can be chosen without guessing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from convoeval.frames import RunFrames
from convoeval.pipeline.notebook_params import OneLineError
from convoeval.pipeline.results import EvalResult, load_folders, result_folders

__all__ = ["KEY", "CompareError", "Pairing", "Side", "SideSource", "find_result_folders", "load_side", "pair_sides"]

#: What makes two conversations a pair.
KEY = ("scenario", "seed", "trial")
#: Columns of ``Pairing.unpaired``.
UNPAIRED_COLUMNS = ("side", "scenario", "seed", "trial", "run_id", "target", "reason")


#: What a side of a comparison can be read from: a results folder (a run's or a sweep's), an ``EvalResult``, a
#: ``Side`` or a ``RunFrames`` (see ``load_side``).
SideSource: TypeAlias = "Path | str | EvalResult | Side | RunFrames"


class CompareError(OneLineError, ValueError):
    """A comparison that cannot be made (a folder without results, nothing paired); one line."""


@dataclass
class Side:
    """One side of a comparison: its conversations' frames and where they came from.

    Attributes:
        label: how reports name it (``baseline``, ``candidate``, or a folder name).
        frames: the side's ``RunFrames`` (``frames.runs``, ``frames.scores``, …, ``frames.calls``).
        folders: the results folders read (empty for frames given in memory).
        meta: the first folder's ``report.json`` metadata (settings, models), when there is one.
    """

    label: str
    frames: RunFrames
    folders: list[Path] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def runs(self) -> pd.DataFrame:
        return self.frames.runs

    @property
    def targets(self) -> list[str]:
        """The agents under test on this side (one, usually)."""
        return sorted(str(t) for t in self.runs["target"].dropna().unique())

    def select(self, *, agent: str | None = None, scenario: str | None = None, type: str | None = None) -> Side:
        """Only the conversations of one agent, scenario or scenario type (the usual scope options)."""
        runs = self.runs
        keep = pd.Series(True, index=runs.index)
        for column, wanted in (("agent", agent), ("scenario", scenario), ("type", type)):
            if wanted is not None:
                keep &= runs[column].astype("string").eq(wanted).fillna(False)
        ids = set(runs.loc[keep, "run_id"])
        frames = self.frames.only(ids)
        calls = self.frames.calls
        if len(calls) and "scenario" in calls:
            frames = frames.replace(
                calls=calls[calls["scenario"].isin(set(runs.loc[keep, "scenario"]))].reset_index(drop=True))
        return Side(self.label, frames, self.folders, self.meta)


def find_result_folders(root: Path | str) -> list[Path]:
    """The results folders at or under ``root``: every folder holding ``runs/*.json`` (a run, a sweep's combinations).

    Raises:
        CompareError: ``root`` does not exist or holds no finished conversation.
    """
    try:
        return result_folders(root)
    except FileNotFoundError as exc:
        raise CompareError(str(exc)) from None


def load_side(source: SideSource, *, label: str | None = None) -> Side:
    """Read one side of a comparison.

    Args:
        source: a results folder (a run's or a sweep's), an ``EvalResult``, a ``Side``, or a ``RunFrames``.
        label: the side's name in reports (default: the folder's name).

    Returns:
        The ``Side``; every conversation of every results folder found is in its frames.

    Raises:
        CompareError: a folder that holds no finished conversation.

    Example:
        >>> side = load_side("reports/example")
        >>> side.label, len(side.runs)
        ('example', 6)
    """
    if isinstance(source, Side):
        return source if label is None else Side(label, source.frames, source.folders, source.meta)
    if isinstance(source, EvalResult):
        return Side(label or source.out_dir.name, source.frames, [source.out_dir], dict(source.meta))
    if isinstance(source, RunFrames):
        return Side(label or "frames", source)
    root = Path(source).expanduser()
    folders = find_result_folders(root)
    return Side(label or root.name, load_folders(folders), folders, _meta(folders[0]))


def _meta(folder: Path) -> dict[str, Any]:
    report = folder / "report.json"
    if not report.exists():
        return {}
    try:
        return json.loads(report.read_text(encoding="utf-8")).get("meta") or {}
    except (OSError, ValueError):
        return {}  # a damaged report.json loses the settings, not the conversations


@dataclass
class Pairing:
    """Two sides and how their conversations pair.

    Attributes:
        baseline: side A.
        candidate: side B.
        pairs: one row per pair: ``scenario, seed, trial, run_id_a, run_id_b`` (``seed`` NA for scripted runs).
        unpaired: one row per conversation left without a partner (``UNPAIRED_COLUMNS``), with the reason.
    """

    baseline: Side
    candidate: Side
    pairs: pd.DataFrame
    unpaired: pd.DataFrame

    def run_ids(self, side: str) -> set[str]:
        """The run ids of the paired conversations of side ``"a"`` or ``"b"``."""
        return set(self.pairs[f"run_id_{side}"])


def _keyed(runs: pd.DataFrame) -> pd.DataFrame:
    """The run rows with a hashable pairing key (a scripted run's seed is NA: ``"-"`` pairs it with the other NA)."""
    seed = runs["seed"].astype("Int64").astype("string").fillna("-")
    return runs.assign(pair_key=runs["scenario"].astype("string") + "|" + seed + "|" + runs["trial"].astype("string"))


def pair_sides(baseline: Side, candidate: Side) -> Pairing:
    """Pair the two sides' conversations by ``(scenario, seed, trial)``.

    Raises:
        CompareError: no conversation pairs (they ran different scenarios, seeds or trials).
    """
    a, b = _keyed(baseline.runs), _keyed(candidate.runs)
    repeated = {"baseline": set(a.loc[a["pair_key"].duplicated(), "pair_key"]),
                "candidate": set(b.loc[b["pair_key"].duplicated(), "pair_key"])}
    unpaired = []
    kept = []
    for name, runs, other, other_name in (("baseline", a, b, "candidate"), ("candidate", b, a, "baseline")):
        other_keys = set(other["pair_key"])
        for row in runs.itertuples():
            if row.pair_key in repeated[name]:
                unpaired.append(_unpaired(name, row, "its scenario, seed and trial occur more than once on this side"))
            elif row.pair_key in repeated[other_name]:
                unpaired.append(_unpaired(name, row, "its scenario, seed and trial occur more than once on the other "
                                                     "side: no partner can be chosen"))
            elif row.pair_key not in other_keys:
                unpaired.append(_unpaired(name, row, "no conversation with this scenario, seed and trial on the "
                                                     "other side"))
        bad = repeated[name] | repeated[other_name]
        kept.append(runs[~runs["pair_key"].isin(bad) & runs["pair_key"].isin(other_keys)])
    keep_a, keep_b = kept
    pairs = keep_a[["pair_key", *KEY, "run_id"]].merge(keep_b[["pair_key", "run_id"]], on="pair_key",
                                                       suffixes=("_a", "_b"))
    pairs = pairs.drop(columns="pair_key").sort_values(["scenario", "seed", "trial"], na_position="first")
    table = pd.DataFrame(unpaired, columns=list(UNPAIRED_COLUMNS))
    if pairs.empty:
        raise CompareError(f"no conversation of {baseline.label} has a partner in {candidate.label} (same scenario, "
                           f"seed and trial): {len(a)} vs {len(b)} conversation(s); run the candidate on the "
                           "baseline's scenarios × seeds × trials (--candidate-target does)")
    return Pairing(baseline, candidate, pairs.reset_index(drop=True), table)


def _unpaired(side: str, row: Any, reason: str) -> dict[str, Any]:
    seed = None if pd.isna(row.seed) else int(row.seed)
    return {"side": side, "scenario": row.scenario, "seed": seed, "trial": int(row.trial), "run_id": row.run_id,
            "target": row.target, "reason": reason}


def scope(sides: Sequence[Side], *, agent: str | None = None, scenario: str | None = None,
          type: str | None = None) -> list[Side]:
    """Each side restricted to the same agent / scenario / type."""
    return [s.select(agent=agent, scenario=scenario, type=type) for s in sides]
