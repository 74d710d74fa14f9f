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

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from convoeval.agreement.binary import binary_agreement, confusion_counts
from convoeval.agreement.bootstrap import LEVEL, N_BOOT
from convoeval.agreement.ratings import RATING_COLUMNS, rubric_ratings

if TYPE_CHECKING:
    from convoeval.agents.clinic import Fault
    from convoeval.scenarios import Scenario
    from convoeval.store import Store

#: The rater name of the known-faults truth.
KNOWN_FAULTS = "known_faults"
#: The statistics ``fault_detection`` keeps from ``binary_agreement``, in order.
DETECTION_STATISTICS = ("cohen_kappa", "gwet_ac1", "sensitivity", "specificity", "pass_rate_a", "pass_rate_b")
#: Columns of ``fault_truth``: a pass/fail ratings frame plus where each verdict comes from.
TRUTH_COLUMNS = (*RATING_COLUMNS, "target", "arm", "faults", "reason")
#: Columns of ``fault_study_plan``: one row per conversation the study runs.
PLAN_COLUMNS = ("target", "faults", "folder", "scenario", "agent", "seed", "trial")
#: The four cells of a judge-vs-truth table, with the judge's "pass" as the positive class.
CELLS = {(True, True): "TP", (False, True): "FN", (True, False): "FP", (False, False): "TN"}
_PREFIX = "clinic:"
#: Why a set of conversations has no known-fault truth (``fault_truth`` is empty).
NO_TRUTH = ("no completed run of a reference agent with a known fault (clinic:<agent>?faults=...) beside its healthy "
            "counterpart of the same scenario, seed and trial; run_fault_study makes them")


# ── Which targets to run ──


def _faults_by_key() -> dict[str, Fault]:
    # Imported late: importing every reference agent is not free, and most agreement users never need them.
    from convoeval.agents.clinic import FAULTS

    return FAULTS


def _bare(agent: str) -> str:
    return agent.removeprefix(_PREFIX)


def _relevant(fault: Fault, scenario: Any) -> bool:
    criteria = set(getattr(scenario, "criteria", ()))  # scripted scenarios have no rubric
    assertions = set(scenario.assertions.active())
    return bool(criteria & set(fault.breaks_criteria)) or bool(assertions & set(fault.breaks_assertions))


def fault_targets(agent: str, scenario: Scenario) -> list[tuple[str, tuple[str, ...]]]:
    """The healthy target and one target per known fault of ``agent`` relevant to ``scenario``.

    A fault is relevant when a criterion it breaks is in the scenario's rubric, or an assertion it breaks is set by
    the scenario.

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
    from convoeval.agents.clinic import faults_for

    name = _bare(agent)
    targets = [(f"{_PREFIX}{name}", ())]
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
    from convoeval.agents.clinic import agent_names

    wanted_agents = None if agents is None else {_bare(a) for a in ([agents] if isinstance(agents, str) else agents)}
    if wanted_agents is not None and (unknown := sorted(wanted_agents - set(agent_names()))):
        raise ValueError(f"unknown agent(s) {unknown}; expected some of {', '.join(agent_names())}")
    wanted_faults = None if faults is None else set([faults] if isinstance(faults, str) else faults)
    if wanted_faults is not None and (unknown := sorted(wanted_faults - set(_faults_by_key()))):
        raise ValueError(f"unknown fault key(s) {unknown}; keys are 'agent:name', e.g. "
                         f"{', '.join(sorted(_faults_by_key())[:3])}, ...")
    return wanted_agents, wanted_faults


def _study_targets(scenarios: Iterable[Scenario], agents, faults) -> dict[str, tuple[tuple[str, ...], list]]:
    """target -> (fault names, scenarios), for conversational scenarios with at least one selected relevant fault."""
    from convoeval.scenarios import is_conversational

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
    from convoeval.batch import plan

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
    simulator_model: Any = None,
    judge_model: Any = None,
    judge_samples: int = 1,
    concurrency: int = 4,
    progress: bool = True,
    store: Store | None = None,
    simulator_gate: Any = True,
) -> dict[str, pd.DataFrame]:
    """Async ``run_fault_study`` (await it from a coroutine; the sync form runs it on convoeval's loop)."""
    from convoeval.batch import arun_batch, load_results, merge_frames, plan
    from convoeval.conversation import RunOptions
    from convoeval.gate import gate_settings

    root = Path(out_dir)
    parts = []
    # One batch per target (RunOptions carries one target), one after another: the LLM endpoint, not the number of
    # batches, limits throughput, and each batch already keeps `concurrency` conversations in flight.
    for target, (_names, group) in _study_targets(scenarios, agents, faults).items():
        jobs = plan(group, seeds=seeds, trials=trials)
        folder = root / target_folder(target)
        options = RunOptions(target=target, simulator_model=simulator_model, judge_model=judge_model,
                             judge_samples=judge_samples, store=store, gate=gate_settings(simulator_gate))
        await arun_batch(jobs, options=options, out_dir=folder, concurrency=concurrency, resume=True,
                         progress=progress)
        frames = load_results(folder)
        # A folder may hold runs of an earlier, wider study; return only what this study planned.
        keys = {(j.scenario.id, j.seed, j.trial) for j in jobs}
        runs = frames["runs"][_planned(frames["runs"], keys)]
        ids = set(runs["run_id"])
        kept = {name: f[f["run_id"].isin(ids)] if "run_id" in f else f for name, f in frames.items()}
        calls = frames["calls"]
        if len(calls):
            # LLM call records carry no run_id; tell the targets apart by a column of their own.
            calls = calls[_planned(calls, keys)].assign(target=target)
        parts.append({**kept, "runs": runs, "calls": calls})
    return {name: frame.reset_index(drop=True) for name, frame in merge_frames(parts).items()}


def run_fault_study(
    scenarios: Iterable[Scenario],
    out_dir: Path | str,
    *,
    agents: Iterable[str] | None = None,
    faults: Iterable[str] | None = None,
    seeds: Sequence[int | None] = (None,),
    trials: int = 1,
    simulator_model: Any = None,
    judge_model: Any = None,
    judge_samples: int = 1,
    concurrency: int = 4,
    progress: bool = True,
    store: Store | None = None,
    simulator_gate: Any = True,
) -> dict[str, pd.DataFrame]:
    """Run every conversational scenario against the healthy reference agent and against each relevant known fault.

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
        simulator_model: The patient's model (``None``: the default; see ``convoeval.models``).
        judge_model: The judges' model (``None``: the default).
        judge_samples: Judge calls per conversation.
        concurrency: Conversations in flight within one target's batch.
        progress: Show a progress bar per target.
        store: The fixtures store (``None``: ``$CONVOEVAL_STORE_URL`` or the local SQLite file).
        simulator_gate: The simulator-failure gate (``convoeval.gate.gate_settings``: ``True``, ``False`` or a
            mapping of thresholds); a conversation it stops ends ``simulator_failure`` and is not judged.

    Returns:
        The frames of ``convoeval.batch.load_results`` (runs, scores, transcripts, rubric, holistic, turns,
        assertions, calls) over every target's folder, concatenated; only the conversations this study planned.
        ``runs.target`` tells the arms apart (join other frames on ``run_id``); ``calls`` has a ``target`` column.

    Raises:
        ValueError: an unknown agent or fault key.

    Example:
        >>> frames = run_fault_study(load_scenarios(agent="billing"), "reports/faults")   # doctest: +SKIP
        >>> fault_detection(frames)                                                        # doctest: +SKIP
    """
    from convoeval._aio import run_sync

    return run_sync(arun_fault_study(
        scenarios, out_dir, agents=agents, faults=faults, seeds=seeds, trials=trials, simulator_model=simulator_model,
        judge_model=judge_model, judge_samples=judge_samples, concurrency=concurrency, progress=progress, store=store,
        simulator_gate=simulator_gate))


# ── Truth and judge scores ──


def _arm(target: Any) -> tuple[str, tuple[str, ...]] | None:
    """``(agent, fault names)`` of a reference-agent target; None for any other target."""
    from convoeval.agents import parse_clinic_target

    if not isinstance(target, str) or not target.startswith(_PREFIX):
        return None
    name, names = parse_clinic_target(target.removeprefix(_PREFIX))
    return name, tuple(names)


def _broken(agent: str, names: Iterable[str]) -> set[str]:
    known = _faults_by_key()
    criteria: set[str] = set()
    for name in names:
        key = f"{agent}:{name}"
        if key not in known:
            raise ValueError(f"run target names fault {key!r}, which is not a known fault")
        criteria.update(known[key].breaks_criteria)
    return criteria


def _require(frames: Mapping[str, pd.DataFrame], names: Sequence[str]) -> None:
    missing = [n for n in names if n not in frames]
    if missing:
        raise ValueError(f"fault_truth needs frame(s) {missing} (from run_fault_study or load_results)")


def _conversation_key(row: Any) -> tuple[Any, ...]:
    return row.scenario, None if pd.isna(row.seed) else int(row.seed), None if pd.isna(row.trial) else int(row.trial)


def _verdicts(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """One entry per (run, criterion) the known faults decide, before the rubric and the database are consulted."""
    arms = []
    for row in runs.itertuples(index=False):
        arm = _arm(row.target)
        if arm is not None:
            arms.append((row, arm[0], arm[1], _conversation_key(row)))
    # The healthy run's truth comes from the fault runs beside it (same agent, scenario, seed and trial).
    counterparts: dict[tuple[Any, ...], dict[str, set[str]]] = {}
    for _row, agent, names, key in arms:
        if names:
            for criterion in _broken(agent, names):
                counterparts.setdefault((agent, *key), {}).setdefault(criterion, set()).update(names)
    out = []
    for row, agent, names, key in arms:
        if names:
            joined = ",".join(names)
            for criterion in _broken(agent, names):
                out.append({"run_id": row.run_id, "criterion": criterion, "target": row.target, "arm": "faulted",
                            "faults": joined, "passed": False, "reason": f"known fault {joined} breaks it"})
        else:
            for criterion, by in counterparts.get((agent, *key), {}).items():
                out.append({"run_id": row.run_id, "criterion": criterion, "target": row.target, "arm": "healthy",
                            "faults": "", "passed": True,
                            "reason": f"healthy counterpart of {','.join(sorted(by))}: the agent does the step"})
    return out


def _database_contradicts(truth: pd.DataFrame, assertions: pd.DataFrame) -> pd.DataFrame:
    """Make unknown (NA, with the reason) each truth the criterion's own database assertion contradicts."""
    checks = assertions[["run_id", "assertion", "passed"]].drop_duplicates(["run_id", "assertion"])
    checks = checks.rename(columns={"passed": "_db"})
    merged = truth.merge(checks, on=["run_id", "assertion"], how="left")
    db = merged["_db"].astype("boolean")
    contradicted = (db.notna() & (db != merged["passed"].astype("boolean"))).fillna(False).to_numpy(dtype=bool)
    merged.loc[contradicted, "reason"] = [
        f"unknown: the database's {a} {'failed' if p else 'passed'}, so the step was "
        f"{'not reached' if p else 'not broken'} in this conversation"
        for a, p in zip(merged.loc[contradicted, "assertion"], merged.loc[contradicted, "passed"], strict=True)
    ]
    merged["passed"] = merged["passed"].astype("boolean")
    merged.loc[contradicted, "passed"] = pd.NA
    return merged.drop(columns=["_db"])


def fault_truth(frames: Mapping[str, pd.DataFrame], *, database_check: bool = True) -> pd.DataFrame:
    """The known-faults truth of a fault study, as a pass/fail ratings frame with rater ``"known_faults"``.

    * A run of ``clinic:<agent>?faults=<name>``: each of its rubric criteria that the fault breaks is **fail**.
    * The healthy run (``clinic:<agent>``) of the same scenario, seed and trial: each of its rubric criteria that a
      fault run beside it breaks is **pass** — the healthy agent is the same policy without the defect, so it does
      the step the fault spoils.
    * Everything else (other criteria, other targets, runs that errored) is not rated.

    Caveat: both verdicts assume the conversation reached the step. With ``database_check`` a criterion that declares
    a database assertion is checked against it: a healthy "pass" whose assertion failed (the step never happened,
    e.g. the patient never asked for a person) or a faulted "fail" whose assertion passed (the fault never fired)
    becomes unknown — ``passed`` NA, ``reason`` saying why — and so drops out of every statistic. An assertion whose
    check errored (NA) decides nothing.

    Args:
        frames: The study's frames (``run_fault_study``): ``runs`` (with ``target``), ``rubric``, and ``assertions``
            when ``database_check``.
        database_check: Make truths the database contradicts unknown (default True).

    Returns:
        ``TRUTH_COLUMNS``: ``RATING_COLUMNS`` (rater ``"known_faults"``) plus ``target``, ``arm`` (``"healthy"`` /
        ``"faulted"``), ``faults`` (comma-joined; empty for the healthy arm) and ``reason``. Only criteria the run's
        rubric frame holds are rated.

    Example:
        >>> truth = fault_truth(run_fault_study(load_scenarios(agent="support"), "reports/faults"))  # doctest: +SKIP
        >>> truth.groupby(["arm", "passed"], dropna=False).size()                                    # doctest: +SKIP
    """
    _require(frames, ["runs", "rubric", *(["assertions"] if database_check else [])])
    runs = frames["runs"]
    done = runs[(runs["status"].eq("completed") & runs["type"].eq("conversational")).fillna(False).astype(bool)]
    verdicts = pd.DataFrame(_verdicts(done), columns=["run_id", "criterion", "target", "arm", "faults", "passed",
                                                      "reason"])
    rubric = frames["rubric"]
    items = rubric[["run_id", "scenario", "seed", "trial", "criterion_index", "criterion", "assertion"]]
    items = items.drop_duplicates(["run_id", "criterion"])
    truth = items.merge(verdicts, on=["run_id", "criterion"], how="inner")
    truth["passed"] = truth["passed"].astype("boolean")
    if database_check:
        truth = _database_contradicts(truth, frames["assertions"])
    truth["rater"] = KNOWN_FAULTS
    truth["sample"] = pd.NA
    truth = truth.sort_values(["scenario", "arm", "faults", "criterion_index"], kind="stable")
    return truth.reindex(columns=list(TRUTH_COLUMNS)).reset_index(drop=True)


def _ratings(frames, rater, samples, database_check) -> pd.DataFrame:
    truth = fault_truth(frames, database_check=database_check)
    if truth.empty:
        # Without this, binary_agreement's "reference rater 'known_faults' is not in the ratings ([])" is all the
        # caller sees of frames that are simply not a fault study (saved runs, a sweep).
        raise ValueError(f"no known-fault truth in these frames: {NO_TRUTH}")
    judged = rubric_ratings(frames["rubric"], rater=rater, samples=samples)
    if (judged["rater"] == KNOWN_FAULTS).any():
        raise ValueError(f"a judge is named {KNOWN_FAULTS!r}, the truth's rater name; rename it (rater=...)")
    judged = judged.merge(truth[["run_id", "criterion"]], on=["run_id", "criterion"], how="inner")
    return pd.concat([judged, truth.reindex(columns=list(RATING_COLUMNS))], ignore_index=True)


def fault_detection(
    frames: Mapping[str, pd.DataFrame],
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    by: str | Sequence[str] = ("criterion",),
    database_check: bool = True,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
) -> pd.DataFrame:
    """How well each judge tells the known faults from the healthy agent, per criterion and pooled.

    The judge's **"pass" is the positive class** and the known-faults truth is the reference (rater B):
    ``sensitivity`` = P(judge passes | the healthy agent did the step), ``specificity`` = P(judge fails | a known
    fault broke it), i.e. the share of known faults the judge caught. ``cohen_kappa`` and ``gwet_ac1`` are the
    chance-corrected agreement; ``pass_rate_a`` is the judge's pass rate and ``pass_rate_b`` the truth's on the same
    items (the share of healthy items, about one half in a balanced study). CIs resample conversations.

    Args:
        frames: The study's frames (``run_fault_study``).
        rater: Column(s) naming the judge configuration (see ``rubric_ratings``).
        samples: How several judge samples become one verdict (``"majority"`` by default).
        by: Grouping columns both ratings carry (``"criterion"``, ``"scenario"``); a ``"(all)"`` row pools them.
        database_check: See ``fault_truth``.
        n_boot: Bootstrap replicates.
        level: Confidence level.
        seed: Bootstrap seed.

    Returns:
        The ``binary_agreement`` table (``*by, rater_a, rater_b, statistic, value, ci_low, ci_high, n, n_items,
        method, ci_too_wide``) with ``rater_b = "known_faults"`` and the statistics ``DETECTION_STATISTICS``.

    Raises:
        ValueError: the frames hold no known-fault truth (``fault_truth`` is empty: not a fault study), or a judge is
            named ``"known_faults"``.

    Example:
        >>> table = fault_detection(frames)                                                   # doctest: +SKIP
        >>> table[table["statistic"] == "specificity"][["criterion", "value", "ci_low", "n"]]  # doctest: +SKIP
    """
    ratings = _ratings(frames, rater, samples, database_check)
    table = binary_agreement(ratings, reference=KNOWN_FAULTS, by=by, n_boot=n_boot, level=level, seed=seed)
    return table[table["statistic"].isin(DETECTION_STATISTICS)].reset_index(drop=True)


def fault_confusion(
    frames: Mapping[str, pd.DataFrame],
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    by: str | Sequence[str] = ("criterion",),
    database_check: bool = True,
) -> pd.DataFrame:
    """Per criterion (and pooled), the judge-vs-truth 2×2 counts, for confusion-matrix plots.

    Args: as ``fault_detection``.

    Returns:
        ``confusion_counts``' shape — ``*by, rater_a, rater_b, a_passed, b_passed, count`` (all four cells, zeros
        included; A is the judge, B the truth) — plus ``cell``: ``TP`` (judge and truth pass), ``FN`` (judge failed a
        healthy step), ``FP`` (judge passed a known fault: a miss), ``TN`` (a fault caught).

    Raises:
        ValueError: as ``fault_detection``.

    Example:
        >>> cm = fault_confusion(frames)                                                        # doctest: +SKIP
        >>> cm.pivot_table(index="a_passed", columns="b_passed", values="count", aggfunc="sum")  # doctest: +SKIP
    """
    ratings = _ratings(frames, rater, samples, database_check)
    counts = confusion_counts(ratings, reference=KNOWN_FAULTS, by=by)
    counts["cell"] = [CELLS[(bool(a), bool(b))] for a, b in zip(counts["a_passed"], counts["b_passed"], strict=True)]
    return counts
