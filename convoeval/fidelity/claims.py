"""What an agent's message claims it did: a payment link sent, an appointment booked, a hand-off, an amount.

``agent_claims(text, locale)`` reads one agent message and returns every claim it recognises, each with the words
that make it (``Claim.quote``). No LLM: URLs, currency amounts, and the completion phrases of pt-BR, en and es —
the reference clinic agents' own wording among them ("Prontinho! Aqui está o seu link", "Your appointment is booked
for", "Voy a pasar tu conversación a nuestro equipo") and the common ways any agent says the same.

Only assertions count: an offer or a question ("Posso gerar o link?", "Shall I book it?"), a negation ("não agendei
nada", "I haven't booked anything") and a condition ("as soon as the payment is confirmed") claim nothing. A URL
and an amount are claims wherever they stand (an agent that writes a link has sent one).

The simulator-failure gate uses it to tell a premature ``[GOAL_COMPLETE]`` (nothing claimed) from an agent that
said "done" without doing it (``convoeval.simulator.gate``); path assertions read the same claims.

Example:
    >>> [(c.kind, c.quote) for c in agent_claims("Prontinho! Aqui está o seu link: https://pay.example/x", "pt-BR")]
    [('payment_link', 'https://pay.example/x'), ('payment_link', 'Aqui está o seu link')]
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from convoeval.fidelity.text import fold_keeping_offsets as _fold

__all__ = ["CLAIM_KINDS", "Claim", "ClaimKind", "agent_claims", "amount_cents", "stated_times", "stated_urls"]

ClaimKind = Literal["payment_link", "url", "paid", "amount", "booked", "moved", "cancelled", "confirmed",
                    "recorded", "handoff"]
#: Every kind of claim, in the order ``agent_claims`` reports them within a message.
CLAIM_KINDS: tuple[ClaimKind, ...] = ("payment_link", "url", "paid", "amount", "booked", "moved", "cancelled",
                                      "confirmed", "recorded", "handoff")


@dataclass(frozen=True)
class Claim:
    """One thing an agent's message says it did.

    Attributes:
        kind: one of ``CLAIM_KINDS``: ``payment_link`` (a payment URL, or "here is your link"), ``url`` (any other
            URL), ``paid`` (the payment went through), ``amount`` (a currency amount stated), ``booked``,
            ``moved``, ``cancelled``, ``confirmed`` (an appointment), ``recorded`` (a score or feedback kept),
            ``handoff`` (passed to a person).
        quote: the words of the message that make the claim, as written.
    """

    kind: ClaimKind
    quote: str




_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]*\"']+[^\s<>()\[\]*\"'.,;:!?]", re.IGNORECASE)
# A URL counts as a payment link when it or its message speaks of paying.
_PAYMENT_WORDS = re.compile(r"\b(?:link|enlace|pag\w*|pay\w*|pix|boleto|checkout|fatura|factura|invoice|cobr\w*)\b")
_AMOUNT = re.compile(r"(?:R\$|US\$|\$|€|£)\s?\d[\d.,]*\d"
                     r"|\b\d[\d.,]*\d\s?(?:reais|d[oó]lares|dollars|pesos|euros)\b", re.IGNORECASE)

_I = r"\bi(?:'ve| have)?"  # "I booked", "I've booked", "I have booked" (never "I haven't")
_BE_DONE = r"(?:has been|have been|was|were|is now|are now|'s been)"
_ESTA = r"(?:esta|foi|ficou|ja esta|ja foi|quedo|fue|ya esta|ya fue)"

# Completion phrases per kind, matched on accent-folded lower-case text (see ``_fold``): the reference agents'
# wording in the three locales, and the usual ways of saying it. Preterites that differ from another locale's
# subjunctive only by an accent ("agendé" / "agende") are matched in the original text, in ``_ACCENTED``.
_PHRASES: dict[str, tuple[str, ...]] = {
    "payment_link": (
        r"\baqui (?:esta|estao|vai|segue) (?:o |a |seu |sua |o seu |a sua )?(?:novo )?(?:link|boleto|pix|qr)",
        r"\b(?:segue|toma|tome) (?:o |seu |o seu )?(?:novo )?link",
        r"\blink (?:de pagamento )?(?:foi )?(?:enviado|gerado|criado)",
        r"\b(?:enviei|mandei|gerei|criei)(?: (?:para voce|pra voce|pra vc))? (?:o |um |seu |o seu |novo |o novo )?link",
        r"\bhere(?:'s| is| are) (?:your |the |a |a new |your new )?(?:payment )?(?:link|boleto|pix)",
        rf"{_I} (?:just )?(?:sent|created|generated|made)(?: you)? (?:the |your |a |a new )?(?:payment )?link",
        rf"\b(?:payment )?link {_BE_DONE} (?:sent|created|generated)",
        r"\baqui (?:esta|tienes) (?:tu |el |un |tu nuevo |el nuevo )?(?:enlace|link|boleto)",
        r"\b(?:toma|ten) (?:el |tu )?(?:enlace|link)",
        r"\b(?:enlace|link) (?:de pago )?(?:fue )?(?:enviado|generado|creado)",
    ),
    "paid": (
        r"\bpagamento (?:foi |ja foi )?(?:confirmado|recebido|aprovado|realizado|efetuado)",
        r"\b(?:fatura|conta) (?:foi |esta |ja esta |ja foi )?(?:paga|quitada|baixada)\b",
        r"\brecebemos (?:o |seu |o seu )?pagamento",
        rf"\bpayment {_BE_DONE} (?:received|confirmed|approved|processed)", r"\bpayment (?:went through|is complete)",
        rf"\b(?:invoice|bill|balance) {_BE_DONE} (?:paid|settled)", r"\bwe(?:'ve| have)? received your payment",
        r"\bpago (?:fue |ya fue )?(?:confirmado|recibido|aprobado|realizado)",
        r"\bfactura (?:fue |esta |ya esta )?pagada",
        r"\brecibimos (?:tu |el |su )?pago",
    ),
    "booked": (
        rf"\b{_ESTA} (?:agendad|marcad|reservad)[ao]s?\b", r"\b(?:ja )?(?:agendei|marquei|reservei)\b",
        r"^\s*(?:agendado|marcado|reservado)\s*:",
        rf"\b(?:appointment|visit|consultation|cleaning) {_BE_DONE}? ?booked",
        # any domain's booking: an order, a reservation, a delivery "has been booked / placed / reserved"
        rf"\b(?:order|reservation|booking|delivery|table|room|ticket) {_BE_DONE} (?:booked|placed|reserved)\b",
        r"\b(?:is|are|'s) (?:now )?booked (?:for|on|at)\b", rf"{_I} (?:already )?(?:booked|scheduled)\b",
        r"^\s*booked\s*:", r"\b(?:you're|you are) (?:all )?booked\b",
    ),
    "moved": (
        rf"\b{_ESTA} (?:remarcad|reagendad|cambiad|reprogramad|movid|transferid)[ao]s?\b", r"\bremarquei\b",
        r"\bmudei (?:para|pra)\b", r"\bagora (?:e|fica) (?:em|no|na|dia|para)\b",
        rf"\b(?:appointment|it) {_BE_DONE} (?:moved|rescheduled|changed)", rf"{_I} (?:moved|rescheduled)\b",
        r"\bit's rescheduled\b", r"^\s*moved to\b", r"\b(?:is|it's) now on\b",
        r"\bcambiado al\b", r"\bahora es (?:el|a las)\b",
    ),
    "cancelled": (
        rf"\b{_ESTA} cancelad[ao]s?\b", r"\bconsulta cancelada\b", r"\bcancelei\b",
        rf"\b(?:{_BE_DONE}|is|'s) cancel+ed\b", rf"{_I} cancel+ed\b", r"\bappointment cancel+ed\b",
        r"\bcita cancelada\b", r"^\s*(?:cancel+ed|cancelad[ao])\b",
    ),
    "confirmed": (
        r"\b(?:consulta|presenca|appointment|attendance|visit|cita|asistencia)\b[^.!?\n]{0,40}?"
        r"\b(?:esta|foi|ficou|ta|is|has been|was|quedo|fue)(?: (?:ja|now|ya|all))? (?:confirmad[ao]s?|confirmed)\b",
        r"\bconfirmei\b",
        rf"{_I} confirmed (?:your|the)\b",
        r"^\s*(?:ta|esta) confirmad[ao]\b",
        r"\bit's (?:now |all )?confirmed\b(?! right away| instantly| immediately| at once)",  # not a payment's speed
    ),
    "recorded": (
        r"\b(?:registrei|anotei)\b", r"\b(?:foi|esta|ficou|ja esta|quedo|fue|ya esta) (?:registrad|anotad)[ao]\b",
        rf"{_I} (?:recorded|noted|logged|saved)\b",
        rf"\b(?:score|feedback|opinion|answer|rating) {_BE_DONE}? ?"
        r"(?:recorded|noted|logged|saved)",
        r"\b(?:is|are) (?:already )?recorded\b", r"^\s*(?:anotado|noted)\b",
    ),
    "handoff": (
        r"\bvou (?:te |lhe )?(?:passar|transferir|encaminhar|jogar)\b", r"\b(?:transferi|encaminhei)\b",
        r"\b(?:equipe|atendente|time)\b[^.!?\n]{0,30}\b(?:foi|ja foi) (?:avisad|notificad|acionad|informad)",
        r"\buma pessoa (?:da clinica |da nossa equipe )?(?:vai|ira) (?:continuar|responder|falar)",
        r"\bvou pedir ajuda (?:para|pra|a) (?:a )?nossa equipe",
        r"\bi(?:'m| am) (?:passing|transferring|handing|forwarding)\b",
        r"\bi(?:'ll| will) (?:pass|transfer|hand|forward|dump)\b",
        r"\bi(?:'ll| will) ask our team\b", rf"{_I} (?:transferred|passed|handed|forwarded)\b",
        rf"\b(?:team|someone|a person|a human|staff)\b[^.!?\n]{{0,40}}{_BE_DONE} (?:notified|alerted|informed)",
        r"\b(?:someone|a person|a human|a colleague|our team)(?: from the clinic)? will "
        r"(?:continue|reply|get back|contact)",
        r"\b(?:voy a|te voy a|le voy a) (?:pasar|transferir|derivar)\b", r"\b(?:te|le|se lo) paso (?:a|con)\b",
        r"\bequipo\b[^.!?\n]{0,30}\b(?:fue|ya fue) (?:avisad|notificad|informad)",
        r"\buna persona (?:de la clinica )?(?:seguira|va a seguir|respondera|va a responder)",
        r"\bvoy a pedir ayuda a nuestro equipo",
    ),
}
_ACCENTED: dict[str, tuple[str, ...]] = {
    "booked": (r"\b(?:ya )?(?:agendé|reservé)\b",),
    "moved": (r"\b(?:reprogramé|la cambié|lo cambié|moví)\b",),
    "cancelled": (r"\b(?:cancelé)\b",),
    "confirmed": (r"\b(?:confirmé)\b",),
    "recorded": (r"\b(?:registré|anoté)\b",),
    "handoff": (r"\b(?:transferí|pasé)\b",),
    "payment_link": (r"\b(?:envié|generé|mandé) (?:el |tu |un )?(?:enlace|link)\b",),
}
_COMPILED = {kind: re.compile("|".join(f"(?:{p})" for p in patterns), re.MULTILINE)
             for kind, patterns in _PHRASES.items()}
_COMPILED_ACCENTED = {kind: re.compile("|".join(f"(?:{p})" for p in patterns), re.MULTILINE | re.IGNORECASE)
                      for kind, patterns in _ACCENTED.items()}

# Words that undo a claim when they come shortly before it in the same sentence: a negation ("ainda não gerei o
# link", "I haven't booked") or a condition ("assim que o pagamento for confirmado", "once it is booked").
_UNDO = re.compile(r"\b(?:nao|nunca|nem|not|never|nothing|todavia|aun|assim|quando|once|when|if|after|soon|"
                   r"cuando|cuanto|apos|depois|antes|before|until|ate que|hasta)\b|n't\b")
_UNDO_WINDOW = 4  # words before the claim in which a negation or condition counts
# "no" (es: not; pt: in the) undoes only among the two words before the claim ("no la cancelé"); "se" (pt: if;
# es: itself) and "si" (es: if) only right before it.
_UNDO_NEAR = {"no": 2, "se": 1, "si": 1}
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def _locale_ok(locale: str | None) -> None:
    if locale is not None and locale not in ("pt-BR", "en", "es"):
        raise ValueError(f"locale must be pt-BR, en, es or None, got {locale!r}")


def agent_claims(text: str, locale: str | None = None) -> list[Claim]:
    """Every claim one agent message makes, in the order of ``CLAIM_KINDS``, each once per quote.

    Args:
        text: one agent message (bubbles joined).
        locale: the scenario's locale (``pt-BR``, ``en``, ``es``). The phrases of all three are read whatever it
            is: an agent that answers in another language than the scenario's still claims what it says. It is
            checked, and kept in the signature so a later, locale-specific phrase table needs no new API.

    Returns:
        ``Claim`` objects; empty when the message claims nothing (an offer, a question, a negation).

    Example:
        >>> agent_claims("Posso gerar o link de pagamento via Pix? (sim/não)", "pt-BR")
        []
        >>> [c.kind for c in agent_claims("All set! ✅ Your appointment is booked for Tuesday.", "en")]
        ['booked']
    """
    _locale_ok(locale)
    return list(_claims(text))


@functools.lru_cache(maxsize=2048)
def _claims(text: str) -> tuple[Claim, ...]:
    # Kept per message text: the simulator gate reads every agent message while the run talks, and the path
    # assertions read them again after it (the locale changes nothing in what is read, see ``agent_claims``).
    claims: list[Claim] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: ClaimKind, quote: str) -> None:
        if (kind, quote) not in seen:
            seen.add((kind, quote))
            claims.append(Claim(kind, quote))

    found: dict[str, list[str]] = {kind: [] for kind in CLAIM_KINDS}
    for url in _URL.findall(text):
        paying = _PAYMENT_WORDS.search(_fold(url)) or _PAYMENT_WORDS.search(_fold(_URL.sub(" ", text)))
        found["payment_link" if paying else "url"].append(url)
    found["amount"] += [m.group(0) for m in _AMOUNT.finditer(_URL.sub(lambda m: " " * len(m.group(0)), text))]
    folded = _fold(text)
    for sentence in _SENTENCE.finditer(text):
        if sentence.group(0).rstrip().endswith("?"):
            continue  # a question offers or asks; it claims nothing
        start, original = sentence.start(), sentence.group(0)
        part = folded[start:sentence.end()]
        for kind, pattern in _COMPILED.items():
            found[kind] += [original[m.start():m.end()].strip() for m in pattern.finditer(part)
                            if not _undone(part, m.start())]
        for kind, pattern in _COMPILED_ACCENTED.items():
            found[kind] += [m.group(0).strip() for m in pattern.finditer(original) if not _undone(part, m.start())]
    for kind in CLAIM_KINDS:
        for quote in found[kind]:
            add(kind, quote)
    return tuple(claims)


# Clock times as the three locales write them: "09:00", "9:00 AM", "3:30 PM", "às 10h", "15h30", "2 PM". A date
# ("10/03") or an amount ("R$ 150,00") is no time.
_TIME = re.compile(r"(?<![\d/.,:])(\d{1,2})(?:(?::|h)(\d{2})|h)?\s*([ap])?\.?(?:m\b\.?)?(?![\d/:])", re.IGNORECASE)


def stated_times(text: str) -> list[str]:
    """The clock times a message states, as ``HH:MM`` (24 h), in order, each once.

    A bare number counts only with ``h`` or a.m./p.m. ("às 10h", "2 PM"); "10/03" and "R$ 150,00" are no times.

    Example:
        >>> stated_times("Sua consulta está agendada para terça-feira, 10/03 às 09:00; or Monday at 3:30 PM, 2 PM")
        ['09:00', '15:30', '14:00']
    """
    times: list[str] = []
    for match in _TIME.finditer(_URL.sub(" ", text)):
        hour, minute, half = int(match.group(1)), match.group(2), (match.group(3) or "").lower()
        whole = match.group(0).lower()
        if minute is None and "h" not in whole and not half:
            continue  # a bare number is no time
        if half and not re.search(r"[ap]\.?m", whole):
            continue  # "9 a" is no time
        if half == "p" and hour < 12:
            hour += 12
        elif half == "a" and hour == 12:
            hour = 0
        if hour > 23 or (minute is not None and int(minute) > 59):
            continue
        value = f"{hour:02d}:{minute or '00'}"
        if value not in times:
            times.append(value)
    return times


def stated_urls(text: str) -> list[str]:
    """Every URL a message writes, as written (the URLs ``agent_claims`` reads)."""
    return _URL.findall(text)


def amount_cents(quote: str) -> int | None:
    """An amount claim's value in cents ("R$ 150,00", "R$150.00", "$1,250.50", "150 reais"), None when unreadable.

    The last ``.`` or ``,`` followed by exactly two digits is the decimal separator; every other one groups
    thousands.
    """
    digits = re.sub(r"[^\d.,]", "", quote)
    match = re.fullmatch(r"([\d.,]*?)(?:[.,](\d{2}))?", digits)
    if not match or not re.sub(r"[.,]", "", match.group(1)):
        return None
    return int(re.sub(r"[.,]", "", match.group(1))) * 100 + int(match.group(2) or 0)


def _undone(sentence: str, at: int) -> bool:
    """Whether a negation or a condition stands among the few words before position ``at`` of ``sentence``."""
    before = re.findall(r"[\w']+", sentence[:at])[-_UNDO_WINDOW:]
    near = any(word in before[-n:] for word, n in _UNDO_NEAR.items())
    return near or bool(_UNDO.search(" ".join(before)))
