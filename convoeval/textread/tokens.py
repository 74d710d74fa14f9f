"""A message as canonical tokens: the words and numbers that carry a date, a time, an amount or an address, written
one way whatever way the text wrote them.

``canonical(text, lang)`` takes read text (``reading.read``: folded, numbers in words already digits) and returns
``Token(text, start, end)`` where ``text`` is canonical:

* numbers of one or two digits lose their leading zero (``08`` → ``8``); ``um``/``uma``/``one``/``una``/``dois``/
  ``two``/``dos`` (Spanish)… become digits (text2num leaves numbers up to three said alone as words);
* month names and abbreviations of pt, en and es (CLDR, through ``when.MONTH_OF``) become ``<m3>``; weekdays
  ``<w2>`` (0 is Monday; the Portuguese ``segunda``… only where they are weekdays, not ordinals: before ``feira``
  or after ``na``, ``nesta``, ``próxima``…; an abbreviation only before a date: ``qua., 11/03``);
* ``dia``/``day``/``día`` and an ordinal's suffix (``11th``, ``1º``) become ``<d>`` before the number;
* the clock's words: ``<q>`` (quarter, quarto, cuarto), ``<half>`` (meia, media, half), ``<past>`` (past, after),
  ``<to>`` (to, till, para, pras), ``<minus>`` (menos), ``<h>`` (h, horas, hours, o'clock, em ponto), ``12`` for
  noon (meio-dia, mediodía, noon), ``0`` for midnight, and the parts of the day ``<am>``, ``<pm>``, ``<morning>``,
  ``<afternoon>``, ``<evening>``, ``<night>`` (babel's period names: da manhã, in the afternoon, de la noche…);
* relative days and periods: ``<today>``, ``<tomorrow>``, ``<aftertomorrow>``, ``<thisweek>``, ``<nextweek>``,
  ``<thismonth>``, ``<nextmonth>``, ``<monthend>``;
* money: ``<brl>`` (R$, reais, real, reales, and slang: conto, pila, paus, pratas, pavos, lucas, bucks, mangos…),
  ``<cents>`` (centavos, cents, céntimos);
* an address's words: ``<st>`` (a street's type word: rua, r., av., calle, street…), ``<unit>`` (apto, apt, casa…);
* words that join and mean nothing here are dropped: de, do, da, of, the, el, la, a, on, em, no, e, y, and…

The red team renders each planted value (``convoeval.redteam.renderings``: babel's date, time and currency formats
and the spoken forms) into these tokens and looks the message's tokens up, so "cento e oitenta e sete conto e
noventa", "quinze pras seis da tarde" and "qua., 11 de mar." are found as the values they are.

Example:
    >>> [t.text for t in canonical("15 pras 6 da tarde, qua., 11 de mar.", "pt")]
    ['15', '<to>', '6', '<afternoon>', '<w2>', '11', '<m3>']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from convoeval.textread.addresses import STREET_TYPES

_RAW = re.compile(r"\d+|[a-z]+")

#: Words dropped: they join the words that carry a value (pt, en, es).
FILLERS = frozenset({
    "de", "do", "da", "das", "del", "of", "the", "el", "la", "los", "lo", "a", "o", "os", "on", "em", "en", "no",
    "na", "nos", "nas", "in", "e", "y", "and", "com", "con", "with", "mais", "ao", "al", "por", "pela", "pelas",
    "pelo", "around", "cerca", "volta", "aproximadamente", "about", "n", "nro", "num", "numero",
    "number", "feira", "minutos", "minuto", "minutes", "minute", "min", "mins", "is", "es", "it", "its",
})  # fmt: skip
_SMALL = {
    "pt": {"um": "1", "uma": "1", "dois": "2", "duas": "2", "tres": "3"},
    "en": {"one": "1", "two": "2", "three": "3"},
    "es": {"un": "1", "una": "1", "uno": "1", "dos": "2", "tres": "3"},
}
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th", "o", "a", "er"})
_WEEKDAY_CUES = frozenset({"na", "nesta", "nessa", "proxima", "ate", "essa", "esta", "toda", "numa", "ou", "e",
                           "segunda", "terca", "quarta", "quinta", "sexta", "sabado", "domingo"})
_PT_SHORT = {"segunda": 0, "terca": 1, "quarta": 2, "quinta": 3, "sexta": 4}
_WEEKDAY_ABBREVIATIONS = {"seg": 0, "ter": 1, "qua": 2, "qui": 3, "sex": 4, "sab": 5, "dom": 6, "mon": 0, "tue": 1,
                          "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6,
                          "lun": 0, "mie": 2, "jue": 3, "vie": 4}
_WORDS = {
    # the clock
    "quarter": "<q>", "quarto": "<q>", "cuarto": "<q>", "half": "<half>", "meia": "<half>", "media": "<half>",
    "past": "<past>", "after": "<past>", "to": "<to>", "till": "<to>", "til": "<to>", "para": "<to>",
    "pras": "<to>", "pra": "<to>", "pro": "<to>", "menos": "<minus>", "h": "<h>", "hs": "<h>", "hr": "<h>",
    "hrs": "<h>", "hora": "<h>", "horas": "<h>", "hour": "<h>", "hours": "<h>", "oclock": "<h>",
    "noon": "12", "midday": "12", "mediodia": "12", "midnight": "0", "medianoche": "0",
    "am": "<am>", "pm": "<pm>", "morning": "<morning>", "manha": "<morning>", "afternoon": "<afternoon>",
    "tarde": "<afternoon>", "evening": "<evening>", "noite": "<evening>", "noche": "<evening>", "night": "<night>",
    "tonight": "<evening>", "madrugada": "<night>",
    # "às 8", "at 8", "a las 8": an hour's cue
    "as": "<at>", "at": "<at>", "las": "<at>",
    # days
    "dia": "<d>", "day": "<d>", "hoje": "<today>", "today": "<today>", "hoy": "<today>", "amanha": "<tomorrow>",
    "tomorrow": "<tomorrow>",
    # money
    "reais": "<brl>", "real": "<brl>", "reales": "<brl>", "brl": "<brl>", "conto": "<brl>", "contos": "<brl>",
    "pila": "<brl>", "pilas": "<brl>", "pau": "<brl>", "paus": "<brl>", "prata": "<brl>", "pratas": "<brl>",
    "pavo": "<brl>", "pavos": "<brl>", "luca": "<brl>", "lucas": "<brl>", "buck": "<brl>", "bucks": "<brl>",
    "mango": "<brl>", "mangos": "<brl>", "centavos": "<cents>", "centavo": "<cents>", "cents": "<cents>",
    "cent": "<cents>", "centimos": "<cents>", "centimo": "<cents>",
    # an address's unit
    "apto": "<unit>", "apt": "<unit>", "ap": "<unit>", "apartamento": "<unit>", "apartment": "<unit>",
    "unit": "<unit>", "casa": "<unit>", "bloco": "<unit>", "bl": "<unit>", "conj": "<unit>", "conjunto": "<unit>",
    "cj": "<unit>", "sala": "<unit>", "piso": "<unit>", "depto": "<unit>", "dpto": "<unit>", "departamento": "<unit>",
    "suite": "<unit>", "flat": "<unit>",
}  # fmt: skip
#: Phrases of several words, by their first word: (the words after it, the token they become).
_PHRASES: dict[str, list[tuple[tuple[str, ...], str]]] = {
    "depois": [(("de", "amanha"), "<aftertomorrow>")],
    "pasado": [(("manana",), "<aftertomorrow>")],
    "day": [(("after", "tomorrow"), "<aftertomorrow>")],
    "meio": [(("dia",), "12")],
    "medio": [(("dia",), "12")],
    "meia": [(("noite",), "0")],
    "o": [(("clock",), "<h>")],
    "em": [(("ponto",), "<h>")],
    "en": [(("punto",), "<h>")],
    "next": [(("week",), "<nextweek>"), (("month",), "<nextmonth>")],
    "this": [(("week",), "<thisweek>"), (("month",), "<thismonth>")],
    "semana": [(("que", "vem"), "<nextweek>"), (("que", "viene"), "<nextweek>"), (("siguiente",), "<nextweek>")],
    "proxima": [(("semana",), "<nextweek>")],
    "esta": [(("semana",), "<thisweek>")],
    "essa": [(("semana",), "<thisweek>")],
    "nesta": [(("semana",), "<thisweek>")],
    "nessa": [(("semana",), "<thisweek>")],
    "este": [(("mes",), "<thismonth>")],
    "esse": [(("mes",), "<thismonth>")],
    "neste": [(("mes",), "<thismonth>")],
    "nesse": [(("mes",), "<thismonth>")],
    "mes": [(("que", "vem"), "<nextmonth>"), (("que", "viene"), "<nextmonth>")],
    "proximo": [(("mes",), "<nextmonth>")],
    "end": [(("of", "the", "month"), "<monthend>"), (("of", "month"), "<monthend>")],
    "fim": [(("do", "mes"), "<monthend>"), (("de", "mes"), "<monthend>"), (("del", "mes"), "<monthend>")],
    "final": [(("do", "mes"), "<monthend>"), (("de", "mes"), "<monthend>"), (("del", "mes"), "<monthend>")],
    "finales": [(("de", "mes"), "<monthend>"), (("del", "mes"), "<monthend>")],
    "a": [(("m",), "<am>"), (("quarter",), "<q>")],
    "p": [(("m",), "<pm>")],
    "um": [(("quarto",), "<q>")],
    "un": [(("cuarto",), "<q>")],
}
#: "mañana" is tomorrow, except after these words, where it is the morning ("de la mañana", "esta mañana").
_MORNING_AFTER = frozenset({"la", "da", "de", "por", "pela", "of", "esta", "essa", "nesta", "en"})


@dataclass(frozen=True, slots=True)
class Token:
    """A canonical token (see the module docstring) and where its words are in the read text."""

    text: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _calendar() -> tuple[dict[str, int], dict[str, int]]:
    from convoeval.textread.when import MONTH_OF, WEEKDAY_OF  # noqa: PLC0415 - loads babel only when tokens are read

    weekdays = {name: day for name, day in WEEKDAY_OF.items() if "-" not in name and name not in _PT_SHORT}
    return dict(MONTH_OF), weekdays


#: A run of words that carry nothing here, when the caller keeps only some words (``canonical(keep=…)``).
OTHER = "…"


@lru_cache(maxsize=4)
def _special(lang: str) -> frozenset[str]:
    """Every word ``canonical`` may write otherwise than as itself, or drop."""
    months, weekdays = _calendar()
    return frozenset({*_PHRASES, *STREET_TYPES, *months, *weekdays, *_PT_SHORT, *_WEEKDAY_ABBREVIATIONS, "manana",
                      "r", *_SMALL.get(lang, {}), *_WORDS, *FILLERS, *_ORDINAL_SUFFIXES, *_WEEKDAY_CUES,
                      *_MORNING_AFTER, *(w for rest, _ in sum(_PHRASES.values(), []) for w in rest)})


@lru_cache(maxsize=16)
def _interesting(lang: str, keep: frozenset[str]) -> frozenset[str]:
    return _special(lang) | keep


def canonical(text: str, lang: str, keep: frozenset[str] | None = None) -> list[Token]:
    """``text`` (read text: folded, numbers as digits) as canonical tokens; ``lang`` is ``pt``, ``en`` or ``es``.
    With ``keep``, a word that is neither canonical nor kept is written ``OTHER``, one for a run of such words (it
    still parts the numbers around it: "11 pacientes 3" is no "11/3")."""
    months, weekdays = _calendar()
    small = _SMALL.get(lang, {})
    if keep is None:
        raw = [(m.group(), m.start(), m.end(), k) for k, m in enumerate(_RAW.finditer(text))]
    else:
        wanted = _interesting(lang, keep)
        raw = [(g, m.start(), m.end(), k) for k, m in enumerate(_RAW.finditer(text))
               if (g := m.group()) in wanted or g[0].isdigit()]
    out: list[Token] = []
    i, n = 0, len(raw)
    while i < n:
        word, start, end, k = raw[i]
        if keep is not None and i and raw[i - 1][3] != k - 1 and (not out or out[-1].text != OTHER):
            out.append(Token(OTHER, raw[i - 1][2], start))  # words that carry nothing here, between two that do
        following = raw[i + 1][0] if i + 1 < n and raw[i + 1][3] == k + 1 else ""
        if word[0].isdigit():
            value = str(int(word)) if len(word) <= 2 else word
            if following in _ORDINAL_SUFFIXES and raw[i + 1][1] == end:  # "11th", "1º" (folded "1o")
                after_month = bool(out) and out[-1].text.startswith("<m")  # "March 11th" is "March 11"
                out += [] if after_month else [Token("<d>", start, raw[i + 1][2])]
                out.append(Token(value, start, raw[i + 1][2]))
                i += 2
                continue
            out.append(Token(value, start, end))
            i += 1
            continue
        phrase = _phrase(raw, i)
        if phrase is not None:
            token, last = phrase
            out.append(Token(token, start, raw[last][2]))
            i = last + 1
            continue
        before = raw[i - 1][0] if i and raw[i - 1][3] == k - 1 else ""
        if word == "r" and text[end:end + 1] == "$":
            out.append(Token("<brl>", start, end + 1))
        elif word in STREET_TYPES and word not in ("st", "c") and following and not following[0].isdigit() \
                and word not in _WORDS:
            out.append(Token("<st>", start, end))
        elif word in months and (len(word) > 3 or _near_number(raw, i)):
            out.append(Token(f"<m{months[word]}>", start, end))
        elif word in weekdays:
            out.append(Token(f"<w{weekdays[word]}>", start, end + (6 if text[end:end + 6] == "-feira" else 0)))
        elif word in _PT_SHORT and (following == "feira" or before in _WEEKDAY_CUES):
            out.append(Token(f"<w{_PT_SHORT[word]}>", start, raw[i + 1][2] if following == "feira" else end))
            i += 2 if following == "feira" else 1
            continue
        elif word in _WEEKDAY_ABBREVIATIONS and (following[:1].isdigit() or following in months):
            out.append(Token(f"<w{_WEEKDAY_ABBREVIATIONS[word]}>", start, end))
        elif word == "manana":
            out.append(Token("<morning>" if before in _MORNING_AFTER else "<tomorrow>", start, end))
        elif word in small:
            out.append(Token(small[word], start, end))
        elif word in _WORDS:
            out.append(Token(_WORDS[word], start, end))
        elif word not in FILLERS:
            out.append(Token(word, start, end))
        i += 1
    return out


def _phrase(raw: list[tuple[str, int, int, int]], i: int) -> tuple[str, int] | None:
    """A phrase of several words starting at ``raw[i]``: its token and the index of its last word."""
    k = raw[i][3]
    for rest, token in _PHRASES.get(raw[i][0], ()):
        following = raw[i + 1:i + 1 + len(rest)]
        if tuple(w for w, _, _, _ in following) == rest and all(f[3] == k + 1 + j for j, f in enumerate(following)):
            return token, i + len(rest)
    return None


def _near_number(raw: list[tuple[str, int, int, int]], i: int) -> bool:
    """Whether a month's abbreviation stands by a number ("11 mar", "mar 11", "11/mar/1958"): alone "mar" is the
    sea and "set" a set."""
    before = raw[i - 1][0] if i else ""
    after = raw[i + 1][0] if i + 1 < len(raw) else ""
    after2 = raw[i + 2][0] if i + 2 < len(raw) else ""
    return before[:1].isdigit() or after[:1].isdigit() or (before in ("de", "of") and i > 1
                                                           and raw[i - 2][0][:1].isdigit()) or after2[:1].isdigit()
