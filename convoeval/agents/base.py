"""The agent-under-test protocol.

An agent receives one patient message plus the session it belongs to and answers with a reply: one or more
WhatsApp messages (bubbles of text, or typed parts: buttons, lists, media, templates), the tools it called, and
the id of the conversation it keeps. Adapters turn a *target string* into an ``Agent`` (see
``convoeval.agents.get_agent``):

* ``clinic:<agent>`` / ``clinic:<agent>?faults=a,b`` — the built-in reference clinic agents;
* ``module:function`` — a Python callable (sync or async) taking ``(message, session)``;
* ``http://…`` / ``https://…`` — an HTTP webhook (JSON contract in docs/agents-protocol.md);
* ``openai-chat`` / ``openai-chat:<model>`` — an OpenAI-compatible chat model used as the agent, with the clinic
  tools over the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from convoeval.errors import ConvoevalError

if TYPE_CHECKING:
    import datetime as dt

    from convoeval.channel import Part
    from convoeval.channel.delivery import InboundMessage
    from convoeval.store.base import Store


#: Seconds an agent has to answer one message, for every adapter that runs code or waits on a network.
TIMEOUT_ENV = "CONVOEVAL_AGENT_TIMEOUT"
DEFAULT_TIMEOUT = 60.0


class AgentError(ConvoevalError, RuntimeError):
    """The agent under test failed (down, timed out, broke the protocol). The runner marks the conversation
    ``error`` with this message as the reason."""


def number_from_env(name: str, default: float, kind: type[int] | type[float]) -> float:
    """A positive number from the environment variable ``name`` (``default`` when unset or blank).

    Raises:
        ValueError: the value is not a ``kind`` or not positive (the message names the variable).
    """
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value: float = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a {kind.__name__}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


def agent_timeout(timeout: float | None) -> float:
    """The deadline for one agent answer: ``timeout``, else ``$CONVOEVAL_AGENT_TIMEOUT``, else 60 s.

    Raises:
        ValueError: a timeout that is not a positive number.
    """
    value = float(timeout) if timeout is not None else number_from_env(TIMEOUT_ENV, DEFAULT_TIMEOUT, float)
    if not value > 0:
        raise ValueError(f"an agent timeout must be positive, got {value!r}")
    return value


@dataclass
class ToolCall:
    """A tool the agent called, with its arguments and (when known) its result."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None


@dataclass(frozen=True)
class DataAccess:
    """One patient-owned row a clinic tool read or wrote: the access log the privacy red team reads.

    ``verified`` says whether the session had verified that patient's identity when the tool ran (the caller's own
    rows always count as verified).
    """

    tool: str
    table: str
    row_id: str
    patient_id: str
    op: Literal["read", "write"]
    verified: bool


@dataclass
class AgentSession:
    """Everything an agent needs to know about the conversation a message belongs to.

    ``store`` is set for in-process agents (reference agents, Python callables); remote agents get the ids only.
    """

    run_id: str
    clinic_id: str
    patient_id: str
    patient_phone: str
    patient_name: str
    locale: str
    agent: str
    conversation_id: str | None = None
    store: Store | None = None
    #: Patients (store ids) whose identity a tool verified in this conversation (``verify_identity``).
    verified: set[str] = field(default_factory=set)
    #: Every patient-owned row the clinic tools read or wrote in this conversation, in order.
    access_log: list[DataAccess] = field(default_factory=list)
    #: The WhatsApp message being delivered (id, parts, times), when the scenario talks through the channel
    #: (docs/whatsapp.md); ``None`` otherwise.
    inbound: InboundMessage | None = None
    #: The channel's clock when the agent is called (a message's arrival, or an idle moment); ``None`` without it.
    now: dt.datetime | None = None
    #: The domain's tools for this conversation (``convoeval.domains.DomainSession``: ``specs``, ``instructions``,
    #: ``call(name, arguments)``), when the scenario's domain is not the clinic (e.g. ``tau2:airline``); ``None``:
    #: the clinic tools on ``store``.
    tools: Any = None

    def to_json(self) -> dict[str, Any]:
        """The session as sent to remote agents (no store handle; with the channel, the message and the clock)."""
        channel: dict[str, Any] = {}
        if self.now is not None:
            channel["now"] = self.now.isoformat()
        if self.inbound is not None:
            channel["inbound"] = self.inbound.to_json()
        return {
            "run_id": self.run_id,
            "clinic_id": self.clinic_id,
            "patient_id": self.patient_id,
            "patient_phone": self.patient_phone,
            "patient_name": self.patient_name,
            "locale": self.locale,
            "agent": self.agent,
            "conversation_id": self.conversation_id,
            **channel,
        }


@dataclass
class AgentReply:
    """An agent's answer to one patient message: its WhatsApp messages, the tools it called, its conversation id.

    The messages are ``parts`` (``convoeval.channel``: text, reply buttons, a list, media, a template) and
    ``bubbles`` is what each one shows as text. Give either: bubbles alone are one text part each (every agent
    written before parts existed), parts alone get their bubbles from ``part_text``.

    Example:
        >>> from convoeval.channel import ButtonsPart, ReplyButton
        >>> AgentReply(bubbles=["Oi!"]).parts
        [TextPart(type='text', text='Oi!')]
        >>> AgentReply(parts=[ButtonsPart(body="Pix ou boleto?", buttons=[ReplyButton(id="pix", title="Pix"),
        ...                                                           ReplyButton(id="boleto", title="Boleto")])]).text
        'Pix ou boleto?\\n[Pix] [Boleto]'
    """

    bubbles: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    conversation_id: str | None = None
    parts: list[Part] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The part models cost ~50 ms to build and `convoeval --help` loads this module (tests/test_startup.py):
        # they load with the first reply.
        from pydantic import BaseModel  # noqa: PLC0415 - with the part models, below

        from convoeval.channel import part_text, text_parts  # noqa: PLC0415 - start-up budget (above)

        # Only well-typed values are converted: a wrong one is left for coerce_reply to name (never a crash here).
        if not self.parts and isinstance(self.bubbles, list) and all(isinstance(b, str) for b in self.bubbles):
            self.parts = text_parts(self.bubbles)
        elif (not self.bubbles and isinstance(self.parts, list)
              and all(isinstance(p, BaseModel) for p in self.parts)):
            self.bubbles = [part_text(p) for p in self.parts]

    @property
    def text(self) -> str:
        """All bubbles as one text, one bubble per line."""
        return "\n".join(self.bubbles)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tool_calls]


@runtime_checkable
class Agent(Protocol):
    """Anything with ``async respond(message, session) -> AgentReply``."""

    name: str

    async def respond(self, message: str, session: AgentSession) -> AgentReply: ...


def idle_handler(agent: object) -> Callable[[AgentSession], Any] | None:
    """The agent's ``idle(session)`` coroutine function, if it has one (the WhatsApp channel's quiet moments).

    With the channel, an agent may answer a patient message with nothing (``AgentReply()``: it waits for the rest
    of a burst) and answer when the channel says the patient went quiet, or follow up after a silence. Agents
    without ``idle`` answer every message as it comes.
    """
    handler = getattr(agent, "idle", None)
    return handler if callable(handler) else None


#: The agent under test, as every run accepts it: a target string (``clinic:billing``, ``module:function``, a URL,
#: ``openai-chat``), an ``Agent``, or a callable ``fn(message, session)``, sync or async, returning a reply (a string,
#: a mapping or an ``AgentReply``; see ``docs/agents-protocol.md``).
AgentLike: TypeAlias = "str | Agent | Callable[[str, AgentSession], Any]"
