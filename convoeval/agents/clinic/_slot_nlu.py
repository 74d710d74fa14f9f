"""Reading what a patient wants from a calendar: day, weekday, part of the day, time, professional, service.

Used by the scheduling and recall agents (and meant to move into ``_nlu`` once another agent needs it). It builds on
``_nlu.extract_date``/``extract_time`` and adds what booking talk needs on top: parts of the day ("de manhã",
"in the afternoon", "por la tarde"), a weekday kept as a weekday ("terça" is any Tuesday when the first one is full),
"next week", "the soonest", hours said with a part of the day ("às 3 da tarde" is 15:00), "a das 9" / "la de las 9",
and names of professionals and services matched against the rows the tools returned.

The reference agents have no clock: the day before the first free slot is "today" (``calendar_today``), so the
fixtures describe the clinic's calendar from "tomorrow" on and every reading is deterministic.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from convoeval.agents.clinic._format import resolve_locale
from convoeval.agents.clinic._nlu import _plain, extract_date, extract_time, matches, normalize

PARTS = ("morning", "afternoon", "evening")
_PART_HOURS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24)}

# Greetings name a part of the day without asking for it ("boa tarde" is not "in the afternoon").
_GREETINGS = (
    "bom dia|boa tarde|boa noite|good morning|good afternoon|good evening|buenos dias|buenas tardes|buenas noches"
)
# "mais tarde" is "later", not "in the afternoon".
_NOT_PARTS = "mais tarde|mas tarde|more tarde"
# Longest first: Spanish "por la mañana" is the morning, a bare "mañana" is tomorrow.
_PART_PHRASES = {
    "pt-BR": {
        "morning": "de manha|pela manha|na parte da manha|manha|cedo|cedinho",
        "afternoon": "a tarde|de tarde|pela tarde|na parte da tarde|tarde|tardinha",
        "evening": "a noite|de noite|pela noite|noite|depois do trabalho",
    },
    "en": {
        "morning": "in the morning|morning|mornings|early",
        "afternoon": "in the afternoon|afternoon|afternoons",
        "evening": "in the evening|evening|evenings|at night|after work",
    },
    "es": {
        "morning": "por la manana|en la manana|de la manana|de manana|temprano",
        "afternoon": "por la tarde|en la tarde|de la tarde|de tarde|tarde|tardes",
        "evening": "por la noche|en la noche|de la noche|noche",
    },
}
_WEEKDAY_WORDS = {
    "pt-BR": ("segunda|segunda feira", "terca|terca feira", "quarta|quarta feira", "quinta|quinta feira",
              "sexta|sexta feira", "sabado", "domingo"),
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "es": ("lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo"),
}
# "a segunda opção" is the second option, not Monday.
_NOT_WEEKDAY = "segunda opcao|segunda opção|quarta opcao|quarta opção|segunda vez|quarta vez"
_NEXT_WEEK = {
    "pt-BR": "semana que vem|proxima semana|semana seguinte",
    "en": "next week|following week|the week after",
    "es": "proxima semana|semana que viene|la otra semana|siguiente semana",
}
_SOONEST = {
    "pt-BR": "tanto faz|sem preferencia|nao tenho preferencia|qualquer|qualquer um|qualquer dia|qualquer horario|"
    "o mais cedo|mais cedo possivel|"
    "o quanto antes|primeiro horario|mais proximo|o mais rapido|o mais breve|primeira data",
    "en": "any|anytime|any time|whenever|soonest|earliest|as soon as possible|asap|first available|doesnt matter|"
    "no preference|dont mind|i dont mind|"
    "next available",
    "es": "cualquier|cualquiera|lo antes posible|cuanto antes|lo mas pronto|primer horario|da igual|me da igual|"
    "sin preferencia|no tengo preferencia|"
    "el primero disponible|lo mas cercano",
}
_DAY_OF_MONTH = {
    "pt-BR": r"\bdia\s+(\d{1,2})\b",
    "en": r"\b(\d{1,2})(?:st|nd|rd|th)\b|\bthe\s+(\d{1,2})\b(?!\s*(?::|am|pm|a\.m|p\.m))",
    "es": r"\b(?:el\s+)?dia\s+(\d{1,2})\b|\bel\s+(\d{1,2})\b(?!\s*(?::|h\b|horas))",
}
# An hour named with its part of the day, or after "das" / "de las" (time words _nlu does not read).
_PART_WORDS = r"(manha|tarde|noite|manana|noche|morning|afternoon|evening)"
_HOUR_WITH_PART = (
    # "3 da tarde", "3 de la tarde", "3 in the afternoon"; "por la tarde" only after "a las" ("el 16 por la tarde"
    # is a day).
    rf"\b(\d{{1,2}})(?:[:h](\d{{2}}))?\s*(?:h\s*)?(?:da|de la|in the|of the)\s+{_PART_WORDS}\b",
    rf"\b(?:as|a las|las|at|das)\s+(\d{{1,2}})(?:[:h](\d{{2}}))?\s*(?:h\s*)?(?:por la|en la)\s+{_PART_WORDS}\b",
)
_HOUR_AFTER_WORD = r"\b(?:das|de las|las|at)\s+(\d{1,2})(?:[:h](\d{2}))?\b(?!\s*(?:/|st|nd|rd|th|de\b|of\b))"
_HONORIFICS = {"dr", "dra", "doutor", "doutora", "doctor", "doc", "prof", "sr", "sra", "mr", "mrs", "ms"}
_GENERIC_SERVICE_WORDS = {"consulta", "consultation", "consult", "dental", "geral", "general", "clinica", "clinic",
                          "sessao", "session", "cita", "teeth", "dientes", "dentes"}


@dataclass(frozen=True)
class SlotRequest:
    """What the patient asked of a slot; every field optional.

    Attributes:
        day: a day (an explicit date, "tomorrow", or the first occurrence of a named weekday).
        weekday_only: ``day`` came from a weekday name, so any such weekday will do when that day is full.
        from_day: "next week": slots on or after this day.
        part: ``morning``, ``afternoon`` or ``evening``.
        time: ``HH:MM``.
        soonest: the patient asked for the first free time or said any time will do.
    """

    day: dt.date | None = None
    weekday_only: bool = False
    from_day: dt.date | None = None
    part: str | None = None
    time: str | None = None
    soonest: bool = False

    @property
    def empty(self) -> bool:
        """Whether the patient said nothing about when."""
        return not (self.day or self.from_day or self.part or self.time or self.soonest)

    def then(self, newer: SlotRequest) -> SlotRequest:
        """This request updated by a later message: what the later one says wins, the rest stays."""
        changes: dict[str, Any] = {}
        if newer.day or newer.from_day:
            changes.update(day=newer.day, weekday_only=newer.weekday_only, from_day=newer.from_day)
        if newer.part:
            changes["part"] = newer.part
            if not newer.time and self.time and _part_of(self.time) != newer.part:
                changes["time"] = None  # "10h" then "à tarde": the morning hour no longer applies
        if newer.time:
            changes["time"] = newer.time
        if newer.soonest:
            changes["soonest"] = True
        return replace(self, **changes)


def calendar_today(slots: Iterable[Mapping[str, Any]]) -> dt.date:
    """The agent's "today": the day before the first slot listed (``date.today()`` when there is none)."""
    days = [_day(s["starts_at"]) for s in slots]
    return min(days) - dt.timedelta(days=1) if days else dt.date.today()


def _day(starts_at: str) -> dt.date:
    return dt.datetime.fromisoformat(str(starts_at)).date()


def _hhmm(starts_at: str) -> str:
    return dt.datetime.fromisoformat(str(starts_at)).strftime("%H:%M")


def _part_of(hhmm: str) -> str:
    hour = int(hhmm[:2])
    return next(p for p, (lo, hi) in _PART_HOURS.items() if lo <= hour < hi)


def _strip(norm: str, phrases: str) -> str:
    for phrase in sorted((normalize(p) for p in phrases.split("|")), key=len, reverse=True):
        norm = re.sub(rf"(?<!\S){re.escape(phrase)}(?!\S)", " ", norm)
    return " ".join(norm.split())


def read_part(text: str, locale: str) -> str | None:
    """``morning`` / ``afternoon`` / ``evening`` when the message names a part of the day (the first one named)."""
    norm = _strip(_strip(normalize(text), _GREETINGS), _NOT_PARTS)
    found = []
    for part, spec in _PART_PHRASES[resolve_locale(locale)].items():
        for phrase in spec.split("|"):
            m = re.search(rf"(?<!\S){re.escape(normalize(phrase))}(?!\S)", norm)
            if m:
                found.append((m.start(), part))
    return min(found)[1] if found else None


def read_time(text: str, locale: str, part: str | None = None) -> str | None:
    """A time of day as ``HH:MM``; an hour under 12 said with "da tarde"/"in the afternoon" is read as p.m."""
    plain = _plain(text)
    time = None
    m = next((m for m in (re.search(p, plain) for p in _HOUR_WITH_PART) if m), None)
    if m:
        hour = int(m.group(1))
        part = {"manha": "morning", "manana": "morning", "morning": "morning", "noite": "evening",
                "noche": "evening", "evening": "evening"}.get(m.group(3), "afternoon")
        time = f"{hour:02d}:{int(m.group(2) or 0):02d}" if hour < 24 and int(m.group(2) or 0) < 60 else None
    if time is None:
        time = extract_time(text)
    if time is None:
        m = re.search(_HOUR_AFTER_WORD, plain)
        if m and int(m.group(1)) < 24 and int(m.group(2) or 0) < 60:
            time = f"{int(m.group(1)):02d}:{int(m.group(2) or 0):02d}"
    if time is None:
        return None
    hour = int(time[:2])
    # Clinics do not open at 3 a.m.: "às 3", "3:30" without a.m. is the afternoon, as it is for "3 da tarde".
    late = part in ("afternoon", "evening") or (1 <= hour <= 6 and not re.search(r"\d\s*(?:am|a\.m)", plain))
    return f"{hour + 12:02d}{time[2:]}" if late and hour < 12 else time


def read_weekday(text: str, locale: str) -> int | None:
    """The weekday the message names (0 = Monday), if any."""
    loc = resolve_locale(locale)
    norm = _strip(normalize(text), _NOT_WEEKDAY)
    for i, spec in enumerate(_WEEKDAY_WORDS[loc]):
        if matches(norm, spec):
            return i
    return None


def read_request(text: str, locale: str, today: dt.date) -> SlotRequest:
    """Everything the message says about when.

    Args:
        text: the patient's message.
        locale: the session's language.
        today: the agent's "today" (see ``calendar_today``).

    Example:
        >>> request = read_request("terça de manhã, às 10h se der", "pt-BR", dt.date(2026, 3, 8))
        >>> request.day, request.weekday_only, request.part, request.time
        (datetime.date(2026, 3, 10), True, 'morning', '10:00')
    """
    loc = resolve_locale(locale)
    norm = normalize(text)
    part = read_part(text, loc)
    time = read_time(text, loc, part)
    soonest = matches(norm, _SOONEST[loc])
    # Dates are read with the part-of-day and weekday words removed: "mañana" left over is "tomorrow".
    plain = _plain(text)
    for phrase in sorted((p for spec in _PART_PHRASES[loc].values() for p in spec.split("|")), key=len, reverse=True):
        plain = re.sub(rf"\b{re.escape(phrase)}\b", " ", plain)
    for phrase in _GREETINGS.split("|"):
        plain = re.sub(rf"\b{re.escape(phrase)}\b", " ", plain)
    weekday = read_weekday(text, loc)
    without_weekdays = plain
    for spec in _WEEKDAY_WORDS[loc]:
        for phrase in spec.split("|"):
            without_weekdays = re.sub(rf"\b{re.escape(phrase)}(-feira)?\b", " ", without_weekdays)
    day = extract_date(without_weekdays, loc, today) or _day_of_month(without_weekdays, loc, today)
    weekday_only = False
    if day is None and weekday is not None:
        day = today + dt.timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
        weekday_only = True
    from_day = None
    if matches(norm, _NEXT_WEEK[loc]):
        from_day = today + dt.timedelta(days=7 - today.weekday())  # the coming Monday
        if day is not None and day < from_day:
            day = day + dt.timedelta(days=7)
    return SlotRequest(day=day, weekday_only=weekday_only, from_day=from_day, part=part, time=time, soonest=soonest)


def _day_of_month(plain: str, locale: str, today: dt.date) -> dt.date | None:
    m = re.search(_DAY_OF_MONTH[locale], plain)
    if not m:
        return None
    number = int(next(g for g in m.groups() if g))
    try:
        day = today.replace(day=number)
    except ValueError:
        return None
    if day <= today:  # "dia 5" said on the 20th means next month's 5th
        month = today.month % 12 + 1
        try:
            day = day.replace(year=today.year + (today.month == 12), month=month)
        except ValueError:
            return None
    return day


# ── Filtering slots ──


def fits(slot: Mapping[str, Any], request: SlotRequest, *, day: str = "exact", time: bool = True,
         part: bool = True) -> bool:
    """Whether a free slot matches ``request``.

    Args:
        slot: a free slot (``starts_at``).
        request: what the patient asked.
        day: ``exact`` (the day asked), ``weekday`` (any day of the weekday asked, when asked as a weekday) or
            ``any`` (only "next week" still applies).
        time: whether the exact time counts.
        part: whether the part of the day counts.
    """
    when = dt.datetime.fromisoformat(str(slot["starts_at"]))
    if request.from_day and when.date() < request.from_day:
        return False
    if request.day and day != "any":
        if day == "weekday" and request.weekday_only:
            if when.weekday() != request.day.weekday():
                return False
        elif when.date() != request.day:
            return False
    if part and request.part and _part_of(when.strftime("%H:%M")) != request.part:
        return False
    return not (time and request.time and when.strftime("%H:%M") != request.time)


class _Relaxation(TypedDict):
    """One step of ``_RELAXING``: the keyword arguments of ``fits``."""

    day: str
    time: bool
    part: bool


# From the exact request to anything free: the exact time goes first, the day last.
_RELAXING: tuple[_Relaxation, ...] = (
    {"day": "exact", "time": True, "part": True},
    {"day": "exact", "time": False, "part": True},
    {"day": "exact", "time": False, "part": False},
    {"day": "weekday", "time": False, "part": True},
    {"day": "weekday", "time": False, "part": False},
    {"day": "any", "time": False, "part": True},
    {"day": "any", "time": False, "part": False},
)


def candidates(
    slots: Sequence[Mapping[str, Any]], request: SlotRequest, *, professional_id: str | None = None,
    usual_professional_id: str | None = None,
) -> tuple[list[Mapping[str, Any]], bool]:
    """The free slots to offer, and whether they match the request exactly.

    When nothing matches, constraints are dropped one at a time, the least important first: the exact time, the part
    of the day, the exact day (a weekday keeps its weekday), the day; the professional the patient named goes last.
    The usual professional (of the appointment being moved, of the last visit) only sorts first.

    Returns:
        ``(slots, exact)``: ranked by ``_ranked``; ``exact`` is False when something was dropped.
    """
    pools = [[s for s in slots if s["professional_id"] == professional_id]] if professional_id else []
    pools.append(list(slots))
    for pool_index, pool in enumerate(pools):
        for level, step in enumerate(_RELAXING):
            found = [s for s in pool if fits(s, request, **step)]
            if found:
                return _ranked(found, request, usual_professional_id), level == 0 and pool_index == 0
        if pool:
            return _ranked(pool, request, usual_professional_id), False
    return [], False


def _ranked(slots: list[Mapping[str, Any]], request: SlotRequest, usual: str | None) -> list[Mapping[str, Any]]:
    """Closest to the time asked first (when one was), then the usual professional's, then the soonest."""

    def minutes(hhmm: str) -> int:
        return int(hhmm[:2]) * 60 + int(hhmm[3:5])

    def key(slot: Mapping[str, Any]) -> tuple[int, bool, str]:
        distance = abs(minutes(_hhmm(slot["starts_at"])) - minutes(request.time)) if request.time else 0
        return distance, bool(usual) and slot["professional_id"] != usual, str(slot["starts_at"])

    return sorted(slots, key=key)


def pick_by_time(offered: Sequence[Mapping[str, Any]], request: SlotRequest) -> Mapping[str, Any] | None:
    """The one offered slot the patient named by its time (and day, when they gave one)."""
    if not request.time:
        return None
    hits = [
        s for s in offered
        if _hhmm(s["starts_at"]) == request.time and (not request.day or _day(s["starts_at"]) == request.day)
    ]
    return hits[0] if len(hits) == 1 else None


# ── Names ──


def _words(name: str) -> set[str]:
    return {w for w in normalize(name).split() if len(w) >= 3 and w not in _HONORIFICS}


def match_professional(text: str, professionals: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The professional the message names ("com a Dra. Camila", "Dr. Lima"), when exactly one fits best."""
    said = set(normalize(text).split())
    scored = [(len(_words(p["name"]) & said), p) for p in professionals]
    best = max((n for n, _ in scored), default=0)
    hits = {p["id"]: p for n, p in scored if n == best and n > 0}
    return next(iter(hits.values())) if len(hits) == 1 else None


def match_service(text: str, services: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The service the message names ("limpeza" → "Limpeza dental"): distinctive words first (by their first five
    letters, so plurals match), a generic word ("consulta") only when it names a single service."""
    said = {w[:5] for w in normalize(text).split() if len(w) >= 4}
    scored = []
    for service in services:
        words = {w for w in normalize(service["name"]).split() if len(w) >= 4}
        distinctive = {w[:5] for w in words if w not in _GENERIC_SERVICE_WORDS}
        generic = {w[:5] for w in words if w in _GENERIC_SERVICE_WORDS}
        scored.append((2 * len(distinctive & said) + len(generic & said), service))
    best = max((n for n, _ in scored), default=0)
    hits = [s for n, s in scored if n == best and n > 0]
    return hits[0] if len(hits) == 1 else None
