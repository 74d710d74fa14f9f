"""Reading an agent's message the way the leak rules need it: folded letters, numbers with their masks, dates,
times and money in the three locales' formats.

``fold`` keeps the text's length (one character in, one out), so a position found in the folded text quotes the
original text exactly. Every extractor returns ``(start, end, value)`` over the folded text; the detector decides
which values are canaries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

# ── letters ──


def _fold_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x41, 0x250):
        char = chr(code)
        base = unicodedata.normalize("NFD", char)[0].lower()
        if len(base) == 1 and base != char:
            table[code] = base
    table[ord("º")] = "o"  # the ordinal of "1º de março"
    return table


_FOLD = _fold_table()
#: A folded word: letters and digits.
WORD = re.compile(r"[a-z0-9]+")


def fold(text: str) -> str:
    """Lower case without accents, one character for one: ``"CONCEIÇÃO"`` → ``"conceicao"``."""
    return text.translate(_FOLD)


def words(text: str) -> tuple[str, ...]:
    """The folded words of ``text`` (letters and digits), e.g. ``"João-Pedro"`` → ``("joao", "pedro")``."""
    return tuple(WORD.findall(fold(text)))


#: Words that join a name's parts and name nobody: "Maria da Conceição", "Ana de Souza", "Juan y Ortega".
PARTICLES = frozenset({"da", "das", "de", "del", "do", "dos", "e", "y", "la", "las", "los", "van", "von"})


def name_forms(name: str) -> tuple[tuple[str, ...], ...]:
    """The word sequences that name a person, without particles (``da``, ``de``…, which the detector skips in the
    text too): the full name; first + last name; with three names or more, also first + second-to-last (a Spanish
    name's paternal surname, ``Ximena Echeverría``) and the last two (``Echeverría Ibáñez``).

    A first name alone is not a form: "Maria" or "John" names thousands of people. A compound first name
    (``João Pedro`` of ``João Pedro Brandão``) is a form, as first + second-to-last: a two-word name is specific
    enough, and the caller's own name is kept apart by ``collisions``.
    """
    core = tuple(w for w in words(name) if w not in PARTICLES)
    if len(core) < 2:
        return (core,) if core else ()
    forms = [core, (core[0], core[-1])]
    if len(core) >= 3:
        forms += [(core[0], core[-2]), core[-2:]]
    return tuple(dict.fromkeys(forms))


# ── numbers that may be masked: CPFs and phones ──

#: A mask character: whatever hides a digit. Any symbol or punctuation that does not separate digit groups
#: (``*``, ``•``, ``#``, ``●``, ``∗``, ``_``, ``■``, ``·``…) and the letter ``x``; the separators ``.-()`` and
#: spaces, and characters that start or end a number (``+``, ``$``, ``%``, ``/``, ``,``…) are not masks.
_MASK = r"(?:[^\w\s.,;:!?()\[\]{}\-/+'\"$%@&=<>|\\]|[_x])"
_NUMBER = re.compile(rf"\+?\(?(?:\d|{_MASK})(?:[\s.\-()]{{0,2}}(?:\d|{_MASK}))*")


def number_spans(folded: str) -> Iterator[tuple[int, int, str, tuple[int, ...]]]:
    """Digit groups written together, with their masks: ``(start, end, skeleton, group_ends)``.

    The skeleton keeps digits and turns mask characters (``*``, ``•``, ``#``, ``x``, ``●``, ``_``… see ``_MASK``)
    into ``*``, dropping the separators, so ``***.456.789-**`` becomes ``***456789**``. ``group_ends`` are the
    skeleton positions where a group of digits or masks ends (a phone number ends at one of them). Spans without a
    digit are skipped.
    """
    for m in _NUMBER.finditer(folded):
        text = m.group()
        skeleton: list[str] = []
        ends: list[int] = []
        for char in text:
            if char.isdigit():
                skeleton.append(char)
            elif not (char.isspace() or char in ".-()+"):
                skeleton.append("*")
            elif skeleton and (not ends or ends[-1] != len(skeleton)):
                ends.append(len(skeleton))
        if not ends or ends[-1] != len(skeleton):
            ends.append(len(skeleton))
        joined = "".join(skeleton)
        if any(c.isdigit() for c in joined):
            yield m.start(), m.end(), joined, tuple(ends)


# ── dates ──

_MONTH_NAMES = {
    1: ("janeiro", "enero", "january", "jan", "ene"),
    2: ("fevereiro", "febrero", "february", "fev", "feb"),
    3: ("marco", "marzo", "march", "mar"),
    4: ("abril", "april", "abr", "apr"),
    5: ("maio", "mayo", "may", "mai"),
    6: ("junho", "junio", "june", "jun"),
    7: ("julho", "julio", "july", "jul"),
    8: ("agosto", "august", "ago", "aug"),
    9: ("setembro", "septiembre", "setiembre", "september", "sept", "set", "sep"),
    10: ("outubro", "octubre", "october", "out", "oct"),
    11: ("novembro", "noviembre", "november", "nov"),
    12: ("dezembro", "diciembre", "december", "dez", "dic", "dec"),
}
_MONTH_OF = {word: month for month, names in _MONTH_NAMES.items() for word in names}
_MONTHS = "|".join(sorted(_MONTH_OF, key=len, reverse=True))
# Each pattern starts with a digit (or a letter), then looks behind it: a leading character class lets the regex
# engine skip to candidate positions instead of trying every one, several times faster on a 300-character reply.
_NUMERIC_DATE = (
    r"(?P<iy>\d(?<![\d-]\d)\d{3})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?!\d)"
    r"|(?P<na>\d(?<![\d/.,:-]\d)\d?)(?P<sep>[/.-])(?P<nb>\d{1,2})(?:(?P=sep)(?P<ny>\d{4}|\d{2}))?(?!\d|[/.,:-]\d)"
)
_NAMED_DATE = (
    rf"|(?P<dd>\d(?<![\d.,]\d)\d?)(?:o|a|st|nd|rd|th)?(?:\s+de)?\s+(?P<dm>{_MONTHS})(?!\w)\.?"
    r"(?:(?:,|\s+de)?\s+(?P<dy>\d{4})(?!\d))?"
    rf"|(?P<mm>{_MONTHS})(?!\w)\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:/.-]\d|\d)(?:,?\s+(?P<my>\d{{4}})(?!\d))?"
)
_DATES = {False: re.compile(_NUMERIC_DATE), True: re.compile(_NUMERIC_DATE + _NAMED_DATE)}


def has_month_name(words: Iterable[str]) -> bool:
    """Whether any of ``words`` (folded) names a month, so the slower search for named dates is worth running."""
    return not _MONTH_OF.keys().isdisjoint(words)


#: A date read from text: (year or None, month, day).
Date = tuple[int | None, int, int]


def _valid(year: int | None, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31 and (year is None or 1900 <= year <= 2100)


def _years(text: str | None) -> tuple[int | None, ...]:
    if text is None:
        return (None,)
    if len(text) == 2:  # "14/03/58": either century
        return (1900 + int(text), 2000 + int(text))
    return (int(text),)


def dates(folded: str, *, month_first: bool, named: bool = True) -> Iterator[tuple[int, int, tuple[Date, ...]]]:
    """Dates in folded text as ``(start, end, readings)``: ISO, ``14/03/1958``, ``10/03``, ``14 de março de 1958``,
    ``Mar 14, 1958``, ``14 March 1958``. A numeric date is day first (pt-BR, es); with ``month_first`` (en) it is
    read both ways. A two-digit year is read in both centuries. ``named=False`` skips dates with a month name
    (for text without one: see ``has_month_name``)."""
    for m in _DATES[named].finditer(folded):
        g = m.groupdict()
        if g.get("mm") and m.start() and folded[m.start() - 1].isalnum():
            continue  # a month name inside a word
        readings: list[Date] = []
        if g["iy"]:
            readings.append((int(g["iy"]), int(g["im"]), int(g["id"])))
        elif g["na"]:
            a, b = int(g["na"]), int(g["nb"])
            for year in _years(g["ny"]):
                readings.append((year, b, a))
                if month_first:
                    readings.append((year, a, b))
        elif g.get("dd"):
            readings += [(y, _MONTH_OF[g["dm"]], int(g["dd"])) for y in _years(g["dy"])]
        else:
            readings += [(y, _MONTH_OF[g["mm"]], int(g["md"])) for y in _years(g["my"])]
        found = tuple(dict.fromkeys(r for r in readings if _valid(*r)))
        if found:
            yield m.start(), m.end(), found


# ── times ──

_TIMES = re.compile(
    r"(?P<h>\d(?<![\d:.,/]\d)\d?)(?:(?::|h)(?P<m>\d{2})(?!\d)|h(?![a-z])|\s*horas?(?![a-z])|(?=\s*[ap]\.?m\b))"
    r"(?:\s*(?P<ap>[ap])\.?m\b)?"
    r"|a(?<![a-z]a)(?:s|t|\s+las?)\s+(?P<bh>\d{1,2})(?![\d:/.,h]|\s*[ap]\.?m\b)"
)

#: A time of day read from text: (hour, minute).
Time = tuple[int, int]


def times(folded: str, *, twelve_hour: bool) -> Iterator[tuple[int, int, tuple[Time, ...]]]:
    """Times of day in folded text as ``(start, end, readings)``: ``09:00``, ``9h``, ``9h15``, ``9:15 AM``,
    ``9am``, ``às 9``, ``a las 9``, ``at 9``. With ``twelve_hour`` (en) an hour from 1 to 11 written without AM/PM
    and without a leading zero (``at 5:45``, not ``05:45``) is read both as morning and as afternoon."""
    for m in _TIMES.finditer(folded):
        hour = int(m.group("h") or m.group("bh"))
        minute = int(m.group("m") or 0)
        marker = m.group("ap")
        if hour > 23 or minute > 59 or (marker and not 1 <= hour <= 12):
            continue
        if marker == "p" and hour < 12:
            readings: tuple[Time, ...] = ((hour + 12, minute),)
        elif marker == "a" and hour == 12:
            readings = ((0, minute),)
        elif not marker and twelve_hour and 1 <= hour <= 11 and not (m.group("h") or m.group("bh")).startswith("0"):
            readings = ((hour, minute), (hour + 12, minute))
        else:
            readings = ((hour, minute),)
        yield m.start(), m.end(), readings


# ── money ──

_MONEY = re.compile(
    r"(?P<int>\d(?<![\d.,]\d)(?:\d{0,2}(?:(?P<th>[.,])\d{3})+|\d*))"
    r"(?:(?P<dec>[.,])(?P<cents>\d{2}|\d(?![\d%])))?(?!\d|[.,]\d)"
)
_CURRENCY_BEFORE = re.compile(r"(?:r\$|brl)\s*$")
#: The currency written after the amount ("187 reais"), and the cents said apart ("187 reais e 90 centavos",
#: "307 reais and 15 cents", "R$ 187 com 90 centavos").
_CURRENCY_AFTER = re.compile(r"\s*(?:reais|reales|real|brl)\b")
_CENTS_APART = re.compile(r"(?:\s*(?:reais|reales|real))?,?\s+(?:e|y|and|com|con|mais)\s+(?P<cents>\d{1,2})\s*"
                          r"(?:centavos?|cents?|centimos?)\b")


def money(folded: str) -> Iterator[tuple[int, int, int]]:
    """Amounts in folded text (numbers in words already digits, see ``reading``) as ``(start, end, cents)``:
    ``R$ 187,90``, ``R$187.90``, ``187,90``, ``187.90``, ``R$ 1.234,56``, ``R$1,234.56``, ``R$ 187,9``,
    ``187 reais e 90 centavos``, ``307 reais and 15 cents``. A number without cents counts only with its currency
    (``R$ 150``, ``150 reais``), and so does one written with a single decimal (``R$ 187,9``); a bare ``150`` or
    ``187,9`` is not read as money."""
    for m in _MONEY.finditer(folded):
        if m.group("th") and m.group("dec") == m.group("th"):
            continue  # "1.234.56" is not an amount
        currency = _CURRENCY_BEFORE.search(folded, max(0, m.start() - 6), m.start())
        after = _CURRENCY_AFTER.match(folded, m.end())
        cents_text, end = m.group("cents"), m.end()
        if cents_text is None:
            apart = _CENTS_APART.match(folded, m.end())
            if apart and (currency or after):
                cents, end = int(apart.group("cents")), apart.end()
            elif currency or after:
                cents = 0
            else:
                continue
        elif len(cents_text) == 1:
            if not (currency or after):
                continue
            cents = int(cents_text) * 10  # "R$ 187,9" is R$ 187,90
        else:
            cents = int(cents_text)
        reais = int(m.group("int").replace(".", "").replace(",", ""))
        yield currency.start() if currency else m.start(), end, reais * 100 + cents
