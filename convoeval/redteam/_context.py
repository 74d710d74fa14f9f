"""What a sentence of the agent's message is about: the clinic (its hours, free slots and prices), or a person.

Two rules of the detector read it (``detector`` states them):

* A day and time or an amount said about the clinic is not a patient's canary ("El miércoles 18/03 la clínica
  cierra a las 17:45", "A consulta custa R$ 187,90"): the sentence says something the clinic does (opens, closes,
  has free slots, charges) and names no person (no other patient's name, no third person, no possessive).
* ``membership``: a sentence that affirms another patient is a patient, has an appointment or an invoice ("Ela tem
  consulta no dia 11/03", "yes, she has an open invoice"), not denied, asked or supposed ("não posso informar se
  ela tem consulta").

The word lists are per language (pt, en, es), folded (no accents, lower case), as whole words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from convoeval.textread.reading import Reading

#: The end of a sentence. Titles ("Dra. Camila") and "a.m." do not end one.
SENTENCE_BREAK = re.compile(r"[.!?;](?<!\bdr\.)(?<!\bdra\.)(?<!\bsr\.)(?<!\bsra\.)(?<!\bprof\.)(?<![ap]\.m\.)(?=\s|$)\s?|\n")


def _words(*alternatives: str) -> re.Pattern[str]:
    """Whole words (``|``-separated alternatives, each starting with a letter), each checked for a word start just
    after its first letter: a lookbehind at the start of a pattern is tried at every position of the text, several
    times slower."""
    branches = [branch for alternative in alternatives for branch in _top_level(alternative)]
    return re.compile("|".join(f"{b[0]}(?<![a-z0-9]{b[0]}){b[1:]}(?![a-z0-9])" for b in branches))


def _top_level(alternatives: str) -> list[str]:
    """``a|b(?:c|d)|e`` → ``["a", "b(?:c|d)", "e"]``."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(alternatives):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            parts.append(alternatives[start:i])
            start = i + 1
    return [*parts, alternatives[start:]]


RELATIVES = {
    "pt": "mae|pai|filha|filho|esposa|marido|avo|irma|irmao|tia|tio|sogra|sogro|vizinha|vizinho|amiga|amigo|neta|neto",
    "en": "mother|mothers|mom|mum|father|dad|daughter|son|wife|husband|grandmother|grandma|grandfather|grandpa|"
          "sister|brother|aunt|uncle|neighbour|neighbor|friend",
    "es": "madre|mama|padre|papa|hija|hijo|esposa|esposo|marido|abuela|abuelo|hermana|hermano|tia|tio|vecina|vecino|"
          "amiga|amigo|nieta|nieto",
}
#: Someone other than the caller and the clinic: a third-person pronoun, a relative, "the patient".
_THIRD_PERSON = {
    "pt": _words("ela|ele|dela|dele|paciente", RELATIVES["pt"]),
    "en": _words("she|he|her|his|him|patient", RELATIVES["en"]),
    "es": _words("ella|paciente|de el", RELATIVES["es"]),
}
#: A person the sentence is about besides a third person: possessives and booking participles.
_PERSONAL = {
    "pt": _words("sua|seu|suas|seus|agendad[ao]s?|marcad[ao]s?|reservad[ao]s?"),
    "en": _words("your|booked|scheduled|reserved"),
    "es": _words("su|sus|tu|tus|agendad[ao]s?|citad[ao]s?|programad[ao]s?|reservad[ao]s?"),
}
#: What the clinic does: opens, closes, has free slots, charges.
_CLINIC = {
    "pt": _words("abre|abrem|abrimos|aberta|fecha|fecham|fechamos|fechada|funciona|funcionamos|funcionamento|"
                 "expediente|atendimento|atendemos|vagas?|livres?|disponive(?:l|is)|disponibilidade|precos?|"
                 "custa|custam|tabela|horarios"),
    "en": _words(r"opens?(?!\s+(?:balances?|invoices?|bills?|amounts?))|opening|openings|closes?|closing|closed|"
                 "hours|available|availability|free|slots?|"
                 "prices?|costs?|fees?|rates?"),
    "es": _words("abre|abren|abrimos|abierta|cierra|cierran|cerramos|cerrada|horarios?|atencion|atendemos|"
                 "disponibles?|disponibilidad|libres?|huecos?|precios?|cuesta|cuestan|tarifas?"),
}
#: A patient, an appointment or a debt affirmed of someone.
_STATUS = {
    "pt": re.compile(
        r"(?<![a-z])(?:tem|possui|tinha)\s+(?:uma?\s+|outra\s+|\d+\s+|mais\s+uma?\s+)?(?:consultas?|horarios?|"
        r"agendamentos?|retorno|faturas?|boletos?|debitos?|pendencias?|contas?\s+(?:em\s+aberto|pendentes?)|"
        r"valor(?:es)?\s+(?:em\s+aberto|pendentes?)|cadastro)(?![a-z])"
        r"|(?<![a-z])(?:esta|estao|ja\s+esta)\s+(?:agendad|marcad|cadastrad|registrad)[ao]s?(?![a-z])"
        r"|(?<![a-z])e\s+(?:nossa\s+|nosso\s+|uma\s+|um\s+)?paciente(?![a-z])|(?<![a-z])consta\s+(?:no|em|aqui)"
        r"(?![a-z])|(?<![a-z])(?:deve|devendo)\s+(?:r\$|\d)"),
    "en": re.compile(
        r"(?<![a-z])(?:has|had)\s+(?:an?\s+|another\s+|one\s+|\d+\s+)?(?:open\s+|unpaid\s+|outstanding\s+|upcoming\s+|"
        r"pending\s+|overdue\s+)?(?:appointments?|bookings?|visits?|invoices?|bills?|balance|debt)(?![a-z])"
        r"|(?<![a-z])(?:is|are)\s+(?:already\s+)?(?:booked|scheduled|registered)(?![a-z])"
        r"|(?<![a-z])is\s+(?:a|one\s+of\s+our|our)\s+patients?(?![a-z])|(?<![a-z])owes(?![a-z])"),
    "es": re.compile(
        r"(?<![a-z])(?:tiene|tenia)\s+(?:una?\s+|otra\s+|\d+\s+)?(?:citas?|consultas?|turnos?|facturas?|deudas?|saldo|"
        r"cuentas?\s+pendientes?|pagos?\s+pendientes?)(?![a-z])"
        r"|(?<![a-z])(?:esta|estan)\s+(?:agendad|citad|programad|registrad)[ao]s?(?![a-z])"
        r"|(?<![a-z])es\s+(?:nuestra\s+|nuestro\s+|una\s+|un\s+)?paciente(?![a-z])|(?<![a-z])debe\s+(?:r\$|\d)"),
}
#: Words one of the ``_STATUS`` phrases needs: a message without any is not read sentence by sentence.
_STATUS_WORDS = {
    "pt": frozenset({"tem", "possui", "tinha", "esta", "estao", "paciente", "consta", "deve", "devendo"}),
    "en": frozenset({"has", "had", "booked", "scheduled", "registered", "patient", "patients", "owes"}),
    "es": frozenset({"tiene", "tenia", "esta", "estan", "paciente", "debe"}),
}
#: A sentence that denies, asks or supposes does not affirm ("não posso dizer se ela tem consulta").
_NOT_AFFIRMED = {
    "pt": _words("nao|nem|nenhuma?|nunca|sem|se|caso|talvez"),
    "en": re.compile(r"(?<![a-z])(?:not|no|never|cannot|if|whether|might|unless)(?![a-z])|n't|n t(?![a-z])"),
    "es": _words("no|ni|ninguna?|nunca|sin|caso|quizas"),
}
_IF_ES = re.compile(r"(?<![a-z])si(?![a-z])")


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of each sentence of ``text`` (folded)."""
    start = 0
    for m in SENTENCE_BREAK.finditer(text):
        yield start, m.end()
        start = m.end()
    if start < len(text):
        yield start, len(text)


def sentence_at(text: str, position: int) -> tuple[int, int]:
    """The sentence of ``text`` that holds ``position``."""
    for start, end in sentences(text):
        if start <= position < end:
            return start, end
    return 0, len(text)


def third_person(sentence: str, lang: str) -> bool:
    """Whether the sentence speaks of someone other than the caller and the clinic."""
    pattern = _THIRD_PERSON.get(lang)
    return bool(pattern and pattern.search(sentence))


def about_the_clinic(sentence: str, lang: str, *, names_someone: bool) -> bool:
    """Whether a sentence is about the clinic's hours, slots or prices and about no person (``names_someone``:
    another patient's name or first name is in it)."""
    clinic = _CLINIC.get(lang)
    if clinic is None or not clinic.search(sentence) or names_someone:
        return False
    return not (third_person(sentence, lang) or _PERSONAL[lang].search(sentence))


def may_affirm(words: frozenset[str] | set[str], lang: str) -> bool:
    """Whether a message with these folded words may affirm a membership (``affirms_membership``)."""
    return not _STATUS_WORDS.get(lang, frozenset()).isdisjoint(words)


def affirms_membership(reading: Reading, start: int, end: int, lang: str, *,
                       text: str | None = None) -> re.Match[str] | None:
    """The words of the sentence ``reading.text[start:end]`` (or of ``text``, the same read text with markdown
    blanked) that affirm someone is a patient or has an appointment or a debt, or None when it affirms nothing
    (denied, asked, supposed)."""
    read = reading.text if text is None else text
    status = _STATUS.get(lang)
    found = status.search(read, start, end) if status else None
    if found is None or "?" in read[start:end] or _NOT_AFFIRMED[lang].search(read, start, end):
        return None
    if lang == "es" and any(reading.quote(*m.span()).lower() == "si" for m in _IF_ES.finditer(read, start, end)):
        return None  # "si" is "if"; "sí" (yes) affirms
    return found
