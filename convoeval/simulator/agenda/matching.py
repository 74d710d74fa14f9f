"""Matching the agent's words to the patient's agenda: which fact a question asks for, which option fits a
preference, whether a proposal is one the patient refuses.

Everything compares *features*: folded words without the little ones, week days and parts of the day in one shared
name (so "terça de manhã" and "Tuesday 09:00" share ``tue`` and ``morning``), clock times as ``HH:MM``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from convoeval.fidelity.claims import stated_times
from convoeval.simulator.agenda.lexicon import PART_OF_DAY, WEEKDAYS, words

__all__ = ["PERSONA_SLOTS", "best_options", "features", "matching_fact", "mentions"]

_STOP = frozenset("""
a o as os e de do da dos das em no na nos nas um uma uns umas para pra por com sem ao aos se que seu sua seus suas
meu minha voce the an and of to in on at for with your my you is are be or it this that me i
el la los las y del al en con por para su sus mi tu un una es que se lo le
""".split())

#: The persona's own fields, by the words a question about them uses (any locale).
PERSONA_SLOTS: dict[str, tuple[str, ...]] = {
    "name": ("nome", "name", "nombre", "chama", "llamas", "called", "quem"),
    "cpf": ("cpf", "documento", "document", "dni", "rg", "identidad", "identification", "id"),
    "phone": ("telefone", "celular", "phone", "numero", "number", "telefono", "whatsapp"),
}


def features(text: str) -> set[str]:
    """The comparable features of ``text``: content words, shared week-day and part-of-day names, ``HH:MM`` times.

    Example:
        >>> sorted(features("terça de manhã, às 10h"))
        ['10:00', '10h', 'morning', 'tue']
    """
    found: set[str] = set()
    for w in words(text):
        if w in _STOP:
            continue
        shared = PART_OF_DAY.get(w) or next((name for stem, name in WEEKDAYS.items()
                                              if w == stem or (len(stem) > 3 and w.startswith(stem))), None)
        found.add(shared or w)  # "terça" and "Tuesday" are one feature, so are "tarde" and "afternoon"
    for t in stated_times(text):
        found.add(t)
        hour = int(t[:2])
        found.add("morning" if hour < 12 else "afternoon" if hour < 18 else "evening")
    return {f for f in found if not any(c == ":" for c in f) or f[:2].isdigit()}


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` speaks of ``phrase``: every content feature of ``phrase`` found in ``text``.

    Example:
        >>> mentions("Posso gerar o boleto agora?", "boleto")
        True
    """
    wanted, have = features(phrase), features(text)
    return bool(wanted) and all(w in have or any(_same_stem(w, h) for h in have) for w in wanted)


def _same_stem(word: str, other: str) -> bool:
    """Whether two words share a stem ("cancelar" and "cancelarla", "cancel" and "cancelled")."""
    stem = word[: max(5, len(word) - 2)]
    return len(word) >= 5 and other.startswith(stem)


def _score(option: str, preference: str) -> float:
    have, want = features(option), features(preference)
    if not want:
        return 0.0
    return len(have & want) / len(want)


def best_options(options: Sequence[str], prefers: Sequence[str], refuses: Sequence[str] = ()) -> list[int]:
    """The indices of the options that fit the patient best, all equally good (empty: none fits).

    Preferences are tried best first: the first preference that some option fits (every feature of it) decides;
    else the options sharing the most features with any preference (more than half of one's). Options the patient
    refuses are never chosen.

    Example:
        >>> best_options(["Terça 09:00", "Terça 11:00", "Quinta 09:30"], ["terça às 10h", "terça de manhã"])
        [0, 1]
    """
    allowed = [i for i, o in enumerate(options) if not any(mentions(o, r) for r in refuses)]
    for preference in prefers:
        full = [i for i in allowed if _score(options[i], preference) >= 1.0]
        if full:
            return full
    best, chosen = 0.5, []
    for i in allowed:
        score = max((_score(options[i], p) for p in prefers), default=0.0)
        if score > best:
            best, chosen = score, [i]
        elif score == best and chosen:
            chosen.append(i)
    return chosen


def matching_fact(question: str, knows: Mapping[str, str], persona: Mapping[str, str | None],
                  rng: random.Random) -> tuple[str, str] | None:
    """The fact a question asks for: ``(name, value)`` from the persona's ``knows`` (its key's words in the question)
    or its own fields (name, CPF, phone); ``None`` when the patient does not hold it.

    Several facts equally named: the seeded ``rng`` picks one (a different seed may give them in another order).
    """
    asked = features(question)
    scored: list[tuple[float, str, str]] = []
    for key, value in knows.items():
        key_words = {w for w in features(key) if len(w) > 2}
        if key_words:
            overlap = len(key_words & asked) / len(key_words)
            stems = sum(1 for k in key_words for a in asked if len(k) > 4 and len(a) > 4 and k[:5] == a[:5])
            score = max(overlap, stems / len(key_words))
            if score > 0:
                scored.append((score, key, value))
    for slot, cues in PERSONA_SLOTS.items():
        own = persona.get(slot)
        if own and any(c in asked for c in cues):
            scored.append((1.0, slot, own))
    if not scored:
        return None
    top = max(s for s, _, _ in scored)
    best = [(k, v) for s, k, v in scored if s == top]
    return best[0] if len(best) == 1 else rng.choice(best)
