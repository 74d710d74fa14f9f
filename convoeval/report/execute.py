"""Run the notebook's configuration and hand back ``RunData``; fail loudly where a notebook must not pass quietly.

A conversation whose LLM call fails ends as ``error`` and the run goes on (``convoeval.conversation``); that is
right for an evaluation, but in replay-only mode (CI, nbval) a missing recording means the code or a prompt
changed since the cache was recorded, and the notebook must fail and say how to re-record.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from convoeval.report.data import RunData

__all__ = ["RERECORD_HINT", "ReplayMissError", "RunError", "ThresholdError", "check_threshold", "execute",
           "replay_misses"]

#: How to re-record, printed with every replay miss.
RERECORD_HINT = ("re-record the calls: run once with CONVOEVAL_CACHE=rw (for the notebook CI cache: "
                 "bash scripts/record-nbval-cache.sh)")


class _OneLine(RuntimeError):
    def _render_traceback_(self) -> list[str]:
        # IPython shows this line instead of a traceback: the reason is the message, not our call stack.
        return [f"{type(self).__name__}: {self}"]


class RunError(_OneLine):
    """The run could not start or finish (bad configuration, no model endpoint, local model not installed)."""


class ReplayMissError(_OneLine):
    """Replay-only cache mode and some LLM calls were never recorded."""


class ThresholdError(_OneLine):
    """``fail_threshold`` is set and a conversation scored below it or ended in error."""


def execute(config: Any, *, progress: bool = False, verbose: bool = False) -> RunData:
    """Run a checked notebook configuration into its output folder and return the results.

    Conversations already saved in the folder are kept, not re-run (a killed notebook resumes).

    Args:
        config: the ``NotebookConfig`` from ``check_parameters``.
        progress: show a progress bar of conversations (off in notebooks: executed notebooks keep every update).
        verbose: print every turn.

    Returns:
        The run's ``RunData``; its data is already saved under ``config.output_dir``.

    Raises:
        RunError: the run could not be made (one line: which setting, why).
        ReplayMissError: in replay-only cache mode, calls missing from the cache (with how to re-record).
    """
    from convoeval._aio import run_sync
    from convoeval.llm import LLMError
    from convoeval.runs import RunConfigError, aexecute_run
    from convoeval.store import StoreError

    try:
        outcome = run_sync(aexecute_run(config.run_config, config.output_dir, verbose=verbose, progress=progress,
                                        resume=True))
    except (RunConfigError, LLMError, StoreError) as exc:
        raise RunError(str(exc)) from None
    run = RunData.from_outcome(outcome)
    misses = replay_misses(run)
    if len(misses):
        first = misses.iloc[0]
        raise ReplayMissError(
            f"{len(misses)} LLM call(s) are not in the replay-only cache {_cache_path()} (first: the {first['role']} "
            f"call of {first['scenario']} turn {_turn(first['turn'])}); a prompt, scenario, agent or model setting "
            f"changed since it was recorded: {RERECORD_HINT}"
        )
    return run


def replay_misses(run: RunData) -> pd.DataFrame:
    """The calls that failed because the replay-only cache had no recording for them."""
    calls = run.frames["calls"]
    if calls.empty or "error" not in calls:
        return calls.iloc[0:0]
    return calls[calls["error"].fillna("").astype(str).str.startswith("CacheMissError")]


def check_threshold(run: RunData, fail_threshold: float | None = None) -> str:
    """Fail (one line) when a conversation scored below ``fail_threshold`` or ended in error.

    Args:
        run: the run.
        fail_threshold: default: the run's own ``fail_threshold`` setting; ``None`` means no gate.

    Returns:
        A one-line verdict when the run passes the gate.

    Raises:
        ThresholdError: naming the conversations below the threshold.
    """
    from convoeval.summary import below_threshold

    if fail_threshold is None:
        fail_threshold = (run.meta.get("config") or {}).get("fail_threshold")
    if fail_threshold is None:
        return "no fail_threshold set: nothing to gate"
    below = below_threshold(run.scores, float(fail_threshold))
    if len(below):
        names = ", ".join(f"{r.scenario} (seed {r.seed}, trial {r.trial}: {r.status})" for r in below.itertuples())
        raise ThresholdError(f"{len(below)} conversation(s) below fail_threshold {fail_threshold:g} or in error: "
                             f"{names}")
    return f"every conversation scored at least {fail_threshold:g}"


def _cache_path() -> str:
    from convoeval.cache import default_cache_path

    return str(default_cache_path())


def _turn(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else str(int(value))
