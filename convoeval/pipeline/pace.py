"""How far a run is in the time its LLM calls take: the ETA that counts the judging.

A conversation talks (a simulator call per turn), then is judged (the rubric and holistic judges and its checkpoints'
rubric, or a scripted scenario's per-turn judge). On the local model a judge call reads the whole transcript and
takes many times a simulator call, and conversations in flight talk side by side and then wait for the judge in
turn, so the first one finishes late and the others soon after it. An ETA from finished conversations alone says
nothing for minutes, then too little (issue #39: 9 minutes without a line, then "ETA 49 s" and 18 more minutes).
Here the work left is counted in calls: each conversation's expected calls per role (``expected_calls``) minus those
answered, each role's weighted by the mean time its calls took so far::

    ETA = elapsed × Σ_role (calls left × mean time of a call) / (time the answered calls took)

The ratio holds whatever the parallelism (one local server answering one call at a time, or an API answering many)
as long as it stays the same. ``elapsed`` runs from the start of the first call, so starting a model does not count.
Cache hits count as answered and take no time. While a role has no timed call yet (no judge has answered), its calls
are counted at the slowest timed role's mean, and the ETA says it is a lower bound. A conversation may talk up to its
``max_turns`` but most stop sooner (the goal reached, the patient stuck or stopped by the gate): once conversations
have ended, the others are expected to use the same share of their turns as those did.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from convoeval.scenarios import ConversationalScenario, Scenario

if TYPE_CHECKING:
    from convoeval.llm.accounting import CallRecord
    from convoeval.pipeline.jobs import Job

__all__ = ["CallPace", "expected_calls"]

#: The roles whose calls a conversation's expected work counts (an agent under test may call a model too: its calls
#: are not known in advance, so they are left out of the work left, and of the time spent).
ROLES = ("simulator", "judge")


def expected_calls(scenario: Scenario, judge_samples: int = 1) -> dict[str, int]:
    """At most how many calls per role a conversation of ``scenario`` makes (for the ETA; exact for the judges).

    Conversational: a simulator call per turn up to ``max_turns`` (fewer when the patient stops earlier), then the
    rubric judge, the holistic judge and a rubric call per checkpoint with criteria. Scripted: the per-turn judge on
    each turn that asks for it. Every judge call is made ``judge_samples`` times.
    """
    if isinstance(scenario, ConversationalScenario):
        judges = int(bool(scenario.rubric)) + 1 + sum(1 for cp in scenario.checkpoints if cp.rubric)
        return {"simulator": scenario.max_turns, "judge": judges * judge_samples}
    return {"simulator": 0, "judge": sum(1 for step in scenario.turns if step.judge) * judge_samples}


@dataclass
class _Role:
    answered: int = 0  # cache hits included
    timed: int = 0  # answered by the model
    seconds: float = 0.0  # the timed calls' latencies


class CallPace:
    """The calls a run's conversations have left and the time its calls take; its ``record`` is an accounting sink.

    Args:
        jobs: the conversations the run has to have.
        judge_samples: samples per judge call.
        clock: monotonic seconds (a test passes its own).
    """

    def __init__(self, jobs: Iterable[Job], *, judge_samples: int = 1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._expected: dict[tuple[str, int | None, int], dict[str, int]] = {}  # at most, per conversation and role
        self._answered: dict[tuple[str, int | None, int], dict[str, int]] = {}
        self._keys: dict[str, tuple[str, int | None, int]] = {}
        for job in jobs:
            key = (job.scenario.id, job.seed, job.trial)
            self._expected[key] = expected_calls(job.scenario, judge_samples)
            self._answered[key] = dict.fromkeys(ROLES, 0)
            self._keys[job.label] = key
        self._roles = {role: _Role() for role in ROLES}
        self._talked = [0, 0]  # simulator calls the ended conversations made, and the most they could have made
        self._since: float | None = None
        self._estimate: tuple[float, float, bool] | None = None  # when, seconds left then, a lower bound
        self._lock = threading.Lock()  # records arrive on the event loop's thread, ETAs are asked from others

    def record(self, record: CallRecord) -> None:
        """Count one answered call (an ``add_sink`` sink: quick, never raises)."""
        role = self._roles.get(record.role)
        if role is None:
            return
        with self._lock:
            if self._since is None:
                self._since = self._clock() - (record.latency_s or 0.0)
            role.answered += 1
            if not record.cache_hit and record.error is None:
                role.timed += 1
                role.seconds += record.latency_s or 0.0
            answered = self._answered.get((record.scenario, record.seed, record.trial))
            if answered is not None:
                answered[record.role] += 1
            self._estimate_now()

    def finished(self, label: str) -> None:
        """The conversation ``label`` ended: whatever it did not call (an early stop, no judging) is not left."""
        with self._lock:
            key = self._keys.pop(label, None)
            if key is None or key not in self._expected:
                return
            expected, answered = self._expected.pop(key), self._answered.pop(key)
            if expected["simulator"]:
                self._talked[0] += min(answered["simulator"], expected["simulator"])
                self._talked[1] += expected["simulator"]
            self._estimate_now()

    def _left(self, role: str) -> int:
        """Calls of ``role`` the conversations not ended yet are expected to make still."""
        used, most = self._talked
        left = 0
        for key, expected in self._expected.items():
            calls = expected[role]
            if role == "simulator" and most and calls:
                calls = math.ceil(calls * used / most)  # the share of their turns the ended conversations used
            left += max(0, calls - self._answered[key][role])
        return left

    def eta(self) -> tuple[float, bool] | None:
        """Seconds left and whether that is a lower bound (a role with calls left has none timed yet); ``None``
        until a call has been timed (cache hits only, or calls made in other processes: Dask workers).

        Estimated when a call is answered or a conversation ends, then counted down: while a long call runs no
        news comes, and the same work left over a longer elapsed time would make the ETA grow by the time waited
        (seen on the local model: +20 s per line during a judge call). 0 when the calls are slower than so far.
        """
        with self._lock:
            if self._estimate is None:
                return None
            at, left, lower = self._estimate
            return max(0.0, left - (self._clock() - at)), lower

    def _estimate_now(self) -> None:
        """Estimate the time left from the calls answered so far (under the lock)."""
        spent = sum(r.seconds for r in self._roles.values())
        if self._since is None or spent <= 0:
            return
        means = {name: r.seconds / r.timed if r.timed else 0.0 for name, r in self._roles.items() if r.answered}
        slowest = max(means.values())
        work, lower = 0.0, False
        for name in ROLES:
            left = self._left(name)
            if left and name not in means:
                lower = True
            work += left * means.get(name, slowest)
        now = self._clock()
        self._estimate = (now, (now - self._since) * work / spent, lower)
