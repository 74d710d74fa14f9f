"""A store whose reads are memoised for one assertion check: the same query is sent once, its rows shared.

``check_assertions`` hands it to the clinic checkers inside one read snapshot (``Store.snapshot``), where the
database cannot change between two reads, so a repeated query (the run's messages for ``tools_called`` and
``tools_not_called``, the patient's appointments for four keys) would only return the same rows again. Each caller
gets its own copies of the rows. Everything but ``select`` goes to the store unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convoeval.store.base import Row, Store

__all__ = ["ReadOnce"]


class ReadOnce:
    """``store`` with ``select`` memoised by its exact arguments (for the span of one snapshot only)."""

    def __init__(self, store: Store):
        self._store = store
        self._rows: dict[tuple[Any, ...], list[Row]] = {}

    def select(self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None) -> list[Row]:
        """``store.select``, sent once per distinct (table, where, order_by)."""
        try:
            key = (table, tuple(sorted((where or {}).items())), order_by)
            hash(key)
        except TypeError:  # an unhashable or unorderable value: not worth memoising, ask the store
            return self._store.select(table, where, order_by=order_by)
        if key not in self._rows:
            self._rows[key] = self._store.select(table, where, order_by=order_by)
        return [dict(row) for row in self._rows[key]]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
