"""Agents under test: the protocol (``convoeval.agents.base``) and ``get_agent(target)``.

A target string picks an adapter through a registry keyed by the target's scheme (the text before the first ``:``):

=============================================  =================================================================
``clinic:<agent>`` / ``clinic:<agent>?faults=a,b``  built-in reference clinic agent, optionally with known faults
``http://…`` / ``https://…``                    HTTP webhook (``docs/agents-protocol.md``)
``openai-chat`` / ``openai-chat:<model>``       an OpenAI-compatible chat model with the clinic tools
``module:function`` / ``pkg.mod:function``      a Python callable ``fn(message, session)``, sync or async
=============================================  =================================================================

A registered scheme wins over a Python module of the same name. Adapters import their heavy dependencies lazily,
so importing this package stays cheap. ``register_agent`` adds a scheme (e.g. a team's in-house transport); another
package can add one without code here through a ``convoeval.agents`` entry point (``convoeval._util.plugins``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, overload
from urllib.parse import parse_qs

from convoeval._util import plugins
from convoeval._util.urls import safe_url
from convoeval.agents.base import Agent, AgentError, AgentLike, AgentReply, AgentSession, ToolCall

__all__ = [
    "Agent",
    "AgentError",
    "AgentLike",
    "AgentReply",
    "AgentSession",
    "AgentTarget",
    "ToolCall",
    "as_agent",
    "get_agent",
    "parse_clinic_target",
    "register_agent",
    "safe_target",
]


@dataclass(frozen=True)
class AgentTarget:
    """A target string split at its first ``:`` — ``scheme`` picks the factory, ``rest`` is its argument."""

    raw: str
    scheme: str
    rest: str


AgentFactory = Callable[..., Agent]
"""``factory(target: AgentTarget, **options) -> Agent``."""

_FACTORIES: dict[str, AgentFactory] = {}

ACCEPTED_FORMS = (
    "clinic:<agent>[?faults=a,b]",
    "module:function",
    "http://… or https://…",
    "openai-chat[:<model>]",
)


def register_agent(scheme: str, factory: AgentFactory) -> None:
    """Register (or replace) the factory for targets ``<scheme>:…``.

    Args:
        scheme: The text before the first ``:`` of the target (``"clinic"``, ``"https"``), or the whole target
            when it has no ``:`` (``"openai-chat"``).
        factory: Called as ``factory(AgentTarget, **options)``; returns an ``Agent``.
    """
    _FACTORIES[scheme] = factory


def parse_clinic_target(rest: str) -> tuple[str, list[str]]:
    """Split ``<agent>?faults=a,b`` into the agent name and its fault list.

    Args:
        rest: The target after ``clinic:``.

    Returns:
        ``(name, faults)``; faults keep their order, blanks dropped.

    Raises:
        ValueError: no agent name, or a query parameter other than ``faults``.
    """
    name, _, query = rest.partition("?")
    name = name.strip()
    if not name:
        raise ValueError("clinic target needs an agent name: 'clinic:<agent>[?faults=a,b]'")
    params = parse_qs(query, keep_blank_values=True) if query else {}
    unknown = sorted(set(params) - {"faults"})
    if unknown:
        raise ValueError(
            f"clinic target {rest!r}: unknown parameter(s) {', '.join(unknown)}; only 'faults' is accepted"
        )
    faults = [f.strip() for value in params.get("faults", []) for f in value.split(",") if f.strip()]
    return name, faults


def _clinic(target: AgentTarget, **options: Any) -> Agent:
    name, faults = parse_clinic_target(target.rest)
    # The reference agents' dialogue tables load with the first clinic target, not with `convoeval --help`.
    from convoeval.agents.clinic import make_clinic_agent  # noqa: PLC0415 - start-up budget (tests/test_startup.py)

    return make_clinic_agent(name, faults, **options)


def _webhook(target: AgentTarget, **options: Any) -> Agent:
    from convoeval.agents.webhook import WebhookAgent  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return WebhookAgent(target.raw, **options)


def as_agent(agent: AgentLike) -> Agent:
    """The agent under test from any form a run accepts (``AgentLike``).

    Args:
        agent: a target string (built by ``get_agent``), an ``Agent`` (used as it is), or a callable
            ``fn(message, session)``, sync or async (wrapped like a ``module:function`` target, named after it).

    Returns:
        An ``Agent``.

    Raises:
        ValueError: a target string ``get_agent`` refuses.
        TypeError: something that is neither a string, an ``Agent`` nor a callable.

    Example:
        >>> agent = as_agent(lambda message, session: "Olá!")
        >>> agent.name
        'python:<lambda>'
    """
    if isinstance(agent, str):
        return get_agent(agent)
    if isinstance(agent, Agent):
        return agent
    if callable(agent):
        from convoeval.agents.python_callable import PythonCallableAgent  # noqa: PLC0415 - start-up budget

        name = getattr(agent, "__qualname__", None) or type(agent).__name__
        return PythonCallableAgent(f"python:{name}", fn=agent)
    raise TypeError(f"an agent is a target string, an Agent or a callable(message, session), not {type(agent).__name__}")


def _openai_chat(target: AgentTarget, **options: Any) -> Agent:
    from convoeval.agents.openai_chat import OpenAIChatAgent  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return OpenAIChatAgent(target.rest.strip() or None, **options)


def _python_callable(target: AgentTarget, **options: Any) -> Agent:
    from convoeval.agents.python_callable import PythonCallableAgent  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    return PythonCallableAgent(target.raw, **options)


register_agent("clinic", _clinic)
register_agent("http", _webhook)
register_agent("https", _webhook)
register_agent("openai-chat", _openai_chat)


@overload
def safe_target(target: str) -> str: ...
@overload
def safe_target(target: None) -> None: ...
def safe_target(target: str | None) -> str | None:
    """A target fit for reports, frames and logs: an http(s) webhook URL without its credentials or query values.

    Every other form (``clinic:…``, ``module:function``, ``openai-chat:model``) holds no secret and is kept.

    Example:
        >>> safe_target("https://bot:s3cret@agent.example/hook?key=abc")
        'https://agent.example/hook?…'
    """
    if target is None or not target.lower().startswith(("http://", "https://")):
        return target

    return safe_url(target)


def get_agent(target: str, **options: Any) -> Agent:
    """Build the agent a target string names.

    Args:
        target: One of ``clinic:<agent>[?faults=a,b]``, ``module:function``, ``http(s)://…``,
            ``openai-chat[:<model>]``.
        **options: Passed to the adapter (e.g. ``timeout=``/``max_body_bytes=`` for webhooks, ``model=`` for
            ``openai-chat``).

    Returns:
        An ``Agent``: ``await agent.respond(message, session) -> AgentReply``.

    Raises:
        ValueError: the target matches no accepted form, or its adapter cannot be built from it (missing module,
            a function that cannot take ``(message, session)``, a malformed URL, ...). Failures *during* a
            conversation are ``AgentError``.

    Example (the agent answers inside a coroutine, so not run as a doctest)::

        agent = get_agent("clinic:billing?faults=invented_url")
        reply = await agent.respond("Oi, quero pagar", session)
    """
    from convoeval.agents.python_callable import TARGET_RE  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    if not isinstance(target, str) or not target.strip():
        raise ValueError(f"empty agent target; accepted forms: {', '.join(ACCEPTED_FORMS)}")
    target = target.strip()
    scheme, _, rest = target.partition(":")
    parsed = AgentTarget(raw=target, scheme=scheme, rest=rest)
    factory = _FACTORIES.get(scheme) or _plugin_factory(scheme)
    if factory is None and TARGET_RE.match(target):
        factory = _python_callable
    if factory is None:
        # A URL-like target may carry credentials: show its scheme only.
        shown = f"{scheme}://…" if "://" in target else target[:80]
        raise ValueError(
            f"unknown agent target {shown!r}; accepted forms: {', '.join(ACCEPTED_FORMS)} "
            f"(registered schemes: {', '.join(sorted({*_FACTORIES, *plugins.plugin_names(plugins.AGENT_GROUP)}))})"
        )
    return factory(parsed, **options)


def _plugin_factory(scheme: str) -> AgentFactory | None:
    """The factory another package declares for ``scheme`` (a ``convoeval.agents`` entry point), registered once found.

    Raises:
        ValueError: the entry point cannot be loaded, or what it names is not callable.
    """
    return plugins.plugin_for(plugins.AGENT_GROUP, scheme, accepts=callable, expected="a factory",
                              register=register_agent)
