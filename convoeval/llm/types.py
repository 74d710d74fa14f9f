"""What an LLM call is and returns: the errors, the sample identity, a model's description, the result, the retry policy."""

from __future__ import annotations

import os
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from convoeval.errors import ConvoevalError


class LLMError(ConvoevalError, RuntimeError):
    """Base of every LLM-layer failure; runners turn it into a conversation marked ``error`` with ``str(exc)``."""


class LLMCallError(LLMError):
    """The call failed after its retries (or failed permanently, e.g. 401/400)."""


class StructuredOutputError(LLMError):
    """The model's reply could not be validated against the requested schema (after one retry)."""


class CacheMissError(LLMError):
    """Replay-only cache mode and this call was never recorded. The message says how to re-record."""


@dataclass(frozen=True)
class SampleIdentity:
    """Which sample a call belongs to. Part of the cache key: trial 2 is a new sample, not a replay of trial 1."""

    scenario: str
    seed: int | None
    trial: int
    role: str  # simulator | judge | agent
    turn: int | None = None
    sample: int = 0  # judge sample index when asking the same judge N times
    extra: str = ""  # free-form discriminator (e.g. "rubric" vs "holistic", a probe name)


STRUCTURED_METHODS = ("function_calling", "json_schema", "json_mode")


@dataclass(frozen=True)
class ModelInfo:
    """What a result row records about the model that produced it. Never holds a secret.

    Attributes:
        provider: ``openai``, ``openai-compatible``, ``local`` (the embedded model) or ``fake``.
        model: The model name sent to the server.
        base_url: The endpoint (``None`` for OpenAI's default endpoint and for fakes).
        role: ``simulator``, ``judge`` or ``agent``.
        is_local_demo: True for the embedded small local model, whose numbers only show the pipeline works.
        structured_method: How ``acall_model(schema=...)`` asks this provider for structured output.
        max_concurrency: Async calls in flight at once against this endpoint (per event loop; models of one endpoint
            configured with the same limit share it).
    """

    provider: str
    model: str
    base_url: str | None = None
    role: str = "agent"
    is_local_demo: bool = False
    structured_method: str = "function_calling"
    max_concurrency: int = 8

    @property
    def endpoint(self) -> str:
        """The key of the concurrency limit: one budget per server."""
        return self.base_url or self.provider

    def as_row(self) -> dict[str, Any]:
        """The columns a result row carries: ``llm_provider``, ``llm_model``, ``llm_base_url``, ``llm_local_demo``."""
        return {
            "llm_provider": self.provider,
            "llm_model": self.model,
            "llm_base_url": self.base_url,
            "llm_local_demo": self.is_local_demo,
        }


# id(model) -> ModelInfo. LangChain models are unhashable pydantic objects, so a WeakKeyDictionary cannot hold them;
# a finalizer drops the entry when the model dies, so a recycled id never inherits a stale ModelInfo.
_INFOS: dict[int, ModelInfo] = {}


def register_model(model: Any, info: ModelInfo) -> None:
    """Attach ``info`` to ``model`` so every call made with it records the right provider and limits."""
    key = id(model)
    if key not in _INFOS:
        weakref.finalize(model, _INFOS.pop, key, None)
    _INFOS[key] = info


def model_info(model: Any, role: str | None = None) -> ModelInfo:
    """The ``ModelInfo`` of a model: registered by ``get_model``, declared by the model, or inferred.

    A ``ChatOpenAI`` the user built by hand is inferred from its ``model_name`` and ``openai_api_base``.
    """
    info = _INFOS.get(id(model))
    if info is None:
        declared = getattr(model, "convoeval_model_info", None)
        info = declared() if callable(declared) else _infer_info(model)
    if role is not None and info.role != role:
        info = replace(info, role=role)  # not asdict: it deep-copies, and this runs on every call
    return info


def _infer_info(model: Any) -> ModelInfo:
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    base_url = getattr(model, "openai_api_base", None)
    if base_url is None and type(model).__name__ not in ("ChatOpenAI", "AzureChatOpenAI"):
        return ModelInfo(provider=type(model).__name__, model=name)
    if base_url:
        return ModelInfo(provider="openai-compatible", model=name, base_url=str(base_url))
    return ModelInfo(provider="openai", model=name, structured_method="json_schema")


@dataclass
class LLMResult:
    """What ``acall_model`` returns.

    Attributes:
        text: The reply text (for structured calls: the JSON of the validated object).
        parsed: The validated pydantic object when ``schema`` was given, else ``None``.
        info: The model that answered.
        identity: The sample this call belongs to.
        prompt_tokens: Input tokens reported by the server (``None`` if it reported none).
        completion_tokens: Output tokens reported by the server.
        latency_s: Wall time of the call, retries included.
        cache_hit: Whether the reply came from the response cache.
        finish_reason: The server's finish reason (``stop``, ``tool_calls``, ``length``, ...).
        attempts: HTTP attempts made (0 on a cache hit).
        cost_usd: Estimated cost from the price table (0 for local and cached calls).
    """

    text: str
    parsed: BaseModel | None
    info: ModelInfo
    identity: SampleIdentity
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cache_hit: bool = False
    finish_reason: str | None = None
    attempts: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried inside one call.

    Attributes:
        attempts: Total HTTP attempts per call (``CONVOEVAL_LLM_ATTEMPTS``, default 4).
        initial_wait: First backoff in seconds; doubles each attempt, with full jitter.
        max_wait: Cap of one backoff.
        retry_after_cap: Cap of a server's ``Retry-After``, so a hostile header cannot park a sweep.
        sleep: The async sleep used between attempts (tests inject one that records the waits).
    """

    attempts: int = 4
    initial_wait: float = 0.5
    max_wait: float = 20.0
    retry_after_cap: float = 60.0
    sleep: Callable[[float], Awaitable[Any]] | None = field(default=None, compare=False)

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The default policy, with ``CONVOEVAL_LLM_ATTEMPTS`` applied."""
        raw = os.environ.get("CONVOEVAL_LLM_ATTEMPTS")
        return cls(attempts=max(1, int(raw))) if raw else cls()


def _default_policy() -> RetryPolicy:
    raw = os.environ.get("CONVOEVAL_LLM_ATTEMPTS", "")
    policy = _POLICIES.get(raw)
    if policy is None:
        policy = _POLICIES[raw] = RetryPolicy.from_env()
    return policy


_POLICIES: dict[str, RetryPolicy] = {}
