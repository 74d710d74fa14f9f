"""Deprecated: running the notebook's configuration lives in ``convoeval.pipeline.notebook`` (one more release)."""

from convoeval.pipeline.notebook import (  # noqa: F401 - re-exported for existing imports
    RERECORD_HINT,
    ReplayMissError,
    RunError,
    ThresholdError,
    check_threshold,
    execute,
    replay_misses,
)
