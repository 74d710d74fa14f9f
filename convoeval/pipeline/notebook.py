"""The run notebook's two steps: its parameters into an ``EvalConfig``, and the run, failing loudly where a notebook
must not pass quietly.

A conversation whose LLM call fails ends as ``error`` and the run goes on; that is right for an evaluation, but in
replay-only mode (CI, nbval) a missing recording means the code or a prompt changed since the cache was recorded,
and the notebook must fail and say how to re-record. Every failure here is one line in the notebook, not a
traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from convoeval.frames import SIMULATOR_FAILURE
from convoeval.llm import LLMError
from convoeval.llm.cache import default_cache_path
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.execute import run_eval, select_scenarios
from convoeval.pipeline.notebook_params import OneLineError
from convoeval.pipeline.results import EvalResult
from convoeval.store import StoreError

__all__ = ["NOTEBOOK_PARAMETERS", "RERECORD_HINT", "ReplayMissError", "RunError", "ThresholdError", "check_threshold",
           "notebook_config", "replay_misses", "run_notebook_config"]

#: The run notebook's parameter names (``EvalConfig``'s fields).
NOTEBOOK_PARAMETERS = tuple(EvalConfig.model_fields)

#: How to re-record, printed with every replay miss.
RERECORD_HINT = ("re-record the calls: run once with CONVOEVAL_CACHE=rw (for the notebook CI cache: "
                 "bash scripts/record-nbval-cache.sh)")


class RunError(OneLineError, RuntimeError):
    """The run could not start or finish (bad configuration, no model endpoint, local model not installed)."""


class ReplayMissError(OneLineError, RuntimeError):
    """Replay-only cache mode and some LLM calls were never recorded."""


class ThresholdError(OneLineError, RuntimeError):
    """``fail_threshold`` is set and a conversation scored below it or ended in error."""


def notebook_config(namespace: Mapping[str, Any]) -> EvalConfig:
    """The notebook's parameters (pass ``globals()``) as a checked ``EvalConfig``; a mistake is one line.

    Raises:
        ConfigError: an unknown parameter name (a mistyped ``papermill -p``) or a bad value.

    Example:
        >>> config = notebook_config({"agent": "billing", "seed": 42})
        >>> config.seeds
        [42]
    """
    config = EvalConfig.from_notebook(namespace)

    select_scenarios(config)  # a selection that matches nothing fails here, before the run cell
    return config


def run_notebook_config(config: EvalConfig, *, progress: Any = "lines", verbose: bool = False) -> EvalResult:
    """Run a checked notebook configuration into its output folder and return the results.

    Conversations already saved in the folder are kept, not re-run (a killed notebook resumes); those that ended in
    ``error`` are run again. Progress goes out as a few lines, and at the end the summary ``convoeval run`` prints
    (the status table, the one-line reasons, the results folder): ``convoeval notebook`` and ``papermill
    --log-output`` show them in the terminal.

    Args:
        config: from ``notebook_config(globals())``.
        progress: ``"lines"`` (default), ``"bar"`` or ``"off"``.
        verbose: print every turn.

    Returns:
        The run's ``EvalResult``; its data is already saved under ``result.out_dir``.

    Raises:
        RunError: the run could not be made (one line: which setting, why).
        ReplayMissError: in replay-only cache mode, calls missing from the cache (with how to re-record).
    """

    try:
        result = run_eval(config, verbose=verbose, progress=progress, allow_errors=True)
    except (ConfigError, LLMError, StoreError) as exc:
        raise RunError(str(exc)) from None
    if progress not in ("off", False):
        # The run's own words for the terminal; the cell's display (the EvalResult) stays the notebook's.
        print("\n".join(result.lines), flush=True)
    misses = replay_misses(result)
    if len(misses):
        first = misses.iloc[0]
        raise ReplayMissError(
            f"{len(misses)} LLM call(s) are not in the replay-only cache {_cache_path()} (first: the {first['role']} "
            f"call of {first['scenario']} turn {_turn(first['turn'])}); a prompt, scenario, agent or model setting "
            f"changed since it was recorded: {RERECORD_HINT}"
        )
    return result


def replay_misses(run: EvalResult) -> pd.DataFrame:
    """The calls that failed because the replay-only cache had no recording for them."""
    calls = run.frames.calls
    if calls.empty or "error" not in calls:
        return calls.iloc[0:0]
    return calls[calls["error"].fillna("").astype(str).str.startswith("CacheMissError")]


def check_threshold(run: EvalResult, fail_threshold: float | None = None) -> str:
    """Fail (one line) when a conversation scored below ``fail_threshold`` or ended in error.

    Args:
        run: the run.
        fail_threshold: default: the run's own ``fail_threshold`` setting; ``None`` means no gate.

    Returns:
        A one-line verdict when the run passes the gate.

    Raises:
        ThresholdError: naming the conversations below the threshold.
    """
    from convoeval.pipeline.summary import below_threshold  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    if fail_threshold is None:
        fail_threshold = (run.meta.get("config") or {}).get("fail_threshold")
    if fail_threshold is None:
        return "no fail_threshold set: nothing to gate"
    below = below_threshold(run.scores, float(fail_threshold))
    if len(below):
        names = ", ".join(f"{r.scenario} (seed {r.seed}, trial {r.trial}: {r.status})" for r in below.itertuples())
        raise ThresholdError(f"{len(below)} conversation(s) below fail_threshold {fail_threshold:g} or in error: "
                             f"{names}")
    broke = int((run.scores["status"] == SIMULATOR_FAILURE).sum()) if len(run.scores) else 0
    if broke:  # not scored, so neither below nor above: said, never counted as a pass
        return (f"every scored conversation scored at least {fail_threshold:g}; {broke} ended simulator_failure "
                "(the simulated patient broke) and were not scored")
    return f"every conversation scored at least {fail_threshold:g}"


def _cache_path() -> str:

    return str(default_cache_path())


def _turn(value: Any) -> str:
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    return "-" if value is None or pd.isna(value) else str(int(value))
