"""The agent-under-test protocol.

An agent receives one patient message plus the session it belongs to and answers with a reply: one or more
WhatsApp bubbles, the tools it called, and the id of the conversation it keeps. Adapters turn a *target string*
into an ``Agent`` (see ``convoeval.agents.get_agent``):

* ``clinic:<agent>`` / ``clinic:<agent>?faults=a,b`` — the built-in reference clinic agents;
* ``module:function`` — a Python callable (sync or async) taking ``(message, session)``;
* ``http://…`` / ``https://…`` — an HTTP webhook (JSON contract in docs/agents-protocol.md);
* ``openai-chat`` / ``openai-chat:<model>`` — an OpenAI-compatible chat model used as the agent, with the clinic
  tools over the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from convoeval.store.base import Store


class AgentError(RuntimeError):
    """The agent under test failed (down, timed out, broke the protocol). The runner marks the conversation
    ``error`` with this message as the reason."""


@dataclass
class ToolCall:
    """A tool the agent called, with its arguments and (when known) its result."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None


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

    def to_json(self) -> dict[str, Any]:
        """The session as sent to remote agents (no store handle)."""
        return {
            "run_id": self.run_id,
            "clinic_id": self.clinic_id,
            "patient_id": self.patient_id,
            "patient_phone": self.patient_phone,
            "patient_name": self.patient_name,
            "locale": self.locale,
            "agent": self.agent,
            "conversation_id": self.conversation_id,
        }


@dataclass
class AgentReply:
    """An agent's answer to one patient message."""

    bubbles: list[str]
    tool_calls: list[ToolCall] = field(default_factory=list)
    conversation_id: str | None = None

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
