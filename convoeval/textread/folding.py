"""Folding text for matching: lower case without accents, one character for one (positions stay valid)."""

from __future__ import annotations

import unicodedata


def _fold_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x41, 0x250):
        char = chr(code)
        base = unicodedata.normalize("NFD", char)[0].lower()
        if len(base) == 1 and base != char:
            table[code] = base
    table[ord("º")] = "o"  # the ordinal of "1º de março"
    return table


_FOLD = _fold_table()


def fold(text: str) -> str:
    """Lower case without accents, one character for one: ``"CONCEIÇÃO"`` → ``"conceicao"``."""
    return text.translate(_FOLD)
