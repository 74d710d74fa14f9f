"""The fidelity verbs (flags per conversation and check, the runs to leave out, a summary) and the four checks."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

from convoeval import frames as F
from convoeval.fidelity.inputs import (
    _NO_VERDICT,
    CHECKS,
    _conversational_runs,
    _goal_verdicts,
    _messages,
    _patient,
    _quote,
    _require,
    _Run,
    _scenario_index,
    _valid_checks,
    _valid_thresholds,
    _Verdict,
)
from convoeval.fidelity.text import (
    _LETTERS,
    LANGUAGE_OF_LOCALE,
    KnownFacts,
    copied_share,
    detect_language,
    message_words,
    unknown_facts,
)

#: One row per conversation × check.
FIDELITY_SCHEMA: dict[str, str] = {
    "run_id": "string",
    "scenario": "string",
    "check": "string",  # one of CHECKS
    "flagged": "boolean",  # NA when the check cannot be decided (reason in detail)
    "turn": "Int64",  # the first offending patient turn; NA unless flagged
    "detail": "string",  # plain-language reason, quoting the offending text
}


#: One row per check: how many conversations it flagged.
FIDELITY_SUMMARY_SCHEMA: dict[str, str] = {
    "check": "string",
    "conversations": "Int64",  # conversations checked
    "flagged": "Int64",
    "undecided": "Int64",  # flagged is NA
    "share_flagged": "float64",  # flagged / decided conversations; NaN when none was decided
}


def fidelity_flags(
    frames: RunFrames,
    *,
    scenarios: Iterable[Any] | Mapping[str, Any] | str | os.PathLike | None = None,
    checks: Sequence[str] = CHECKS,
    **thresholds: float,
) -> pd.DataFrame:
    """Check every conversational run's simulated patient; one row per conversation × check.

    Args:
        frames: a run's ``RunFrames`` (``load_results(folder).frames``): its ``transcripts`` are checked; ``runs``
            selects the conversational runs (when empty, every transcript is checked); ``assertions`` gives the
            database's goal verdict (when empty, ``false_goal_complete`` is NA for every claim).
        scenarios: The scenarios the runs used, for the persona (``invented_fact``) and the locale
            (``wrong_language``): an iterable of scenarios, a mapping ``id -> scenario``, or a folder. ``None``
            loads ``evals/scenarios`` (relative to the working directory); loaded only when those checks run.
        checks: Which of ``CHECKS`` to run.
        **thresholds: Overrides of ``THRESHOLDS`` (e.g. ``parrot_ratio=0.8``).

    Returns:
        ``FIDELITY_SCHEMA`` rows, runs in order of the runs frame, checks in the order asked.

    Raises:
        ValueError: an unknown check, a threshold out of range, a frame without its columns, or scenarios that
            cannot be loaded.
        TypeError: an unknown threshold name.

    Example:
        >>> from convoeval import load_results
        >>> frames = load_results("reports/example").frames
        >>> flags = fidelity_flags(frames)
        >>> fidelity_summary(flags)[["check", "conversations", "flagged"]]
                         check  conversations  flagged
        0        invented_fact              3        0
        1       wrong_language              3        1
        2  false_goal_complete              3        0
        3            parroting              3        1
        >>> len(exclude_flagged(frames, flags).scores)   # 6 conversations, 2 flagged
        4
    """
    checks = _valid_checks(checks)
    limits = _valid_thresholds(thresholds)
    transcripts = frames.transcripts
    _require(transcripts, ("run_id", "scenario", "turn", "role", "text", "signal"), "transcripts")
    runs = _conversational_runs(frames.runs, transcripts)
    needs_scenario = any(_CHECKERS[c][1] for c in checks)
    index = _scenario_index(scenarios) if needs_scenario and runs else {}
    goals = _goal_verdicts(frames.assertions) if "false_goal_complete" in checks else {}
    by_run = {rid: rows for rid, rows in transcripts.groupby("run_id", sort=False)}

    rows = []
    for run_id, scenario_id in runs:
        run = _Run(_messages(by_run.get(run_id)), index.get(scenario_id), goals.get(run_id, _NO_VERDICT), limits)
        for check in checks:
            checker, needs = _CHECKERS[check]
            if needs and run.scenario is None:
                verdict: _Verdict = (None, None, f"scenario {scenario_id!r} not found among the scenarios given")
            else:
                verdict = checker(run)
            flagged, turn, detail = verdict
            rows.append({"run_id": run_id, "scenario": scenario_id, "check": check, "flagged": flagged,
                         "turn": turn, "detail": detail})
    return F.typed_frame(rows, FIDELITY_SCHEMA)


def flagged_runs(flags: pd.DataFrame, checks: Sequence[str] | str | None = None) -> list[str]:
    """Run ids flagged by any check (or any of ``checks``), in order of first appearance; NA is not a flag.

    Example:
        >>> flags = F.typed_frame([{"run_id": "r1", "check": "parroting", "flagged": True},
        ...                        {"run_id": "r2", "check": "parroting", "flagged": None}], FIDELITY_SCHEMA)
        >>> flagged_runs(flags)
        ['r1']
    """
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    _require(flags, ("run_id", "check", "flagged"), "flags")
    rows = flags if checks is None else flags[flags["check"].isin(_valid_checks(checks))]
    hit = rows["flagged"].astype("boolean").fillna(False).astype(bool)
    return [str(r) for r in pd.unique(rows.loc[hit, "run_id"])]


def exclude_flagged(
    frames: RunFrames, flags: pd.DataFrame, checks: Sequence[str] | str | None = None
) -> RunFrames:
    """The same frames without the flagged runs, so that any aggregate can be recomputed without them.

    Every frame with a ``run_id`` column loses the flagged runs' rows (index reset); frames without one (``calls``)
    are returned unchanged.

    Args:
        frames: a run's ``RunFrames`` (``load_results(folder).frames``).
        flags: ``fidelity_flags(frames)``.
        checks: Exclude only runs flagged by these checks (default: any check).

    Returns:
        A new ``RunFrames``.

    Example:
        >>> from convoeval import load_results
        >>> frames = load_results("reports/example").frames
        >>> clean = exclude_flagged(frames, fidelity_flags(frames), checks=["parroting"])
        >>> len(frames.scores), len(clean.scores)
        (6, 5)
    """
    return frames.without(flagged_runs(flags, checks))


def fidelity_summary(flags: pd.DataFrame) -> pd.DataFrame:
    """Per check: conversations checked, flagged, undecided (NA) and the share flagged among the decided ones.

    Returns:
        ``FIDELITY_SUMMARY_SCHEMA`` rows in ``CHECKS`` order (only the checks present in ``flags``).

    Example:
        >>> flags = F.typed_frame([{"run_id": "r1", "check": "parroting", "flagged": True},
        ...                        {"run_id": "r2", "check": "parroting", "flagged": False}], FIDELITY_SCHEMA)
        >>> fidelity_summary(flags)[["check", "flagged", "share_flagged"]].values.tolist()
        [['parroting', 1, 0.5]]
    """
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    _require(flags, ("run_id", "check", "flagged"), "flags")
    rows = []
    present = list(pd.unique(flags["check"]))
    for check in [c for c in CHECKS if c in present] + [c for c in present if c not in CHECKS]:
        verdicts = flags.loc[flags["check"] == check, "flagged"].astype("boolean")
        decided = int(verdicts.notna().sum())
        hits = int(verdicts.fillna(False).astype(bool).sum())
        rows.append({"check": check, "conversations": len(verdicts), "flagged": hits,
                     "undecided": len(verdicts) - decided, "share_flagged": hits / decided if decided else None})
    return F.typed_frame(rows, FIDELITY_SUMMARY_SCHEMA)


def _false_goal_complete(run: _Run) -> _Verdict:
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)
    patient, goal_met = _patient(run.messages), run.goal_met
    if not patient or patient[-1]["signal"] != "GOAL_COMPLETE":
        return False, None, "the patient did not claim [GOAL_COMPLETE]"
    last = patient[-1]
    if goal_met is _NO_VERDICT:
        return None, None, "the patient claimed [GOAL_COMPLETE] but the database has no outcome assertion for this run"
    if pd.isna(goal_met):
        return None, None, "the patient claimed [GOAL_COMPLETE] but an outcome assertion could not be checked"
    if bool(goal_met):
        return False, None, "the patient claimed [GOAL_COMPLETE] and the database shows the goal done"
    said = _quote(last["text"]) if last["text"].strip() else "an empty message"
    return True, last["turn"], (f"turn {last['turn']}: the patient claimed [GOAL_COMPLETE] with {said} but the "
                                "database shows the goal not done")


def _parroting(run: _Run) -> _Verdict:
    limits = run.limits
    agent_words: list[str] | None = None
    checked, hits = 0, []
    for message in run.messages:
        words = message_words(message["text"])
        if message["role"] == "agent":
            agent_words = words
            continue
        if agent_words is None or len(words) < limits["parrot_min_words"]:
            continue
        checked += 1
        share = copied_share(agent_words, words, int(limits["parrot_min_run"]))
        if share >= limits["parrot_ratio"]:
            hits.append((message, share))
    if not checked:
        return None, None, (f"no patient message of {int(limits['parrot_min_words'])}+ words answers an agent "
                            "message")
    if not hits:
        return False, None, f"no patient message repeats the agent's previous one ({checked} checked)"
    first, share = hits[0]
    return True, first["turn"], (f"turn {first['turn']}: {share:.0%} of the patient's words repeat the agent's "
                                 f"previous message: {_quote(first['text'])} ({len(hits)} of {checked} messages)")


def _wrong_language(run: _Run) -> _Verdict:
    scenario, limits = run.played(), run.limits
    expected = LANGUAGE_OF_LOCALE[scenario.locale]
    names = _LETTERS.findall(scenario.persona.name)
    patient = _patient(run.messages)
    decided, foreign = 0, []
    for message in patient:
        lang, probability = detect_language(message["text"], ignore=names, min_words=int(limits["language_min_words"]))
        if lang is None or probability < limits["language_min_confidence"]:
            continue
        decided += 1
        if lang != expected:
            foreign.append((message, lang))
    if not decided:
        return None, None, (f"none of the {len(patient)} patient messages is long or clear enough to tell its "
                            "language")
    share = len(foreign) / decided
    head = f"{len(foreign)} of {decided} patient messages ({share:.0%}) read as another language than {scenario.locale}"
    if not foreign:
        return False, None, head
    first, lang = foreign[0]
    where = f"turn {first['turn']} reads as {lang}: {_quote(first['text'])}"
    if share <= limits["language_share"]:
        return False, None, f"{head}, not above {limits['language_share']:.0%}; {where}"
    return True, first["turn"], f"{head}; {where}"


def _invented_fact(run: _Run) -> _Verdict:
    known = KnownFacts(run.scenario)
    patient = 0
    hits: list[tuple[dict[str, Any], list[str]]] = []
    for message in run.messages:
        if message["role"] == "agent":
            known.add(message["text"])  # repeating what the agent said is not inventing it
            continue
        patient += 1
        facts = unknown_facts(message["text"], known, int(run.limits["fact_min_digits"]))
        if facts:
            hits.append((message, facts))
    if not patient:
        return None, None, "the conversation has no patient message"
    if not hits:
        return False, None, f"no CPF, phone, card, e-mail, birth date or name outside the persona ({patient} messages)"
    first, facts = hits[0]
    more = sum(len(f) for _, f in hits) - 1
    tail = f" (+{more} more)" if more else ""
    return True, first["turn"], f"turn {first['turn']}: states {facts[0]}, which the persona does not hold{tail}"


#: Each check's function and whether it needs the run's scenario (persona, locale).
_CHECKERS: dict[str, tuple[Callable[[_Run], _Verdict], bool]] = {
    "invented_fact": (_invented_fact, True),
    "wrong_language": (_wrong_language, True),
    "false_goal_complete": (_false_goal_complete, False),
    "parroting": (_parroting, False),
}
