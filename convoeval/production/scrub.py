"""``--scrub``: every conversation's personal data replaced by consistent stand-ins before anything is written.

What is found (``convoeval.textread.find_pii``, the leak detector's readers; ``docs/production.md``): names, CPFs,
phone numbers, e-mails, dates (birth dates and every other: all move by the conversation's one offset, so weekdays
and intervals survive, and the message times with them), addresses and postal codes, amounts. The names to find are
the ones the conversation shows: its senders (a chat export's, a Cloud API contact's), and the words written as a
first name (Faker's first names of pt-BR, en and es, capitalised, or after "meu nome é", "my name is", "me llamo")
with the surnames after them. A name after a title (Dr., Dra.) is the clinic's staff and is kept.

Each conversation gets its own ``Pseudonyms``; a ``Scrubber`` counts what it replaced for the folder's scrub report
(``import.json``'s ``scrub``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from datetime import date
from typing import Any

from babel.dates import get_month_names

from convoeval.production.messages import ImportedConversation
from convoeval.production.pseudonyms import Pseudonyms, first_name_words, surname_words
from convoeval.production.rows import conversation_locale
from convoeval.textread import find_pii
from convoeval.textread.folding import fold
from convoeval.textread.when import dates

__all__ = ["Scrubber", "conversation_names", "scrub_text"]

_WORD = re.compile(r"[^\W\d_][^\W\d_'’-]*")
_TITLES = {"dr", "dra", "doutor", "doutora", "dr.", "dra.", "prof", "profa", "sr", "sra", "mr", "mrs", "ms", "sr.",
           "sra.", "dona", "don", "doña"}
_STAFF_TITLES = {"dr", "dra", "doutor", "doutora", "prof", "profa", "doctor", "doctora"}
#: Capitalised words that are first names on Faker's lists but mostly are not names in a clinic's chat.
_NOT_NAMES = frozenset(fold(w) for w in (
    "Pix Boleto Cartão Clínica Sorriso Sonrisa Smile Clinic Oi Olá Hola Hello Hi Bom Boa Buenas Buenos Gracias Obrigado "
    "Obrigada Thanks Thank Dia Tarde Noite Segunda Terça Quarta Quinta Sexta Sábado Domingo Lunes Martes Miércoles "
    "Jueves Viernes Domingo Monday Tuesday Wednesday Thursday Friday Saturday Sunday Janeiro Fevereiro Março Abril "
    "Maio Junho Julho Agosto Setembro Outubro Novembro Dezembro January February March April May June July August "
    "September October November December Enero Febrero Marzo Mayo Junio Julio Septiembre Octubre Noviembre Diciembre "
    "Rosa Luz Paz Sol Mar Cruz Gloria Fé Will Bill Grace Hope Faith Joy Summer Dolores Amparo Consuelo Mercedes Pilar "
    "Rocío Socorro Victoria Angel Ángel Reis Salvador Natal Pascoal Jesus Cristo Deus Dios God Sim Não Yes No Ok Sí "
    "Claro Perfeito Perfect Done Pronto Listo Remarcado Hecho Booked Confirmada Recebido Received Got Sure Dra Dr "
    "Total Valor Fatura Factura Invoice Bank Banco Real Reais Euro Dollar".split()))
_MEDIA_SHOWN = re.compile(r"^\[(?:image|audio|document)(?::[^\]]*| omitted)\]|^\[media omitted\]")
_CUES = re.compile(r"\b(?:meu nome [ée]|me chamo|aqui [ée] (?:a|o)|sou (?:a|o)|my name is|this is|i'?m|i am|"
                   r"me llamo|mi nombre es|soy)\s+", re.IGNORECASE)
#: Words after which a capitalised word names a person, on Faker's lists or not: kin and forms of address.
_PERSON_CUES = frozenset(fold(w) for w in (
    "filha filho mãe mae pai esposa esposo marido irmã irmão avó avô neta neto sobrinha sobrinho sogra sogro "
    "sra sr senhora senhor dona seu "
    "daughter son mother mom father dad wife husband sister brother grandma grandpa niece nephew mrs mr ms miss "
    "hija hijo madre padre mamá papá esposa esposo marido hermana hermano abuela abuelo sobrina sobrino señora señor "
    "doña don".split()))
#: Postal codes textread's addresses do not read: a US state and ZIP, a code after "CP" or "ZIP".
_POSTAL = re.compile(r"\b[A-Z]{2}\s\d{5}(?:-\d{4})?\b|\b(?:CP|C\.P\.|ZIP|zip code|c[óo]digo postal):?\s*\d{4,5}\b")


def _looks_like_a_name(word: str) -> bool:
    folded = fold(word)
    return folded in first_name_words() and folded not in _NOT_NAMES and len(folded) > 2


def conversation_names(conversation: ImportedConversation) -> list[str]:
    """The people a conversation names: its senders, and first names (with the surnames after them) in its text,
    not after a title (a doctor is the clinic's staff)."""
    found: dict[str, None] = {}
    for message in conversation.messages:
        if message.sender and not any(c.isdigit() for c in message.sender) and message.role == "patient":
            found[message.sender.strip()] = None
        words = list(_WORD.finditer(message.text))
        cued = {m.end() for m in _CUES.finditer(message.text)}
        for i, m in enumerate(words):
            word = m.group()
            before = fold(words[i - 1].group()) if i else ""
            if before in _STAFF_TITLES:
                continue
            kin = before in _PERSON_CUES and word[:1].isupper() and fold(word) not in _NOT_NAMES
            if not kin and not ((word[:1].isupper() or m.start() in cued) and _looks_like_a_name(word)):
                continue
            name = [word]
            for follower in words[i + 1:i + 4]:
                folded = fold(follower.group())
                if folded in {"da", "de", "do", "dos", "das", "del", "y"}:
                    name.append(follower.group())
                elif (follower.group()[:1].isupper() or m.start() in cued) and folded in surname_words():
                    name.append(follower.group())
                else:
                    break
            while name and fold(name[-1]) in {"da", "de", "do", "dos", "das", "del", "y"}:
                name.pop()
            found[" ".join(name)] = None
    return list(found)


def _name_parts(names: Iterable[str]) -> list[str]:
    """Every name and, alone, each of its words long enough not to be a particle (a first name said alone)."""
    parts: dict[str, None] = {}
    for name in names:
        parts[name] = None
        for word in name.split():
            if len(word) > 2 and fold(word) not in _NOT_NAMES and fold(word) not in {"da", "de", "dos", "das", "del"}:
                parts[word] = None
    return list(parts)


def scrub_text(text: str, fake: Pseudonyms, names: list[str], counts: Counter[str],
               month_first: bool = False) -> str:
    """``text`` with its personal data replaced by ``fake``'s stand-ins, counting each kind replaced."""
    shown = _MEDIA_SHOWN.match(text)  # "[audio: PTT-20261103-WA0003.opus]": a file's name, not the patient's words
    if shown:
        return shown.group() + scrub_text(text[shown.end():], fake, names, counts, month_first)
    found = find_pii(text, fake.language, names=names)
    spans: list[tuple[int, int, str]] = []
    for item in found:
        spans.append((item.start, item.end, _stand_in(item.kind, item.text, item.value, fake, names)))
        counts[item.kind] += 1
    for m in _POSTAL.finditer(text):
        if not any(s < m.end() and m.start() < e for s, e, _ in spans):
            spans.append((m.start(), m.end(), re.sub(r"\d+", lambda n: fake.number(n.group()), m.group())))
            counts["address"] += 1
    taken = [(s, e) for s, e, _ in spans]
    for start, end, new in _dates_without_year(text, fake, month_first):
        if not any(s < end and start < e for s, e in taken):
            spans.append((start, end, new))
            counts["date"] += 1
    out, cursor = [], 0
    for start, end, new in sorted(spans):
        out += [text[cursor:start], new]
        cursor = end
    return "".join(out) + text[cursor:]


def _stand_in(kind: str, text: str, value: str, fake: Pseudonyms, names: list[str]) -> str:
    if kind == "name":
        words = text.split()
        if len(words) == 1:
            first = fold(value).split()[0] == fold(text)
            return fake.first_name(text) if first or len(value.split()) == 1 else fake.surname(text)
        return " ".join([fake.first_name(words[0]), *(fake.surname(w) for w in words[1:])])
    if kind == "cpf":
        return fake.cpf(text)
    if kind == "phone":
        return fake.phone(text)
    if kind == "email":
        local = fold(text.split("@", 1)[0])
        named = next((n for n in names if fold(n).split()[0] in local), None)
        person = None
        if named:
            parts = named.split()
            person = " ".join([fake.first_name(parts[0]), *(fake.surname(w) for w in parts[1:])])
        return fake.email(text, person)
    if kind == "date":
        return _shifted_date(text, date.fromisoformat(value), fake)
    if kind == "amount":
        return _amount(text, int(value), fake)
    return _address(text, fake)


def _shifted_date(text: str, original: date, fake: Pseudonyms) -> str:
    numbers = list(re.finditer(r"\d+", text))
    if fake.language == "en" and len(numbers) >= 2:  # en-US writes the month first: read 11/6 as November 6th
        a, b = int(numbers[0].group()), int(numbers[1].group())
        if (a, b) == (original.day, original.month) and a != b and a <= 12:
            try:
                original = original.replace(month=a, day=b)
            except ValueError:
                pass
    new = fake.shift(original)
    pieces, cursor, done = [], 0, set()
    for m in numbers:
        number, width = int(m.group()), m.end() - m.start()
        if "year" not in done and (number == original.year or (width == 2 and len(numbers) > 2
                                                                and number == original.year % 100)):
            value, part = (new.year if width == 4 else new.year % 100), "year"
        elif "day" not in done and number == original.day:
            value, part = new.day, "day"
        elif "month" not in done and number == original.month:
            value, part = new.month, "month"
        else:
            continue
        done.add(part)
        pieces += [text[cursor:m.start()], str(value).zfill(min(width, 4))]
        cursor = m.end()
    return _month_word("".join(pieces) + text[cursor:], original.month, new.month, fake.language)


def _month_word(text: str, old: int, new: int, language: str) -> str:
    if old == new:
        return text
    for width in ("wide", "abbreviated"):
        names = get_month_names(width, locale={"pt": "pt_BR", "en": "en", "es": "es"}[language])
        old_name = str(names[old]).rstrip(".")
        found = re.search(rf"\b{re.escape(fold(old_name))}\b", fold(text))
        if found:
            written = text[found.start():found.end()]
            replacement = str(names[new]).rstrip(".")
            replacement = replacement.capitalize() if written[:1].isupper() else replacement
            return text[:found.start()] + replacement + text[found.end():]
    return text


def _dates_without_year(text: str, fake: Pseudonyms, month_first: bool) -> list[tuple[int, int, str]]:
    """A day and month without a year (``22/11``, ``6 de novembro``): moved too, so the text keeps agreeing with the
    message times."""
    out = []
    base = date.today().year
    for start, end, readings in dates(fold(text), month_first=month_first):
        known = [(m, d) for y, m, d, _ in readings if y is None and m is not None and d is not None]
        if not known:
            continue
        month, day = known[0]
        try:
            original = date(base, month, day)
        except ValueError:
            continue
        out.append((start, end, _shifted_date(text[start:end], original, fake)))
    return out


def _amount(text: str, cents: int, fake: Pseudonyms) -> str:
    new = fake.amount_cents(cents)
    digits = re.search(r"\d[\d.,\s]*\d|\d", text)
    if digits is None:  # said in words ("cento e oitenta reais"): written in digits
        return f"{new // 100},{new % 100:02d}" + (" reais" if fake.language == "pt" else "")
    written = digits.group()
    comma_decimals = bool(re.search(r",\d{2}$", written))
    dot_decimals = bool(re.search(r"\.\d{2}$", written))
    whole, rest = divmod(new, 100)
    if comma_decimals:
        number = f"{whole:,}".replace(",", ".") + f",{rest:02d}"
    elif dot_decimals:
        number = f"{whole:,}" + f".{rest:02d}"
    else:
        number = str(whole) if cents % 100 == 0 else f"{whole}.{rest:02d}"
    return text[:digits.start()] + number + text[digits.end():]


def _address(text: str, fake: Pseudonyms) -> str:
    words = list(_WORD.finditer(text))
    out = text
    for m in reversed(words[1:]):
        if m.group()[:1].isupper():
            out = out[:m.start()] + fake.street(m.group()) + out[m.end():]
    return re.sub(r"\d+", lambda n: fake.number(n.group()), out)


class Scrubber:
    """Scrub every conversation of an import and count what was replaced (the folder's scrub report)."""

    def __init__(self, *, keep_original: bool = False) -> None:
        self.keep_original = keep_original
        self.counts: Counter[str] = Counter()
        self.conversations = 0
        self.messages = 0

    def __call__(self, conversation: ImportedConversation) -> ImportedConversation:
        """The conversation with its text, parts' words, senders and times scrubbed."""
        locale = conversation_locale(conversation)
        fake = Pseudonyms(conversation.key, locale)
        names = _name_parts(conversation_names(conversation))
        month_first = fake.language == "en"
        messages = []
        for message in conversation.messages:
            text = scrub_text(message.text, fake, names, self.counts, month_first)
            parts = tuple(_scrub_part(p, fake, names, self.counts, month_first) for p in message.parts)
            when = message.sent_at + fake.offset if message.sent_at is not None else None
            messages.append(replace(message, text=text, parts=parts, sent_at=when, sender=None,
                                    tool_calls=tuple(_scrub_value(c, fake, names, self.counts, month_first)
                                                     for c in message.tool_calls)))
        self.conversations += 1
        self.messages += len(messages)
        attributes = dict(conversation.attributes)
        if self.keep_original:
            attributes["original_texts"] = [m.text for m in conversation.messages]
        return replace(conversation, messages=tuple(messages), locale=locale, attributes=attributes)

    def report(self) -> dict[str, Any]:
        """Kinds and counts replaced, over every conversation scrubbed."""
        return {"scrubbed": True, "conversations": self.conversations, "messages": self.messages,
                "replaced": dict(sorted(self.counts.items())), "dates_moved_by": "a whole number of weeks per conversation",
                "original_kept": self.keep_original}


def _scrub_part(part: dict[str, Any], fake: Pseudonyms, names: list[str], counts: Counter[str],
                month_first: bool) -> dict[str, Any]:
    out = dict(part)
    for key in ("text", "body", "caption", "transcript", "title", "header", "footer"):
        if isinstance(out.get(key), str):
            out[key] = scrub_text(out[key], fake, names, Counter(), month_first)
    if isinstance(out.get("parameters"), list):
        out["parameters"] = [scrub_text(str(p), fake, names, Counter(), month_first) for p in out["parameters"]]
    for key in ("buttons",):
        if isinstance(out.get(key), list):
            out[key] = [{**b, "title": scrub_text(str(b.get("title", "")), fake, names, Counter(), month_first)}
                        for b in out[key]]
    return out


def _scrub_value(value: Any, fake: Pseudonyms, names: list[str], counts: Counter[str], month_first: bool) -> Any:
    if isinstance(value, str):
        return scrub_text(value, fake, names, counts, month_first)
    if isinstance(value, dict):
        return {k: _scrub_value(v, fake, names, counts, month_first) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_value(v, fake, names, counts, month_first) for v in value]
    return value


