"""Deprecated home of one conversation's run: use ``convoeval.pipeline`` (this alias goes after one release)."""

from convoeval.pipeline.conversation import (  # noqa: F401 - re-exported for existing imports
    ConversationResult,
    Log,
    RunOptions,
    arun_any,
    arun_conversation,
    default_target,
    model_label,
    run_any,
    run_conversation,
)

RunResult = ConversationResult  # the name before the pipeline's
