"""The words the agenda patient reads agent messages with, in pt-BR, en and es: generic conversation, no domain.

Everything is matched on accent-folded lower-case text (``fold``). These are the words any assistant uses to ask,
offer, confirm and close — interrogatives, yes/no question openers, list markers — never the reference clinic
agents' own phrases: an agenda patient that only understood our agents would prove nothing (issue #34).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["CLOSE", "INTERROGATIVES", "PART_OF_DAY", "REQUEST_VERBS", "WEEKDAYS", "YES_NO_ANSWERS",
           "fold", "words"]


def fold(text: str) -> str:
    """Lower-case ``text`` without accents ("Terça-feira às 9h" -> "terca-feira as 9h")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_WORD = re.compile(r"\d+[.,]\d+(?![\d/])|[a-z0-9]+(?:[:h][0-9]{2})?")


def words(text: str) -> list[str]:
    """The folded words of ``text`` (a time such as ``9:30`` or ``9h30`` and a decimal such as ``1.7`` stay one
    word)."""
    return _WORD.findall(fold(text))


#: Words that open a question asking for information (what, which, when...).
INTERROGATIVES = frozenset({
    "qual", "quais", "que", "quando", "onde", "como", "quanto", "quantos", "quantas", "quem", "o que",
    "what", "which", "when", "where", "how", "who", "whats", "what's",
    "cual", "cuales", "cuando", "donde", "cuanto", "cuantos", "quien", "cuanta",
})

#: Imperatives and polite forms that ask the person for a piece of information.
REQUEST_VERBS = re.compile(
    r"\b(?:informe|informa|me (?:diga|diz|passa|passe|envie|manda|mande|fala|conta|conte)|digite|envie|mande|"
    r"preciso (?:do|da|de|saber)|poderia (?:me )?(?:informar|dizer|passar|enviar|confirmar)|"
    r"please (?:provide|send|share|tell|enter|type|confirm|give)|could you (?:tell|give|send|share|provide|confirm)|"
    r"i(?:'ll| will)? need (?:your|the)|let me know|tell me|"
    r"indica(?:me)?|indique|dime|digame|envia(?:me)?|enviame|comparte|escribe|necesito (?:tu|su|el|la|saber)|"
    r"podrias (?:decirme|indicarme|enviarme|darme|confirmarme))\b")

#: Phrases that close a conversation or ask whether anything else is needed.
CLOSE = re.compile(
    r"\b(?:algo mais|mais alguma coisa|posso ajudar (?:em|com) (?:mais|algo)|precisa de mais|ate (?:logo|mais|breve)|"
    r"tchau|tenha um (?:otimo|bom|excelente)|anything else|something else|can i help (?:you )?with anything|"
    r"have a (?:great|nice|good)|goodbye|bye|take care|algo mas|otra cosa|puedo ayudarte (?:en|con) algo|"
    r"hasta (?:luego|pronto)|adios|que tengas|que tenga|"
    # acknowledging the person's decision ("tudo bem, sem problemas", "no problem", "cuando quieras")
    r"sem problemas?|no problem|sin problemas?|quando (?:quiser|precisar)|whenever you|cuando (?:quieras|necesites))\b")

#: Short answers that settle a yes/no question.
YES_NO_ANSWERS = re.compile(
    r"\b(?:sim|nao|aceitamos|atendemos|trabalhamos|yes|no|we (?:do|don't|accept|take)|si|aceptamos|atendemos)\b")

#: Week days in the three languages, to a shared name (so "terça" matches "Tuesday" and "martes").
WEEKDAYS: dict[str, str] = {
    "segunda": "mon", "terca": "tue", "quarta": "wed", "quinta": "thu", "sexta": "fri", "sabado": "sat",
    "domingo": "sun", "seg": "mon", "ter": "tue", "qua": "wed", "qui": "thu", "sex": "fri", "sab": "sat",
    "monday": "mon", "tuesday": "tue", "wednesday": "wed", "thursday": "thu", "friday": "fri", "saturday": "sat",
    "sunday": "sun", "mon": "mon", "tue": "tue", "wed": "wed", "thu": "thu", "fri": "fri", "sat": "sat",
    "sun": "sun", "lunes": "mon", "martes": "tue", "miercoles": "wed", "jueves": "thu", "viernes": "fri",
}

#: Parts of the day, to a shared name.
PART_OF_DAY: dict[str, str] = {
    "manha": "morning", "morning": "morning", "manana": "morning", "tarde": "afternoon", "afternoon": "afternoon",
    "noite": "evening", "evening": "evening", "night": "evening", "noche": "evening",
}
