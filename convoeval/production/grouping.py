"""Where one real conversation ends and the next begins: a silence longer than the import's ``split_after``."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta

from convoeval.production.messages import ImportedMessage

__all__ = ["folded_name", "phone_digits", "same_phone", "split_by_silence"]


def split_by_silence(messages: Sequence[ImportedMessage], gap: timedelta) -> list[list[ImportedMessage]]:
    """The messages in runs separated by more than ``gap`` of silence (messages without a time stay in their run).

    Example:
        >>> from datetime import datetime, timedelta
        >>> at = lambda h: ImportedMessage("patient", "oi", sent_at=datetime(2026, 11, 3) + timedelta(hours=h))
        >>> [len(run) for run in split_by_silence([at(0), at(1), at(30), at(31)], timedelta(hours=24))]
        [2, 2]
    """
    runs: list[list[ImportedMessage]] = []
    last: datetime | None = None
    for message in messages:
        when = message.sent_at
        if not runs or (when is not None and last is not None and _apart(when, last) > gap):
            runs.append([])
        runs[-1].append(message)
        last = when or last
    return runs


def _apart(later: datetime, earlier: datetime) -> timedelta:
    if (later.tzinfo is None) != (earlier.tzinfo is None):  # one source mixing zoned and naive times
        later, earlier = later.replace(tzinfo=None), earlier.replace(tzinfo=None)
    return later - earlier


def folded_name(name: str) -> str:
    """A sender's name compared without case, accents, invisible marks or repeated spaces."""
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c) and unicodedata.category(c) != "Cf")
    return " ".join(kept.casefold().split())


def phone_digits(text: str) -> str:
    """The digits of a phone number, however it is written (``+55 11 98765-4321`` -> ``5511987654321``)."""
    return "".join(c for c in text if c.isdigit())


def same_phone(a: str, b: str) -> bool:
    """Whether two phone numbers are one: the same last 8 digits or more (with or without country and area code)."""
    da, db = phone_digits(a), phone_digits(b)
    if len(da) < 8 or len(db) < 8:
        return False
    n = min(len(da), len(db))
    return da[-n:] == db[-n:]
