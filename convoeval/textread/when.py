"""Dates and times in folded text: one reader for the leak detector (``convoeval.redteam``, over its
``reading.Reading.text``: folded, numbers as digits) and the reference agents' identity checks (a birth date as a
caller writes it, ``convoeval.agents.clinic``), so the two read the same forms. It sits in the lowest layer for that.

Month and weekday names come from CLDR through babel (BSD-3; pt-BR, es and en, wide and abbreviated), read in
any of the three languages whatever the conversation's locale. A date may be written in numbers (``14/03/1958``,
ISO), with the month as a word or abbreviation in any position (``14/mar/1958``, ``14-MAR-1958``, ``the 14th of
March, 1958``, ``8 de mayo del 1976``, ``March 14th, 1958``), as a day of the month (``dia 11``, ``the 11th``), a
weekday (``quarta-feira``, ``next Wednesday``) or a relative day (``amanhã``, ``tomorrow``, ``pasado mañana``).
The last three need the conversation's clock (``today``): with it they are dates; without it a day of the month
is that day in any month, a weekday that weekday in any week, and a relative day is not read.

A time may be numeric (``08:15``, ``8h15``, ``8.15am``, ``5:45 PM``), or spoken (``às 8 e 15``, ``a las 8 y
cuarto``, ``quinze para as seis``, ``las seis menos cuarto``, ``quarter past eight``, ``half past five``), with a
part of the day (``da tarde``, ``de la tarde``, ``in the evening``) or AM/PM.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache

from babel.dates import get_day_names, get_month_names

from convoeval.textread.folding import fold


def _names(getter: Callable[..., Mapping[int, str]], extra: dict[str, int]) -> dict[str, int]:
    found: dict[str, int] = dict(extra)
    for locale in ("pt_BR", "es", "en"):
        for width in ("wide", "abbreviated"):
            for key, name in getter(width, "format", locale=locale).items():
                found.setdefault(fold(str(name)).rstrip("."), int(key))
    return found


#: Month names and abbreviations of the three languages (CLDR, plus the forms CLDR leaves out).
MONTH_OF = _names(get_month_names, {"setiembre": 9, "sep": 9, "sept": 9})
#: Weekday names (0 is Monday), wide only: CLDR's abbreviations collide with words and months (es ``mar``).
WEEKDAY_OF = {name: day for name, day in _names(get_day_names, {}).items() if len(name) > 4}
_FULL_WEEKDAYS = "|".join(sorted(WEEKDAY_OF, key=len, reverse=True))
#: Portuguese says "na quarta" for "na quarta-feira"; alone these words are also ordinals ("segunda vez").
WEEKDAY_OF.update({"segunda": 0, "terca": 1, "quarta": 2, "quinta": 3, "sexta": 4})
_RELATIVE = {"depois de amanha": 2, "pasado manana": 2, "day after tomorrow": 2, "amanha": 1, "tomorrow": 1,
             "manana": 1, "hoje": 0, "today": 0, "hoy": 0}
_ORDINALS = r"(?:o|a|st|nd|rd|th)"
_SHORT_WEEKDAY_AFTER = ("na ", "sta ", "ssa ", "ate ", "xima ")

_MONTHS = "|".join(sorted(MONTH_OF, key=len, reverse=True))
_NUMERIC_DATE = (
    r"(?P<iy>\d(?<![\d-]\d)\d{3})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?!\d)"
    r"|(?P<na>\d(?<![\d/.,:-]\d)\d?)(?P<sep>[/.-])(?P<nb>\d{1,2})(?:(?P=sep)(?P<ny>\d{4}|\d{2}))?(?!\d|[/.,:-]\d|\s*[ap]\.?\s?m\b)"
)
#: The date pattern's branches in words, each run only when the message holds one of its words (``_TRIGGERS``):
#: one pattern with every branch costs several times the numeric one on a 350-character message.
_BRANCHES = {
    # A day then the month, in any separator: "14 de março de 1958", "14/mar/1958", "the 14th of March, 1958";
    # the month then the day: "March 14th, 1958", "Mar. 14, 1958", "mar/14/1958".
    "month": rf"|(?P<dd>\d(?<![\d.,:]\d)\d?|primeiro|primero|first){_ORDINALS}?(?:\s+(?:de|of))?(?:\s+|\s*[/.-]\s*)"
             rf"(?P<dm>{_MONTHS})(?![a-z])\.?"
             r"(?:\s*(?P<dsep>[/.-])\s*(?P<dy2>\d{4}|\d{2})|,?\s+(?:de\s+|del\s+|of\s+)?(?P<dy>\d{4}))?(?!\d)"
             rf"|(?P<mm>{_MONTHS})(?![a-z])\.?(?:\s+(?:the\s+)?|\s*[/.-]\s*)(?P<md>\d{{1,2}}){_ORDINALS}?"
             r"(?![\d:/.-]\d|\d)(?:(?:,?\s+|\s*[/.-]\s*)(?P<my>\d{4})(?!\d))?",
    # A day of the month: "dia 11", "the 11th", "el día 11".
    "day": rf"|(?:d(?<![a-z]d)(?:ia|ay)|t(?<![a-z]t)he)\s+(?P<od>\d{{1,2}}){_ORDINALS}?(?![a-z])"
           rf"(?![\d/.:,-]\d|\d|\s*(?:de\s+|of\s+)?(?:{_MONTHS})(?![a-z]))",
    # A weekday (next, this, que vem…).
    "weekday": rf"|(?P<wd>{_FULL_WEEKDAYS})(?![a-z])|(?P<ws>segunda|terca|quarta|quinta|sexta)(?![a-z])",
    # A relative day.
    "relative": r"|(?P<rel>depois de amanha|pasado manana|day after tomorrow|amanha|tomorrow|hoje|today|hoy"
                r"|manana(?<!la manana)(?<!da manana)(?<!de manana)(?! de )(?!,? (?:y|e) ))(?![a-z])",
}
_RELATIVE_WORDS = frozenset({"amanha", "tomorrow", "hoje", "today", "hoy", "manana"})
_TRIGGERS = {"month": frozenset(MONTH_OF), "day": frozenset({"dia", "day", "the"}),
             "weekday": frozenset(WEEKDAY_OF), "relative": _RELATIVE_WORDS}
#: The words a branch's match starts with (a weekday's first word: "segunda" of "segunda-feira").
_STARTERS = {"month": frozenset(MONTH_OF) | {"primeiro", "primero", "first"}, "day": _TRIGGERS["day"],
             "weekday": frozenset(name.split("-")[0] for name in WEEKDAY_OF),
             "relative": _RELATIVE_WORDS | {"depois", "pasado", "day"}}


@lru_cache(maxsize=None)
def _pattern(parts: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_NUMERIC_DATE + "".join(_BRANCHES[part] for part in parts))


#: A date read from text: (year, month, day, weekday with 0 = Monday); None where the text does not say it.
Day = tuple[int | None, int | None, int | None, int | None]


def _valid(year: int | None, month: int | None, day: int | None) -> bool:
    return ((month is None or 1 <= month <= 12) and (day is None or 1 <= day <= 31)
            and (year is None or 1900 <= year <= 2100))


def _years(text: str | None) -> tuple[int | None, ...]:
    if text is None:
        return (None,)
    if len(text) == 2:  # "14/03/58": either century
        return (1900 + int(text), 2000 + int(text))
    return (int(text),)


def _day_number(text: str) -> int:
    return 1 if text in ("primeiro", "primero", "first") else int(text)


def _on_or_after(today: dt.date, day: int) -> Day | None:
    # "dia 11": the next 11th from the conversation's day (this month's, else next month's).
    year, month = today.year, today.month
    for _ in range(2):
        try:
            when = dt.date(year, month, day)
        except ValueError:
            when = None
        if when is not None and when >= today:
            return (when.year, when.month, when.day, None)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _readings(g: dict[str, str | None], month_first: bool, today: dt.date | None) -> list[Day]:
    if g["iy"]:
        return [(int(g["iy"]), int(g["im"] or 0), int(g["id"] or 0), None)]
    if g["na"]:
        a, b = int(g["na"]), int(g["nb"] or 0)
        found: list[Day] = []
        for year in _years(g["ny"]):
            found.append((year, b, a, None))
            if month_first:
                found.append((year, a, b, None))
        return found
    if g.get("dd"):
        month = MONTH_OF[g["dm"] or ""]
        return [(y, month, _day_number(g["dd"] or ""), None) for y in _years(g["dy"] or g["dy2"])]
    if g.get("mm"):
        return [(y, MONTH_OF[g["mm"] or ""], int(g["md"] or 0), None) for y in _years(g["my"])]
    if g.get("od"):
        day = int(g["od"] or 0)
        if today is None:
            return [(None, None, day, None)]
        resolved = _on_or_after(today, day)
        return [resolved] if resolved else []
    weekday_name = g.get("wd") or g.get("ws")
    if weekday_name:
        weekday = WEEKDAY_OF[weekday_name]
        if today is None:
            return [(None, None, None, weekday)]
        # "quarta-feira", "next Wednesday": this coming one or the one after (people mean either by "next").
        first = today + dt.timedelta(days=(weekday - today.weekday()) % 7)
        return [(d.year, d.month, d.day, None) for d in (first, first + dt.timedelta(days=7))]
    if g.get("rel") and today is not None:
        when = today + dt.timedelta(days=_RELATIVE[g["rel"] or ""])
        return [(when.year, when.month, when.day, None)]
    return []


_DIGITS = re.compile(r"\d+")


def _starts(text: str, words: Iterable[str] | None, starters: frozenset[str]) -> list[int]:
    """Where a date or a time can start: each run of digits, and each whole word of ``starters`` that is among the
    text's ``words`` (found with ``str.find``: no pattern tried at every position of the message)."""
    starts = [m.start() for m in _DIGITS.finditer(text)]
    present = starters if words is None else starters.intersection(words)
    for word in present:
        at = text.find(word)
        while at != -1:
            after = at + len(word)
            if (not at or not text[at - 1].isalnum()) and (after == len(text) or not text[after].isalnum()):
                starts.append(at)
            at = text.find(word, after)
    starts.sort()
    return starts


def _matches(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """The pattern's matches tried at ``starts`` only, none overlapping the one before (as ``finditer`` would)."""
    end = 0
    for start in starts:
        if start < end:
            continue
        m = pattern.match(text, start)
        if m is not None:
            end = m.end()
            yield m


def dates(text: str, *, month_first: bool, words: Iterable[str] | None = None,
          today: dt.date | None = None) -> Iterator[tuple[int, int, tuple[Day, ...]]]:
    """Dates in read text as ``(start, end, readings)`` (see the module docstring for the forms). A numeric date is
    day first (pt-BR, es); with ``month_first`` (en) it is read both ways. A two-digit year is read in both
    centuries. ``words`` (the text's folded words, if the caller has them) skips the forms none of them calls for.
    """
    present = set(words) if words is not None else None
    parts = tuple(part for part, triggers in _TRIGGERS.items() if present is None or not triggers.isdisjoint(present))
    starters = frozenset().union(*(_STARTERS[part] for part in parts))
    for m in _matches(_pattern(parts), text, _starts(text, present, starters)):
        g = m.groupdict()
        if (g.get("mm") or g.get("wd") or g.get("ws")) and m.start() and text[m.start() - 1].isalnum():
            continue  # a month or weekday name inside a word
        if g.get("ws") and not text[max(0, m.start() - 5):m.start()].endswith(_SHORT_WEEKDAY_AFTER):
            continue  # "segunda", "quarta"… alone are ordinals: a weekday after "na", "esta", "próxima", "até"…
        found = tuple(dict.fromkeys(r for r in _readings(g, month_first, today) if _valid(*r[:3])))
        if found:
            yield m.start(), m.end(), found


# ── times ──

_HOUR_WORDS = {"uma": 1, "una": 1, "one": 1, "duas": 2, "dos": 2, "two": 2, "tres": 3, "three": 3}
_HW = r"\d{1,2}|uma|una|one|duas|dos|two|tres|three"
_QUARTER = r"um\s+quarto|um\s+4o|a\s+quarter|quarter|quarto|cuarto|4o"
#: The same words, each checked for a word start just after its first letter (a lookbehind at the start of a
#: branch would be tried at every position of the message: several times slower).
_QUARTER_WORDS = r"u(?<![a-z]u)m\s+(?:quarto|4o)|a(?<![a-z]a)\s+quarter|q(?<![a-z]q)uart(?:er|o)|c(?<![a-z]c)uarto"
_TIMES = re.compile(
    # Spoken: "às 8 e 15", "a las 8 y cuarto", "as 8 e meia" (after a cue), "8 e 15 da manhã" (before a part).
    rf"(?:(?:a(?<![a-z]a)(?:s|t|\s+las?)|d(?<![a-z]d)(?:as|e\s+las)|p(?<![a-z]p)elas)\s+(?P<sh>{_HW})\s+(?:(?:e|y|and)\s+)?"
    rf"(?P<sm>\d{{2}}|meia|media|{_QUARTER})(?![a-z\d])"
    rf"|(?P<sh2>\d(?<![\d:.,/]\d)\d?)\s+(?:e|y)\s+(?P<sm2>\d{{2}}|meia|media|{_QUARTER})"
    r"(?=\s+(?:da|de|de\s+la)\s+(?:manha|tarde|noite|manana|noche)\b)"
    # "quinze para as seis", "quarter to six", "las seis menos cuarto"; "quarter past eight", "half past five".
    rf"|(?P<qm>\d(?<![a-z\d]\d)(?<!from\s\d)(?<!de\s\d)(?<!entre\s\d)(?:\d|o)?|{_QUARTER_WORDS})\s+(?:minutos\s+|minutes\s+)?"
    rf"(?:para\s+as?|para\s+las?|to|till)\s+(?P<qh>{_HW})(?![a-z\d:])"
    rf"|(?P<eh>\d(?<![\d:.,/]\d)\d?|{_HW})\s+menos\s+(?P<em>cuarto|4o|\d{{1,2}})(?![a-z\d])"
    rf"|(?P<pm>\d(?<![a-z\d]\d)(?:\d|o)?|{_QUARTER_WORDS}|h(?<![a-z]h)alf)\s+(?:minutes\s+)?past\s+(?P<ph>{_HW})(?![a-z\d:])"
    # Numeric: "08:15", "8h15", "9h", "9 horas", "8.15am", "9am".
    r"|(?P<h>\d(?<![\d:.,/]\d)\d?)(?:(?::|h)(?P<m>\d{2})(?!\d)|\.(?P<m2>\d{2})(?=\s*[ap]\.?\s?m\b)|h(?![a-z])"
    r"|\s*horas?(?![a-z])|(?=\s*[ap]\.?\s?m\b))"
    # A bare hour after its cue: "às 9", "a las 9", "at 9".
    r"|a(?<![a-z]a)(?:s|t|\s+las?)\s+(?P<bh>\d{1,2})(?![\d:/.,h]|\s*[ap]\.?\s?m\b|\s+(?:(?:e|y|and)\s+)?\d|\s+menos))"
    # The part of the day.
    r"(?:\s*(?P<ap>[ap])(?:\.m\.|\.?\s?m\b)|\s+(?:da|de|de\s+la|in\s+the|at|pela|por\s+la)\s+"
    r"(?P<dp>manha|manana|tarde|noite|noche|morning|afternoon|evening|night)(?![a-z]))?"
)
_AFTERNOON = frozenset({"tarde", "noite", "noche", "afternoon", "evening", "night"})

#: A time of day read from text: (hour, minute).
Time = tuple[int, int]


def _hour(text: str) -> int:
    return _HOUR_WORDS[text] if text in _HOUR_WORDS else int(text)


def _minutes(text: str) -> int:
    if text in ("meia", "media", "half"):
        return 30
    return 15 if not text[0].isdigit() or text == "4o" else int(text)


def _clock(g: dict[str, str | None]) -> tuple[int, int, bool, str] | None:
    """(hour, minute, spoken, hour as written) of one match; None when it is not a time."""
    if g["sh"] or g["sh2"]:
        hour_text = g["sh"] or g["sh2"] or ""
        return _hour(hour_text), _minutes(g["sm"] or g["sm2"] or ""), True, hour_text
    if g["qh"]:
        before = _minutes(g["qm"] or "")
        hour = _hour(g["qh"])
        return (hour - 1) % 24 if before else hour, (60 - before) % 60, True, g["qh"]
    if g["eh"]:
        before = _minutes(g["em"] or "")
        hour = _hour(g["eh"])
        return (hour - 1) % 24 if before else hour, (60 - before) % 60, True, g["eh"]
    if g["ph"]:
        return _hour(g["ph"]), _minutes(g["pm"] or ""), True, g["ph"]
    hour_text = g["h"] or g["bh"] or ""
    return int(hour_text), int(g["m"] or g["m2"] or 0), False, hour_text


#: How far from a date a time is looked for (characters): farther than the detector pairs a time with its day,
#: plus the longest time ("a quarter to six in the afternoon").
NEAR = 80


#: The words a time can start with (beside digits): its cue, a quarter, half, an hour said in words up to three.
_TIME_STARTERS = frozenset({"as", "at", "a", "das", "de", "pelas", "um", "quarter", "quarto", "cuarto", "half",
                            *_HOUR_WORDS})


def _around(text: str, spans: Iterable[tuple[int, int]], words: Iterable[str] | None) -> Iterator[re.Match[str]]:
    windows: list[list[int]] = []
    for start, end in sorted(spans):
        lo, hi = max(0, start - NEAR), min(len(text), end + NEAR)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    starts = [at for at in _starts(text, words, _TIME_STARTERS) if any(lo <= at < hi for lo, hi in windows)]
    return _matches(_TIMES, text, starts)


def times(text: str, *, twelve_hour: bool, near: Iterable[tuple[int, int]] | None = None,
          words: Iterable[str] | None = None) -> Iterator[tuple[int, int, tuple[Time, ...]]]:
    """Times of day in read text as ``(start, end, readings)``. AM/PM or a part of the day decides the hour
    (``5:45 de la tarde`` is 17:45, ``12 am`` midnight). Without one, an hour from 1 to 11 written without a
    leading zero is read both as morning and as afternoon when it is spoken (``às 5 e 45``, ``quarter to six``) in
    every locale, and with ``twelve_hour`` (en) also when it is numeric (``at 5:45``, not ``05:45``); otherwise as
    written (``17h45``; in pt-BR and es ``5h45`` is morning). ``near`` (spans of dates) reads only around them,
    ``NEAR`` characters either side: a time far from any date is no appointment; ``words`` (the text's words)
    lets it skip the starting words that are not there."""
    for m in (_TIMES.finditer(text) if near is None else _around(text, near, words)):
        clock = _clock(m.groupdict())
        if clock is None:
            continue
        hour, minute, spoken, written = clock
        marker = m.group("ap") or ("p" if m.group("dp") in _AFTERNOON else "a" if m.group("dp") else None)
        if hour > 23 or minute > 59 or (marker and not 0 <= hour <= 12):
            continue
        if marker == "p" and 1 <= hour < 12:
            readings: tuple[Time, ...] = ((hour + 12, minute),)
        elif marker == "a" and hour == 12 and m.group("ap"):
            readings = ((0, minute),)
        elif not marker and (spoken or twelve_hour) and 1 <= hour <= 11 and not written.startswith("0"):
            readings = ((hour, minute), (hour + 12, minute))
        else:
            readings = ((hour, minute),)
        yield m.start(), m.end(), readings
