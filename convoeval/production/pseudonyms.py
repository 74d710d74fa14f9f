"""Consistent stand-ins for one conversation's personal data: the same person keeps the same fake name, the same
CPF the same fake CPF, every date moves by the conversation's one offset (a whole number of weeks, so weekdays and
intervals survive), every amount by its one factor (so a total is still the sum of its parts, roughly).

The names are Faker's (MIT): its pt_BR, en_US, es_ES and es_MX first names and surnames, used both to recognise a
first name in real text (``first_name_words``) and to draw a stand-in of the conversation's locale. Every choice is
a hash of the conversation's key, the kind and the original value: importing the same file twice gives the same
stand-ins, and no random state is kept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date, timedelta
from functools import cache

from faker.providers.person.en_US import Provider as English
from faker.providers.person.es_ES import Provider as Spanish
from faker.providers.person.es_MX import Provider as Mexican
from faker.providers.person.pt_BR import Provider as Brazilian

from convoeval.textread.folding import fold
from convoeval.textread.numbers import cpf_check_digits

__all__ = ["Pseudonyms", "first_name_words", "surname_words"]

_PROVIDERS = {"pt": (Brazilian,), "en": (English,), "es": (Spanish, Mexican)}


def _listed(provider: type, attribute: str) -> list[str]:
    value = getattr(provider, attribute, ())
    return [str(v) for v in (value.keys() if isinstance(value, dict) else value)]


@cache
def _first_names(language: str) -> tuple[list[str], list[str]]:
    female, male = [], []
    for provider in _PROVIDERS.get(language, (Brazilian,)):
        female += _listed(provider, "first_names_female")
        male += _listed(provider, "first_names_male")
    # One-word names only: a stand-in "Marcos Vinicius" for "Marcos" would keep the original in it.
    return sorted({n for n in female if " " not in n}), sorted({n for n in male if " " not in n})


@cache
def _surnames(language: str) -> list[str]:
    return sorted({s for p in _PROVIDERS.get(language, (Brazilian,)) for s in _listed(p, "last_names") if " " not in s})


@cache
def first_name_words() -> frozenset[str]:
    """Every first name of the three languages, folded (``"joão"`` → ``joao``), for recognising one in text."""
    return frozenset(fold(n) for lang in _PROVIDERS for group in _first_names(lang) for n in group if " " not in n)


@cache
def surname_words() -> frozenset[str]:
    """Every surname of the three languages, folded."""
    return frozenset(fold(n) for lang in _PROVIDERS for n in _surnames(lang) if " " not in n)


class Pseudonyms:
    """The stand-ins of one conversation.

    Example:
        >>> fake = Pseudonyms("wa-1", "pt-BR")
        >>> fake.first_name("Mariana") == fake.first_name("MARIANA").title() != "Mariana"
        True
        >>> fake.shift(date(2026, 11, 6)).weekday() == date(2026, 11, 6).weekday()
        True
    """

    def __init__(self, key: str, locale: str | None) -> None:
        self.key = key
        self.language = (locale or "pt").split("-")[0].lower()
        if self.language not in _PROVIDERS:
            self.language = "pt"
        self.weeks = self._number(1, 16, "date-offset") * (1 if self._number(0, 1, "date-sign") else -1)
        # 0.70-0.94 or 1.06-1.30: never so close to 1 that a round amount comes back as itself.
        step = self._number(0, 49, "amount-factor")
        self.factor = 0.70 + step / 100 if step < 25 else 1.06 + (step - 25) / 100
        self._chosen: dict[tuple[str, str], str] = {}

    def _number(self, low: int, high: int, *parts: object) -> int:
        """A whole number in ``[low, high]`` chosen by the conversation's key and ``parts``."""
        digest = hashlib.sha256("\x1f".join(str(p) for p in (self.key, *parts)).encode()).digest()
        return low + int.from_bytes(digest[:8], "big") % (high - low + 1)

    def _pick(self, kind: str, original: str, choices: Sequence[str]) -> str:
        folded = fold(original).strip()
        key = (kind, folded)
        if key not in self._chosen:
            taken = set(self._chosen.values())
            start = self._number(0, len(choices) - 1, kind, folded)
            for step in range(len(choices)):
                candidate = choices[(start + step) % len(choices)]
                if fold(candidate) not in folded and folded not in fold(candidate) and candidate not in taken:
                    break
            self._chosen[key] = candidate
        return self._chosen[key]

    @property
    def offset(self) -> timedelta:
        """How far every date of the conversation moves (a whole number of weeks, never zero)."""
        return timedelta(weeks=self.weeks)

    def first_name(self, original: str) -> str:
        """A first name of the conversation's language for ``original`` (of the same list, female or male, when it
        is on one)."""
        female, male = _first_names(self.language)
        folded = fold(original)
        pool = male if folded in {fold(n) for n in _first_names_male_all()} and folded not in {
            fold(n) for n in _first_names_female_all()} else female
        return _cased(self._pick("first", original, pool), original)

    def surname(self, original: str) -> str:
        """A surname of the conversation's language for ``original``."""
        return _cased(self._pick("surname", original, _surnames(self.language)), original)

    def cpf(self, original: str) -> str:
        """A CPF with valid check digits, written as ``original`` is (with or without its dots; a mask kept)."""
        digits = [c for c in original if c.isdigit() or c == "*"]
        if "*" in digits:
            fresh = iter(str(self._number(10**10, 10**11 - 1, "cpf-mask", original)))
            return "".join(next(fresh) if c.isdigit() else c for c in original)
        nine = str(self._number(10**8, 10**9 - 1, "cpf", fold(original)))
        new = iter(nine + cpf_check_digits(nine))
        return "".join(next(new, "0") if c.isdigit() else c for c in original)

    def phone(self, original: str) -> str:
        """The same layout with its last eight digits replaced (country and area codes kept: they name no one)."""
        digits = sum(c.isdigit() for c in original)
        fresh = iter(str(self._number(10**7, 10**8 - 1, "phone", "".join(c for c in original if c.isdigit()))))
        out, seen = [], 0
        for c in original:
            if c.isdigit():
                seen += 1
                out.append(next(fresh, c) if seen > digits - 8 else c)
            else:
                out.append(c)
        return "".join(out)

    def email(self, original: str, name: str | None) -> str:
        """``first.surname@example.com`` of the person's stand-in when the address names them, else a numbered one."""
        local = original.split("@", 1)[0]
        if name:
            return f"{fold(name).replace(' ', '.')}@example.com"
        return f"contato{self._number(100, 999, 'email', fold(local))}@example.com"

    def amount_cents(self, cents: int) -> int:
        """The amount times the conversation's factor, in whole units when the original was."""
        scaled = round(cents * self.factor)
        return scaled - scaled % 100 if cents % 100 == 0 else scaled

    def shift(self, day: date) -> date:
        """``day`` moved by the conversation's offset."""
        return day + self.offset

    def street(self, original: str) -> str:
        """A surname standing for a street's name."""
        return self._pick("street", original, _surnames(self.language))

    def number(self, original: str) -> str:
        """A house number or postal code of the same length (its separators kept)."""
        fresh = iter(str(self._number(10**12, 10**13 - 1, "number", original)))
        return "".join(next(fresh) if c.isdigit() else c for c in original)


@cache
def _first_names_male_all() -> tuple[str, ...]:
    return tuple(n for lang in _PROVIDERS for n in _first_names(lang)[1])


@cache
def _first_names_female_all() -> tuple[str, ...]:
    return tuple(n for lang in _PROVIDERS for n in _first_names(lang)[0])


def _cased(name: str, like: str) -> str:
    if like.isupper():
        return name.upper()
    if like.islower():
        return name.lower()
    return name

