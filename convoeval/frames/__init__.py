"""The DataFrame column contracts, declared once; every module that builds or reads a frame imports them here.

Each contract is an ordered mapping ``column -> pandas dtype``. The frames are long and tidy: one row per message
(transcripts), per conversation × criterion × judge sample (rubric), per conversation × sample (holistic), per
conversation (scores). A value that could not be produced is missing (``NA``/``NaN``) with the reason in ``error``,
never a made-up ``False``, ``0`` or ``5``.

A conversation is identified by ``run_id`` (the run that seeded its fixtures), so frames join on it. A run's frames
travel together as one ``RunFrames`` (``frames.scores``, ``frames.rubric``, …), named by ``FRAME_SCHEMAS``.
"""

from convoeval._util.lazy import lazy_exports
from convoeval.frames.schemas import (  # noqa: F401 - the package is the one name callers use
    _LIST_COLUMNS,
    AGENT_STATUSES,
    ASSERTION_COLUMNS,
    ASSERTION_SCHEMA,
    ATTACK_SCHEMA,
    CONVERSATION_KEYS,
    FRAME_SCHEMAS,
    HOLISTIC_COLUMNS,
    HOLISTIC_DIMENSIONS,
    HOLISTIC_SCHEMA,
    LEAK_SCHEMA,
    MESSAGE_ROLES,
    PRODUCTION,
    RUBRIC_COLUMNS,
    RUBRIC_SCHEMA,
    RUN_COLUMNS,
    RUN_SCHEMA,
    SCORE_COLUMNS,
    SCORE_SCHEMA,
    SIMULATOR_FAILURE,
    STATUSES,
    TRANSCRIPT_COLUMNS,
    TRANSCRIPT_SCHEMA,
    TURN_COLUMNS,
    TURN_DIMENSIONS,
    TURN_SCHEMA,
)

# The contracts above are plain dicts and strings; the functions below build and read frames with pandas (with
# NumPy and PyArrow, ~1.5 s of CPU to import on this machine), and RunFrames holds a run's built frames. A
# conversation needs only the contracts, so the rest loads on first use: `convoeval run` imports pandas when results are built, not before its first
# conversation (issue #28, tests/test_startup.py).
_LAZY, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.frames.run_frames": ("FRAME_NAMES", "RunFrames", "UnknownFrameError"),
    "convoeval.frames.storage": ("JSON_COLUMNS", "from_parquet", "to_parquet"),
    "convoeval.frames.spreadsheet": ("read_spreadsheet_csv", "safe_frame", "to_spreadsheet_csv"),
    "convoeval.frames.entries": ("as_entries", "transcript_to_entries"),
    "convoeval.frames.transcripts": ("as_transcripts", "iter_conversations", "transcript_frame"),
    "convoeval.frames.typed": ("conform", "empty_frame", "plain", "records", "typed_frame"),
})
__all__ = sorted([
    *_LAZY, "AGENT_STATUSES", "ASSERTION_COLUMNS", "ASSERTION_SCHEMA", "ATTACK_SCHEMA", "CONVERSATION_KEYS", "FRAME_SCHEMAS",
    "HOLISTIC_COLUMNS", "HOLISTIC_DIMENSIONS", "HOLISTIC_SCHEMA", "LEAK_SCHEMA", "MESSAGE_ROLES", "PRODUCTION", "RUBRIC_COLUMNS", "RUBRIC_SCHEMA",
    "RUN_COLUMNS", "RUN_SCHEMA", "SCORE_COLUMNS", "SCORE_SCHEMA", "SIMULATOR_FAILURE", "STATUSES",
    "TRANSCRIPT_COLUMNS", "TRANSCRIPT_SCHEMA", "TURN_COLUMNS", "TURN_DIMENSIONS", "TURN_SCHEMA",
])
