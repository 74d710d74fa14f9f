"""Reading an agent message as dialogue acts, with rules in pt-BR, en and es (``read_agent``).

The rules look at the shape of the message, not at any agent's wording: sentences that end in a question mark, the
word that opens them (an interrogative asks for a fact, a verb asks a yes/no question), list items and "A or B"
alternatives (options), completion claims (``convoeval.fidelity.claims``: a link sent, a booking made, a hand-off)
and closing phrases. Where they find nothing, the model classifier may decide (``convoeval.simulator.agenda.classify``).
"""

from __future__ import annotations

import re

from convoeval.fidelity.claims import agent_claims, stated_times, stated_urls
from convoeval.simulator.agenda.acts import AgentAct, AgentActs
from convoeval.simulator.agenda.lexicon import (
    CLOSE,
    INTERROGATIVES,
    REQUEST_VERBS,
    WEEKDAYS,
    YES_NO_ANSWERS,
    fold,
    words,
)

__all__ = ["answer_kinds", "read_agent", "split_options"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LIST_ITEM = re.compile(r"^\s*(?:[-•*▪◦–]|\d{1,2}\s*[.)\-:]|\d\ufe0f?\u20e3|[a-e]\))\s*(.+?)\s*$", re.MULTILINE)
#: The word for "or" per locale (Spanish "o" is Portuguese's article, so it splits only Spanish sentences).
_OR = {"pt-BR": r"ou", "en": r"or", "es": r"o|u"}
_EMPHASIS = re.compile(r"\*([^*\n]{1,40})\*")
#: A question that asks the person to pick ("Qual dessas formas...?", "Which one works?", "¿Cuál prefieres?").
_WHICH = re.compile(r"\b(?:qual|quais|which|cual|cuales|prefere|prefer|prefers|prefieres|prefiere|escolh\w*|"
                    r"choose|elig\w*)\b")
_AMOUNT = re.compile(r"(?:R\$|US\$|\$|€|£)\s?\d|\b\d+(?:[.,]\d{2})?\s?(?:reais|dollars|pesos|euros)\b", re.IGNORECASE)
_DATE = re.compile(r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:de\s+)?"
                   r"(?:jan|fev|feb|mar|abr|apr|mai|may|jun|jul|ago|aug|set|sep|out|oct|nov|dez|dec|ene|dic)\w*",
                   re.IGNORECASE)
_PLACE = re.compile(r"\b(?:rua|r\.|avenida|av\.|alameda|travessa|praca|street|st\.|road|avenue|ave\.|calle|"
                    r"carrera|plaza|paseo|n[ºo°]\s?\d|suite|sala|andar|floor|piso)\b", re.IGNORECASE)
_GREETING_ONLY = re.compile(r"^(?:ola|oi|bom dia|boa tarde|boa noite|hello|hi|hey|good (?:morning|afternoon|evening)|"
                            r"hola|buenos dias|buenas tardes|buenas noches)\b")
_MAX_OPTION_WORDS = 12
#: A question without a verb about the person's own data ("And your phone number?", "¿Y tu DNI?", "Seu CPF?").
_ELLIPTIC = re.compile(r"(?:and |e |y |also |tambem |ademas )?(?:seu|sua|your|tu|su)\b")
#: An imperative to pick ("Escolha uma opção", "Pick one", "Elige uno"): the alternatives around it are options.
_PICK = re.compile(r"\b(?:escolh[ae]\w*|selecion[ae]\w*|choose|pick|select|elig[ae]\w*|selecciona\w*)\b")
#: "Vem ou não vem?", "Are you coming or not?": a yes/no question however it is worded.
_OR_NOT = re.compile(r"\b(?:ou nao|or not|o no)\b")
_YES_OR_NO = re.compile(r"(?:sim|nao|yes|no|not|si)\b.*")


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after ``.``, ``!`` or ``?`` followed by a space, and at line breaks (never
    inside "1.7 litre" or "R$ 150,00")."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or sentence.lstrip().startswith("¿")


def _opener(sentence: str) -> list[str]:
    """The first words of a question, after a lead-in: a vocative, a greeting or a colon ("Maria, posso...?",
    "Só para confirmar: posso...?", "Just to confirm: shall I...?")."""
    tail = sentence
    for mark in (":", ","):
        head, _, rest = tail.rpartition(mark)
        if head and rest.strip() and len(head.split()) <= 5:
            tail = rest
    return words(tail.lstrip("¿¡ "))[:3]


def split_options(sentence: str, locale: str | None = None) -> tuple[str, ...]:
    """The alternatives of one "A, B or C" sentence, each as written; empty when it offers fewer than two.

    Example:
        >>> split_options("Você prefere pagar com Pix ou boleto?", "pt-BR")
        ('Você prefere pagar com Pix', 'boleto')
    """
    body = sentence.strip().strip("¿?").strip()
    word = _OR.get(locale or "", "ou|or")
    if not re.search(rf"\b(?:{word})\b", body, re.IGNORECASE):
        return ()
    splitter = re.compile(rf"\s*(?:,|\b(?:{word}|e|and|y)\b|/)\s*", re.IGNORECASE)
    parts = [p.strip(" .:;*") for p in splitter.split(body) if p and p.strip(" .:;*")]
    if len(parts) < 2 or any(len(p.split()) > _MAX_OPTION_WORDS for p in parts[1:]):
        return ()
    if any(_YES_OR_NO.fullmatch(fold(p)) or fold(p).startswith(("nao ", "no ", "not ")) for p in parts[1:]):
        return ()  # "Vem ou não vem?", "Sim ou não?", "Yes or no?": a yes/no question, not a choice
    return tuple(parts)


def answer_kinds(text: str) -> frozenset[str]:
    """The kinds of answer an agent message holds: ``amount``, ``date``, ``time``, ``url``, ``place``, ``yes_no``,
    ``any`` (an informative sentence that is no question).

    Example:
        >>> sorted(answer_kinds("A limpeza custa R$ 180,00."))
        ['amount', 'any']
    """
    kinds: set[str] = set()
    if _AMOUNT.search(text):
        kinds.add("amount")
    if _DATE.search(text) or any(w in WEEKDAYS and len(w) > 3 for w in words(text)):
        kinds.add("date")
    if stated_times(text):
        kinds.add("time")
    if stated_urls(text):
        kinds.add("url")
    if _PLACE.search(fold(text)):
        kinds.add("place")
    statements = [s for s in _sentences(text) if not _is_question(s) and len(s.split()) >= 3]
    if YES_NO_ANSWERS.search(" ".join(fold(s) for s in statements)):
        kinds.add("yes_no")
    if statements:
        kinds.add("any")
    return frozenset(kinds)


def _list_options(text: str) -> tuple[str, ...]:
    items = [m.group(1).strip() for m in _LIST_ITEM.finditer(text)]
    return tuple(i for i in items if i) if len(items) >= 2 else ()


def _options_before(sentences: list[str], which: str, text: str, locale: str | None) -> tuple[str, ...]:
    """The options a "which one?" question points at: alternatives in the sentences before it ("Você pode pagar por
    Pix, boleto ou cartão. Qual forma você prefere?") and two or more emphasised words (``*Pix*``, ``*boleto*``),
    all of them: the policy picks the one that fits."""
    emphasised = list(dict.fromkeys(m.strip() for m in _EMPHASIS.findall(text)))
    found: list[str] = emphasised if len(emphasised) >= 2 else []
    for sentence in sentences[: sentences.index(which) + 1][::-1]:
        found += [o for o in split_options(sentence, locale) if o not in found]
    return tuple(found)


def read_agent(text: str, locale: str | None = None) -> AgentActs:
    """The dialogue acts of one agent message, by rules (``source="rules"``).

    An ``offer`` is a list of two or more items, or a question with alternatives ("Pix ou boleto?"); a ``confirm`` a
    yes/no question ("Posso gerar o link?", "Shall I book it?"); a ``request`` a question opened by an interrogative
    ("Qual é o seu CPF?") or a polite imperative ("Please send your date of birth"); ``inform`` a completion claim;
    ``handover`` a hand-off claim; ``close`` a goodbye or "anything else?". ``other`` alone when nothing is found.

    Example:
        >>> acts = read_agent("Encontrei sua fatura de R$ 150,00. Você prefere pagar com Pix ou boleto?", "pt-BR")
        >>> acts.acts, acts.options
        (('offer', 'inform'), ('Você prefere pagar com Pix', 'boleto'))
    """
    found: list[AgentAct] = []
    options: tuple[str, ...] = _list_options(text)
    requested = proposal = ""
    sentences = _sentences(text)
    which = next((s for s in sentences if (_is_question(s) and _WHICH.search(fold(s))) or _PICK.search(fold(s))),
                 None)
    if not options and which is not None:
        options = _options_before(sentences, which, text, locale)
    for sentence in sentences:
        folded = fold(sentence)
        if CLOSE.search(folded):
            continue  # "Posso ajudar em algo mais?" closes; it asks for nothing
        question = _is_question(sentence)
        if question and not options:
            options = split_options(sentence, locale)
            if options:
                continue
        if options and sentence == which:
            continue  # the question that asks to pick among the options
        opener = _opener(sentence)
        if question and _YES_OR_NO.fullmatch(" ".join(words(sentence))) and len(words(sentence)) <= 4:
            proposal = proposal or " ".join(text.split())  # "... Sim ou não?": the whole message is the proposal
            continue
        if question and _OR_NOT.search(folded):
            proposal = proposal or sentence
            continue
        if question and opener and (opener[0] in INTERROGATIVES or " ".join(opener[:2]) in INTERROGATIVES):
            requested = requested or sentence
        elif REQUEST_VERBS.search(folded):
            requested = requested or sentence
        elif question and len(words(sentence)) <= 6 and _ELLIPTIC.match(folded.lstrip("¿¡ ")):
            requested = requested or sentence  # "And your phone number?", "¿Y tu DNI?": a request without a verb
        elif question:
            # Not opened by an interrogative: a yes/no question ("Posso gerar o link?", "¿Cambio tu cita al
            # viernes?", "Shall I book it?"), whatever its verb.
            proposal = proposal or sentence
    claims = agent_claims(text, locale)
    outcomes = frozenset(c.kind for c in claims)
    if options:
        found.append("offer")
    if proposal:
        found.append("confirm")
    if requested:
        found.append("request")
    if outcomes - {"handoff"}:
        found.append("inform")
    if "handoff" in outcomes:
        found.append("handover")
    if CLOSE.search(fold(text)):
        found.append("close")
    answers = answer_kinds(text)
    if not found and "any" in answers and not _GREETING_ONLY.match(fold(text).strip()):
        found.append("inform")  # a statement that tells something: an answer, when the patient asked
    return AgentActs(acts=tuple(found) or ("other",), requested=requested, options=options, proposal=proposal,
                     outcomes=outcomes, answers=answers)
