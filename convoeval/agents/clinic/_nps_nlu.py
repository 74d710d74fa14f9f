"""Reading an NPS answer: a 0-10 score written as digits or words, and whether a comment came with it.

The framework's ``Understanding.numbers`` lists every number in a message; a survey answer needs more care:
"nota dez", "a nine", "un siete" and "8/10" are scores, "esperei 40 minutos" and "dia 10" are not, "dou um 10" is a
10 (the "um" is an article), "7 ou 8" is no answer yet. Candidates for the framework's ``_nlu`` once a second agent
needs them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from convoeval.agents.clinic._format import LOCALES, resolve_locale
from convoeval.agents.clinic._nlu import normalize

_WORDS = {
    "pt-BR": {"zero": 0, "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3, "quatro": 4, "cinco": 5, "seis": 6,
              "sete": 7, "oito": 8, "nove": 9, "dez": 10},
    "en": {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10},
    "es": {"cero": 0, "uno": 1, "un": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
           "siete": 7, "ocho": 8, "nueve": 9, "diez": 10},
}  # fmt: skip
# Words that are "one" and also an article: a score only when nothing else could be ("nota um", "I'd give one").
_ARTICLES = {"um", "uma", "one", "un", "una"}
# Never read with another language's numbers: "um dos melhores" is not a Spanish 2.
_FALLBACK_SKIP = _ARTICLES | {"dos"}
_CUES = {
    "nota", "dou", "daria", "dar", "seria", "score", "give", "rate", "rating", "say", "a", "an", "doy", "pongo",
    "puntuacion", "puntaje", "calificacion", "le", "te", "you", "us", "voces",
}
# A number followed by one of these is an amount of something, not a score.
_UNITS = {
    "minuto", "minutos", "min", "mins", "minute", "minutes", "hora", "horas", "hour", "hours", "hr", "hrs", "h", "dia",
    "dias", "day", "days", "semana", "semanas", "week", "weeks", "mes", "meses", "month", "months", "ano", "anos",
    "year", "years", "reais", "real", "pesos", "dollars", "am", "pm", "vezes", "times", "veces", "pessoas", "people",
    "personas", "filhos", "kids", "children", "hijos", "andar", "floor", "piso",
}
# ... and a number after one of these is a date or a time ("dia 10", "às 9", "at 3").
_BEFORE_NON_SCORE = {"dia", "day", "as", "at", "las", "hora", "horas", "r", "numero", "number", "sala", "room"}
_DENOMINATOR = (("de",), ("em",), ("sobre",), ("out", "of"), ("of",))
_TEN = {"10", "dez", "ten", "diez"}
_MAXIMUM = (
    "nota maxima", "a maxima", "nota mil", "top score", "perfect score", "full marks", "highest score", "the highest",
    "puntuacion maxima", "la maxima", "nota maxima",
)
_FILLER = set(
    "eu te dou daria nota pra para voces a o os as e de do da sim ok claro com certeza minha meu seria acho que "
    "obrigado obrigada valeu nao so isso mesmo bom bem "
    "i id would give you a an the score rating rate my is its it say guess think of out yes sure thanks thank guys "
    "definitely maybe probably about around hmm well so no nope thats all nothing "
    "le les doy un una mi es si gracias pues creo puntuacion sobre vale bueno ustedes nada mas "
    # Corrections ("na verdade 8", "actually, 7", "perdón, 6") say nothing beyond the score either.
    "na verdade quer dizer digo corrigindo ops opa actually mean sorry oops correction en realidad perdon".split()
)


@dataclass(frozen=True)
class ScoreReading:
    """A message read as an answer to "from 0 to 10, how likely are you to recommend us?".

    Attributes:
        score: the score, when the message gives exactly one.
        problem: why there is no score: ``"none"`` (no number), ``"out_of_range"`` (only numbers outside 0-10),
            ``"ambiguous"`` (two different scores, or half a point). None when ``score`` is set.
    """

    score: int | None
    problem: str | None = None


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def _candidates(tokens: list[str], words: dict[str, int]) -> tuple[list[tuple[int, int, bool]], bool]:
    """``(value, position, cued)`` of each score-like number, and whether a number outside 0-10 was seen."""
    found, too_big = [], False
    skip: set[int] = set()
    for i, token in enumerate(tokens):
        if i in skip:
            continue
        value = int(token) if token.isdigit() else words.get(token)
        if value is None:
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if following in _UNITS or (i > 0 and tokens[i - 1] in _BEFORE_NON_SCORE):
            continue
        # "8 de 10", "eight out of ten": the 10 is the scale, not a second score.
        for prep in _DENOMINATOR:
            end = i + 1 + len(prep)
            if tuple(tokens[i + 1 : end]) == prep and end < len(tokens) and tokens[end] in _TEN:
                skip.add(end)
                break
        cued = any(t in _CUES for t in tokens[max(0, i - 2) : i])
        if token in _ARTICLES:
            # "dou um 10": an article before another number; otherwise one only after a cue or on its own.
            next_is_number = following.isdigit() or any(following in w for w in _WORDS.values())
            if next_is_number or not (cued or len(tokens) <= 2):
                continue
        if 0 <= value <= 10:
            found.append((value, i, cued))
        else:
            too_big = True
    return found, too_big


def parse_score(text: str, locale: str) -> ScoreReading:
    """The 0-10 score a message gives, reading digits and number words (session language first).

    Args:
        text: the patient's message.
        locale: the session's language; other languages' number words are tried only when it finds none.

    Returns:
        A ``ScoreReading``.

    Example:
        >>> parse_score("nota dez!", "pt-BR").score, parse_score("I'd give you a nine", "en").score
        (10, 9)
        >>> parse_score("7 ou 8", "pt-BR").problem
        'ambiguous'
    """
    plain = _plain(text)
    if re.search(r"(?<![\d/])(?:10|\d)[.,]5\b", plain):
        return ScoreReading(None, "ambiguous")  # "9,5": half points are not on the scale
    plain = re.sub(r"\b(\d{1,3})\s*/\s*10\b", r"\1", plain)  # "8/10" -> "8"
    # Money, times and dates are not scores: "R$ 150,00", "9:30", "10/03".
    plain = re.sub(r"r\$\s*[\d.,]+|\b\d+[.,]\d{2}\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b", " ", plain)
    tokens = normalize(plain).split()
    first = resolve_locale(locale)
    found, too_big = _candidates(tokens, _WORDS[first])
    if not found:
        for other in (loc for loc in LOCALES if loc != first):
            words = {w: v for w, v in _WORDS[other].items() if w not in _FALLBACK_SKIP}
            found, big = _candidates(tokens, words)
            too_big = too_big or big
            if found:
                break
    if not found and any(p in " ".join(tokens) for p in _MAXIMUM):
        return ScoreReading(10)
    values = {v for v, _, _ in found}
    if len(values) == 1:
        return ScoreReading(values.pop())
    cued = {v for v, _, c in found if c}
    if len(cued) == 1:
        return ScoreReading(cued.pop())
    if values:
        return ScoreReading(None, "ambiguous")
    return ScoreReading(None, "out_of_range" if too_big else "none")


def content_words(text: str) -> list[str]:
    """The words of a message that say something beyond a score, yes/no or thanks."""
    words = {w for table in _WORDS.values() for w in table}
    return [t for t in normalize(text).split() if not t.isdigit() and t not in words and t not in _FILLER]


def comment_of(text: str, *, min_words: int = 3) -> str | None:
    """The message as a comment when it says enough beyond the score ("Nota 9, o atendimento foi ótimo"), else None.

    Example:
        >>> comment_of("Nota 9, o atendimento foi ótimo"), comment_of("dou nota 10 pra vocês")
        ('Nota 9, o atendimento foi ótimo', None)
    """
    return text.strip() if len(content_words(text)) >= min_words else None
