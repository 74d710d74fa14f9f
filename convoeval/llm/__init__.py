"""Everything between convoeval and a language model, in one package.

``call`` is the one way to call a chat model (cached, retried, accounted: ``acall_model``, and ``call_model`` its
blocking twin); ``types`` what a call is and returns; ``structured`` the schema sent and the reply validated;
``retries`` which failures are retried and how long to wait; ``cache`` the response cache; ``accounting`` the record
of every call; ``models`` builds chat models by role (``get_model``); ``http_transport`` the async HTTP client they
share; ``local`` the embedded local model (its weights and its server process).

Example:
    >>> from convoeval.llm import SampleIdentity, call_model
    >>> from convoeval.testing import FakeChatModel   # get_model("judge") for a real one
    >>> result = call_model(FakeChatModel(replies=["pass"]), [("user", "hi")], cache="off",
    ...                     identity=SampleIdentity(scenario="demo", seed=1, trial=1, role="judge"))  # or await acall_model
    >>> result.text
    'pass'
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
