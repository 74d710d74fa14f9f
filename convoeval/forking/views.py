"""What ``notebooks/debug.ipynb`` shows: the conversation, the cost of profiling it, the failure profile plot.

Each function returns something a notebook cell displays (``HTML`` or a ``Chart``), so the notebook stays one call per
cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape as esc
from pathlib import Path
from typing import Annotated, Any, Self

import pandas as pd
from pydantic import Field, StrictInt, model_validator

from convoeval.forking._profile import FAILING, FailureProfile, fork_profile, plot_profile  # noqa: F401 - a step of the notebook
from convoeval.forking._run import DEFAULT_MAX_CALLS, ForkCost, fork_cost
from convoeval.forking._source import load_conversation, patient_turns, scenario_of
from convoeval.forking.pinning import pin
from convoeval.frames import RunFrames
from convoeval.pipeline.config import ConfigError
from convoeval.pipeline.conversation import ConversationResult
from convoeval.pipeline.notebook_params import NotebookParams
from convoeval.pipeline.options import SHARED_DEFAULTS
from convoeval.pipeline.results import EvalResult
from convoeval.report import HTML
from convoeval.report.transcripts import transcript_html

__all__ = ["DebugParams", "check_debug_parameters", "continuations", "contrast", "load", "pin_preview", "profile_cost",
           "run_profile", "show_transcript", "summary"]

#: A whole number of at least 1 (a bool is not one).
_Count = Annotated[StrictInt, Field(ge=1)]


class DebugParams(NotebookParams):
    """The debug notebook's parameters, in its parameters cell's order, with its defaults; checked.

    ``profile_options()`` are the ``fork_profile`` keywords.
    """

    error = ConfigError
    noun = "debug-notebook parameter"
    expects = {name: "must be a whole number of at least 1" for name in ("n", "judge_samples", "concurrency",
                                                                         "max_calls")}

    results_dir: str = Field("reports/example", description="the results folder the conversation is in")
    conversation: str | None = Field(None, description="its file name or run_id (None: the folder's only one)")
    n: _Count = Field(5, description="continuations per fork point")
    turns: list[int] | None = Field(None, description="the fork points (None: every turn)")
    target: str | None = Field(None, description="the agent under test (None: the conversation's own)")
    # SHARED_DEFAULTS' model defaults are None (the environment decides), as the parameters cell's.
    simulator_model: str | dict[str, Any] | None = Field(None, description="the simulated patient's model")
    judge_model: str | dict[str, Any] | None = Field(None, description="the judges' model")
    judge_samples: _Count = Field(SHARED_DEFAULTS["judge_samples"],
                                  description="independent samples per judge and conversation")
    scenarios_dir: str | None = Field(None, description="the scenario files (None: the project's evals/scenarios)")
    concurrency: _Count = Field(SHARED_DEFAULTS["concurrency"], description="conversations in flight at once")
    max_calls: _Count = Field(DEFAULT_MAX_CALLS, description="the most LLM calls the profile may make without confirm")
    confirm: bool = Field(False, description="run a profile above max_calls")

    @model_validator(mode="after")
    def _a_results_folder(self) -> Self:
        if not (Path(self.results_dir).expanduser() / "runs").is_dir():
            raise ValueError(f"results_dir {self.results_dir!r} is not a results folder (no runs/ in it)")
        return self

    def profile_options(self) -> dict[str, Any]:
        """The ``fork_profile`` keywords: every parameter but the conversation's folder and name."""
        return self.model_dump(exclude={"results_dir", "conversation"})


def check_debug_parameters(namespace: Mapping[str, Any]) -> DebugParams:
    """Pick the debug notebook's parameters out of its globals and check them (one clear line on a bad one).

    Raises:
        ConfigError: an unknown parameter (a mistyped ``papermill -p``), a ``results_dir`` that is not a results
            folder, or ``n``/``max_calls``/``judge_samples``/``concurrency`` that are not whole numbers ≥ 1.
    """
    return DebugParams.from_notebook(namespace)


def show_transcript(conversation: ConversationResult) -> HTML:
    """The conversation as a chat, open, with its verdicts (the run report's transcript view)."""

    run = EvalResult(out_dir=Path("."), frames=conversation.frames())
    return HTML(transcript_html(run, conversation.run_id, open=True), text=f"transcript {conversation.run_id}")


def profile_cost(conversation: ConversationResult, params: DebugParams) -> ForkCost:
    """The most a failure profile of ``conversation`` with these parameters can cost (shown before it runs)."""
    scenario = scenario_of(conversation, scenarios_dir=params.scenarios_dir)
    turns = patient_turns(conversation)
    points = list(range(turns + 1)) if params.turns is None else list(params.turns)
    return fork_cost(scenario, turns, points, n=params.n, judge_samples=params.judge_samples)


def load(params: DebugParams) -> ConversationResult:
    """The conversation the parameters name (``load_conversation(results_dir, conversation)``)."""
    return load_conversation(params.results_dir, params.conversation)


def run_profile(conversation: ConversationResult, params: DebugParams) -> FailureProfile:
    """``fork_profile`` of the conversation with the notebook's parameters (refused above ``max_calls`` unless
    ``confirm``); progress as plain lines, which an executed notebook keeps."""
    return fork_profile(conversation, progress="lines", **params.profile_options())


def summary(profile: FailureProfile) -> HTML:
    """Where it went wrong, in one sentence."""
    text = profile.summary()
    return HTML(f"<p><b>{esc(text)}</b></p>", text=text)


def continuations(profile: FailureProfile) -> pd.DataFrame:
    """One row per continuation: its fork point, seed, status, score and how it ended."""
    scores = profile.fork.frames.scores
    runs = profile.fork.frames.runs[["run_id", "seed", "stop_reason", "n_messages"]]
    table = scores[["fork_turn", "run_id", "status", "score"]].merge(runs, on="run_id", how="left")
    return table[["fork_turn", "seed", "status", "score", "stop_reason", "n_messages", "run_id"]]


def contrast(profile: FailureProfile) -> HTML:
    """Two continuations side by side in time: one that passed when forked before the located turn, and one that
    failed when forked at it; what differs between them is what went wrong."""

    k = profile.located
    if k is None or k == 0:
        return HTML(f"<p><i>{esc(profile.summary())}: no turn to contrast.</i></p>", text="no contrast")
    picked = [_first(profile, k - 1, failed=False), _first(profile, k, failed=True)]
    shown = [r for r in picked if r is not None]
    if not shown:
        return HTML("<p><i>No continuation to show.</i></p>", text="no contrast")
    run = EvalResult(out_dir=Path("."), frames=RunFrames.from_payloads(r.payload() for r in shown))
    parts = [transcript_html(run, r.run_id, open=False) for r in shown]
    return HTML("".join(parts), text=f"{len(parts)} continuation(s) around turn {k}")


def _first(profile: FailureProfile, turn: int, *, failed: bool) -> ConversationResult | None:
    for k, result in profile.fork.results:
        if k == turn and (result.status in FAILING) == failed and result.status != "error":
            return result
    return None


def pin_preview(conversation: ConversationResult, params: DebugParams) -> HTML:
    """The scripted regression test ``convoeval pin`` would write for this conversation, and the command."""

    pinned = pin(conversation, scenarios_dir=params.scenarios_dir)
    command = f"convoeval pin {params.results_dir}/runs/<this conversation>.json"
    body = (f"<p>Pin it as a regression test with <code>{esc(command)}</code> "
            f"(<code>--expected-from</code> a passing run to expect what the agent should have done):</p>"
            f"<pre>{esc(pinned.text)}</pre>")
    return HTML(body, text=pinned.text)
