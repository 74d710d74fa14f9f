"""Dates and times in a message as the detector reads it (``reading.Reading.text``: folded, numbers as digits).

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

from babel.dates import get_day_names, get_month_names

from convoeval.redteam._text import fold


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

_MONTHS = "|".join(sorted(MONTH_OF, key=len, reverse=True))
_NUMERIC_DATE = (
    r"(?P<iy>\d(?<![\d-]\d)\d{3})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?!\d)"
    r"|(?P<na>\d(?<![\d/.,:-]\d)\d?)(?P<sep>[/.-])(?P<nb>\d{1,2})(?:(?P=sep)(?P<ny>\d{4}|\d{2}))?(?!\d|[/.,:-]\d|\s*[ap]\.?\s?m\b)"
)
_NAMED_DATE = (
    # A day then the month, in any separator: "14 de março de 1958", "14/mar/1958", "the 14th of March, 1958".
    rf"|(?P<dd>\d(?<![\d.,:]\d)\d?|primeiro|primero|first){_ORDINALS}?(?:\s+(?:de|of))?(?:\s+|\s*[/.-]\s*)"
    rf"(?P<dm>{_MONTHS})(?![a-z])\.?"
    r"(?:\s*(?P<dsep>[/.-])\s*(?P<dy2>\d{4}|\d{2})|,?\s+(?:de\s+|del\s+|of\s+)?(?P<dy>\d{4}))?(?!\d)"
    # The month then the day: "March 14th, 1958", "Mar. 14, 1958", "mar/14/1958".
    rf"|(?P<mm>{_MONTHS})(?![a-z])\.?(?:\s+(?:the\s+)?|\s*[/.-]\s*)(?P<md>\d{{1,2}}){_ORDINALS}?(?![\d:/.-]\d|\d)"
    r"(?:(?:,?\s+|\s*[/.-]\s*)(?P<my>\d{4})(?!\d))?"
    # A day of the month: "dia 11", "the 11th", "el día 11".
    rf"|(?:(?<![a-z])(?:dia|day)\s+|the\s+)(?P<od>\d{{1,2}}){_ORDINALS}?(?![a-z])(?![\d/.:,-]\d|\d|\s*(?:de\s+|of\s+)?(?:{_MONTHS})(?![a-z]))"
    # A weekday (next, this, que vem…) and a relative day.
    rf"|(?P<wd>{_FULL_WEEKDAYS})(?![a-z])"
    r"|(?:(?<=na )|(?<=sta )|(?<=ssa )|(?<=ate )|(?<=xima ))(?P<ws>segunda|terca|quarta|quinta|sexta)(?![a-z])"
    r"|(?P<rel>depois de amanha|pasado manana|day after tomorrow|amanha|tomorrow|hoje|today|hoy"
    r"|(?<!la )(?<!da )(?<!de )manana(?! de )(?!,? (?:y|e) ))(?![a-z])"
)
_DATES = {False: re.compile(_NUMERIC_DATE), True: re.compile(_NUMERIC_DATE + _NAMED_DATE)}
_DATE_WORDS = frozenset(MONTH_OF) | frozenset(WEEKDAY_OF) | {"dia", "day", "the", "amanha", "tomorrow", "hoje",
                                                             "today", "hoy", "manana", "primeiro", "primero"}
_ORDINAL_WORD = re.compile(r"\d(?:st|nd|rd|th)\b")

#: A date read from text: (year, month, day, weekday with 0 = Monday); None where the text does not say it.
Day = tuple[int | None, int | None, int | None, int | None]


def names_a_date(words: Iterable[str], text: str) -> bool:
    """Whether a message with these folded ``words`` may hold a date in words (a month, a weekday, ``dia 11``,
    ``the 11th``, ``amanhã``), so the slower search for them is worth running."""
    return not _DATE_WORDS.isdisjoint(words) or bool(_ORDINAL_WORD.search(text))


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


def dates(text: str, *, month_first: bool, named: bool = True,
          today: dt.date | None = None) -> Iterator[tuple[int, int, tuple[Day, ...]]]:
    """Dates in read text as ``(start, end, readings)`` (see the module docstring for the forms). A numeric date is
    day first (pt-BR, es); with ``month_first`` (en) it is read both ways. A two-digit year is read in both
    centuries. ``named=False`` skips dates in words (see ``names_a_date``)."""
    for m in _DATES[named].finditer(text):
        g = m.groupdict()
        if (g.get("mm") or g.get("wd")) and m.start() and text[m.start() - 1].isalnum():
            continue  # a month or weekday name inside a word
        found = tuple(dict.fromkeys(r for r in _readings(g, month_first, today) if _valid(*r[:3])))
        if found:
            yield m.start(), m.end(), found


# ── times ──

_HOUR_WORDS = {"uma": 1, "una": 1, "one": 1, "duas": 2, "dos": 2, "two": 2, "tres": 3, "three": 3}
_HW = r"\d{1,2}|uma|una|one|duas|dos|two|tres|three"
_QUARTER = r"um\s+quarto|um\s+4o|a\s+quarter|quarter|quarto|cuarto|4o"
_TIMES = re.compile(
    # Spoken: "às 8 e 15", "a las 8 y cuarto", "as 8 e meia" (after a cue), "8 e 15 da manhã" (before a part).
    rf"(?:(?<![a-z])(?:as|a\s+las?|at|das|de\s+las|pelas)\s+(?P<sh>{_HW})\s+(?:(?:e|y|and)\s+)?"
    rf"(?P<sm>\d{{2}}|meia|media|{_QUARTER})(?![a-z\d])"
    rf"|(?P<sh2>\d(?<![\d:.,/]\d)\d?)\s+(?:e|y)\s+(?P<sm2>\d{{2}}|meia|media|{_QUARTER})"
    r"(?=\s+(?:da|de|de\s+la)\s+(?:manha|tarde|noite|manana|noche)\b)"
    # "quinze para as seis", "quarter to six", "las seis menos cuarto"; "quarter past eight", "half past five".
    rf"|(?<![a-z\d])(?<!from\s)(?<!de\s)(?<!entre\s)(?P<qm>\d{{1,2}}|{_QUARTER})\s+(?:minutos\s+|minutes\s+)?"
    rf"(?:para\s+as?|para\s+las?|to|till)\s+(?P<qh>{_HW})(?![a-z\d:])"
    rf"|(?P<eh>\d(?<![\d:.,/]\d)\d?|{_HW})\s+menos\s+(?P<em>cuarto|4o|\d{{1,2}})(?![a-z\d])"
    rf"|(?<![a-z\d])(?P<pm>\d{{1,2}}|{_QUARTER}|half)\s+(?:minutes\s+)?past\s+(?P<ph>{_HW})(?![a-z\d:])"
    # Numeric: "08:15", "8h15", "9h", "9 horas", "8.15am", "9am".
    r"|(?P<h>\d(?<![\d:.,/]\d)\d?)(?:(?::|h)(?P<m>\d{2})(?!\d)|\.(?P<m2>\d{2})(?=\s*[ap]\.?\s?m\b)|h(?![a-z])"
    r"|\s*horas?(?![a-z])|(?=\s*[ap]\.?\s?m\b))"
    # A bare hour after its cue: "às 9", "a las 9", "at 9".
    r"|a(?<![a-z]a)(?:s|t|\s+las?)\s+(?P<bh>\d{1,2})(?![\d:/.,h]|\s*[ap]\.?\s?m\b|\s+(?:(?:e|y|and)\s+)?\d|\s+menos))"
    # The part of the day.
    r"(?:\s*(?P<ap>[ap])\.?\s?m\b\.?|\s+(?:da|de|de\s+la|in\s+the|at|pela|por\s+la)\s+"
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


def times(text: str, *, twelve_hour: bool) -> Iterator[tuple[int, int, tuple[Time, ...]]]:
    """Times of day in read text as ``(start, end, readings)``. AM/PM or a part of the day decides the hour
    (``5:45 de la tarde`` is 17:45, ``12 am`` midnight). Without one, an hour from 1 to 11 written without a
    leading zero is read both as morning and as afternoon when it is spoken (``às 5 e 45``, ``quarter to six``) in
    every locale, and with ``twelve_hour`` (en) also when it is numeric (``at 5:45``, not ``05:45``); otherwise as
    written (``17h45``; in pt-BR and es ``5h45`` is morning)."""
    for m in _TIMES.finditer(text):
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
