"""The known-fault study's ground truth and the judges scored against it (see ``faults`` for the study itself).

``fault_truth`` pairs each faulted run with the healthy run of the same scenario, seed and trial and says which
criteria must fail (the fault breaks them) and which must pass (the healthy agent does them); ``fault_detection``
and ``fault_confusion`` score every judge against that truth.
"""


from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Unpack

import pandas as pd

from convoeval.agents import parse_clinic_target
from convoeval.agents.clinic import FAULTS
from convoeval.frames import RunFrames
from convoeval.stats.binary import binary_agreement, confusion_counts
from convoeval.stats.estimation import Estimation, EstimationAliases, estimation_from
from convoeval.stats.ratings import RATING_COLUMNS, rubric_ratings

if TYPE_CHECKING:
    from convoeval.agents.clinic import Fault

#: The rater name of the known-faults truth.
KNOWN_FAULTS = "known_faults"
#: The statistics ``fault_detection`` keeps from ``binary_agreement``, in order.
DETECTION_STATISTICS = ("cohen_kappa", "gwet_ac1", "sensitivity", "specificity", "pass_rate_a", "pass_rate_b")
#: Columns of ``fault_truth``: a pass/fail ratings frame plus where each verdict comes from.
TRUTH_COLUMNS = (*RATING_COLUMNS, "target", "arm", "faults", "reason")
#: The four cells of a judge-vs-truth table, with the judge's "pass" as the positive class.
CELLS = {(True, True): "TP", (False, True): "FN", (True, False): "FP", (False, False): "TN"}
_PREFIX = "clinic:"
#: Why a set of conversations has no known-fault truth (``fault_truth`` is empty).
NO_TRUTH = ("no completed run of a reference agent with a known fault (clinic:<agent>?faults=...) beside its healthy "
            "counterpart of the same scenario, seed and trial; run_fault_study makes them")


def _faults_by_key() -> dict[str, Fault]:
    # Imported late: importing every reference agent is not free, and most agreement users never need them.

    return FAULTS


def _bare(agent: str) -> str:
    return agent.removeprefix(_PREFIX)


# ── Truth and judge scores ──


def _arm(target: Any) -> tuple[str, tuple[str, ...]] | None:
    """``(agent, fault names)`` of a reference-agent target; None for any other target."""

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


def fault_truth(frames: RunFrames, *, database_check: bool = True) -> pd.DataFrame:
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

    Example (runs the fault study, so not run as a doctest)::

        truth = fault_truth(run_fault_study(load_scenarios(agent="support"), "reports/faults"))
        truth.groupby(["arm", "passed"], dropna=False).size()
    """
    runs = frames.runs
    done = runs[(runs["status"].eq("completed") & runs["type"].eq("conversational")).fillna(False).astype(bool)]
    verdicts = pd.DataFrame(_verdicts(done), columns=["run_id", "criterion", "target", "arm", "faults", "passed",
                                                      "reason"])
    rubric = frames.rubric
    items = rubric[["run_id", "scenario", "seed", "trial", "criterion_index", "criterion", "assertion"]]
    items = items.drop_duplicates(["run_id", "criterion"])
    truth = items.merge(verdicts, on=["run_id", "criterion"], how="inner")
    truth["passed"] = truth["passed"].astype("boolean")
    if database_check:
        truth = _database_contradicts(truth, frames.assertions)
    truth["rater"] = KNOWN_FAULTS
    truth["sample"] = pd.NA
    truth = truth.sort_values(["scenario", "arm", "faults", "criterion_index"], kind="stable")
    return truth.reindex(columns=list(TRUTH_COLUMNS)).reset_index(drop=True)


def _ratings(frames: RunFrames, rater: str | Sequence[str], samples: str | int, database_check: bool
             ) -> pd.DataFrame:
    truth = fault_truth(frames, database_check=database_check)
    if truth.empty:
        # Without this, binary_agreement's "reference rater 'known_faults' is not in the ratings ([])" is all the
        # caller sees of frames that are simply not a fault study (saved runs, a sweep).
        raise ValueError(f"no known-fault truth in these frames: {NO_TRUTH}")
    judged = rubric_ratings(frames.rubric, rater=rater, samples=samples)
    if (judged["rater"] == KNOWN_FAULTS).any():
        raise ValueError(f"a judge is named {KNOWN_FAULTS!r}, the truth's rater name; rename it (rater=...)")
    judged = judged.merge(truth[["run_id", "criterion"]], on=["run_id", "criterion"], how="inner")
    return pd.concat([judged, truth.reindex(columns=list(RATING_COLUMNS))], ignore_index=True)


def fault_detection(
    frames: RunFrames,
    *,
    rater: str | Sequence[str] = "judge_model",
    samples: str | int = "majority",
    by: str | Sequence[str] = ("criterion",),
    database_check: bool = True,
    estimation: Estimation | None = None,
    **deprecated: Unpack[EstimationAliases],
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
        estimation: Replicates, level, seed, kind of interval and resampling unit (``Estimation``).
        **deprecated: ``n_boot``, ``level``, ``seed``: use ``estimation`` (they warn).

    Returns:
        The ``binary_agreement`` table (``*by, rater_a, rater_b, statistic, value, ci_low, ci_high, n, n_items,
        method, ci_too_wide``) with ``rater_b = "known_faults"`` and the statistics ``DETECTION_STATISTICS``.

    Raises:
        ValueError: the frames hold no known-fault truth (``fault_truth`` is empty: not a fault study), or a judge is
            named ``"known_faults"``.

    Example (needs a fault study's frames, so not run as a doctest)::

        table = fault_detection(frames)
        table[table["statistic"] == "specificity"][["criterion", "value", "ci_low", "n"]]
    """
    est = estimation_from(estimation, deprecated, "fault_detection")
    ratings = _ratings(frames, rater, samples, database_check)
    table = binary_agreement(ratings, reference=KNOWN_FAULTS, by=by, estimation=est)
    return table[table["statistic"].isin(DETECTION_STATISTICS)].reset_index(drop=True)


def fault_confusion(
    frames: RunFrames,
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

    Example (needs a fault study's frames, so not run as a doctest)::

        cm = fault_confusion(frames)
        cm.pivot_table(index="a_passed", columns="b_passed", values="count", aggfunc="sum")
    """
    ratings = _ratings(frames, rater, samples, database_check)
    counts = confusion_counts(ratings, reference=KNOWN_FAULTS, by=by)
    counts["cell"] = [CELLS[(bool(a), bool(b))] for a, b in zip(counts["a_passed"], counts["b_passed"], strict=True)]
    return counts
