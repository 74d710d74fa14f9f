"""Everything between convoeval and a language model, in one package.

``call`` is the one way to call a chat model (cached, retried, accounted: ``acall_model``, and ``call_model`` its
blocking twin); ``types`` what a call is and returns; ``structured`` the schema sent and the reply validated;
``retries`` which failures are retried and how long to wait; ``cache`` the response cache; ``accounting`` the record
of every call; ``models`` builds chat models by role (``get_model``); ``http_transport`` the async HTTP client they
share; ``local`` the embedded local model (its weights and its server process).

Example:
    >>> from convoeval.llm import SampleIdentity, acall_model
    >>> from convoeval.llm.models import get_model
    >>> result = await acall_model(get_model("judge"), [("user", "hi")], identity=SampleIdentity(role="judge"))  # doctest: +SKIP
"""

from convoeval.llm.call import acall_model, call_model, set_budget_share
from convoeval.llm.retries import describe_error, redact
from convoeval.llm.structured import schema_json, structured_kwargs
from convoeval.llm.types import (
    STRUCTURED_METHODS,
    CacheMissError,
    LLMCallError,
    LLMError,
    LLMResult,
    ModelInfo,
    RetryPolicy,
    SampleIdentity,
    StructuredOutputError,
    model_info,
    register_model,
)

__all__ = [
    "STRUCTURED_METHODS",
    "CacheMissError",
    "LLMCallError",
    "LLMError",
    "LLMResult",
    "ModelInfo",
    "RetryPolicy",
    "SampleIdentity",
    "StructuredOutputError",
    "acall_model",
    "call_model",
    "describe_error",
    "model_info",
    "redact",
    "register_model",
    "schema_json",
    "set_budget_share",
    "structured_kwargs",
]
