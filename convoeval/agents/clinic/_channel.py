"""How a reference agent handles the WhatsApp channel, and the known faults that break it.

Healthy, every reference agent (``ClinicAgent``):
* **debounces**: a patient message is kept, not answered; when the channel says the patient went quiet
  (``idle``), the kept fragments are read together, in the order the patient sent them (``sent_at``, so a reordered
  burst reads right), and answered once;
* is **idempotent**: a message id it has seen is dropped (a webhook redelivery);
* reads a burst **in the order it was sent**, so a fragment that corrects the one before it ("boleto" … "quer dizer,
  pix") replaces it even when the channel delivered them the other way round;
* keeps the **24-hour window**: a follow-up after a silence is free text within 24 hours of the patient's last
  message and the approved template ``retomar_atendimento`` after it.

The faults (one per public bug class, docs/whatsapp.md): ``no_debounce`` answers each fragment as it arrives;
``answers_last_fragment_only`` debounces but reads only the last fragment to arrive; ``not_idempotent`` answers a
redelivered message again (and repeats its tool calls: a second payment link); ``ignores_window`` follows up in free
text after 24 hours; ``orders_by_arrival`` (billing) reads a burst in the order it arrived, so a correction that
overtook what it corrects is lost.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._texts import Template
from convoeval.channel import TemplatePart
from convoeval.channel.delivery import WINDOW

if TYPE_CHECKING:
    from convoeval.channel.delivery import InboundMessage

__all__ = ["CHANNEL_FAULTS", "CHANNEL_FAULT_NAMES", "CHANNEL_TEXTS", "FOLLOW_UP_AFTER", "ORDER_FAULT", "Inbox", "channel_faults",
           "follow_up_template"]

#: A silence after which the agent follows up once (the reminder a clinic bot sends to a patient who went quiet).
FOLLOW_UP_AFTER = dt.timedelta(hours=1)

#: name -> (what the agent does wrong, the channel assertion it breaks).
CHANNEL_FAULTS: dict[str, tuple[str, str]] = {
    "no_debounce": (
        "Answers every WhatsApp message as it arrives: a patient who types a request in three messages gets three "
        "answers, the first ones to fragments (\"Oi\" gets a greeting and a question already answered by the next).",
        "one_reply_per_burst"),
    "answers_last_fragment_only": (
        "Waits for the patient to stop typing, then reads only the last message to arrive and drops the others: it "
        "asks again for what an earlier fragment said (the CPF, the day, the payment method).",
        "fragments_covered"),
    "not_idempotent": (
        "Does not remember message ids: a message the channel delivers twice (a webhook retry) is answered twice and "
        "its action done twice (a second payment link, a second booking).",
        "no_duplicate_effects"),
    "ignores_window": (
        "Follows up after a long silence in free text even when more than 24 hours have passed since the patient's "
        "last message, where WhatsApp allows only an approved template: the platform would reject it.",
        "whatsapp_window"),
}


#: The out-of-order fault breaks no channel key (order is meaning): what breaks is the outcome the scenario checks.
ORDER_FAULT = Fault(
    "orders_by_arrival", "billing",
    "Reads a burst in the order its messages arrived, not the order they were sent: when the channel delivers a "
    "correction (\"quer dizer, pix\") before the message it corrects (\"boleto\"), the correction is lost and the "
    "patient's choice is misread.",
    breaks_assertions=("payment_method", "payment_link_created"), channel=True)

#: Every channel fault's name: they act only through the channel (the path-fault and per-agent tables leave them out).
CHANNEL_FAULT_NAMES = frozenset([*CHANNEL_FAULTS, ORDER_FAULT.name])


def channel_faults(agent: str) -> list[Fault]:
    """The channel faults as ``Fault`` objects of ``agent`` (every reference agent shares their code; billing also
    has ``orders_by_arrival``, whose effect its scenarios check)."""
    faults = [Fault(name, agent, text, breaks_assertions=(key,), channel=True)
              for name, (text, key) in CHANNEL_FAULTS.items()]
    return [*faults, ORDER_FAULT] if agent == ORDER_FAULT.agent else faults


#: How a message that takes back the one before it opens, in pt-BR, en and es.
_CORRECTION = re.compile(r"^\W*(?:quer dizer|quero dizer|ops|opa|na verdade|digo|i mean|actually|oops|sorry,|make "
                         r"that|quise decir|quiero decir|perd[oó]n,|en realidad|mejor dicho)\b")

#: The free-text follow-up, within the window.
CHANNEL_TEXTS: dict[str, dict[str, Template]] = {
    "pt-BR": {"follow_up": "Oi, {name}! Ainda posso ajudar com o que conversamos? É só responder aqui. 😊"},
    "en": {"follow_up": "Hi {name}! Can I still help with what we were talking about? Just reply here. 😊"},
    "es": {"follow_up": "¡Hola, {name}! ¿Todavía puedo ayudarte con lo que hablamos? Responde aquí. 😊"},
}
_TEMPLATE_LANGUAGE = {"pt-BR": "pt_BR", "en": "en", "es": "es"}


def follow_up_template(locale: str, name: str) -> TemplatePart:
    """The approved template the healthy agents send after 24 hours of silence (its one parameter: the name)."""
    return TemplatePart(name="retomar_atendimento", language=_TEMPLATE_LANGUAGE.get(locale, "pt_BR"),
                        parameters=[name])


class _HasState(Protocol):
    state: str
    data: dict[str, Any]


@dataclass
class Inbox:
    """A conversation's channel state: the ids seen, the fragments kept for the next quiet, the last message time."""

    seen: set[str] = field(default_factory=set)
    kept: list[InboundMessage] = field(default_factory=list)
    last_patient_at: dt.datetime | None = None
    followed_up: bool = False
    #: message id -> the conversation's (state, data) before that message was answered. Only ``not_idempotent``
    #: reads it: a webhook retry racing the first delivery finds the state the first one found, so the action (a
    #: payment link, a booking) is done again, which is how the real bug creates two links.
    before: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    raced: bool = False  # the message being answered is such a retry

    def receive(self, message: InboundMessage, *, idempotent: bool) -> bool:
        """Take a delivered message; ``False`` when it is a redelivery the agent drops."""
        if idempotent and message.id in self.seen:
            return False
        self.seen.add(message.id)
        self.last_patient_at = max(message.sent_at, self.last_patient_at or message.sent_at)
        self.followed_up = False
        return True

    def remember_state(self, conversation: _HasState, ids: Iterable[str]) -> None:
        """Note the conversation's state before answering the messages ``ids``."""
        snapshot = (conversation.state, copy.deepcopy(conversation.data))
        for message_id in ids:
            self.before.setdefault(message_id, snapshot)

    def replay_race(self, conversation: _HasState, message_id: str) -> None:
        """Put back the state the first delivery of ``message_id`` found (a redelivery processed again)."""
        if message_id in self.before:
            state, data = self.before[message_id]
            conversation.state, conversation.data = state, copy.deepcopy(data)
            self.raced = True

    def take_race(self) -> bool:
        """Whether the message just answered was a raced retry (and forget it)."""
        raced, self.raced = self.raced, False
        return raced

    def burst_text(self, *, last_only: bool = False, by_arrival: bool = False) -> str:
        """The kept fragments as one message, and forget them: in the order sent (or arrived, or only the last to
        arrive), a fragment that opens with a correction replacing the one read before it."""
        kept, self.kept = self.kept, []
        if last_only:
            return kept[-1].text if kept else ""
        ordered = kept if by_arrival else sorted(kept, key=lambda m: (m.sent_at, m.fragment))
        texts: list[str] = []
        for message in ordered:
            if texts and _CORRECTION.match(message.text.casefold()):
                texts.pop()  # "boleto" … "quer dizer, pix": the patient took the last one back
            texts.append(message.text)
        return "\n".join(texts)

    def follow_up_due(self, now: dt.datetime | None) -> str | None:
        """``"text"`` or ``"template"`` when a follow-up is due at ``now`` (once per silence), else ``None``."""
        if now is None or self.last_patient_at is None or self.followed_up:
            return None
        silence = now - self.last_patient_at
        if silence < FOLLOW_UP_AFTER:
            return None
        self.followed_up = True
        return "template" if silence > WINDOW else "text"
