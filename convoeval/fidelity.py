"""Simulator fidelity: flag conversations whose simulated patient broke the scenario.

A judge's verdict on a conversation means little when the *patient* did not play its part: it revealed facts the
persona does not hold, wrote in another language than the scenario's locale, claimed ``[GOAL_COMPLETE]`` while the
database shows the goal not done, or parroted the agent. ``fidelity_flags`` runs four deterministic checks over
every conversational run (no LLM call) and returns one row per conversation × check; ``exclude_flagged`` drops the
flagged runs from every frame so that any aggregate can be recomputed without them. See docs/fidelity.md.

``flagged`` is NA when a check cannot be decided (no database verdict, no scenario, no message long enough), with
the reason in ``detail``; NA never counts as flagged.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from convoeval import frames as F
from convoeval.scenarios import (
    DEFAULT_SCENARIOS_DIR,
    ScenarioError,
    load_scenarios,
    parse_scenario,
)
from convoeval.stats.truth import goal_truth

#: The checks, in report order.
CHECKS = ("invented_fact", "wrong_language", "false_goal_complete", "parroting")

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

#: Default thresholds; each is a keyword argument of ``fidelity_flags``.
THRESHOLDS: dict[str, float] = {
    "fact_min_digits": 8,  # digit runs shorter than this (amounts, times, invoice numbers) are not personal facts
    "language_min_words": 3,  # shorter messages ("ok", "Pix", "Claro!") carry no reliable language signal
    "language_min_confidence": 0.7,  # detector probability (among pt/es/en) below which a message stays undecided
    "language_share": 0.2,  # flag when MORE than this share of the decided patient messages is in another language
    "parrot_min_words": 5,  # shorter patient messages (acknowledgements) are never parroting
    "parrot_min_run": 3,  # only runs of at least this many words copied in order count as copied
    "parrot_ratio": 0.7,  # flag a message when at least this share of its words is copied from the agent's last one
}
_SHARES = ("language_min_confidence", "language_share", "parrot_ratio")

#: The detector's language code for each scenario locale.
LANGUAGE_OF_LOCALE = {"pt-BR": "pt", "en": "en", "es": "es"}
_QUOTE = 60


# ── The public verbs ──


def fidelity_flags(
    frames: Mapping[str, pd.DataFrame],
    *,
    scenarios: Iterable[Any] | Mapping[str, Any] | str | os.PathLike | None = None,
    checks: Sequence[str] = CHECKS,
    **thresholds: float,
) -> pd.DataFrame:
    """Check every conversational run's simulated patient; one row per conversation × check.

    Args:
        frames: ``convoeval.batch.load_results(folder)``: needs ``transcripts``; ``runs`` selects the
            conversational runs (without it every transcript is checked); ``assertions`` gives the database's goal
            verdict (without it ``false_goal_complete`` is NA for every claim).
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
        >>> flags = fidelity_flags(load_results("reports/example"))          # doctest: +SKIP
        >>> fidelity_summary(flags)                                           # doctest: +SKIP
        >>> clean = exclude_flagged(load_results("reports/example"), flags)   # doctest: +SKIP
    """
    checks = _valid_checks(checks)
    limits = _valid_thresholds(thresholds)
    transcripts = frames.get("transcripts")
    if transcripts is None:
        raise ValueError("frames has no 'transcripts' frame (see convoeval.batch.load_results)")
    _require(transcripts, ("run_id", "scenario", "turn", "role", "text", "signal"), "transcripts")
    runs = _conversational_runs(frames.get("runs"), transcripts)
    needs_scenario = any(_CHECKERS[c][1] for c in checks)
    index = _scenario_index(scenarios) if needs_scenario and runs else {}
    goals = _goal_verdicts(frames.get("assertions")) if "false_goal_complete" in checks else {}
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
    _require(flags, ("run_id", "check", "flagged"), "flags")
    rows = flags if checks is None else flags[flags["check"].isin(_valid_checks(checks))]
    hit = rows["flagged"].astype("boolean").fillna(False).astype(bool)
    return [str(r) for r in pd.unique(rows.loc[hit, "run_id"])]


def exclude_flagged(
    frames: Mapping[str, pd.DataFrame], flags: pd.DataFrame, checks: Sequence[str] | str | None = None
) -> dict[str, pd.DataFrame]:
    """The same frames without the flagged runs, so that any aggregate can be recomputed without them.

    Every frame with a ``run_id`` column loses the flagged runs' rows (index reset); frames without one (``calls``)
    are returned unchanged.

    Args:
        frames: ``load_results(folder)`` or any mapping of frames.
        flags: ``fidelity_flags(frames)``.
        checks: Exclude only runs flagged by these checks (default: any check).

    Returns:
        A new dict with the same keys.

    Example:
        >>> clean = exclude_flagged(frames, flags, checks=["parroting"])   # doctest: +SKIP
        >>> clean["scores"]["score"].mean()                                 # doctest: +SKIP
    """
    dropped = set(flagged_runs(flags, checks))
    out = {}
    for name, frame in frames.items():
        if isinstance(frame, pd.DataFrame) and "run_id" in frame.columns:
            frame = frame[~frame["run_id"].isin(dropped)].reset_index(drop=True)
        out[name] = frame
    return out


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


# ── Inputs ──

_NO_VERDICT = object()  # the database has no goal verdict for the run
_Verdict = tuple[bool | None, int | None, str]  # flagged (None: undecided), first offending turn, detail


@dataclass(frozen=True)
class _Run:
    """What the checks read about one conversation."""

    messages: list[dict[str, Any]]  # role, turn, text, signal; in conversation order
    scenario: Any | None  # None when not found
    goal_met: Any  # the database's goal verdict (True/False/NA), or _NO_VERDICT
    limits: Mapping[str, float]


def _valid_checks(checks: Sequence[str] | str) -> tuple[str, ...]:
    asked = (checks,) if isinstance(checks, str) else tuple(checks)
    unknown = [c for c in asked if c not in CHECKS]
    if unknown or not asked:
        raise ValueError(f"unknown check(s) {unknown}; expected some of {list(CHECKS)}")
    return tuple(dict.fromkeys(asked))


def _valid_thresholds(given: Mapping[str, float]) -> dict[str, float]:
    unknown = sorted(set(given) - set(THRESHOLDS))
    if unknown:
        raise TypeError(f"unknown threshold(s) {unknown}; expected some of {sorted(THRESHOLDS)}")
    limits = {**THRESHOLDS, **given}
    for name, value in limits.items():
        if name in _SHARES and not 0 <= value <= 1:
            raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
        if name not in _SHARES and (int(value) != value or value < 1):
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return limits


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {name} frame lacks column(s) {missing}")


def _conversational_runs(runs: pd.DataFrame | None, transcripts: pd.DataFrame) -> list[tuple[str, str]]:
    """(run_id, scenario) of the runs to check: the conversational ones of the runs frame, else every transcript."""
    if runs is not None and len(runs):
        _require(runs, ("run_id", "scenario", "type"), "runs")
        talked = runs[runs["type"] == "conversational"].drop_duplicates("run_id")
        return list(zip(talked["run_id"].astype(str), talked["scenario"].astype(str), strict=True))
    firsts = transcripts.drop_duplicates("run_id")
    return list(zip(firsts["run_id"].astype(str), firsts["scenario"].astype(str), strict=True))


def _scenario_index(scenarios: Any) -> dict[str, Any]:
    if scenarios is None or isinstance(scenarios, (str, os.PathLike)):
        folder = DEFAULT_SCENARIOS_DIR if scenarios is None else scenarios
        try:
            scenarios = load_scenarios(folder)
        except ScenarioError as exc:
            raise ValueError(f"cannot load the scenarios ({exc.one_line()}); pass scenarios=") from None
    if hasattr(scenarios, "persona"):  # one scenario rather than a collection
        scenarios = [scenarios]
    items = scenarios.values() if isinstance(scenarios, Mapping) else scenarios
    loaded = [parse_scenario(s) if isinstance(s, Mapping) else s for s in items]
    for s in loaded:
        if not all(hasattr(s, a) for a in ("id", "locale", "persona")):
            raise ValueError(f"scenarios must be loaded scenarios, their fields as mappings, or a folder; got "
                             f"{type(s).__name__}")
    return {s.id: s for s in loaded}


def _goal_verdicts(assertions: pd.DataFrame | None) -> dict[str, Any]:
    if assertions is None or assertions.empty:
        return {}
    _require(assertions, ("run_id", "scenario", "assertion", "passed"), "assertions")
    truth = goal_truth(assertions)
    return dict(zip(truth["run_id"].astype(str), truth["goal_met"], strict=True))


def _messages(rows: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The conversation's messages in order: role, turn, text, signal (missing values as None)."""
    if rows is None:
        return []
    out = []
    for role, turn, text, signal in zip(rows["role"], rows["turn"], rows["text"], rows["signal"], strict=True):
        out.append({"role": role, "turn": None if pd.isna(turn) else int(turn),
                    "text": "" if pd.isna(text) else str(text), "signal": None if pd.isna(signal) else signal})
    return out


def _patient(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "patient"]


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= _QUOTE else f'"{flat[:_QUOTE - 1]}…"'


# ── false_goal_complete ──


def _false_goal_complete(run: _Run) -> _Verdict:
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


# ── parroting ──

_WORD = re.compile(r"\w+")


def message_words(text: str) -> list[str]:
    """A message's lower-case words, as ``parroting`` (and the simulator-failure gate) compare them."""
    return _WORD.findall(text.lower())


def copied_share(source: list[str], words: list[str], min_run: int) -> float:
    """Share of ``words`` that sit in runs of >= ``min_run`` words copied, in order, from ``source``.

    Example:
        >>> agent = message_words("Você pode pagar por Pix ou boleto")
        >>> copied_share(agent, message_words("Pix, por favor, pode ser"), 3)
        0.0
        >>> copied_share(agent, message_words("Quero pagar por Pix"), 3)
        0.75
    """
    if not words:
        return 0.0
    matcher = difflib.SequenceMatcher(None, source, words, autojunk=False)
    copied = sum(block.size for block in matcher.get_matching_blocks() if block.size >= min_run)
    return copied / len(words)


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


# ── wrong_language ──

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LETTERS = re.compile(r"[^\W\d_]+")


@functools.cache
def _identifier() -> Any:
    """py3langid's bundled Naive Bayes model restricted to pt/es/en (loaded once, offline, deterministic)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:  # pragma: no cover - a declared dependency
        raise ImportError("the wrong_language check needs py3langid (pip install py3langid)") from None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(set(LANGUAGE_OF_LOCALE.values())))
    return identifier


def detect_language(text: str, *, ignore: Iterable[str] = (), min_words: int = 3) -> tuple[str | None, float]:
    """The language of one message among pt, es and en, and the detector's probability.

    URLs, e-mails, digits, symbols and the words in ``ignore`` (the persona's name) are removed first: they carry
    no language. Fewer than ``min_words`` words left gives ``(None, nan)``.

    Example:
        >>> detect_language("Sí, puede generar el boleto.")[0]
        'es'
    """
    text = _EMAIL.sub(" ", _URL.sub(" ", text))
    skip = {_fold(w) for w in ignore}
    words = [w for w in _LETTERS.findall(text) if _fold(w) not in skip]
    if len(words) < min_words:
        return None, float("nan")
    lang, probability = _identifier().classify(" ".join(words))
    return lang, float(probability)


def _wrong_language(run: _Run) -> _Verdict:
    scenario, limits = run.scenario, run.limits
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


# ── invented_fact ──

_CPF = re.compile(r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b")
# Numeric dates: dd/mm/yyyy (any of / . -, 2- or 4-digit year) and ISO yyyy-mm-dd.
_DATE = re.compile(r"\b(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})|\d{4}-\d{1,2}-\d{1,2})\b")
_MONTHS = {m: i + 1 for names in (
    "janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "january february march april may june july august september october november december")
    for i, m in enumerate(names.split())}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WORD_DATE = re.compile(rf"\b\d{{1,2}}\s+(?:de\s+)?(?:{_MONTH})\s+(?:de\s+|del\s+)?\d{{4}}\b"
                        rf"|\b(?:{_MONTH})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b")
# Birth context, matched on accent-folded text: nascimento, nasci, nací, nacimiento, born, birthday, DOB, ...
_BIRTH = re.compile(r"\bnasc\w*|\bnaci(?:d[oa]s?|miento)?\b|\bborn\b|\bbirth\w*|\bdob\b|\bd\.o\.b\b"
                    r"|\banivers\w*|\bcumpleanos\b")
# Digit groups with single separators between them: phones "(11) 98765-0020", "+55 11 98765 0020", cards
# "4111 1111 1111 1111", document numbers. Amounts ("150,00") and times ("14:30") stay short because "," and ":"
# split them. Each group after the first needs a separator, so a long digit run cannot backtrack exponentially.
_NUMBER = re.compile(r"(?<![\w@+])(?:\+\d+[ .-]?)?(?:\(\d+\)[ .-]?)?\d+(?:[ .-]\d+)*(?![\w@])")
# "meu nome é Lucia Ferreira": the phrase in any case, the name capitalised (so "my name is hard to spell" is not one).
_NAME = re.compile(r"(?i:meu nome (?:é|e)|me chamo|mi nombre es|me llamo|my name is)\s+"
                   r"([A-ZÀ-Ý][\w'-]*(?:\s+(?:d[aeo]s?\s+)?[A-ZÀ-Ý][\w'-]*)*)")


def _fold(text: str) -> str:
    """Lowercase without accents, so "Lúcia" and "lucia" compare equal."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _date_key(text: str) -> tuple[int, ...] | None:
    """Day, month and two-digit year, sorted: the same date in any field order or spelling gets the same key."""
    folded = _fold(text)
    parts = [int(p) for p in re.findall(r"\d+", folded)]
    month = next((n for name, n in _MONTHS.items() if re.search(rf"\b{name}\b", folded)), None)
    if month is not None:
        parts.append(month)
    if len(parts) != 3:
        return None
    return tuple(sorted(p % 100 if p >= 100 else p for p in parts))


class KnownFacts:
    """What the patient may state: the persona's facts, the goal, and whatever the agent said before."""

    def __init__(self, scenario: Any):
        persona = scenario.persona
        values = [persona.phone, persona.cpf or "", *(persona.knows or {}).values(), getattr(scenario, "goal", "")]
        self.numbers: set[str] = set()
        self.texts: list[str] = []
        self.names = {_fold(w) for w in _LETTERS.findall(persona.name)}
        for value in values:
            self.add(str(value))

    def add(self, text: str) -> None:
        self.texts.append(_fold(text))
        self.names |= {_fold(w) for w in _LETTERS.findall(text)}
        self.numbers |= {_digits(m) for m in _NUMBER.findall(text) if len(_digits(m)) >= 4}
        self.numbers |= {_digits(m) for m in _CPF.findall(text)}

    def number(self, digits: str) -> bool:
        # "+55 11 98765-0020" and "98765-0020" are the persona's "11987650020": compare by suffix.
        return any(digits == k or (min(len(k), len(digits)) >= 8 and (k.endswith(digits) or digits.endswith(k)))
                   for k in self.numbers)

    def date(self, key: tuple[int, ...]) -> bool:
        return any(_date_key(m) == key for t in self.texts for m in [*_DATE.findall(t), *_WORD_DATE.findall(t)])

    def email(self, address: str) -> bool:
        return any(_fold(address) in t for t in self.texts)


def unknown_facts(text: str, known: KnownFacts, min_digits: int) -> list[str]:
    """The personal facts in one patient message that ``known`` does not hold, as "kind "value"" strings."""
    found = []
    text = _URL.sub(" ", text)
    for address in _EMAIL.findall(text):
        if not known.email(address):
            found.append(f'e-mail "{address}"')
    text = _EMAIL.sub(" ", text)
    dates = [*_DATE.findall(text), *_WORD_DATE.findall(_fold(text))]
    if _BIRTH.search(_fold(text)):
        for date in dates:
            key = _date_key(date)
            if key is not None and not known.date(key):
                found.append(f'date of birth "{date}"')
    text = _WORD_DATE.sub(" ", _DATE.sub(" ", text))  # a date is not a phone number
    for number in _NUMBER.findall(text):
        digits = _digits(number)
        if len(digits) < min_digits or known.number(digits):
            continue
        kind = ("CPF" if _CPF.fullmatch(number.strip()) else "card number" if 13 <= len(digits) <= 19
                else "phone or ID number")
        found.append(f'{kind} "{number.strip()}"')
    for name in _NAME.findall(text):
        if not {_fold(w) for w in _LETTERS.findall(name)} & known.names:
            found.append(f'name "{name}"')
    return found


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
