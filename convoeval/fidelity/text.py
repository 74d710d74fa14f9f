"""The text evidence the fidelity checks read: words copied in runs, a message's language, facts a message states that the persona does not know."""

from __future__ import annotations

import contextlib
import difflib
import functools
import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import Any

#: The detector's language code for each scenario locale.
LANGUAGE_OF_LOCALE = {"pt-BR": "pt", "en": "en", "es": "es"}


_WORD = re.compile(r"\w+")


def message_words(text: str) -> list[str]:
    """A message's lower-case words, as ``parroting`` (and the simulator-failure gate) compare them."""
    return _WORD.findall(text.lower())


def copied_share(source: list[str], words: list[str], min_run: int) -> float:
    """Share of ``words`` that sit in runs of >= ``min_run`` words copied, in order, from ``source``.

    Example:
        >>> agent = message_words("Você pode pagar por Pix ou boleto")
        >>> copied_share(agent, message_words("Pix, por favor, pode ser"), 3)
        0.0
        >>> copied_share(agent, message_words("Quero pagar por Pix"), 3)
        0.75
    """
    if not words:
        return 0.0
    matcher = difflib.SequenceMatcher(None, source, words, autojunk=False)
    copied = sum(block.size for block in matcher.get_matching_blocks() if block.size >= min_run)
    return copied / len(words)


_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


_LETTERS = re.compile(r"[^\W\d_]+")


#: Held while the model loads, so a message checked during ``load_language_model_meanwhile``'s load waits for it
#: instead of loading a second copy.
_LOADING = threading.Lock()


def _identifier() -> Any:
    """py3langid's bundled Naive Bayes model restricted to pt/es/en (loaded once, offline, deterministic)."""
    with _LOADING:
        return _load_identifier()


def load_language_model_meanwhile() -> threading.Thread:
    """Load the language model on a background thread, so the first message checked does not wait for it.

    Loading it is ~0.5 s, most of it decompressing its LZMA file, which runs without the GIL: started before a
    run imports its model client, it finishes on the other core while this one imports. Loaded on the event loop
    instead, by the first conversation's language check, it held up every conversation in flight for that long
    (benchmarks/RESULTS.md, #28). The model and its answers are the same either way.
    """
    def load() -> None:
        # A model that cannot load (py3langid missing) is reported by the check that needs it, as that
        # conversation's error; this early attempt stays silent (a failed load is not cached, so the check retries).
        with contextlib.suppress(Exception):
            _identifier()

    thread = threading.Thread(target=load, name="convoeval-load-language-model", daemon=True)
    thread.start()
    return thread


@functools.cache
def _load_identifier() -> Any:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier  # noqa: PLC0415 - its model loads on first use
    except ImportError:  # pragma: no cover - a declared dependency
        raise ImportError("the wrong_language check needs py3langid (pip install py3langid)") from None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(set(LANGUAGE_OF_LOCALE.values())))
    return identifier


def detect_language(text: str, *, ignore: Iterable[str] = (), min_words: int = 3) -> tuple[str | None, float]:
    """The language of one message among pt, es and en, and the detector's probability.

    URLs, e-mails, digits, symbols and the words in ``ignore`` (the persona's name) are removed first: they carry
    no language. Fewer than ``min_words`` words left gives ``(None, nan)``.

    Example:
        >>> detect_language("Sí, puede generar el boleto.")[0]
        'es'
    """
    text = _EMAIL.sub(" ", _URL.sub(" ", text))
    skip = {_fold(w) for w in ignore}
    words = [w for w in _LETTERS.findall(text) if _fold(w) not in skip]
    if len(words) < min_words:
        return None, float("nan")
    lang, probability = _identifier().classify(" ".join(words))
    return lang, float(probability)


_CPF = re.compile(r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b")


# Numeric dates: dd/mm/yyyy (any of / . -, 2- or 4-digit year) and ISO yyyy-mm-dd.
_DATE = re.compile(r"\b(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})|\d{4}-\d{1,2}-\d{1,2})\b")


_MONTHS = {m: i + 1 for names in (
    "janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "january february march april may june july august september october november december")
    for i, m in enumerate(names.split())}


_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))


_WORD_DATE = re.compile(rf"\b\d{{1,2}}\s+(?:de\s+)?(?:{_MONTH})\s+(?:de\s+|del\s+)?\d{{4}}\b"
                        rf"|\b(?:{_MONTH})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b")


# Birth context, matched on accent-folded text: nascimento, nasci, nací, nacimiento, born, birthday, DOB, ...
_BIRTH = re.compile(r"\bnasc\w*|\bnaci(?:d[oa]s?|miento)?\b|\bborn\b|\bbirth\w*|\bdob\b|\bd\.o\.b\b"
                    r"|\banivers\w*|\bcumpleanos\b")


# Digit groups with single separators between them: phones "(11) 98765-0020", "+55 11 98765 0020", cards
# "4111 1111 1111 1111", document numbers. Amounts ("150,00") and times ("14:30") stay short because "," and ":"
# split them. Each group after the first needs a separator, so a long digit run cannot backtrack exponentially.
_NUMBER = re.compile(r"(?<![\w@+])(?:\+\d+[ .-]?)?(?:\(\d+\)[ .-]?)?\d+(?:[ .-]\d+)*(?![\w@])")


# "meu nome é Lucia Ferreira": the phrase in any case, the name capitalised (so "my name is hard to spell" is not one).
_NAME = re.compile(r"(?i:meu nome (?:é|e)|me chamo|mi nombre es|me llamo|my name is)\s+"
                   r"([A-ZÀ-Ý][\w'-]*(?:\s+(?:d[aeo]s?\s+)?[A-ZÀ-Ý][\w'-]*)*)")


def _fold(text: str) -> str:
    """Lowercase without accents, so "Lúcia" and "lucia" compare equal."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def fold_keeping_offsets(text: str) -> str:
    """Lower case without accents, one character for one (so a match's offsets quote the original text)."""
    if text.isascii():  # most agent messages: nothing to unaccent (path assertions read every message)
        return text.lower()
    return "".join(map(_fold_char, text)).replace("\u2019", "'")


@functools.lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    base = "".join(ch for ch in unicodedata.normalize("NFKD", c) if not unicodedata.combining(ch)).lower()
    return base if len(base) == 1 else c


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _date_key(text: str) -> tuple[int, ...] | None:
    """Day, month and two-digit year, sorted: the same date in any field order or spelling gets the same key."""
    folded = _fold(text)
    parts = [int(p) for p in re.findall(r"\d+", folded)]
    month = next((n for name, n in _MONTHS.items() if re.search(rf"\b{name}\b", folded)), None)
    if month is not None:
        parts.append(month)
    if len(parts) != 3:
        return None
    return tuple(sorted(p % 100 if p >= 100 else p for p in parts))


class KnownFacts:
    """What the patient may state: the persona's facts, the goal, and whatever the agent said before."""

    def __init__(self, scenario: Any):
        persona = scenario.persona
        values = [persona.phone, persona.cpf or "", *(persona.knows or {}).values(), getattr(scenario, "goal", "")]
        self.numbers: set[str] = set()
        self.texts: list[str] = []
        self.names = {_fold(w) for w in _LETTERS.findall(persona.name)}
        for value in values:
            self.add(str(value))

    def add(self, text: str) -> None:
        self.texts.append(_fold(text))
        self.names |= {_fold(w) for w in _LETTERS.findall(text)}
        self.numbers |= {_digits(m) for m in _NUMBER.findall(text) if len(_digits(m)) >= 4}
        self.numbers |= {_digits(m) for m in _CPF.findall(text)}

    def number(self, digits: str) -> bool:
        # "+55 11 98765-0020" and "98765-0020" are the persona's "11987650020": compare by suffix.
        return any(digits == k or (min(len(k), len(digits)) >= 8 and (k.endswith(digits) or digits.endswith(k)))
                   for k in self.numbers)

    def date(self, key: tuple[int, ...]) -> bool:
        return any(_date_key(m) == key for t in self.texts for m in [*_DATE.findall(t), *_WORD_DATE.findall(t)])

    def email(self, address: str) -> bool:
        return any(_fold(address) in t for t in self.texts)


def unknown_facts(text: str, known: KnownFacts, min_digits: int) -> list[str]:
    """The personal facts in one patient message that ``known`` does not hold, as "kind "value"" strings."""
    found = []
    text = _URL.sub(" ", text)
    for address in _EMAIL.findall(text):
        if not known.email(address):
            found.append(f'e-mail "{address}"')
    text = _EMAIL.sub(" ", text)
    dates = [*_DATE.findall(text), *_WORD_DATE.findall(_fold(text))]
    if _BIRTH.search(_fold(text)):
        for date in dates:
            key = _date_key(date)
            if key is not None and not known.date(key):
                found.append(f'date of birth "{date}"')
    text = _WORD_DATE.sub(" ", _DATE.sub(" ", text))  # a date is not a phone number
    for number in _NUMBER.findall(text):
        digits = _digits(number)
        if len(digits) < min_digits or known.number(digits):
            continue
        kind = ("CPF" if _CPF.fullmatch(number.strip()) else "card number" if 13 <= len(digits) <= 19
                else "phone or ID number")
        found.append(f'{kind} "{number.strip()}"')
    for name in _NAME.findall(text):
        if not {_fold(w) for w in _LETTERS.findall(name)} & known.names:
            found.append(f'name "{name}"')
    return found
