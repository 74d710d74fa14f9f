"""Deprecated: sweeps live in ``convoeval.pipeline.sweep`` (this alias goes after one release)."""

from convoeval.pipeline.sweep import *  # noqa: F401,F403
from convoeval.pipeline.sweep import DONE_MARKER, FAILED_MARKER, SETTINGS_FILE, papermill_executor  # noqa: F401
