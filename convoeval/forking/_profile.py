"""The failure profile of a conversation: fork it at every turn and measure how often the continuations fail.

Before the turn that went wrong, some continuations avoid the failure (the simulator takes another path); once that
turn is replayed, they all inherit it. The turn where the failure rate jumps, and stays high, is where it went
wrong (``locate_failure``). Rates carry a Wilson interval (``scipy.stats.binomtest``): with five continuations per
turn a bootstrap interval of 5/5 would be [1, 1], which claims a certainty five conversations cannot give.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Unpack

import pandas as pd

from convoeval._util.aio import blocking
from convoeval.forking._run import FORK_DEFAULTS, Fork, ForkOptions, afork_turns
from convoeval.forking._source import ConversationSource, load_conversation, patient_turns
from convoeval.pipeline.options import settle
from convoeval.report import HTML, Chart
from convoeval.stats.proportions import wilson_interval

__all__ = ["FAILING", "PROFILE_COLUMNS", "FailureProfile", "afork_profile", "failure_table", "fork_profile",
           "locate_failure"]

#: The statuses that count as a failed continuation: a failed criterion (warn) already is one.
FAILING = ("warn", "fail")
PROFILE_COLUMNS = ["fork_turn", "n", "failed", "errors", "failure_rate", "ci_low", "ci_high"]
LEVEL = 0.95


def failure_table(scores: pd.DataFrame, *, failing: Sequence[str] = FAILING, level: float = LEVEL) -> pd.DataFrame:
    """Failure rate of the continuations per fork point, with a Wilson interval.

    Args:
        scores: the forks' ``scores`` frame (``Fork.frames.scores``: one row per continuation, with ``fork_turn``).
        failing: statuses that count as a failure.
        level: the interval's confidence level.

    Returns:
        One row per fork point (``PROFILE_COLUMNS``); ``n`` counts the scored continuations: those that ended in
        ``error`` are counted in ``errors`` and left out of the rate (the evaluation failed, not the agent).
    """
    rows = []
    for k, group in scores.groupby("fork_turn", sort=True):
        scored = group[group["status"] != "error"]
        n, failed = len(scored), int(scored["status"].isin(failing).sum())
        low = high = rate = float("nan")
        if n:
            rate = failed / n
            low, high = wilson_interval(failed, n, level)
        rows.append({"fork_turn": int(k), "n": n, "failed": failed, "errors": len(group) - n, "failure_rate": rate,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=PROFILE_COLUMNS)


def locate_failure(profile: FailureProfile | pd.DataFrame, *, threshold: float = 0.5) -> int | None:
    """The turn after which failure becomes likely: the first fork point from which every later one (itself
    included) fails at least ``threshold`` of the time.

    Returns:
        That turn k (the original's turn k, once replayed, makes failure likely; 0 means it was likely from the
        start: the agent fails whatever the patient says), or ``None`` when the last fork point is below
        ``threshold`` (the failure is not reproduced) or no fork point was scored.

    Example:
        >>> table = pd.DataFrame({"fork_turn": [0, 1, 2, 3], "failure_rate": [0.2, 0.4, 0.2, 1.0]})
        >>> locate_failure(table)
        3
    """
    table = profile.table if isinstance(profile, FailureProfile) else profile
    rates = table.dropna(subset=["failure_rate"]).sort_values("fork_turn")
    located = None
    for k, rate in zip(rates["fork_turn"], rates["failure_rate"], strict=True):
        if rate >= threshold:
            located = int(k) if located is None else located
        else:
            located = None
    return located


@dataclass
class FailureProfile:
    """A conversation forked at every turn: the failure rate per fork point and the continuations behind it.

    Attributes:
        fork: the continuations (``.frames``, ``.results``, ``.original``, ``.cost``).
        table: one row per fork point (``PROFILE_COLUMNS``).
        threshold: the failure rate that counts as "likely" for ``located``.
    """

    fork: Fork
    table: pd.DataFrame
    threshold: float = 0.5

    @property
    def located(self) -> int | None:
        """``locate_failure(self)``: the turn after which failure becomes likely."""
        return locate_failure(self.table, threshold=self.threshold)

    def summary(self) -> str:
        """One sentence: where it went wrong, or why that cannot be said."""
        k = self.located
        if k is None:
            return (f"the continuations do not fail at least {self.threshold:.0%} of the time from any turn on: "
                    "the failure is not reproduced (more forks, or another seed)")
        if k == 0:
            return "failure is likely from the start: the agent fails whatever the patient says"
        row = self.table.set_index("fork_turn")
        before = row["failure_rate"].get(k - 1, float("nan"))
        return (f"it went wrong at turn {k}: forked after it, {row.at[k, 'failure_rate']:.0%} of the continuations "
                f"fail; forked before it, {before:.0%}")

    def plot(self) -> Chart | HTML:
        """The profile as a chart (``plot_profile``)."""
        return plot_profile(self)

    def _repr_html_(self) -> str:
        table = self.table.to_html(index=False, float_format=lambda x: f"{x:.2f}")
        return f"{table}<p>{self.summary()}</p>"


async def afork_profile(run: ConversationSource, *, n: int = 5, turns: Iterable[int] | None = None,
                        failing: Sequence[str] = FAILING, threshold: float = 0.5,
                        **options: Unpack[ForkOptions]) -> FailureProfile:
    """Fork a conversation at every turn and measure the failure rate of the continuations per fork point.

    Args:
        run: the conversation (see ``fork``).
        n: continuations per fork point.
        turns: the fork points (default every one: 0, a fresh start, to the conversation's last patient turn).
        conversation: with a results folder, the conversation's file name or run_id.
        failing: statuses that count as a failure (default warn and fail).
        threshold: the failure rate that counts as likely (``locate_failure``).
        **options: the other ``ForkOptions``, as ``fork`` (target, scenario, scenarios_dir, confirm, max_calls, out
            and the ``SharedOptions``: simulator_model, judge_model, judge_samples, concurrency, store, progress,
            simulator_gate); the bound applies to the whole profile.

    Returns:
        A ``FailureProfile``: ``.table``, ``.located``, ``.summary()``, ``.plot()``, ``.fork.frames``.

    Raises:
        ForkCostError: above ``max_calls`` LLM calls without ``confirm``.
        TypeError: an option ``fork_profile`` does not take, named.

    Example (runs the forks, so not run as a doctest)::

        profile = fork_profile("reports/run", conversation="billing-conv-happy-payment__s42__t1", n=5)
        profile.located, profile.summary()
    """
    settle("fork_profile", options, FORK_DEFAULTS)
    original = load_conversation(run, options.pop("conversation", None))
    points = list(turns) if turns is not None else list(range(patient_turns(original) + 1))
    forked = await afork_turns(original, points, n=n, **options)
    return FailureProfile(fork=forked, table=failure_table(forked.frames.scores, failing=failing),
                          threshold=threshold)


#: ``afork_profile``, blocking.
fork_profile = blocking(afork_profile)


def plot_profile(profile: FailureProfile) -> Chart | HTML:
    """Failure rate of the continuations per fork point, with its interval; the located turn is marked."""
    from matplotlib.figure import Figure  # matplotlib loads only when a profile is drawn  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    table = profile.table.dropna(subset=["failure_rate"])
    if table.empty:
        return HTML("<p><i>No continuation was scored: nothing to plot.</i></p>", text="no profile")
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    x, y = table["fork_turn"].to_numpy(), table["failure_rate"].to_numpy()
    errors = [y - table["ci_low"].to_numpy(), table["ci_high"].to_numpy() - y]
    ax.errorbar(x, y, yerr=errors, fmt="o-", color="#0969da", ecolor="#8c959f", capsize=3, label="failure rate")
    ax.axhline(profile.threshold, color="#d4a72c", linestyle="--", linewidth=1, label="likely")
    located = profile.located
    if located is not None:
        ax.axvline(located, color="#cf222e", linewidth=1.2, label=f"went wrong: turn {located}")
    ax.set_xticks(x, [str(int(k)) for k in x])
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("fork point (turns replayed from the original; 0 = a fresh start)")
    ax.set_ylabel("continuations failing")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(profile.summary()[:110], fontsize=9)
    return Chart(fig, f"failure profile: {profile.summary()}")
