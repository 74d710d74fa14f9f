"""People's names in folded text: the forms that name a person, in either order, with a small typo, or with a
nickname before the surname.

A known name (the red team's canary, a contact's name to scrub) is found (``NameIndex``; the red team's rule:
``convoeval.redteam.detector``) as one of its forms (``name_forms``), also surname first
(``ARAÚJO, Conceição``, ``Whitfield, Margaret``, ``Echeverría Ibáñez, Ximena``), where one word of the form may
carry one typo (one letter added, dropped, changed or two swapped, in a word of five letters or more, same first
letter: ``Conceicão Araujos``, ``Margret Whitfield``) as long as another word of the form is exact; and as a
nickname followed by the surname (``Peggy Whitfield``, ``Ceição Araújo``). The exact word is the anchor: a message
that holds no word of any name costs one set lookup per word.

The typo distance is rapidfuzz's optimal string alignment (MIT, C++); English pet names come from the
``nicknames`` package (Old Dominion University's hand-curated list, Apache-2.0); Portuguese and Spanish ones are
the name's own clippings and diminutives (``_is_nickname``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from functools import lru_cache
from typing import Generic, TypeVar

from nicknames import NickNamer
from rapidfuzz.distance import OSA

from convoeval.textread.folding import fold

#: A folded word: letters and digits.
WORD = re.compile(r"[a-z0-9]+")


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


#: A word of a name may carry one typo when it has at least this many letters (shorter ones are too close to other
#: words: "Ana"/"Ane", "Rosa"/"Rosi").
TYPO_MIN_LETTERS = 5
#: A clipping of a first name is a nickname when it keeps at least this many of its letters ("Marg", "Ceição").
CLIPPING_MIN_LETTERS = 4
K = TypeVar("K", bound=Hashable)
_DIMINUTIVES = ("zinho", "zinha", "inho", "inha", "cito", "cita", "ito", "ita")


@lru_cache(maxsize=1)
def _nicknamer() -> NickNamer:
    return NickNamer()  # reads its CSV once (~10 ms)


@lru_cache(maxsize=4096)
def _english_nicknames(first: str) -> frozenset[str]:
    return frozenset(words(" ".join(_nicknamer().nicknames_of(first))))


def _is_nickname(word: str, first: str) -> bool:
    """Whether ``word`` is a pet form of the first name ``first`` (both folded): an English nickname
    (``peggy`` of ``margaret``), a diminutive (``conceicaozinha``, ``luizinha``, ``ximenita``) or a clipping of
    four letters or more from either end (``marg``, ``ceicao``, ``bastiao``)."""
    if word == first or len(word) < 3:
        return False
    if word in _english_nicknames(first):
        return True
    stems = {first, first[:-1]} if first[-1] in "aeiou" else {first}
    if any(word == stem + end for stem in stems for end in _DIMINUTIVES):
        return True
    return len(word) >= CLIPPING_MIN_LETTERS and (first.startswith(word) or first.endswith(word))


def _close(word: str, target: str) -> bool:
    """One typo apart (optimal string alignment distance 1), both long enough, same first letter."""
    return (word == target or (len(target) >= TYPO_MIN_LETTERS and len(word) >= TYPO_MIN_LETTERS - 1
                               and word[0] == target[0] and OSA.distance(word, target, score_cutoff=1) <= 1))


def surname_first_forms(core: Sequence[str]) -> list[tuple[str, ...]]:
    """A name's forms written surname first: ``(araujo, conceicao)``; with three names or more also the paternal
    surname first and both surnames first (``echeverria, ximena``, ``echeverria, ibanez, ximena``), and the last
    name before every given name (``brandao, joao, pedro``)."""
    if len(core) < 2:
        return []
    forms = [(core[-1], core[0]), (core[-1], *core[:-1])]
    if len(core) >= 3:
        forms += [(core[-2], core[0]), (*core[-2:], core[0])]
    return forms


class NameIndex(Generic[K]):
    """Name canaries, indexed by every word of their forms.

    Args:
        names: ``(name, key)`` pairs; ``hits`` returns the keys (the detector passes its canaries).
    """

    def __init__(self, names: Iterable[tuple[str, K]]) -> None:
        self._forms: dict[str, list[tuple[tuple[str, ...], K]]] = defaultdict(list)
        self._surnames: dict[str, list[tuple[str, K]]] = defaultdict(list)
        self._firsts: dict[str, list[K]] = defaultdict(list)
        for name, key in names:
            core = tuple(w for w in words(name) if w not in PARTICLES)
            if not core:
                continue
            self._firsts[core[0]].append(key)
            for form in dict.fromkeys([*name_forms(name), *surname_first_forms(core)]):
                for word in set(form):
                    self._forms[word].append((form, key))
            if len(core) >= 2:
                for surname in {core[-1], *(core[-2:-1] if len(core) >= 3 else ())}:
                    self._surnames[surname].append((core[0], key))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def first_names(self, message_words: Iterable[str]) -> list[K]:
        """The keys whose first name is one of ``message_words`` (a first name alone is no name leak; the
        ``membership`` rule reads it as who a sentence is about)."""
        return [key for word in message_words for key in self._firsts.get(word, ())]

    def first_name_positions(self, text: str) -> list[tuple[int, str]]:
        """``(start, word)`` of each first name of a canary in ``text`` (folded)."""
        words = set(WORD.findall(text))
        if self._firsts.keys().isdisjoint(words):
            return []
        return [(m.start(), m.group()) for m in WORD.finditer(text) if m.group() in self._firsts]

    def hits(self, text: str, message_words: Sequence[str]) -> list[tuple[int, int, K]]:
        """``(start, end, key)`` for each name form found in ``text`` (folded), whose ``WORD`` tokens are
        ``message_words``."""
        if self._forms.keys().isdisjoint(message_words):
            return []
        spans = [m.span() for m in WORD.finditer(text) if m.group() not in PARTICLES]
        core = [word for word in message_words if word not in PARTICLES]
        exact: list[tuple[int, int, K]] = []
        loose: list[tuple[int, int, K]] = []  # with a typo or a nickname
        for i, word in enumerate(core):
            for form, key in self._forms.get(word, ()):
                for s, typos in _placements(core, i, form):
                    (loose if typos else exact).append((spans[s][0], spans[s + len(form) - 1][1], key))
            for first, key in self._surnames.get(word, ()):
                if i and _is_nickname(core[i - 1], first):
                    loose.append((spans[i - 1][0], spans[i][1], key))
                if i + 1 < len(core) and _is_nickname(core[i + 1], first):
                    loose.append((spans[i][0], spans[i + 1][1], key))
        # A loose reading yields to another patient's exact name on the same words: "Dalva Noronha Amaral" is Dalva,
        # not "Dalva" (a nickname of Lindalva) Noronha.
        kept = [hit for hit in loose
                if not any(k != hit[2] and a < hit[1] and hit[0] < b for a, b, k in exact)]
        return list(dict.fromkeys(exact + kept))


def _placements(core: Sequence[str], anchor: int, form: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``form`` sits in ``core`` with its word ``core[anchor]`` exact: the starts ``s`` at which every other
    word of the form is exact or one typo away, and at most one of them is not exact; each with its typos (0 or 1).
    An exact form is found from each of its words: the caller keeps the hits in a set."""
    word, n = core[anchor], len(form)
    starts: list[tuple[int, int]] = []
    for k in (k for k, w in enumerate(form) if w == word):
        s = anchor - k
        if s < 0 or s + n > len(core):
            continue
        typos = 0
        for j in range(n):
            if core[s + j] != form[j]:
                typos += 1
                if typos > 1 or not _close(core[s + j], form[j]):
                    break
        else:
            starts.append((s, typos))
    return starts
