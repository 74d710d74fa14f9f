"""Deprecated home of ``pin``: use ``convoeval.pin`` or ``convoeval.forking.pinning`` (this alias goes after one release)."""

from convoeval.forking.pinning import PinError, Pinned, default_pin_path, pin  # noqa: F401 - re-exported for existing imports
