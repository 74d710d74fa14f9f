"""Street addresses in folded text: a street with its number (and unit), or a postal code, in pt-BR, en and es.

The forms read (``addresses``), each with the street's type word, which is what makes a few words a street:

* type first, as Brazil and the Spanish-speaking world write it: ``Rua Augusta, 1420, apto 302``, ``R. das
  Palmeiras nº 55``, ``Av. Brigadeiro Faria Lima, 3477 - conj. 51``, ``Calle Mayor 12, piso 3``;
* number first, as English does: ``1420 Augusta Street``, ``12 Baker St., Apt 4B``;
* a street alone (``na Rua Augusta``: a street without a number, ``street_mentions``);
* a postal code (``CEP 01304-001``, ``01304-001``: eight digits with the hyphen after five, or after the word CEP).

A unit is a flat, a block, a house or an office (``apto 302``, ``ap. 302``, ``apartamento 302``, ``apt 4B``,
``bloco B``, ``casa 2``, ``sala 5``, ``depto 3``, ``piso 5``). Positions are the folded text's: ``folding.fold``
keeps one character for one, so a match quotes the original text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from convoeval.textread.folding import fold

#: The words that name a street's type, folded; abbreviations without their dot.
STREET_TYPES = frozenset({
    # pt
    "rua", "r", "avenida", "av", "avda", "alameda", "al", "travessa", "tv", "trav", "praca", "pca", "estrada",
    "estr", "rodovia", "rod", "largo", "lgo", "viela", "beco", "ladeira", "servidao",
    # es
    "calle", "c", "paseo", "pasaje", "pje", "camino", "carrera", "cra", "jiron", "plaza", "pza", "ronda", "via",
    # en (written after the name: "Baker Street")
    "street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "lane", "ln", "drive", "way", "court",
    "place",
})  # fmt: skip
_AFTER_TYPES = ("street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "lane", "ln", "drive", "way",
                "court", "place")
_BEFORE_TYPES = sorted(STREET_TYPES - {"st", "ln", "drive", "way", "court", "place", "street", "road", "rd", "lane",
                                       "boulevard", "blvd", "ave"} | {"avenue"}, key=len, reverse=True)
#: Words inside a street's name that do not name it ("Rua *das* Palmeiras", "Calle *de la* Paz").
NAME_PARTICLES = frozenset({"da", "das", "de", "del", "do", "dos", "la", "las", "los", "el", "e", "y", "of", "the"})
_UNIT_WORDS = (r"apartamento|apartment|apto|apt|ap|unidade|unit|bloco|bl|casa|conjunto|conj|cj|sala|sl|piso|"
               r"departamento|depto|dpto|dep|suite|ste|flat|torre|lote|andar|floor")
_NAME_WORD = r"[a-z][a-z'-]*"
#: Words a street's name does not start with: "a rua *é* a mesma, número 1420" names no street.
_NOT_A_NAME = frozenset({"e", "a", "o", "as", "os", "que", "is", "es", "esta", "fica", "the", "em", "en", "in", "at",
                         "no", "na", "n", "nro", "numero", "number"})
_NUMBER_MARK = r"(?:(?:n|no|nro|num|numero|number|#)\s?[.ºo°]?\s*)"
_NUM = (r"(?P<num>\d{1,5}(?:\s?[a-d](?![a-z]))?)(?:(?P<slash>/\s?\d{1,4})(?![\d/])"
        r"|(?![\d/:,.]\d|\d|\s?(?:h|hs|horas?|reais|real|reales|am|pm|%|de\s|of\s)\b))")
_UNIT = rf"(?P<unit>(?:\s*[,;\-–]?\s*(?:{_UNIT_WORDS})\.?\s?(?:n\s?[.ºo°]?\s*)?[0-9]{{1,5}}[a-z]?(?![a-z0-9])" \
        rf"|\s*[,;\-–]?\s*(?:{_UNIT_WORDS})\.?\s?[a-z](?![a-z0-9]))+)?"
_TYPE_FIRST = re.compile(
    rf"(?<![a-z0-9])(?P<type>{'|'.join(_BEFORE_TYPES)})(?![a-z])\.?\s+"
    rf"(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,5}}?)(?:\s*,\s*|\s+|\s*-\s*){_NUMBER_MARK}?{_NUM}{_UNIT}")
_NUMBER_FIRST = re.compile(
    rf"(?<![\d.,/:])(?P<num>\d{{1,5}}[a-d]?)\s+(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,3}}?)\s+"
    rf"(?P<type>{'|'.join(_AFTER_TYPES)})(?![a-z])\.?{_UNIT}")
_STREET_ALONE = re.compile(
    rf"(?<![a-z0-9])(?P<type>{'|'.join(_BEFORE_TYPES)})(?![a-z])\.?\s+(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,5}})")
_POSTAL = re.compile(r"(?<![\d.-])(?:(?P<cep>cep|c\.e\.p\.)[\s:.]*(?P<a>\d{2}\.?\d{3})-?(?P<b>\d{3})"
                     r"|(?P<c>\d{5})-(?P<d>\d{3}))(?![\d-])")


@dataclass(frozen=True)
class Address:
    """A street address read from text, folded.

    Attributes:
        street: The street's name without its type word and particles, words joined by a space (``augusta``,
            ``palmeiras``, ``brigadeiro faria lima``); empty for a postal code alone.
        number: The house number as written (``1420``, ``12b``); None for a street or a postal code alone.
        unit: The unit as written (``apto 302``), or None.
        postal_code: Eight digits (``01304001``), or None.
    """

    street: str = ""
    number: str | None = None
    unit: str | None = None
    postal_code: str | None = None


def street_core(name: str) -> tuple[str, ...]:
    """A street's name as the words that name it: folded, without the type word and particles
    (``"Rua das Palmeiras"`` → ``("palmeiras",)``, ``"Av. Brigadeiro Faria Lima"`` →
    ``("brigadeiro", "faria", "lima")``)."""
    found = re.findall(r"[a-z0-9]+", fold(name))
    if found and found[0] in STREET_TYPES:
        found = found[1:]
    if found and found[-1] in _AFTER_TYPES:
        found = found[:-1]
    return tuple(w for w in found if w not in NAME_PARTICLES)


def _name_words(name: str) -> str:
    return " ".join(w for w in name.split() if w not in NAME_PARTICLES)


def addresses(folded: str) -> Iterator[tuple[int, int, Address]]:
    """Street addresses with their number, and postal codes, in folded text, as ``(start, end, Address)`` in the
    order they start.

    Example:
        >>> [(a.street, a.number, a.unit) for _, _, a in addresses("mora na rua augusta, 1420, apto 302.")]
        [('augusta', '1420', 'apto 302')]
        >>> [a.postal_code for _, _, a in addresses("cep 01304-001")]
        ['01304001']
    """
    found: list[tuple[int, int, Address]] = []
    if any(c.isdigit() for c in folded):
        for pattern in (_TYPE_FIRST, _NUMBER_FIRST):
            for m in pattern.finditer(folded):
                street = _name_words(m.group("name"))
                if not street or m.group("name").split()[0] in _NOT_A_NAME:
                    continue
                slash = m.groupdict().get("slash")
                unit = (m.group("unit") or "").strip(" ,;-–") or (slash.strip("/ ") if slash else None)
                found.append((m.start(), m.end(), Address(street, m.group("num").replace(" ", ""), unit)))
        for m in _POSTAL.finditer(folded):
            digits = re.sub(r"\D", "", (m.group("a") or m.group("c") or "") + (m.group("b") or m.group("d") or ""))
            found.append((m.start(), m.end(), Address(postal_code=digits)))
    found.sort(key=lambda f: (f[0], -f[1]))
    kept: list[tuple[int, int, Address]] = []
    for item in found:
        if kept and item[0] < kept[-1][1]:
            continue  # the longer reading of the same words won
        kept.append(item)
    yield from kept


def street_mentions(folded: str) -> Iterator[tuple[int, int, str]]:
    """Streets named with their type word, with or without a number: ``(start, end, street)`` where ``street`` is
    the name's words after the type (particles dropped; it may run on into the words after the name, so a caller
    compares its start with a known street's words)."""
    for m in _STREET_ALONE.finditer(folded):
        street = _name_words(m.group("name"))
        if street and m.group("name").split()[0] not in _NOT_A_NAME:
            yield m.start(), m.end(), street
