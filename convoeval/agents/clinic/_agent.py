"""``ClinicAgent``: the base of every reference clinic agent — conversation state, turn helpers, hand-off.

A reference agent is a small state machine. Each conversation (keyed by its id) has a ``state`` name and a ``data``
dict; a patient message is read into an ``Understanding`` and dispatched to the method ``on_<state>(turn)``, which
says things (text-table keys), calls tools and moves to the next state. Before dispatch, the base handles what every
clinic bot does alike: a conversation already handed to a human, and a request for a human.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from convoeval.agents.base import AgentError, AgentReply, AgentSession
from convoeval.agents.clinic import _format, _privacy
from convoeval.agents.clinic._channel import CHANNEL_TEXTS, Inbox, follow_up_template
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._nlu import Lexicon, Understanding, understand
from convoeval.agents.clinic._privacy_texts import TEXTS as PRIVACY_TEXTS
from convoeval.agents.clinic._texts import COMMON_FAULT_TEXTS, COMMON_TEXTS, TextTable, render
from convoeval.agents.tools import ClinicTools, ToolError
from convoeval.channel import ButtonsPart, Part, ReplyButton, TextPart
from convoeval.scenarios import did_you_mean
from convoeval.store.base import Store
from convoeval.store.conversations import ensure_conversation
from convoeval.store.fixtures import SeededRun

HANDED_OFF = "handed_off"
_HONORIFICS = {"dona", "dom", "seu", "sr", "sra", "srta", "dr", "dra", "mr", "mrs", "ms", "miss", "don", "doña", "señor", "señora"}


@dataclass
class ClinicConversation:
    """One conversation's state, kept by the agent instance between messages."""

    id: str
    locale: str
    state: str
    turn: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    inbox: Inbox = field(default_factory=Inbox)  # the WhatsApp channel's state (_channel.py)


@dataclass
class Turn:
    """Everything a state handler needs for one patient message, and the bubbles it says.

    Attributes:
        agent: the agent handling the message.
        conversation: the conversation's state (``state`` and ``data`` are meant to be changed).
        session: the session the message came with.
        tools: the clinic tools for this message; their ``calls`` become the reply's tool calls.
        said: what the patient's message says.
        bubbles: what the agent answers, in order.
        interactive: bubble index -> the interactive message (reply buttons) that bubble's text is the body of.
    """

    agent: ClinicAgent
    conversation: ClinicConversation
    session: AgentSession
    tools: ClinicTools
    said: Understanding
    bubbles: list[str] = field(default_factory=list)
    interactive: dict[int, Part] = field(default_factory=dict)

    @property
    def locale(self) -> str:
        return self.conversation.locale

    @property
    def data(self) -> dict[str, Any]:
        return self.conversation.data

    @property
    def first(self) -> bool:
        """Whether this is the conversation's first patient message."""
        return self.conversation.turn == 1

    @property
    def name(self) -> str:
        """How to address the patient: the first name, keeping an honorific ("Dona Aparecida", not "Dona")."""
        words = (self.session.patient_name or "").split()
        if len(words) > 1 and words[0].lower().rstrip(".") in _HONORIFICS:
            return " ".join(words[:2])
        return words[0] if words else ""

    def goto(self, state: str) -> None:
        """Move the conversation to ``state`` (the next message goes to ``on_<state>``)."""
        self.conversation.state = state

    def faulty(self, fault: str) -> bool:
        """Whether the agent runs with known fault ``fault``."""
        return fault in self.agent.faults

    def say(self, key: str, **values: Any) -> None:
        """Add the bubble(s) of text ``key`` in the conversation's language; ``name`` is filled in by default."""
        self.bubbles.extend(render(key, self.locale, self.agent.text_tables, **{"name": self.name, **values}))

    def text(self, key: str, **values: Any) -> str:
        """Text ``key`` as one string (bubbles joined by spaces), for building a bubble out of parts."""
        return " ".join(render(key, self.locale, self.agent.text_tables, **{"name": self.name, **values}))

    def say_buttons(self, key: str, buttons: list[tuple[str, str]], **values: Any) -> None:
        """Send text ``key`` as the body of a WhatsApp reply-buttons message; ``buttons`` are ``(id, title)``."""
        body = self.text(key, **values)
        self.interactive[len(self.bubbles)] = ButtonsPart(
            body=body, buttons=[ReplyButton(id=button_id, title=title) for button_id, title in buttons])
        self.bubbles.append(body)

    def parts(self) -> list[Part]:
        """The reply's WhatsApp messages: a text message per bubble, except the interactive ones."""
        return [self.interactive.get(i) or TextPart(text=b) for i, b in enumerate(self.bubbles)]

    def say_raw(self, text: str) -> None:
        """Add a bubble that is not from a text table (a URL, a list built from data)."""
        self.bubbles.append(text)

    def tool(self, name: str, /, **arguments: Any) -> Any:
        """Call a clinic tool (recorded in the reply) and return its result.

        After a verified request about another patient, the per-patient tools act for that patient.
        """
        return self.tools.run(name, **_privacy.patient_for_tool(self, name, arguments))

    def money(self, cents: int) -> str:
        return _format.money(cents, self.locale)

    def date(self, value: str | dt.date) -> str:
        return _format.date(value, self.locale)

    def datetime(self, value: str | dt.datetime) -> str:
        return _format.datetime(value, self.locale)


class ClinicAgent:
    """Base class of the reference clinic agents. Subclass it, then register with ``@register_clinic_agent``.

    Class attributes a subclass sets:
        TEXTS: its text table (``locale -> key -> template``), every key in every locale.
        FAULT_TEXTS: ``fault name -> text table`` of overrides for text-only faults (tone).
        LEXICON: its own intents (``locale -> intent -> phrases``), added to the shared ones.
        START: the state of a new conversation (default ``"start"``: implement ``on_start``).

    ``register_clinic_agent`` sets ``agent`` (the name) and ``known_faults``.
    """

    agent: ClassVar[str] = ""
    known_faults: ClassVar[dict[str, Fault]] = {}
    TEXTS: ClassVar[TextTable] = {}
    FAULT_TEXTS: ClassVar[Mapping[str, TextTable]] = {}
    LEXICON: ClassVar[Lexicon] = {}
    START: ClassVar[str] = "start"

    def __init__(self, faults: Iterable[str] = ()):
        faults = list(dict.fromkeys(faults))
        unknown = [f for f in faults if f not in self.known_faults]
        if unknown:
            valid = ", ".join(self.known_faults) or "none"
            named = ", ".join(f + did_you_mean(f, self.known_faults) for f in unknown)
            raise ValueError(f"unknown fault(s) for clinic:{self.agent}: {named}; valid: {valid}")
        self.faults: frozenset[str] = frozenset(faults)
        self.name = f"clinic:{self.agent}" + (f"?faults={','.join(faults)}" if faults else "")
        self.text_tables: list[TextTable] = [
            *(self.FAULT_TEXTS[f] for f in faults if f in self.FAULT_TEXTS),
            *(COMMON_FAULT_TEXTS[f] for f in faults if f in COMMON_FAULT_TEXTS),
            self.TEXTS,
            COMMON_TEXTS,
            PRIVACY_TEXTS,
            CHANNEL_TEXTS,
        ]
        self._conversations: dict[str, ClinicConversation] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        """Answer one patient message (the ``Agent`` protocol).

        The first message of a conversation creates its row in the store (``ensure_conversation``) and sets
        ``session.conversation_id``; later messages must come with that id (the runner passes it back). Through the
        WhatsApp channel (``session.inbound`` set), a message is kept and answered at the next quiet moment
        (``idle``), and a message id seen before is dropped (``_channel.py``; the channel faults change both).

        Raises:
            AgentError: no store in the session, or a tool call failed (a bug in the policy or in the fixtures).
        """
        if session.store is None:
            raise AgentError(f"{self.name} needs session.store: reference agents work on the fixtures store")
        inbound = session.inbound
        if inbound is not None:
            conversation = self._conversation(session, session.store)
            inbox = conversation.inbox
            if not inbox.receive(inbound, idempotent="not_idempotent" not in self.faults):
                return AgentReply(conversation_id=conversation.id)  # a redelivery: already answered
            inbox.replay_race(conversation, inbound.id)  # not_idempotent: the retry finds the state the first found
            if "no_debounce" not in self.faults:
                inbox.kept.append(inbound)
                return AgentReply(conversation_id=conversation.id)  # the patient may still be typing
            inbox.remember_state(conversation, [inbound.id])
        return self._answer(message, session, session.store)

    async def idle(self, session: AgentSession) -> AgentReply:
        """The WhatsApp channel says the patient has been quiet until ``session.now``: answer the kept fragments as
        one message, or follow up once after a silence (a template outside the 24-hour window)."""
        conversation = self._conversations.get(session.conversation_id or "")
        if conversation is None or session.store is None:
            return AgentReply()
        inbox = conversation.inbox
        if inbox.kept:
            inbox.remember_state(conversation, [m.id for m in inbox.kept])
            text = inbox.burst_text(last_only="answers_last_fragment_only" in self.faults,
                                    by_arrival="orders_by_arrival" in self.faults)
            return self._answer(text, session, session.store)
        due = inbox.follow_up_due(session.now)
        if due is None or conversation.state == HANDED_OFF:
            return AgentReply(conversation_id=conversation.id)
        turn = Turn(self, conversation, session, ClinicTools(session.store, session),
                    understand("", conversation.locale, self.LEXICON))
        if due == "template" and "ignores_window" not in self.faults:
            return AgentReply(parts=[follow_up_template(conversation.locale, turn.name)],
                              conversation_id=conversation.id)
        turn.say("follow_up")
        return AgentReply(bubbles=turn.bubbles, conversation_id=conversation.id)

    def _answer(self, message: str, session: AgentSession, store: Store) -> AgentReply:
        """Read one patient message (or a burst's fragments joined) and answer it."""
        conversation = self._conversation(session, store)
        conversation.turn += 1
        tools = ClinicTools(store, session)
        turn = Turn(self, conversation, session, tools, understand(message, conversation.locale, self.LEXICON))
        try:
            self.handle(turn)
        except ToolError as exc:
            if not conversation.inbox.take_race():
                raise AgentError(f"{self.name}: tool call failed: {exc}") from exc
            # A retry racing the first delivery (not_idempotent) may find its action already done (the slot taken):
            # the failed call is recorded, and the bot answers as a real one would, with its fallback.
            turn.bubbles.clear()
            turn.interactive.clear()
        conversation.inbox.take_race()
        if not turn.bubbles:
            turn.say("fallback")
        if turn.interactive:
            return AgentReply(parts=turn.parts(), tool_calls=list(tools.calls), conversation_id=conversation.id)
        return AgentReply(bubbles=turn.bubbles, tool_calls=list(tools.calls), conversation_id=conversation.id)

    def handle(self, turn: Turn) -> None:
        """Route one message: hand-off first, then requests about other patients, then ``on_<state>``."""
        if turn.conversation.state == HANDED_OFF:
            self.on_handed_off(turn)
        elif _privacy.intercept(turn):
            pass  # a request about another patient: verified first, served or refused (_privacy.py)
        elif turn.said.has("human") and self.escalates(turn):
            self.hand_off(turn, self.handoff_reason(turn))
        else:
            getattr(self, f"on_{turn.conversation.state}")(turn)

    # ── Hooks with defaults shared by every clinic bot ──

    def escalates(self, turn: Turn) -> bool:
        """Whether a request for a human is honoured (a fault may say no)."""
        return True

    def handoff_reason(self, turn: Turn) -> str:
        return f"patient asked for a human ({self.agent}): {turn.said.text[:200]}"

    def hand_off(self, turn: Turn, reason: str) -> None:
        """Pass the conversation to the clinic's team: the tool call, the message, and no more bot answers."""
        turn.tool("handoff_to_human", reason=reason)
        turn.say("handoff")
        turn.goto(HANDED_OFF)

    def on_handed_off(self, turn: Turn) -> None:
        if turn.said.has("thanks", "bye"):
            turn.say("goodbye")
        else:
            turn.say("handed_off")

    # ── Conversation state ──

    def _conversation(self, session: AgentSession, store: Store) -> ClinicConversation:
        known = self._conversations.get(session.conversation_id or "")
        if known is not None:
            return known

        seeded = SeededRun(run_id=session.run_id, clinic_id=session.clinic_id, patient_id=session.patient_id)
        conversation_id = ensure_conversation(store, seeded, self.agent, session.conversation_id)
        session.conversation_id = conversation_id
        with self._lock:
            return self._conversations.setdefault(
                conversation_id,
                ClinicConversation(id=conversation_id, locale=_format.resolve_locale(session.locale), state=self.START),
            )

    def forget(self, conversation_id: str) -> None:
        """Drop a finished conversation's state (long-lived agents serving many runs call this)."""
        with self._lock:
            self._conversations.pop(conversation_id, None)

    def clinic_name(self, turn: Turn) -> str:
        """The clinic's name: the bot's own configuration, read once per conversation (not a patient-data tool)."""
        if "clinic_name" not in turn.data:
            rows = turn.tools.store.select("clinics", {"id": turn.session.clinic_id})
            turn.data["clinic_name"] = rows[0]["name"] if rows else ""
        name: str = turn.data["clinic_name"]
        return name
