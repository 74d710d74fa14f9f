"""An agent's message read once, per locale, the way the leak rules need it.

``read(text, locale)`` folds the letters (lower case, no accents: ``CONCEIÇÃO`` → ``conceicao``) and writes numbers
said in words as digits (``cento e oitenta e sete reais e noventa centavos`` → ``187 reais e 90 centavos``, ``às
oito e quinze`` → ``as 8 e 15``, ``three hundred and seven`` → ``307``) with text2num, the Allo-Media library (MIT;
its core is Rust: about 40 µs for a 350-character message, docs/decisions.md). Every extractor of the detector then
runs on ``Reading.text``; ``Reading.span`` takes a match in it back to the original message, so a leak quotes what
the agent wrote.

Numbers up to three said alone stay words (``um paciente``, ``one of our patients``): text2num converts an isolated
number only above its threshold of 3, which keeps articles out of the digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from text_to_num import alpha2digit, find_numbers

from convoeval.textread.folding import fold

#: text2num's language per locale's language (it reads pt, es and en among others; the rest stays as written).
_LANGUAGES = {"pt": "pt", "es": "es", "en": "en"}
_TOKEN = re.compile(r"\w+|[^\w\s]")
#: ``dez`` is ten in Portuguese and the abbreviation of December: beside a date's digits it is the month.
_MONTH_NOT_NUMBER = re.compile(r"(?<=\d[/.\- ])dez\b|\bdez(?=\.?[/.\-]\d|\.?\s+(?:de\s+)?\d{2,4}\b)|(?<=\d de )dez\b")


#: Words text2num would read as numbers that are not: weekdays that are also ordinals in Portuguese ("quarta" is
#: Wednesday and fourth), the cents of an amount (Spanish "centavos" would become "1/100"), and the quarter of an
#: hour ("las ocho y cuarto": not "4º").
_KEPT_WORDS = frozenset({"segunda", "terça", "quarta", "quinta", "sexta", "centavo", "centavos", "céntimo",
                         "céntimos", "centimo", "centimos", "cuarto", "quarto"})


def language(locale: str | None) -> str:
    """The language part of a locale, lower case: ``pt-BR`` → ``pt``, ``es_AR`` → ``es``, None → ``""``."""
    return (locale or "").replace("_", "-").split("-")[0].lower()


@dataclass(frozen=True)
class Reading:
    """A message as the detector reads it.

    Attributes:
        original: The message as the agent wrote it.
        text: Folded, with numbers in words as digits.
        starts: For each character of ``text``, where it starts in ``original``; None when ``text`` is as long as
            ``original`` (no number was rewritten: the positions are the same).
        ends: For each character of ``text``, where it ends in ``original``.
    """

    original: str
    text: str
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``text[start:end]`` (a rewritten number maps to the whole of its words)."""
        if self.starts is None or self.ends is None or start >= end:
            return start, end
        return self.starts[start], self.ends[end - 1]

    def quote(self, start: int, end: int) -> str:
        """The original text of ``text[start:end]``."""
        a, b = self.span(start, end)
        return self.original[a:b]


class _Token:
    """A word or a punctuation mark for text2num's ``find_numbers`` (its ``Token`` protocol)."""

    __slots__ = ("start", "end", "word", "month")

    def __init__(self, word: str, start: int, end: int, month: bool) -> None:
        self.word, self.start, self.end, self.month = word, start, end, month

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return self.month


def read(text: str, locale: str | None) -> Reading:
    """``text`` folded, numbers in words written as digits in the locale's language.

    Example:
        >>> r = read("A fatura é de CENTO E OITENTA E SETE reais", "pt-BR")
        >>> r.text
        'a fatura e de 187 reais'
        >>> r.quote(14, 17)
        'CENTO E OITENTA E SETE'
    """
    folded = fold(text)
    lang = _LANGUAGES.get(language(locale))
    lower = text.lower()
    if lang is None or len(lower) != len(text) or not any(c.isalpha() for c in text):
        return Reading(text, folded)
    # The fast path: most messages say no number in words, and alpha2digit (Rust) says so in microseconds.
    if alpha2digit(lower, lang) == lower:
        return Reading(text, folded)
    kept = {m.start() for m in _MONTH_NOT_NUMBER.finditer(folded)} if lang == "pt" else set()
    tokens = [_Token(m.group(), m.start(), m.end(), m.start() in kept or m.group() in _KEPT_WORDS)
              for m in _TOKEN.finditer(lower)]
    found = find_numbers(tokens, lang)
    if not found:
        return Reading(text, folded)
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for number in found:
        a, b = tokens[number.start].start, tokens[number.end - 1].end
        parts.append(folded[at:a])
        starts += range(at, a)
        ends += range(at + 1, a + 1)
        digits = fold(number.text)
        parts.append(digits)
        starts += [a] * len(digits)
        ends += [b] * len(digits)
        at = b
    parts.append(folded[at:])
    starts += range(at, len(text))
    ends += range(at + 1, len(text) + 1)
    return Reading(text, "".join(parts), tuple(starts), tuple(ends))
