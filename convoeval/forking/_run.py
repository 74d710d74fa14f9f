"""Forking one conversation: replay its first k patient messages verbatim on a freshly seeded store, then let the
simulator continue n times with new seeds; each continuation is judged and asserted as any run.

The cost is known before anything runs (``fork_cost``) and a job above ``max_calls`` LLM calls is refused unless
``confirm=True``: a fork profile of a long conversation with a local model can take an hour.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Unpack

from convoeval._util.aio import blocking
from convoeval.forking._source import ConversationSource, load_conversation, patient_turns, scenario_of
from convoeval.frames import RunFrames
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.pipeline.conversation import ConversationResult
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.local import arun_jobs
from convoeval.pipeline.notebook_params import OneLineError
from convoeval.pipeline.options import SHARED_DEFAULTS, RunOptions, SharedOptions, opened_store, settle
from convoeval.pipeline.progress import Progress, as_mode
from convoeval.pipeline.replay import replay_from_transcript
from convoeval.pipeline.results import write_conversation
from convoeval.scenarios import ConversationalScenario, Scenario

__all__ = ["DEFAULT_MAX_CALLS", "FORK_DEFAULTS", "ForkCost", "ForkCostError", "Fork", "ForkOptions", "afork",
           "afork_turns", "fork", "fork_cost", "fork_seeds"]

#: LLM calls a fork job may make without ``confirm=True`` (about ten minutes with the embedded local model).
DEFAULT_MAX_CALLS = 200


class ForkCostError(OneLineError, ValueError):
    """A fork job larger than its bound was asked for without ``confirm=True``."""


@dataclass(frozen=True, repr=False)
class ForkCost:
    """What a fork job will cost, at most, before it runs.

    Attributes:
        fork_turns: the fork points (0 = a fresh conversation, k = after the original's turn k).
        n: continuations per fork point.
        conversations: ``len(fork_turns) × n``.
        simulator_calls: at most one per simulated patient turn (turns after the fork point, up to ``max_turns``).
        agent_replies: at most one per turn (LLM calls too when the agent under test is an LLM).
        judge_calls: rubric and holistic judge, ``judge_samples`` each, per conversation.
    """

    fork_turns: tuple[int, ...]
    n: int
    conversations: int
    simulator_calls: int
    agent_replies: int
    judge_calls: int

    @property
    def calls(self) -> int:
        """The LLM calls convoeval makes (simulator + judges), at most."""
        return self.simulator_calls + self.judge_calls

    def line(self) -> str:
        """One line for a terminal or a notebook."""
        points = len(self.fork_turns)
        return (f"{points} fork point(s) × {self.n} continuation(s) = {self.conversations} conversation(s): "
                f"≤ {self.simulator_calls} simulator + {self.judge_calls} judge = ≤ {self.calls} LLM calls, "
                f"≤ {self.agent_replies} agent replies")

    def __str__(self) -> str:
        return self.line()

    __repr__ = __str__  # what a notebook cell shows


def fork_seeds(seed: int | None, at_turn: int, n: int) -> list[int]:
    """``n`` distinct simulator seeds for the continuations after ``at_turn``, derived from the original seed.

    The same original seed and turn give the same seeds (a fork is repeatable); other turns give others. They are
    hashed, not ``seed + i``: a conversation's simulator call at turn t uses ``seed + t``, so consecutive seeds would
    replay each other's patient shifted by one turn.

    Example:
        >>> fork_seeds(42, 3, 2) == fork_seeds(42, 3, 2) != fork_seeds(42, 4, 2)
        True
    """
    seeds: list[int] = []
    i = 0
    while len(seeds) < n:
        digest = hashlib.sha256(f"fork:{seed}:{at_turn}:{i}".encode()).digest()
        candidate = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        if candidate != seed and candidate not in seeds:
            seeds.append(candidate)
        i += 1
    return seeds


def fork_cost(scenario: Scenario, turns: int, fork_turns: Iterable[int], *, n: int,
              judge_samples: int = 1) -> ForkCost:
    """The most a fork job can cost (see ``ForkCost``).

    Args:
        scenario: the conversation's scenario (its ``max_turns`` bounds a continuation).
        turns: the original conversation's patient turns.
        fork_turns: the fork points.
        n: continuations per fork point.
        judge_samples: samples per judge.
    """
    points = tuple(fork_turns)
    max_turns = getattr(scenario, "max_turns", turns)
    simulated = sum(max(max_turns - k, 0) for k in points) * n
    return ForkCost(fork_turns=points, n=n, conversations=len(points) * n, simulator_calls=simulated,
                    agent_replies=max_turns * len(points) * n, judge_calls=2 * judge_samples * len(points) * n)


def check_cost(cost: ForkCost, *, confirm: bool, max_calls: int) -> None:
    """Refuse a job above ``max_calls`` LLM calls unless confirmed.

    Raises:
        ForkCostError: one line naming the cost and how to go ahead.
    """
    if cost.calls > max_calls and not confirm:
        raise ForkCostError(f"this fork job may make {cost.calls} LLM calls, above the bound of {max_calls} "
                            f"({cost.line()}); pass confirm=True (CLI: --yes) to run it, or fewer forks or turns")


@dataclass
class Fork:
    """The continuations of a conversation forked at one or more turns.

    Attributes:
        original: the conversation forked.
        results: ``(fork_turn, result)`` per continuation, in the order they were planned.
        cost: the bound shown before running.
    """

    original: ConversationResult
    results: list[tuple[int, ConversationResult]]
    cost: ForkCost
    _frames: RunFrames | None = field(default=None, repr=False, compare=False)

    @property
    def frames(self) -> RunFrames:
        """Tidy frames of every continuation (a ``RunFrames``, as a run's), each row keyed by ``fork_of`` and
        ``fork_turn``; built once."""
        if self._frames is None:
            self._frames = self._build_frames()
        return self._frames

    def _build_frames(self) -> RunFrames:
        turn_of = {r.run_id: k for k, r in self.results}
        frames = RunFrames.from_payloads((r.payload() for _, r in self.results), call_columns=CALL_COLUMNS)
        for _name, frame in frames.items():  # new frames, built here: the columns are added in place
            if "run_id" in frame:
                frame.insert(0, "fork_turn", frame["run_id"].map(turn_of).astype("Int64"))
                frame.insert(0, "fork_of", self.original.run_id)
        return frames


def _jobs(scenario: Scenario, original: ConversationResult, fork_turns: Sequence[int], n: int
          ) -> list[tuple[int, Job]]:
    seed = original.rows["runs"][0].get("seed")
    transcript = original.rows.get("transcripts") or []
    planned: list[tuple[int, Job]] = []
    for k in fork_turns:
        replay = replay_from_transcript(transcript, up_to_turn=k, until_divergence=False) if k > 0 else None
        planned.extend((k, Job(scenario, s, 1, replay=replay)) for s in fork_seeds(seed, k, n))
    return planned


class ForkOptions(SharedOptions, total=False):
    """The options of the fork verbs (``fork``, ``fork_profile``, ``afork_turns``): the ``SharedOptions`` of every
    verb that runs conversations (models, judge samples, concurrency, store, progress, gate) and the fork's own.

    Defaults (``FORK_DEFAULTS``): ``conversation`` None, ``target`` None (the conversation's own), ``scenario`` None
    (found by the conversation's scenario id), ``scenarios_dir`` None (the project's ``evals/scenarios``), ``confirm``
    False, ``max_calls`` ``DEFAULT_MAX_CALLS``, ``out`` None; the shared ones as ``SHARED_DEFAULTS``.
    """

    conversation: str | None
    target: str | None
    scenario: Scenario | None
    scenarios_dir: Path | str | None
    confirm: bool
    max_calls: int
    out: Path | str | None


#: Every fork option with its default: the shared ones, then the fork's own.
FORK_DEFAULTS: ForkOptions = {**SHARED_DEFAULTS, "conversation": None, "target": None, "scenario": None,
                              "scenarios_dir": None, "confirm": False, "max_calls": DEFAULT_MAX_CALLS, "out": None}


async def afork_turns(run: ConversationSource, fork_turns: Iterable[int], *, n: int = 5,
                      **options: Unpack[ForkOptions]) -> Fork:
    """Fork a conversation at several turns (``afork`` at one, ``afork_profile`` at every one). Same options as
    ``fork``, with ``fork_turns`` the fork points."""

    opts = settle("afork_turns", options, FORK_DEFAULTS)
    original = load_conversation(run, opts["conversation"])
    sc = scenario_of(original, scenario=opts["scenario"], scenarios_dir=opts["scenarios_dir"])
    if not isinstance(sc, ConversationalScenario):
        raise ValueError(f"{sc.id} is a scripted scenario: only simulated conversations can be forked")
    turns = patient_turns(original)
    points = sorted(set(fork_turns))
    bad = [k for k in points if not 0 <= k <= turns]
    if bad or n < 1:
        raise ValueError(f"fork turns must be between 0 and the conversation's {turns} patient turns and n at least 1"
                         f" (got turns {bad or points}, n={n})")
    cost = fork_cost(sc, turns, points, n=n, judge_samples=opts["judge_samples"])
    check_cost(cost, confirm=opts["confirm"], max_calls=opts["max_calls"])
    planned = _jobs(sc, original, points, n)
    index = {id(job): i for i, (_, job) in enumerate(planned)}
    finished: dict[int, ConversationResult] = {}
    out = opts["out"]
    report = Progress(len(planned), mode=as_mode(opts["progress"]))

    def keep(job: Job, result: ConversationResult) -> None:
        i = index[id(job)]
        finished[i] = result
        if out is not None:
            payload = {**result.payload(), "fork": {"of": original.run_id, "turn": planned[i][0]}}
            write_conversation(Path(out), f"{job.key}__fork{planned[i][0]}", payload)
        report.finished(job.label, result.status)

    target = opts["target"] or str(original.rows["runs"][0].get("target") or "") or None
    try:
        with opened_store(opts["store"]) as store:
            run_options = RunOptions.from_shared(opts, store=store, target=target)
            run_options.on_turn = report.turn
            await arun_jobs([job for _, job in planned], run_options, concurrency=opts["concurrency"],
                            on_result=keep)
    finally:
        report.close()
    # Results arrive as conversations end: back in planned order (fork point, then seed) for stable frames.
    results = [(k, finished[i]) for i, (k, _) in enumerate(planned)]
    return Fork(original=original, results=results, cost=cost)


async def afork(run: ConversationSource, *, at_turn: int, n: int = 5, **options: Unpack[ForkOptions]) -> Fork:
    """Replay a conversation's first ``at_turn`` patient messages, then let the simulator continue ``n`` times.

    The store is seeded afresh for every continuation, so the agent's state at the fork point is the one the replay
    rebuilds; the agent really answers every message. Each continuation is judged and asserted as usual.

    Args:
        run: the conversation: a ``ConversationResult``, a ``runs/<key>.json`` file or a results folder.
        at_turn: the fork point: 0 starts afresh (new seeds only), k replays turns 1..k verbatim.
        n: continuations, each with its own seed (``fork_seeds``: derived from the original seed and ``at_turn``).
        **options: ``ForkOptions`` — the fork's own:

            * conversation: with a results folder, the conversation's file name or run_id.
            * target: the agent under test (default: the one the conversation was run against).
            * scenario: the scenario object (default: found by the conversation's scenario id).
            * scenarios_dir: where to find it (default: the project's ``evals/scenarios``).
            * confirm: run even when the bound exceeds ``max_calls`` LLM calls (default False).
            * max_calls: the bound above which ``confirm=True`` is needed (default ``DEFAULT_MAX_CALLS``).
            * out: also save every continuation to ``<out>/runs/`` (``load_results`` reads them back).

            and the ``SharedOptions`` of every verb that runs conversations (``convoeval.pipeline.options``, defaults
            in ``SHARED_DEFAULTS``): simulator_model, judge_model, judge_samples, concurrency (continuations in
            flight), store, progress, simulator_gate.

    Returns:
        A ``Fork``: ``.frames`` (runs, scores, transcripts, … with ``fork_of`` and ``fork_turn``), ``.results``.

    Raises:
        ForkCostError: above ``max_calls`` without ``confirm``.
        ValueError: a fork point outside 0..turns, a scripted scenario, or a conversation that cannot be found.
        TypeError: an option ``fork`` does not take, named.

    Example (runs the forks, so not run as a doctest)::

        forks = fork("reports/run/runs/billing-conv-happy-payment__s42__t1.json", at_turn=2, n=5)
        forks.frames.scores["status"].value_counts()
    """
    settle("fork", options, FORK_DEFAULTS)  # an unknown option is named as fork's, not afork_turns'
    return await afork_turns(run, [at_turn], n=n, **options)


#: ``afork``, blocking.
fork = blocking(afork)
