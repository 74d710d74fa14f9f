"""A message cut into the units it says things in: sentences, and the lines of a list or a table, each row one unit
about whoever is on it (issue #47).

An assistant built on a large model writes lists and tables: a name in bold on one line and the date on the next, a
bullet per appointment, a markdown table of the next bookings. A line break ends a unit, and so does a sentence's
end; a **row** is a line that starts as a list item (``-``, ``*``, ``•``, ``1.``, an emoji or a symbol) or a
table row (``| … |``). Rows keep the unit that introduced them (the line before the list, "Aqui estão os dados da
Conceição:"), so a row that names nobody is about what its introduction was about; a table's header row is no row
of data. Markdown emphasis (``**Conceição Araújo**``, ``__11/03__``) is blanked, one character for one, so it reads
as the words it wraps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from convoeval.redteam._context import SENTENCE_BREAK

#: Emphasis markers around words: ``**bold**``, ``__bold__``, ``*italic*`` (a masked CPF's ``***.`` is left alone).
_EMPHASIS = re.compile(r"(\*\*|__|\*(?=[a-z]))(?=\S)([^*\n]{1,120}?)(?<=\S)\1")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•·▪►➡→◦‣⁃]|\d{1,2}[.)](?!\d)|[^\w\s|(\"'«¿¡$#*_])\s")


@dataclass(frozen=True)
class Unit:
    """A part of a message that says one thing.

    Attributes:
        start: Where it starts in the (read) text.
        end: Where it ends.
        row: A line of a list or a table.
        header: A table's header row (its cells name the columns).
        lead: The unit that introduced a row (the line before the list or table), or None.
        line: Which line of the message it is on (0-based).
    """

    start: int
    end: int
    row: bool = False
    header: bool = False
    lead: int | None = None
    line: int = 0


def unemphasised(text: str) -> str:
    """``text`` with markdown emphasis markers blanked, one character for one (``**Ana**`` → ``  Ana  ``)."""
    if "*" not in text and "__" not in text:
        return text
    return _EMPHASIS.sub(_blank, text)


def _blank(m: re.Match[str]) -> str:
    # Emphasis wraps words; "**" around digits and dots is a masked CPF ("***.601.205-**"), left as it is.
    if not re.search(r"[a-z]", m.group(2)):
        return m.group()
    return " " * len(m.group(1)) + m.group(2) + " " * len(m.group(1))


def units(text: str) -> list[Unit]:
    """The units of ``text`` (read text, emphasis blanked), in order.

    Example:
        >>> text = "Aqui estão os dados da Conceição:\\n- quarta, 11/03\\n- às 8h15. Algo mais?"
        >>> [(text[u.start:u.end].strip(), u.row, u.lead) for u in units(text)]
        [('Aqui estão os dados da Conceição:', False, None), ('- quarta, 11/03', True, 0), ('- às 8h15.', True, 0), ('Algo mais?', True, 0)]
    """
    found: list[Unit] = []
    lead: int | None = None
    in_list = False
    at = 0
    lines = text.split("\n")
    table_header_pending = False
    for number, line in enumerate(lines):
        start, end = at, at + len(line)
        at = end + 1
        if not line.strip():
            in_list = False
            continue
        if _TABLE_RULE.match(line):
            if found and found[-1].row and table_header_pending:
                found[-1] = Unit(found[-1].start, found[-1].end, row=True, header=True, lead=found[-1].lead,
                                 line=found[-1].line)
            table_header_pending = False
            continue
        table = line.lstrip().startswith("|")
        bullet = table or bool(_BULLET.match(line))
        if bullet:
            if not in_list:
                lead = len(found) - 1 if found and not found[-1].row else (found[-1].lead if found else None)
                in_list = True
            table_header_pending = table and (not found or not found[-1].row)
            for s, e in _sentences(text, start, end) if not table else [(start, end)]:
                found.append(Unit(s, e, row=True, lead=lead, line=number))
            continue
        in_list = False
        for s, e in _sentences(text, start, end):
            found.append(Unit(s, e, line=number))
    return found


#: Abbreviations whose dot ends no sentence: months and weekdays ("14 de mar. de 1958", "qua., 11/03"), a street's
#: type and number ("R. das Palmeiras", "Av. Paulista", "nº. 55", "apto. 302").
_ABBREVIATIONS = frozenset({
    "jan", "fev", "feb", "mar", "abr", "apr", "mai", "may", "jun", "jul", "ago", "aug", "set", "sep", "sept", "oct",
    "out", "nov", "dez", "dec", "dic", "ene", "seg", "ter", "qua", "qui", "sex", "sab", "dom", "mon", "tue", "wed",
    "thu", "fri", "sat", "sun", "lun", "mie", "jue", "vie", "r", "av", "avda", "al", "tv", "trav", "pca", "estr",
    "rod", "no", "n", "nro", "num", "apto", "ap", "apt", "conj", "bl", "depto", "dpto", "tel", "cel", "aprox", "c",
})  # fmt: skip
_WORD_BEFORE = re.compile(r"([a-z]+)\.$")


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, at = [], start
    for m in SENTENCE_BREAK.finditer(text, start, end):
        if m.group().startswith("."):
            word = _WORD_BEFORE.search(text, max(start, m.start() - 6), m.start() + 1)
            if word is not None and word.group(1) in _ABBREVIATIONS:
                continue
        if text[at:m.end()].strip():
            spans.append((at, m.end()))
        at = m.end()
    if text[at:end].strip():
        spans.append((at, end))
    return spans
