"""What the console lines and the advice read of a comparison (``ComparisonView``), declared apart from the
``Comparison`` class so that ``comparison.py`` can print through ``console.py`` and ``advice.py`` without those
modules importing it back (the package's modules import each other one way: ``pyproject.toml``'s acyclic contract)."""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

from convoeval.compare.pairing import Side

__all__ = ["ComparisonView"]


class ComparisonView(Protocol):
    """The parts of a ``convoeval.compare.Comparison`` its words are made from."""

    pairs: pd.DataFrame
    scores: pd.DataFrame
    settings: dict[str, Any]
    calibrated: pd.DataFrame
    flips: pd.DataFrame

    @property
    def baseline(self) -> Side:
        """The baseline side."""

    @property
    def candidate(self) -> Side:
        """The candidate side."""

    @property
    def unpaired(self) -> pd.DataFrame:
        """Conversations without a partner."""

    @property
    def overall(self) -> pd.Series:
        """The overall score row."""

    @property
    def verdict(self) -> str:
        """The headline verdict."""

    def reason(self) -> str:
        """Why the verdict."""

    def regressions(self) -> pd.DataFrame:
        """The regressed rows."""

    def improvements(self) -> pd.DataFrame:
        """The improved rows."""

    def interval_note(self) -> str:
        """What the score's interval rests on."""

    def noise_line(self) -> str:
        """The noise floor, in words."""
