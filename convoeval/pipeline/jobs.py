"""Jobs: the conversations a run will have, one per scenario × seed × trial, each with a stable key."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from convoeval.pipeline.observe import ObserverFactory
from convoeval.pipeline.replay import PatientReplay
from convoeval.scenarios import Scenario

__all__ = ["Job", "model_roles", "plan"]


@dataclass(frozen=True)
class Job:
    """One conversation to run: a scenario, a seed and a trial number; optionally a patient to replay, a target of
    its own (instead of the run's) and an observer factory (``convoeval.pipeline.observe``: the red team's checks).

    What ``arun_any`` runs, whole, and what a Dask worker is sent (with its run's ``WorkerSettings``). A ``None``
    seed is the scenario's own (``plan`` writes it in; ``Job(scenario)`` leaves it to the conversation).
    """

    scenario: Scenario
    seed: int | None = None
    trial: int = 1
    replay: PatientReplay | None = None
    target: str | None = None
    observe: ObserverFactory | None = None
    #: Whether the LLM judges judge it (False: its observer's verdict is its score status; the red team's cases).
    judged: bool = True

    @property
    def key(self) -> str:
        """A file-name-safe key, unique within a run, e.g. ``billing-conv-happy-payment__s42__t1``."""
        seed = "none" if self.seed is None else str(self.seed)
        return f"{self.scenario.id}__s{seed}__t{self.trial}"

    @property
    def label(self) -> str:
        """How progress and verbose lines name the conversation, e.g. ``billing-conv-happy-payment s42 t1``."""
        seed = "-" if self.seed is None else str(self.seed)
        return f"{self.scenario.id} s{seed} t{self.trial}"


def plan(scenarios: Iterable[Scenario], *, seeds: Sequence[int | None] = (None,), trials: int = 1) -> list[Job]:
    """Every scenario × seed × trial. A ``None`` seed means the scenario's own ``seed`` (conversational) or none.

    Raises:
        ValueError: ``trials`` below 1, or two jobs with the same key (a repeated seed).
    """
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    jobs: list[Job] = []
    for scenario in scenarios:
        for seed in seeds:
            effective = seed if seed is not None else getattr(scenario, "seed", None)
            jobs.extend(Job(scenario, effective, t) for t in range(1, trials + 1))
    keys = [j.key for j in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("two jobs share a key (same scenario id, seed and trial)")
    return jobs


def model_roles(jobs: Iterable[Job]) -> tuple[str, ...]:
    """The model roles ``jobs`` will call: the simulator for a conversational scenario, the judges for a judged job
    (a scripted red team calls neither, so no model's call budget limits its workers)."""
    jobs = list(jobs)
    simulator = any(job.scenario.type == "conversational" for job in jobs)
    judge = any(job.judged for job in jobs)
    return (*(("simulator",) if simulator else ()), *(("judge",) if judge else ()))
