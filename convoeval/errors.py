"""The one base of convoeval's errors: ``except ConvoevalError`` catches every error convoeval raises on purpose.

Each error keeps the built-in parent callers already catch (``class ScenarioError(ConvoevalError, ValueError)``,
``class StoreError(ConvoevalError, RuntimeError)``), so ``except ValueError`` still works where it did. A bug in
convoeval (a ``TypeError``, a ``KeyError`` from a typo) is not a ``ConvoevalError``: catching the base never hides
one. This module imports nothing, so every layer can import it (docs/layout.md, docs/decisions.md).

Example:
    >>> from convoeval.store import StoreError
    >>> issubclass(StoreError, ConvoevalError), issubclass(StoreError, RuntimeError)
    (True, True)
"""

from __future__ import annotations

__all__ = ["ConvoevalError"]


class ConvoevalError(Exception):
    """Base of every error convoeval raises on purpose (bad input, a failed model call, a store that refused...)."""
