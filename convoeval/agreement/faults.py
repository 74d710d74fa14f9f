"""Known faults as ground truth: run each reference agent healthy and with each documented fault, then score judges.

Every reference clinic agent declares its known faults (``convoeval.agents.clinic.FAULTS``), each with the exact
rubric criteria it makes fail whenever the conversation reaches the step the criterion is about. So a study that runs
every conversational scenario against the healthy agent (``clinic:<agent>``) and against each relevant fault
(``clinic:<agent>?faults=<name>``) yields conversations whose right verdict is known in advance for those criteria:

* **faulted run** — each criterion its fault breaks: truth **fail**;
* **healthy run** of the same scenario, seed and trial — each criterion a fault run beside it breaks: truth **pass**.
  The healthy agent performs exactly the step the fault spoils (it is the same dialogue policy without the defect),
  so the criterion holds. This is the counterpart that lets a judge be measured on both classes.

Every other criterion is not rated (unknown). Caveat: "breaks" and "does" both assume the conversation *reaches* the
step; a simulated patient that never asks for a person, never picks a method or gives up early leaves the step
unreached and the truth wrong. Where the criterion declares a database assertion, the database tells whether the step
happened: with ``database_check=True`` (the default) a truth the database contradicts — the assertion failed in the
healthy run, or passed in the faulted run — becomes unknown (``passed`` NA, with the reason), and so leaves the
statistics. Criteria without an assertion (tone, invented URLs, pressure) keep the caveat; read them with the
transcripts. See ``docs/fault-study.md``.

The judge's "pass" is the positive class: **sensitivity** = P(judge passes | the healthy agent did it),
**specificity** = P(judge fails | a known fault broke it) — the share of known faults the judge caught.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import pandas as pd

from convoeval._util.aio import blocking
from convoeval.agents.clinic import clinic_agent_names, faults_for
from convoeval.frames import RunFrames
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.pipeline import plan
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import SHARED_DEFAULTS, RunOptions, SharedOptions, opened_store, settle
from convoeval.pipeline.progress import Progress, as_mode
from convoeval.pipeline.results import finished, read_frames
from convoeval.scenarios import did_you_mean, is_conversational

if TYPE_CHECKING:
    from convoeval.agents.clinic import Fault
    from convoeval.scenarios import Scenario
    from convoeval.store import Store

from convoeval.agreement.fault_truth import (  # noqa: F401 - the study's truth and scores, re-exported
    _PREFIX,
    CELLS,
    DETECTION_STATISTICS,
    KNOWN_FAULTS,
    NO_TRUTH,
    TRUTH_COLUMNS,
    _bare,
    _faults_by_key,
    fault_confusion,
    fault_detection,
    fault_truth,
)

#: Columns of ``fault_study_plan``: one row per conversation the study runs.
PLAN_COLUMNS = ("target", "faults", "folder", "scenario", "agent", "seed", "trial")


# ── Which targets to run ──


def _relevant(fault: Fault, scenario: Any) -> bool:
    if fault.channel and not _uses_channel(scenario):
        return False  # a WhatsApp channel fault never shows in a conversation without the channel
    criteria = set(getattr(scenario, "criteria", ()))  # scripted scenarios have no rubric
    assertions = set(scenario.assertions.active())
    return bool(criteria & set(fault.breaks_criteria)) or bool(assertions & set(fault.breaks_assertions))


def _uses_channel(scenario: Any) -> bool:
    return bool(getattr(scenario, "uses_channel", False) or getattr(scenario, "channel", None) is not None)


def fault_targets(agent: str, scenario: Scenario) -> list[tuple[str, tuple[str, ...]]]:
    """The healthy target and one target per known fault of ``agent`` relevant to ``scenario``.

    A fault is relevant when a criterion it breaks is in the scenario's rubric, or an assertion it breaks is set by
    the scenario (a WhatsApp channel fault only in a scenario that talks through the channel).

    Args:
        agent: A reference agent name (``"billing"``; a ``clinic:`` prefix is accepted).
        scenario: A loaded scenario.

    Returns:
        ``[(target, fault names), ...]``: ``("clinic:<agent>", ())`` first, then the faults in declaration order.

    Raises:
        ValueError: an unknown agent (the message lists the registered ones).

    Example:
        >>> from convoeval.scenarios import load_scenarios
        >>> sc = load_scenarios(scenario="billing-conv-happy-payment")[0]
        >>> fault_targets("billing", sc)[:2]
        [('clinic:billing', ()), ('clinic:billing?faults=invented_payment_url', ('invented_payment_url',))]
    """

    name = _bare(agent)
    targets: list[tuple[str, tuple[str, ...]]] = [(f"{_PREFIX}{name}", ())]
    for fault in faults_for(name):
        if _relevant(fault, scenario):
            targets.append((f"{_PREFIX}{name}?faults={fault.name}", (fault.name,)))
    return targets


def target_folder(target: str) -> str:
    """The sub-folder name of a target's batch: every run of ``clinic:billing?faults=rude_tone`` goes under
    ``clinic-billing-faults-rude_tone/``.

    Example:
        >>> target_folder("clinic:billing?faults=rude_tone")
        'clinic-billing-faults-rude_tone'
    """
    return re.sub(r"[^A-Za-z0-9._]+", "-", target).strip("-")


def _check_selection(agents: Iterable[str] | None, faults: Iterable[str] | None) -> tuple[set[str] | None, ...]:

    wanted_agents = None if agents is None else {_bare(a) for a in ([agents] if isinstance(agents, str) else agents)}
    if wanted_agents is not None and (unknown := sorted(wanted_agents - set(clinic_agent_names()))):
        raise ValueError(f"unknown agent(s) {unknown}{did_you_mean(unknown[0], clinic_agent_names())}; "
                         f"expected some of {', '.join(clinic_agent_names())}")
    wanted_faults = None if faults is None else set([faults] if isinstance(faults, str) else faults)
    if wanted_faults is not None and (unknown := sorted(wanted_faults - set(_faults_by_key()))):
        raise ValueError(f"unknown fault key(s) {unknown}{did_you_mean(unknown[0], _faults_by_key())}; "
                         "keys are 'agent:name', e.g. "
                         f"{', '.join(sorted(_faults_by_key())[:3])}, ...")
    return wanted_agents, wanted_faults


def _study_targets(scenarios: Iterable[Scenario], agents, faults) -> dict[str, tuple[tuple[str, ...], list]]:
    """target -> (fault names, scenarios), for conversational scenarios with at least one selected relevant fault."""

    wanted_agents, wanted_faults = _check_selection(agents, faults)
    out: dict[str, tuple[tuple[str, ...], list]] = {}
    for scenario in scenarios:
        if not is_conversational(scenario) or (wanted_agents is not None and scenario.agent not in wanted_agents):
            continue
        healthy, *faulted = fault_targets(scenario.agent, scenario)
        if wanted_faults is not None:
            faulted = [t for t in faulted if f"{scenario.agent}:{t[1][0]}" in wanted_faults]
        if not faulted:
            continue  # no counterpart: a healthy run alone has no known truth
        for target, names in (healthy, *faulted):
            out.setdefault(target, (names, []))[1].append(scenario)
    folders = [target_folder(t) for t in out]
    if len(set(folders)) != len(folders):
        raise ValueError(f"two targets map to one folder: {sorted(out)}")
    return out


def fault_study_plan(
    scenarios: Iterable[Scenario],
    *,
    agents: Iterable[str] | None = None,
    faults: Iterable[str] | None = None,
    seeds: Sequence[int | None] = (None,),
    trials: int = 1,
) -> pd.DataFrame:
    """Every conversation a fault study would run, without running anything (to count them before a long run).

    Args: as ``run_fault_study``.

    Returns:
        ``PLAN_COLUMNS``: one row per target × scenario × seed × trial; ``faults`` joined with ``,`` (empty for the
        healthy agent), ``folder`` the target's sub-folder.

    Example:
        >>> from convoeval.scenarios import load_scenarios
        >>> len(fault_study_plan(load_scenarios(agent="billing")))
        13
    """

    rows = []
    for target, (names, group) in _study_targets(scenarios, agents, faults).items():
        for job in plan(group, seeds=seeds, trials=trials):
            rows.append({"target": target, "faults": ",".join(names), "folder": target_folder(target),
                         "scenario": job.scenario.id, "agent": job.scenario.agent, "seed": job.seed,
                         "trial": job.trial})
    frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    return frame.astype({"seed": "Int64", "trial": "Int64"})


# ── Running the study ──


def _planned(frame: pd.DataFrame, keys: set[tuple[Any, ...]]) -> pd.Series:
    triples = zip(frame["scenario"], frame["seed"], frame["trial"], strict=True)
    return pd.Series([(s, None if pd.isna(d) else int(d), int(t)) in keys for s, d, t in triples], index=frame.index,
                     dtype=bool)


async def arun_fault_study(
    scenarios: Iterable[Scenario],
    out_dir: Path | str,
    *,
    agents: Iterable[str] | None = None,
    faults: Iterable[str] | None = None,
    seeds: Sequence[int | None] = (None,),
    trials: int = 1,
    **options: Unpack[SharedOptions],
) -> RunFrames:
    """Run every conversational scenario against the healthy reference agent and against each relevant known fault.

    ``run_fault_study`` is the blocking form of ``arun_fault_study`` (scripts, notebooks).

    Each target's conversations go to ``out_dir/<target_folder(target)>/runs/<key>.json``; conversations already on
    disk are not run again (resume), so an interrupted study continues where it stopped. Scripted scenarios are
    skipped, and so is a scenario that no selected fault is relevant to (a healthy run alone has no known truth).

    Args:
        scenarios: Loaded scenarios (``load_scenarios(...)``).
        out_dir: The study's folder.
        agents: Keep only these agents' scenarios (``["billing", "support"]``).
        faults: Keep only these faults, by key (``["billing:rude_tone"]``); the healthy agent always runs beside them.
        seeds: Simulator seeds; ``None`` is the scenario's own seed.
        trials: Trials per scenario and seed.
        **options: The ``SharedOptions`` of every verb that runs conversations (``convoeval.pipeline.options``,
            defaults in ``SHARED_DEFAULTS``): simulator_model and judge_model (a name, ``"local"``, a mapping or a
            chat model; ``None``: the environment's), judge_samples, concurrency (conversations in flight over all
            targets: their batches run side by side), store (an open store, a URL or ``None``), progress (one count
            over every target, each conversation named with its fault, ``[healthy]`` for the healthy agent) and
            simulator_gate (a conversation it stops ends ``simulator_failure`` and is not judged).

    Returns:
        A ``RunFrames`` (``frames.runs``, ``frames.scores``, ``frames.rubric``, …, ``frames.calls``) over every
        target's folder, concatenated; only the conversations this study planned. ``frames.runs.target`` tells the
        arms apart (join other frames on ``run_id``); ``frames.calls`` has a ``target`` column.

    Raises:
        ValueError: an unknown agent or fault key.
        TypeError: an option the study does not take, named.

    Example (runs the fault study, so not run as a doctest)::

        frames = run_fault_study(load_scenarios(agent="billing"), "reports/faults")
        fault_detection(frames)
    """

    opts = settle("run_fault_study", options, SHARED_DEFAULTS)
    root = Path(out_dir)
    targets = {target: (names, plan(group, seeds=seeds, trials=trials))
               for target, (names, group) in _study_targets(scenarios, agents, faults).items()}
    # What is left to run, read once: it sizes the one count over every target and is what each batch runs.
    todo = {t: _not_saved(jobs, finished(root / target_folder(t))) for t, (_, jobs) in targets.items()}
    left = sum(map(len, todo.values()))
    report = Progress(left, skipped=sum(len(jobs) for _, jobs in targets.values()) - left,
                      mode=as_mode(opts["progress"]))
    # One batch per target (RunOptions carries one target). A study often has one conversation per target, so the
    # batches run side by side: `at_once` of them, each with its share of `concurrency` conversations in flight.
    concurrency = opts["concurrency"]
    at_once = max(1, min(len(targets), concurrency))
    slots = asyncio.Semaphore(at_once)

    async def run_target(target: str, names: tuple[str, ...], jobs: list[Job], store: Store) -> RunFrames:
        folder = root / target_folder(target)
        run_options = RunOptions.from_shared(opts, store=store, target=target)
        async with slots:
            await arun_batch(todo[target], options=run_options, out_dir=folder,
                             concurrency=max(1, concurrency // at_once), resume=False,
                             progress=_TargetProgress(report, ",".join(names) or "healthy"))
        return _planned_frames(read_frames(folder), jobs, target)

    try:
        with opened_store(opts["store"]) as store:  # one store for every target, opened once
            parts = await asyncio.gather(*(run_target(t, names, jobs, store) for t, (names, jobs) in targets.items()))
    finally:
        report.close()
    return RunFrames.merge(parts, call_columns=CALL_COLUMNS)


def load_fault_study(folder: Path | str) -> RunFrames:
    """A saved fault study read back: every target's folder (``<folder>/<target_folder(target)>/runs/``), merged as
    ``run_fault_study`` returns them (``frames.runs.target`` tells the arms apart; ``frames.calls`` has a ``target``
    column). The loader of the ``fault study`` kind of ``convoeval.load_results``.

    Raises:
        FileNotFoundError: no target folder with a finished conversation under ``folder``.
    """
    parts = []
    for sub in sorted(p for p in Path(folder).iterdir() if p.is_dir()) if Path(folder).is_dir() else []:
        frames = read_frames(sub)
        if len(frames.runs):
            target = str(frames.runs["target"].iloc[0])
            parts.append(frames.replace(calls=frames.calls.assign(target=target)) if len(frames.calls) else frames)
    if not parts:
        raise FileNotFoundError(f"{folder} holds no fault study (no <target>/runs/*.json under it)")
    return RunFrames.merge(parts, call_columns=CALL_COLUMNS)


def _not_saved(jobs: Sequence[Any], saved: set[str]) -> list[Any]:
    return [j for j in jobs if j.key not in saved]


def _planned_frames(frames: RunFrames, jobs: Sequence[Any], target: str) -> RunFrames:
    """A target folder's frames cut to the conversations this study planned (it may hold an earlier, wider study)."""
    keys = {(j.scenario.id, j.seed, j.trial) for j in jobs}
    kept = frames.only(set(frames.runs.loc[_planned(frames.runs, keys), "run_id"]))
    calls = frames.calls
    if len(calls):
        # LLM call records carry no run_id; tell the targets apart by a column of their own.
        calls = calls[_planned(calls, keys)].assign(target=target)
    return kept.replace(calls=calls)


class _TargetProgress:
    """One target's batch reporting to the study's single ``Progress``, each conversation named with its fault."""

    def __init__(self, report: Progress, fault: str) -> None:
        self.report, self.fault = report, fault

    def turn(self, label: str, turn: int) -> None:
        self.report.turn(f"{label} [{self.fault}]", turn)

    def finished(self, label: str, status: str, score: Any = None) -> None:
        self.report.finished(f"{label} [{self.fault}]", status, score)


run_fault_study = blocking(arun_fault_study)
