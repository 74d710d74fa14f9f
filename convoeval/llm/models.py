"""One place builds chat models, by role: ``get_model("judge")`` returns a ``ChatOpenAI`` for the right endpoint.

Every real model in convoeval is a ``langchain_openai.ChatOpenAI`` talking to an OpenAI-compatible endpoint. Which
endpoint is resolved per role, first match wins:

1. the ``spec`` argument: a model name, ``"local"``, or a mapping (see ``ModelSpec``);
2. the role's environment: ``CONVOEVAL_<ROLE>_MODEL`` (a name or ``local``), ``CONVOEVAL_<ROLE>_BASE_URL``,
   ``CONVOEVAL_<ROLE>_API_KEY_ENV`` (the *name* of the variable holding that endpoint's key);
3. ``OPENAI_BASE_URL``: any OpenAI-compatible server (vLLM, Ollama, LM Studio, llama.cpp), model ``OPENAI_MODEL``
   or else the server's first listed model;
4. ``OPENAI_API_KEY``: OpenAI, model ``OPENAI_MODEL`` or ``gpt-5-mini``;
5. the embedded local model (``convoeval.llm.local``), started on demand.

Fields missing from a mapping spec are filled from the next levels, so ``{"temperature": 0.3}`` changes only that.
Clients are built once per resolved configuration and reused. API keys are read from the environment when the
client is built and never stored in ``ModelInfo``, reprs, logs, caches or errors.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from convoeval._util import plugins
from convoeval._util.urls import hide_in_logs, safe_url
from convoeval.llm.chat_classes import _LOCAL_PLACEHOLDER, _compatible_chat_class, _lean_chat_class, _local_chat_class
from convoeval.llm.http_transport import async_http_client
from convoeval.llm.types import (
    STRUCTURED_METHODS,
    LLMError,
    ModelInfo,
    register_model,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "PROVIDERS",
    "MODEL_ROLES",
    "ModelConfigError",
    "ModelSpec",
    "ProviderDefaults",
    "clear_model_cache",
    "get_model",
    "provider_defaults",
    "register_provider",
    "resolve_model",
]

MODEL_ROLES = ("simulator", "judge", "agent")
DEFAULT_OPENAI_MODEL = "gpt-5-mini"


class ModelConfigError(LLMError):
    """The model configuration cannot be used (unknown role, missing key, unreachable server to list models)."""


class ModelSpec(BaseModel):
    """An explicit model choice; every field optional (missing ones come from the environment).

    Example:
        >>> from convoeval.llm import model_info
        >>> judge = get_model("judge", {"model": "qwen2.5:7b", "base_url": "http://localhost:11434/v1"})  # Ollama
        >>> model_info(judge).model
        'qwen2.5:7b'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str | None = Field(default=None, description="openai, openai-compatible, local, or a registered one.")
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, description="Name of the environment variable holding the key.")
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    structured_method: Literal["function_calling", "json_schema", "json_mode"] | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    extra_body: dict[str, Any] | None = None


@dataclass(frozen=True)
class ProviderDefaults:
    """How convoeval talks to one kind of endpoint.

    Attributes:
        structured_method: ``function_calling`` for llama.cpp-style servers (their ``json_schema`` response format
            answers HTTP 500), ``json_schema`` for OpenAI (strict, SDK-validated).
        max_concurrency: Calls in flight per endpoint (env ``concurrency_env`` overrides).
        concurrency_env: Environment variable overriding ``max_concurrency``.
        timeout: Seconds per HTTP request.
        role_temperature: Default sampling temperature per role (``None`` = the server's default).
        max_tokens: Default output limit (bounds runaway generations of small models).
        is_local_demo: Results carry a "pipeline check, not a quality measure" flag.
    """

    structured_method: str
    max_concurrency: int
    concurrency_env: str
    timeout: float
    role_temperature: Mapping[str, float | None]
    max_tokens: int | None = None
    is_local_demo: bool = False
    chat_class: Callable[[], type[BaseChatModel]] | None = None  # makes the client's class; None: an OpenAI-compatible ChatOpenAI


#: Registry of providers; the keys are ``ModelInfo.provider`` values. ``register_provider`` adds one, and so does a
#: ``convoeval.providers`` entry point naming a ``ProviderDefaults`` (looked up the first time a spec names it).
PROVIDERS: dict[str, ProviderDefaults] = {
    # gpt-5 reasoning models accept only their default temperature, so none is sent.
    "openai": ProviderDefaults("json_schema", 8, "CONVOEVAL_MAX_CONCURRENCY", 120.0, {}, chat_class=_lean_chat_class),
    "openai-compatible": ProviderDefaults(
        "function_calling", 8, "CONVOEVAL_MAX_CONCURRENCY", 300.0, {"judge": 0.0}, chat_class=_compatible_chat_class
    ),
    # One slot: llama.cpp-python serves one request at a time; more in flight would only time out in its queue.
    # The simulator samples (seeded, so still reproducible) so that trials differ; judge and agent decode greedily.
    "local": ProviderDefaults(
        "function_calling", 1, "CONVOEVAL_LOCAL_CONCURRENCY", 600.0,
        {"simulator": 0.7, "judge": 0.0, "agent": 0.0}, max_tokens=768, is_local_demo=True,
        chat_class=_local_chat_class,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class _Resolved:
    """A fully resolved configuration: everything needed to build the client, but the key's value."""

    info: ModelInfo  # its base_url is the safe form (no credentials): it is recorded in results and cache rows
    api_key_env: str | None
    endpoint: str | None  # the base URL as configured, credentials included; only the client sees it
    temperature: float | None
    max_tokens: int | None
    timeout: float
    extra_body: tuple[tuple[str, Any], ...] | None


_CLIENTS: dict[tuple[_Resolved, str], BaseChatModel] = {}


#: A model, as every verb accepts one: a name (``gpt-5-mini``), ``"local"``, a mapping of settings, a ``ModelSpec``, a
#: LangChain chat model (used as it is), or ``None`` (the environment decides, per role; see ``docs/models.md``).
ModelLike: TypeAlias = "str | Mapping[str, Any] | ModelSpec | BaseChatModel | None"


def get_model(role: str, spec: str | Mapping[str, Any] | ModelSpec | None = None) -> BaseChatModel:
    """The chat model for ``role``: a ``ChatOpenAI`` bound to the resolved endpoint, built once and reused.

    Args:
        role: ``simulator``, ``judge`` or ``agent``.
        spec: ``None`` (environment decides), a model name, ``"local"``, or a ``ModelSpec`` / mapping of its fields.

    Returns:
        A ``langchain_openai.ChatOpenAI``; ``convoeval.llm.model_info(model)`` tells its provider and endpoint.

    Raises:
        ModelConfigError: Unknown role, or a configuration that names no usable endpoint.

    The embedded local model's server is not started here but on the model's first request (a replayed run never
    starts it); a server that cannot start makes that request raise ``LocalModelError``.

    ``get_model("judge", "gpt-4.1-mini")`` is OpenAI's model (it needs ``OPENAI_API_KEY``).

    Example:
        >>> from convoeval.llm import model_info
        >>> sim = get_model("simulator", "local")             # the embedded local model, started on first use
        >>> model_info(sim).provider
        'local'
    """
    resolved = resolve_model(role, spec)
    key_value = os.environ.get(resolved.api_key_env, "") if resolved.api_key_env else ""
    # The key's hash (never the key) is part of the client's identity, so a changed key builds a new client.
    cache_key = (resolved, hashlib.sha256(key_value.encode()).hexdigest())
    model = _CLIENTS.get(cache_key)
    if model is None:
        model = _CLIENTS[cache_key] = _build(resolved, key_value)
        register_model(model, resolved.info)
    return model


def as_chat_model(role: str, model: ModelLike = None) -> BaseChatModel:
    """``model`` itself when it is a chat model; else ``get_model(role, model)`` for ``None``, a name, ``"local"``, a
    mapping of settings or a ``ModelSpec`` — what every public verb accepts as ``model=``."""
    if model is None or isinstance(model, (str, Mapping, ModelSpec)):
        return get_model(role, model)
    return model


def clear_model_cache() -> None:
    """Forget the built clients (tests, or after changing environment variables in a notebook).

    LangChain also keeps one async HTTP client per endpoint for the whole process, bound to the event loop that first
    used it; it is forgotten too, so a model built afterwards on another loop never meets "Event loop is closed".
    """
    _CLIENTS.clear()
    try:  # a private cache of langchain-openai: skipped if a release renames it
        from langchain_openai.chat_models import _client_utils  # noqa: PLC0415 - private: may be gone in a release

        _client_utils._cached_async_httpx_client.cache_clear()
    except (ImportError, AttributeError):
        pass


def resolve_model(role: str, spec: str | Mapping[str, Any] | ModelSpec | None = None) -> _Resolved:
    """Resolve ``role`` and ``spec`` against the environment without building a client (no network, no server).

    For the local provider the ``base_url`` is left ``None``: it is known once the server runs.
    """
    if role not in MODEL_ROLES:
        raise ModelConfigError(f"unknown model role {role!r}; expected one of {MODEL_ROLES}")
    explicit = _as_spec(spec)
    from_env = _role_env_spec(role)
    merged = {**from_env.model_dump(exclude_none=True), **explicit.model_dump(exclude_none=True)}
    if explicit.model == "local" or (explicit.model is None and from_env.model == "local"):
        merged["provider"] = "local"
    chosen = ModelSpec(**{k: v for k, v in merged.items() if not (k == "model" and v == "local")})
    provider, model_name, base_url, key_env = _endpoint(role, chosen)
    defaults = provider_defaults(provider)
    structured = chosen.structured_method or _env_structured_method(provider) or defaults.structured_method
    concurrency = chosen.max_concurrency or int(os.environ.get(defaults.concurrency_env) or defaults.max_concurrency)
    info = ModelInfo(
        provider=provider,
        model=model_name,
        base_url=safe_url(base_url) if base_url else None,
        role=role,
        is_local_demo=defaults.is_local_demo and not os.environ.get("CONVOEVAL_LOCAL_MODEL"),
        structured_method=structured,
        max_concurrency=concurrency,
    )
    return _Resolved(
        info=info,
        api_key_env=key_env,
        endpoint=base_url,
        temperature=chosen.temperature if chosen.temperature is not None else defaults.role_temperature.get(role),
        max_tokens=chosen.max_tokens or defaults.max_tokens,
        timeout=chosen.timeout or float(os.environ.get("CONVOEVAL_LLM_TIMEOUT") or defaults.timeout),
        extra_body=tuple(sorted(chosen.extra_body.items())) if chosen.extra_body else None,
    )


def _as_spec(spec: str | Mapping[str, Any] | ModelSpec | None) -> ModelSpec:
    if spec is None:
        return ModelSpec()
    if isinstance(spec, ModelSpec):
        return spec
    if isinstance(spec, str):
        return ModelSpec(model=spec.strip())
    return ModelSpec(**dict(spec))


def _role_env_spec(role: str) -> ModelSpec:
    prefix = f"CONVOEVAL_{role.upper()}_"
    return ModelSpec(
        model=os.environ.get(prefix + "MODEL") or None,
        base_url=os.environ.get(prefix + "BASE_URL") or None,
        api_key_env=os.environ.get(prefix + "API_KEY_ENV") or None,
    )


def _env_structured_method(provider: str) -> str | None:
    if provider != "openai-compatible":
        return None
    method = os.environ.get("CONVOEVAL_STRUCTURED_METHOD")
    if method and method not in STRUCTURED_METHODS:
        raise ModelConfigError(f"CONVOEVAL_STRUCTURED_METHOD={method!r}; expected one of {STRUCTURED_METHODS}")
    return method


def _endpoint(role: str, spec: ModelSpec) -> tuple[str, str, str | None, str | None]:
    """``(provider, model, base_url, api_key_env)`` following the documented precedence."""
    from convoeval.llm.local import local_model_name  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    if spec.provider == "local":
        return "local", local_model_name(), None, None
    key_env = spec.api_key_env or ("OPENAI_API_KEY" if os.environ.get("OPENAI_API_KEY") else None)
    base_url = spec.base_url or (None if spec.provider == "openai" else os.environ.get("OPENAI_BASE_URL") or None)
    if spec.provider not in (None, "openai", "openai-compatible"):
        provider_defaults(spec.provider)  # an unknown provider is named before anything else is asked
        if not base_url:
            raise ModelConfigError(f"the {role} model's provider {spec.provider!r} needs a base_url")
    if base_url:
        model = spec.model or os.environ.get("OPENAI_MODEL") or _first_served_model(base_url, key_env)
        return spec.provider or "openai-compatible", model, base_url.rstrip("/"), key_env
    if key_env:
        return "openai", spec.model or os.environ.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL, None, key_env
    if spec.model is not None or spec.provider == "openai":
        raise ModelConfigError(
            f"the {role} model {spec.model or DEFAULT_OPENAI_MODEL!r} needs an endpoint: set OPENAI_API_KEY "
            f"(OpenAI), OPENAI_BASE_URL or CONVOEVAL_{role.upper()}_BASE_URL (an OpenAI-compatible server), "
            "or use 'local' for the embedded model"
        )
    return "local", local_model_name(), None, None


def _first_served_model(base_url: str, key_env: str | None) -> str:
    """Ask an OpenAI-compatible server which model it serves (``GET /models``), for a base URL without a name."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    if key_env and os.environ.get(key_env):
        request.add_header("Authorization", f"Bearer {os.environ[key_env]}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            models = json.loads(response.read()).get("data") or []
        return str(models[0]["id"])
    except Exception as exc:  # noqa: BLE001 - any failure means the same thing to the user
        raise ModelConfigError(
            f"no model name given for {base_url} and its /models list could not be read ({type(exc).__name__}); "
            "set OPENAI_MODEL or CONVOEVAL_<ROLE>_MODEL"
        ) from None


def _build(resolved: _Resolved, key_value: str) -> BaseChatModel:
    info = resolved.info
    if resolved.endpoint:
        hide_in_logs(resolved.endpoint)  # httpx logs each request's full URL: a proxy password would be in it
    kwargs: dict[str, Any] = {
        "model": info.model,
        "base_url": resolved.endpoint,
        # OpenAI-compatible servers without auth still need a non-empty key in the SDK; "EMPTY" is vLLM's convention.
        "api_key": key_value or "EMPTY",
        "max_retries": 0,  # acall_model retries, with Retry-After and a typed error; two layers would multiply
        "timeout": resolved.timeout,
        "use_responses_api": False,  # one code path (chat completions) for every provider
    }
    if resolved.temperature is not None:
        kwargs["temperature"] = resolved.temperature
    if resolved.max_tokens is not None:
        kwargs["max_tokens"] = resolved.max_tokens
    if resolved.extra_body:
        kwargs["extra_body"] = dict(resolved.extra_body)
    http_async_client = async_http_client(resolved.timeout, resolved.endpoint)
    if http_async_client is not None:
        kwargs["http_async_client"] = http_async_client
    if info.provider == "local":
        kwargs["base_url"] = _LOCAL_PLACEHOLDER
    chat_class = provider_defaults(info.provider).chat_class or _compatible_chat_class
    return chat_class()(**kwargs)


def register_provider(name: str, defaults: ProviderDefaults) -> None:
    """Make ``ModelSpec(provider=name, base_url=...)`` resolve with ``defaults`` (replacing a provider of that name)."""
    PROVIDERS[name] = defaults


def provider_defaults(name: str) -> ProviderDefaults:
    """The defaults of provider ``name``: registered here, else a ``convoeval.providers`` entry point (then registered).

    Raises:
        ModelConfigError: no such provider (the message lists the known ones), or its entry point cannot be loaded
            or does not name a ``ProviderDefaults``.
    """
    if name in PROVIDERS:
        return PROVIDERS[name]
    try:
        found = plugins.plugin_for(plugins.PROVIDER_GROUP, name, accepts=lambda v: isinstance(v, ProviderDefaults),
                                   expected="a ProviderDefaults", register=register_provider)
    except plugins.PluginError as exc:
        raise ModelConfigError(str(exc)) from None
    if isinstance(found, ProviderDefaults):  # plugin_for accepted nothing else
        return found
    known = sorted({*PROVIDERS, *plugins.plugin_names(plugins.PROVIDER_GROUP)})
    raise ModelConfigError(f"unknown model provider {name!r}; expected one of {', '.join(known)}")
