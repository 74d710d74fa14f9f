"""Telling a request for a person from a mere mention of staff, for the follow-up agents (confirmation, nps).

The shared ``human`` intent matches staff nouns on their own ("recepcionista", "receptionist"), which is right for a
bot whose patients only name staff to ask for them, and wrong after a visit: "the receptionist was lovely" is
feedback, not a request. Here a staff noun counts only with a request verb shortly before it ("quero falar com a
recepcionista"); every other ``human`` phrase ("falar com alguém", "real person", "humano") is a request as it is.

Candidate for the framework's ``_nlu`` (a ``person_request`` flag on ``Understanding``).
"""

from __future__ import annotations

from convoeval.agents.clinic._nlu import COMMON_LEXICON, Understanding, normalize

#: Words that name a member of staff; a request only with a request verb before them.
STAFF_NOUNS = {
    "pt-BR": "atendente|recepcionista|operador|operadora",
    "en": "receptionist|operator|attendant|representative|staff member",
    "es": "recepcionista|operador|operadora|agente|asesor|asesora",
}
_REQUEST_VERBS = {
    "pt-BR": "falar|fala|quero|queria|gostaria|chamar|chama|passa|passar|transferir|transfere|preciso|cade|tem",
    "en": "talk|speak|want|need|get|connect|transfer|put|like|call",
    "es": "hablar|habla|quiero|quisiera|necesito|pasame|pasar|comunicar|comunicame|transferir|conectar|llamar",
}
_WINDOW = 4  # "quero falar com a recepcionista": the verb is at most a few words before the noun


def _phrases(spec: str) -> list[list[str]]:
    return [normalize(p).split() for p in spec.split("|") if normalize(p)]


def _at(tokens: list[str], phrase: list[str]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(tokens) - n + 1) if tokens[i : i + n] == phrase]


def asks_for_person(said: Understanding) -> bool:
    """Whether a message that has the ``human`` intent really asks for a person.

    Args:
        said: the understood message.

    Returns:
        False when the only ``human`` phrases are staff nouns without a request verb before them.

    Example:
        >>> from convoeval.agents.clinic._nlu import understand
        >>> asks_for_person(understand("a recepcionista foi um amor", "pt-BR"))
        False
        >>> asks_for_person(understand("quero falar com a recepcionista", "pt-BR"))
        True
    """
    if not said.has("human"):
        return False
    locale = said.locale if said.locale in STAFF_NOUNS else "pt-BR"
    tokens = said.norm.split()
    staff = _phrases(STAFF_NOUNS[locale])
    for phrase in _phrases(COMMON_LEXICON[locale]["human"]):
        if phrase not in staff and _at(tokens, phrase):
            return True
    verbs = {v for p in _phrases(_REQUEST_VERBS[locale]) for v in p}
    return any(
        verbs & set(tokens[max(0, i - _WINDOW) : i]) for phrase in staff for i in _at(tokens, phrase)
    )
