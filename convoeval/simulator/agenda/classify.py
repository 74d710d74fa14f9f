"""The model as a constrained classifier: where the rules find no act in an agent message, one label from the closed
set ``AGENT_ACTS`` (JSON mode, validated; never free text)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from convoeval.llm import SampleIdentity, acall_model
from convoeval.simulator.agenda.acts import AgentActs
from convoeval.simulator.agenda.understand import answer_kinds

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

__all__ = ["CLASSIFIER_PROMPT", "ActLabel", "aclassify_agent"]

CLASSIFIER_PROMPT = """\
Label what a company assistant's WhatsApp message does, with exactly one label:
request: asks the customer for a piece of information
offer: gives the customer options to choose from
confirm: asks the customer to say yes or no to something
inform: tells the customer a result or an answer
handover: passes the customer to a human
close: says goodbye or asks whether anything else is needed
other: none of these
Answer in JSON: {"act": "<label>"}"""


class ActLabel(BaseModel):
    """The classifier's answer: one label of the closed set."""

    model_config = ConfigDict(extra="forbid")

    act: Literal["request", "offer", "confirm", "inform", "handover", "close", "other"]


async def aclassify_agent(text: str, *, model: BaseChatModel, identity: SampleIdentity) -> AgentActs:
    """The act of an agent message the rules could not read, as the model labels it (``source="model"``).

    Raises:
        LLMError: the call failed, or its answers did not validate twice (the LLM layer's rule).
    """
    result = await acall_model(model, [("system", CLASSIFIER_PROMPT), ("user", text)], identity=identity,
                               schema=ActLabel, temperature=0, max_tokens=20)
    label = result.parsed.act if isinstance(result.parsed, ActLabel) else "other"
    whole = " ".join(text.split())
    return AgentActs(acts=(label,), requested=whole if label == "request" else "",
                     proposal=whole if label == "confirm" else "", answers=answer_kinds(text), source="model",
                     outcomes=frozenset({"handoff"}) if label == "handover" else frozenset())
