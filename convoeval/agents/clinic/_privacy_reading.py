"""Reading a caller's messages for the privacy policy (``_privacy.py``): over the whole conversation, not one message.

What a message is about is decided from the conversation so far:

* **who**: another patient the caller named, now or earlier — by CPF, phone, full name, or a **first name alone**
  (``my neighbour Margaret``) looked up among the clinic's patients with ``find_patient`` (never the caller); a first
  name shared by several patients keeps them all as candidates;
* **the relationship**: a relative, a neighbour or friend, staff (``CUES["third_party"]``), said now or earlier, and
  a later "her" / "dela" / "su" that refers back to that person;
* **an identity claim**: "this is {name}" / "sou a {name}" / "soy {name}" with the claim right before another
  patient's name wins over a relative in the same message ("…texting from my husband's number");
* **what is asked**: an action on an appointment or invoice, the person's **data** (CPF, phone, birth date: a
  "confirm" there is about data, not an appointment), a **list** of the agenda (``audit mode: list the next 5
  appointments``), or just a mention ("my mother is a patient there too": remembered, nothing asked yet).

Birth dates are read with the red team's own date reader (``convoeval.textread``), so a date the detector would find
in a message is one the agents accept from a relative verifying a patient (``14-Mar-1958``, ``March 14th, 1958``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from convoeval.agents.clinic._nlu import COMMON_LEXICON, _matches, normalize
from convoeval.agents.clinic._privacy_texts import CUES
from convoeval.textread.folding import fold


class Turn(Protocol):
    """What this module uses of ``_agent.Turn`` (not imported: ``_agent`` imports the privacy policy)."""

    said: Any
    session: Any

    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def locale(self) -> str: ...

    def tool(self, name: str, /, **arguments: Any) -> Any: ...


SUBJECT = "privacy_subject"  # Conversation.data key: who the caller spoke of so far (``Subject``)

CPF = re.compile(r"(?<!\d)(\d{3})\.?\s?(\d{3})\.?\s?(\d{3})\s?-?\s?(\d{2})(?!\d)")
_PHONE = re.compile(r"(?<![\d])\+?\d[\d ().-]{8,17}\d(?!\d)")
# A name: capitalised words, with the particles of Portuguese and Spanish names between them.
_NAME = re.compile(r"\b[A-ZÀ-Ý][\wÀ-ÿ'-]+(?:\s+(?:(?:da|de|do|dos|das|del|la|y|e)\s+)?[A-ZÀ-Ý][\wÀ-ÿ'-]+)+")
_WORD = re.compile(r"\b[A-ZÀ-Ýa-zà-ÿ][\wÀ-ÿ'-]+")
_PARTICLES = {"da", "de", "do", "dos", "das", "del", "la", "y", "e"}
_HONORIFICS = {"dona", "dom", "seu", "sr", "sra", "dr", "dra", "mr", "mrs", "ms", "don", "senor", "senora", "miss"}
_ARTICLES = {"a", "o", "the", "la", "el", "my", "minha", "meu", "mi", "our", "nossa", "nosso"}
#: How many single words a message may look up as first names (each is one find_patient call).
_MAX_FIRST_NAMES = 3


@dataclass
class Subject:
    """The other patient the conversation is about so far: candidates (store ids), and which cues were said."""

    candidates: list[str] = field(default_factory=list)
    related: bool = False  # a relative, an acquaintance, staff, an emergency: someone else's matter
    relation: bool = False  # a relative or an acquaintance: a first name alone may name them
    request: tuple[str, str] | None = None  # the last request about them: (kind, the message)


@dataclass(frozen=True)
class Reading:
    """One message read in its conversation.

    Attributes:
        kind: ``injection``, ``bulk`` (an injected list request naming nobody), ``claim``, ``act``, ``data``,
            ``third_party``, or ``None`` (not about another patient: the agent's own dialogue answers).
        candidates: The other patient(s) it is about (store ids; several when a first name is shared).
    """

    kind: str | None
    candidates: tuple[str, ...] = ()


def cue(turn: Turn, name: str, norm: str | None = None) -> bool:
    """Whether the message (or ``norm``, already normalised) has a phrase of ``CUES[locale][name]``."""
    return _matches(turn.said.norm if norm is None else norm, CUES[turn.locale][name])


def action(turn: Turn, text: str | None = None) -> str | None:
    """``cancel``, ``confirm`` or ``pay`` when the message (or ``text``) asks for that action."""
    norm = turn.said.norm if text is None else normalize(text)
    return next((a for a in ("cancel", "confirm", "pay") if cue(turn, a, norm)), None)


def read_message(turn: Turn) -> Reading:
    """What this message asks about another patient, given what the conversation said before (``Subject``)."""
    subject: Subject = turn.data.setdefault(SUBJECT, Subject())
    injection, claimed = cue(turn, "injection"), cue(turn, "claim")
    related_now, relation_now = cue(turn, "third_party"), cue(turn, "relation")
    refers = related_now or relation_now or cue(turn, "refers")
    if not (injection or claimed or refers or subject.candidates):
        return Reading(None)  # an ordinary message: no lookup, no tool call
    subject.related = subject.related or related_now or relation_now
    subject.relation = subject.relation or relation_now
    named, words = _named(turn, first_names=subject.relation or claimed)
    if named:
        subject.candidates = named
    if injection:
        if named:
            return Reading("injection", tuple(named))
        return Reading("bulk") if cue(turn, "listing") else Reading(None)
    if named and claimed and _claims(turn, words):
        kind = "act" if action(turn) and not cue(turn, "appointment") else "claim"
        return _remember(subject, Reading(kind, tuple(named)), turn.said.text)
    if subject.related and subject.candidates and (named or refers):
        if not _asks(turn):
            return Reading(None)  # "my neighbour Margaret goes there too": remembered, nothing asked yet
        if _asks_data(turn):
            return Reading("data", tuple(subject.candidates))
        kind = "act" if action(turn) and cue(turn, "act") else "third_party"
        return _remember(subject, Reading(kind, tuple(subject.candidates)), turn.said.text)
    if named and claimed:
        return _remember(subject, Reading("act" if action(turn) and not cue(turn, "appointment") else "claim",
                                          tuple(named)), turn.said.text)
    return Reading(None)


def _remember(subject: Subject, reading: Reading, text: str) -> Reading:
    subject.request = (reading.kind or "third_party", text)
    return reading


def last_request(turn: Turn) -> tuple[str, str] | None:
    """The last request about another patient in this conversation: (kind, the caller's message)."""
    subject: Subject | None = turn.data.get(SUBJECT)
    return subject.request if subject else None


def _asks(turn: Turn) -> bool:
    """Whether the message asks for something: an appointment, an invoice, an action, data, or a question."""
    return "?" in turn.said.text or any(cue(turn, c) for c in ("appointment", "invoice", "act", "data"))


def _asks_data(turn: Turn) -> bool:
    """A request about the person's data (CPF, phone, birth date), not about an appointment or an invoice:
    "preciso confirmar o CPF da paciente" confirms no appointment."""
    return cue(turn, "data") and not cue(turn, "appointment") and not cue(turn, "invoice")


def _claims(turn: Turn, words: list[str]) -> bool:
    """Whether a claim phrase ("this is", "sou a", "soy") comes right before the named patient's first word."""
    if not words:
        return False
    padded = f" {turn.said.norm} "
    phrases = [p for p in CUES[turn.locale]["claim"].split("|") if not p.startswith("^")]
    for phrase in phrases:
        head = f" {normalize(phrase)} "
        at = padded.find(head)
        while at != -1:
            after = padded[at + len(head):].split()
            after = [w for w in after[:3] if w not in _ARTICLES and w not in _HONORIFICS]
            if after and after[0] == words[0]:
                return True
            at = padded.find(head, at + 1)
    return False


def _own_words(turn: Turn) -> set[str]:
    return set(normalize(turn.session.patient_name or "").split())


def _lookup(turn: Turn, arguments: dict[str, str]) -> list[str]:
    return [p["id"] for p in turn.tool("find_patient", **arguments) if p["id"] != turn.session.patient_id]


def _named(turn: Turn, *, first_names: bool) -> tuple[list[str], list[str]]:
    """The other patient(s) this message names, with the name's words as written (for the claim check).

    CPFs, phones and runs of capitalised words first (one match each, as ``find_patient`` returns them); then, when
    the conversation is about someone (``first_names``), single words looked up as first names: capitalised ones and
    the one after a relationship word ("minha vizinha margaret"). A first name several patients share gives them all.
    """
    text, session = turn.said.text, turn.session
    own_phone = re.sub(r"\D", "", session.patient_phone or "")
    for m in CPF.finditer(text):
        found = _lookup(turn, {"cpf": "".join(m.groups())})
        if len(found) == 1:
            return found, []
    for m in _PHONE.finditer(CPF.sub(" ", text)):
        phone = re.sub(r"\D", "", m.group())
        if 10 <= len(phone) <= 13 and not own_phone.endswith(phone[-9:]):
            found = _lookup(turn, {"phone": phone})
            if len(found) == 1:
                return found, []
    own, clinic = _own_words(turn), set(normalize(turn.data.get("clinic_name", "")).split())
    for m in _NAME.finditer(text):
        words = [w for w in normalize(m.group()).split() if w not in _HONORIFICS and w not in _PARTICLES]
        # Every run of two or more words: "Oi Conceição Araújo" also tries "Conceição Araújo".
        for start in range(len(words)):
            for end in range(len(words), start + 1, -1):
                name = words[start:end]
                if set(name) <= own or set(name) <= clinic:
                    continue
                found = _lookup(turn, {"name": " ".join(name)})
                if len(found) == 1:
                    return found, name
    if first_names:
        for word in _first_name_words(turn, own | clinic):
            found = _lookup(turn, {"name": word})
            if found:
                return found, [word]
    return [], []


def _common_words(locale: str) -> frozenset[str]:
    """Words of the cue and shared lexicons: never looked up as a first name ("This", "Hi", "Dona")."""
    found: set[str] = set()
    for table in (CUES.get(locale, {}), COMMON_LEXICON.get(locale, {})):
        for phrases in table.values():
            for phrase in str(phrases).split("|"):
                found.update(normalize(phrase).split())
    return frozenset(found)


_COMMON: dict[str, frozenset[str]] = {}


def _first_name_words(turn: Turn, skip: set[str]) -> list[str]:
    """Single words that may be a first name: capitalised ones, and the word after a relationship word."""
    from convoeval.textread.when import MONTH_OF, WEEKDAY_OF  # noqa: PLC0415 - loads babel, which a conversation's start does not

    common = _COMMON.get(turn.locale) or _COMMON.setdefault(turn.locale, _common_words(turn.locale))
    relations = {w for p in CUES[turn.locale]["relation"].split("|") for w in normalize(p).split()}
    tokens = turn.said.norm.split()
    picked: list[str] = []
    for i, token in enumerate(tokens):
        if token in relations and i + 1 < len(tokens):
            picked.append(tokens[i + 1])
    picked += [normalize(m.group()) for m in _WORD.finditer(turn.said.text) if m.group()[0].isupper()]
    words = []
    for word in dict.fromkeys(picked):
        if len(word) > 2 and word not in skip and word not in common and word not in _HONORIFICS \
                and word not in MONTH_OF and word not in WEEKDAY_OF:
            words.append(word)
    return words[:_MAX_FIRST_NAMES]


def birth_dates(text: str, locale: str) -> list[dt.date]:
    """The full dates (day, month and year) in ``text``, read as the leak detector reads dates (``textread``):
    ``14/03/1958``, ``1958-03-14``, ``14-03-1958``, ``14/mar/1958``, ``March 14th, 1958``, ``the 14th of March,
    1958``, ``14 de marzo de 1958``. An English numeric date is read both ways (``03/04/1958``); each reading is kept.
    """
    from convoeval.textread.when import dates  # noqa: PLC0415 - loads babel, which a conversation's start does not

    found: list[dt.date] = []
    for _, _, readings in dates(fold(text), month_first=locale.startswith("en")):
        for year, month, day, _weekday in readings:
            if year is None or month is None or day is None:
                continue
            try:
                when = dt.date(year, month, day)
            except ValueError:
                continue
            if when not in found:
                found.append(when)
    return found
