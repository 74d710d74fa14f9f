"""What the fidelity checks read of one conversation: the run, its scenario's facts and goal, the database's goal verdict; the checks and their thresholds, validated."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from convoeval.scenarios import (
    DEFAULT_SCENARIOS_DIR,
    ScenarioError,
    load_scenarios,
    parse_scenario,
)
from convoeval.stats.goal import goal_truth

#: The checks, in report order.
CHECKS = ("invented_fact", "wrong_language", "false_goal_complete", "parroting")


#: Default thresholds; each is a keyword argument of ``fidelity_flags``.
THRESHOLDS: dict[str, float] = {
    "fact_min_digits": 8,  # digit runs shorter than this (amounts, times, invoice numbers) are not personal facts
    "language_min_words": 3,  # shorter messages ("ok", "Pix", "Claro!") carry no reliable language signal
    "language_min_confidence": 0.7,  # detector probability (among pt/es/en) below which a message stays undecided
    "language_share": 0.2,  # flag when MORE than this share of the decided patient messages is in another language
    "parrot_min_words": 5,  # shorter patient messages (acknowledgements) are never parroting
    "parrot_min_run": 3,  # only runs of at least this many words copied in order count as copied
    "parrot_ratio": 0.7,  # flag a message when at least this share of its words is copied from the agent's last one
}


_SHARES = ("language_min_confidence", "language_share", "parrot_ratio")


_QUOTE = 60


_NO_VERDICT = object()  # the database has no goal verdict for the run


_Verdict = tuple[bool | None, int | None, str]  # flagged (None: undecided), first offending turn, detail


@dataclass(frozen=True)
class _Run:
    """What the checks read about one conversation."""

    messages: list[dict[str, Any]]  # role, turn, text, signal; in conversation order
    scenario: Any | None  # a loaded scenario or one with its fields (id, locale, persona); None when not found
    goal_met: Any  # the database's goal verdict (True/False/NA), or _NO_VERDICT
    limits: Mapping[str, float]

    def played(self) -> Any:
        """The scenario, for the checks that need one (``flag_fidelity`` runs them only when it was found)."""
        if self.scenario is None:
            raise LookupError("a check that needs the scenario ran without one")
        return self.scenario


def _valid_checks(checks: Sequence[str] | str) -> tuple[str, ...]:
    asked = (checks,) if isinstance(checks, str) else tuple(checks)
    unknown = [c for c in asked if c not in CHECKS]
    if unknown or not asked:
        raise ValueError(f"unknown check(s) {unknown}; expected some of {list(CHECKS)}")
    return tuple(dict.fromkeys(asked))


def _valid_thresholds(given: Mapping[str, float]) -> dict[str, float]:
    unknown = sorted(set(given) - set(THRESHOLDS))
    if unknown:
        raise TypeError(f"unknown threshold(s) {unknown}; expected some of {sorted(THRESHOLDS)}")
    limits = {**THRESHOLDS, **given}
    for name, value in limits.items():
        if name in _SHARES and not 0 <= value <= 1:
            raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
        if name not in _SHARES and (int(value) != value or value < 1):
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return limits


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {name} frame lacks column(s) {missing}")


def _conversational_runs(runs: pd.DataFrame | None, transcripts: pd.DataFrame) -> list[tuple[str, str]]:
    """(run_id, scenario) of the runs to check: the conversational ones of the runs frame, else every transcript."""
    if runs is not None and len(runs):
        _require(runs, ("run_id", "scenario", "type"), "runs")
        talked = runs[runs["type"] == "conversational"].drop_duplicates("run_id")
        return list(zip(talked["run_id"].astype(str), talked["scenario"].astype(str), strict=True))
    firsts = transcripts.drop_duplicates("run_id")
    return list(zip(firsts["run_id"].astype(str), firsts["scenario"].astype(str), strict=True))


def _scenario_index(scenarios: Any) -> dict[str, Any]:
    if scenarios is None or isinstance(scenarios, (str, os.PathLike)):
        folder = DEFAULT_SCENARIOS_DIR if scenarios is None else scenarios
        try:
            scenarios = load_scenarios(Path(folder))
        except ScenarioError as exc:
            raise ValueError(f"cannot load the scenarios ({exc.one_line()}); pass scenarios=") from None
    if hasattr(scenarios, "persona"):  # one scenario rather than a collection
        scenarios = [scenarios]
    items = scenarios.values() if isinstance(scenarios, Mapping) else scenarios
    loaded = [parse_scenario(s) if isinstance(s, Mapping) else s for s in items]
    for s in loaded:
        if not all(hasattr(s, a) for a in ("id", "locale", "persona")):
            raise ValueError(f"scenarios must be loaded scenarios, their fields as mappings, or a folder; got "
                             f"{type(s).__name__}")
    return {s.id: s for s in loaded}


def _goal_verdicts(assertions: pd.DataFrame | None) -> dict[str, Any]:
    if assertions is None or assertions.empty:
        return {}
    _require(assertions, ("run_id", "scenario", "assertion", "passed"), "assertions")
    truth = goal_truth(assertions)
    return dict(zip(truth["run_id"].astype(str), truth["goal_met"], strict=True))


def _messages(rows: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The conversation's messages in order: role, turn, text, signal (missing values as None)."""
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    if rows is None:
        return []
    out = []
    for role, turn, text, signal in zip(rows["role"], rows["turn"], rows["text"], rows["signal"], strict=True):
        out.append({"role": role, "turn": None if pd.isna(turn) else int(turn),
                    "text": "" if pd.isna(text) else str(text), "signal": None if pd.isna(signal) else signal})
    return out


def _patient(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "patient"]


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= _QUOTE else f'"{flat[:_QUOTE - 1]}…"'
