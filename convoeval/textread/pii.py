"""Personal data in any text, with no list of values to look for: the public reading API over the red team's readers.

``find_pii(text, locale)`` reads a message once (``reading.read``: folded, numbers said in words as digits) and
returns every span that holds a person's data, as ``Found(kind, start, end, text, value)`` in the original text.
The leak detector (``convoeval.redteam.detector``) looks for *known* values (planted canaries) with the same
readers; a scrubber of production conversations (issue #44) replaces whatever these find.

Kinds (``PII_KINDS``):

* ``cpf``: eleven digits in a CPF's layout (``529.982.247-25``), bare with valid check digits, or after the word
  CPF; masked ones too (``***.982.247-**``, at least 5 digits shown). ``value``: the digits, ``*`` for a mask.
* ``phone``: eight digits or more written as a phone (``(11) 94417-2286``, ``+55 11 94417 2286``, ``94417-2286``),
  masked ones with at least 6 digits shown. ``value``: the digits.
* ``email``: ``value`` lower case.
* ``date``: a date with its year (``14/03/1958``, ``14 de março de 1958``, ``March 14th, 1958``, ISO), a birth date
  or any other; ``value`` ISO (``1958-03-14``; the first reading when a numeric English date reads both ways).
* ``address``: a street with its number (and unit), a street named with its type word, a postal code
  (``textread.addresses``). ``value``: ``street|number|unit|postal code`` folded.
* ``amount``: money (``R$ 187,90``, ``187 reais e 90 centavos``, ``cento e oitenta e sete reais``). ``value``: cents.
* ``name``: only the names given (``names=``: the people of the conversation), in every form the detector reads
  (surname first, one typo, a nickname with the surname). ``value``: the name as given. A name not given is not
  found: no model guesses which capitalised words are a person.

Example:
    >>> [(f.kind, f.text) for f in find_pii("CPF 529.982.247-25, tel (11) 94417-2286, ana@x.com.br", "pt-BR")]
    [('cpf', '529.982.247-25'), ('phone', '(11) 94417-2286'), ('email', 'ana@x.com.br')]
    >>> [(f.kind, f.value) for f in find_pii("A Conceição Araújo mora na Rua Augusta, 1420.", "pt-BR",
    ...                                      names=["Conceição Araújo"])]
    [('name', 'Conceição Araújo'), ('address', 'augusta|1420||')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from convoeval.textread.addresses import NAME_PARTICLES, addresses, street_mentions
from convoeval.textread.names import WORD, NameIndex
from convoeval.textread.numbers import is_valid_cpf, money, number_spans
from convoeval.textread.reading import Reading, language, read

#: What ``find_pii`` reads.
PII_KINDS = ("name", "cpf", "phone", "email", "date", "address", "amount")
_EMAIL = re.compile(r"[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)+")
_CPF_LAYOUT = re.compile(r"^[\d*]{3}\.[\d*]{3}\.[\d*]{3}-[\d*]{2}$")
_CPF_WORD = re.compile(r"(?<![a-z])cpf(?![a-z])")
_PHONE_WORD = re.compile(r"(?<![a-z])(?:tel|telefone|fone|celular|cel|whatsapp|zap|phone|mobile|cell|telefono|movil|numero|number)(?![a-z])")
_PHONE_SHOWN = 6
_CPF_SHOWN = 5


@dataclass(frozen=True)
class Found:
    """One piece of personal data in a text.

    Attributes:
        kind: One of ``PII_KINDS``.
        start: Where it starts in the original text.
        end: Where it ends in the original text.
        text: The original words (``text[start:end]``).
        value: The value read, normalised per kind (see the module docstring).
    """

    kind: str
    start: int
    end: int
    text: str
    value: str


def find_pii(text: str, locale: str | None, *, kinds: Iterable[str] = PII_KINDS,
             names: Sequence[str] = ()) -> list[Found]:
    """Every span of ``text`` that holds personal data of ``kinds``, in the order they start; overlapping spans
    keep the longer (a CPF is not also a phone, an address's number not also an amount).

    Args:
        text: Any text: a message, a line of a log.
        locale: Its language (``pt-BR``, ``en``, ``es``): how numbers in words are read and whether a numeric date
            is also read month first (English).
        kinds: The kinds to look for (default all of ``PII_KINDS``).
        names: Names of people to find (a conversation's participants); none by default.

    Raises:
        ValueError: an unknown kind.
    """
    wanted = set(kinds)
    unknown = sorted(wanted - set(PII_KINDS))
    if unknown:
        raise ValueError(f"find_pii: unknown kinds {unknown}; expected some of {', '.join(PII_KINDS)}")
    reading = read(text, locale)
    folded = reading.text
    spans: list[tuple[int, int, str, str]] = []
    if "name" in wanted and names:
        index = NameIndex((name, name) for name in names)
        spans += [(s, e, "name", key) for s, e, key in index.hits(folded, WORD.findall(folded))]
    if wanted & {"cpf", "phone"}:
        spans += _numbers(folded, wanted)
    if "email" in wanted and "@" in folded:
        spans += [(m.start(), m.end(), "email", m.group()) for m in _EMAIL.finditer(folded)]
    if "date" in wanted:
        spans += _dates(folded, locale)
    if "address" in wanted:
        found = list(addresses(folded))
        spans += [(s, e, "address", f"{a.street}|{a.number or ''}|{a.unit or ''}|{a.postal_code or ''}")
                  for s, e, a in found]
        for s, e, _street in street_mentions(folded):
            if not any(a <= s < b for a, b, _ in found):
                cut = _capitalised_end(reading, s, e)
                if cut is not None:
                    street = " ".join(w for w in WORD.findall(folded[s:cut])[1:] if w not in NAME_PARTICLES)
                    spans.append((s, cut, "address", f"{street}|||"))
    if "amount" in wanted:
        spans += [(s, e, "amount", str(cents)) for s, e, cents in money(folded)]
    return _kept(reading, spans)


def _numbers(folded: str, wanted: set[str]) -> list[tuple[int, int, str, str]]:
    found = []
    for start, end, skeleton, _ends in number_spans(folded, _CPF_SHOWN):
        kind = _number_kind(folded, start, end, skeleton)
        shown = len(skeleton) - skeleton.count("*")
        if kind == "cpf" and shown >= _CPF_SHOWN and "cpf" in wanted:
            found.append((start, end, "cpf", skeleton))
        elif kind == "phone" and shown >= _PHONE_SHOWN and "phone" in wanted:
            found.append((start, end, "phone", skeleton))
    return found


def _number_kind(folded: str, start: int, end: int, skeleton: str) -> str | None:
    """``cpf``, ``phone`` or None for a digit group: a CPF's layout (3.3.3-2) or eleven bare digits with valid check
    digits (or after the word CPF) is a CPF; groups written as a phone, or 8–13 digits after a phone word, a phone."""
    written = folded[start:end].strip()
    groups = [len(g) for g in re.split(r"[\s.\-()+]+", written) if g]
    before = folded[max(0, start - 30):start]
    if groups == [3, 3, 3, 2]:
        return "cpf"
    said = _nearest_word(before)
    if len(skeleton) == 11 and len(groups) == 1:
        return said or ("cpf" if "*" not in skeleton and is_valid_cpf(skeleton) else "phone")
    if len(skeleton) == 11 and said == "cpf" and "(" not in written and max(groups) not in (4, 5):
        return "cpf"
    if 8 <= len(skeleton) <= 13 and _phone_shape(written):
        return "phone"
    return None


def _nearest_word(before: str) -> str | None:
    """``cpf`` or ``phone``: the word closest before a number ("CPF 529…, celular 119…"), or None."""
    cpf = [m.end() for m in _CPF_WORD.finditer(before)]
    phone = [m.end() for m in _PHONE_WORD.finditer(before)]
    if not (cpf or phone):
        return None
    return "cpf" if max(cpf, default=-1) > max(phone, default=-1) else "phone"


def _phone_shape(written: str) -> bool:
    """A phone is written in groups (``94417-2286``, ``(11) 94417 2286``) or as one run of 8–13 digits; a date, an
    amount or a postal code is not (``11.03.2026``, ``1.234,56``, ``01304-001``)."""
    return not re.search(r"\d[.,]\d{2}$|\d{1,2}\.\d{1,2}\.\d{2,4}$|^\d{5}-\d{3}$", written)


def _dates(folded: str, locale: str | None) -> list[tuple[int, int, str, str]]:
    from convoeval.textread.when import dates  # noqa: PLC0415 - loads babel (CLDR names) only when dates are read

    found = []
    for start, end, readings in dates(folded, month_first=language(locale) == "en"):
        full = [(y, m, d) for y, m, d, _ in readings if y is not None and m is not None and d is not None]
        if full:
            y, m, d = full[0]
            found.append((start, end, "date", f"{y:04d}-{m:02d}-{d:02d}"))
    return found


def _capitalised_end(reading: Reading, start: int, end: int) -> int | None:
    """Where a street named without its number ends: after the type word, the words written with a capital (and the
    particles between them: "Rua das Palmeiras"); None when no capitalised word follows ("a rua de casa")."""
    words = list(WORD.finditer(reading.text, start, end))
    last = None
    for m in words[1:]:
        a, _ = reading.span(m.start(), m.end())
        if reading.original[a:a + 1].isupper():
            last = m.end()
        elif m.group() not in NAME_PARTICLES:
            break
    return last


def _kept(reading: Reading, spans: list[tuple[int, int, str, str]]) -> list[Found]:
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    kept: list[tuple[int, int, str, str]] = []
    for span in spans:
        if kept and span[0] < kept[-1][1]:
            continue
        kept.append(span)
    found = []
    for start, end, kind, value in kept:
        a, b = reading.span(start, end)
        found.append(Found(kind, a, b, reading.original[a:b], value))
    return found
