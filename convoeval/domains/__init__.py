"""Domains: what an agent under test works in, as one registered thing.

A domain is its scenarios, its tools (the schemas an LLM agent is given and the implementations that run them on
that conversation's own copy of the domain's data), its policy (the agent's instructions) and its files (what
``convoeval validate`` checks). The clinic is one (``clinic``: the scenarios under ``evals/scenarios``, the clinic
tools over the fixtures store, the reference agents' prompts); τ²-bench's airline and retail are others
(``tau2:airline``, ``tau2:retail``: ``convoeval.tau2``). A name is ``<scheme>`` or ``<scheme>:<rest>``; the scheme
picks a factory ``factory(rest) -> Domain``, as an agent target's scheme picks an adapter. Another package adds a
scheme in code (``register_domain``) or through the ``convoeval.domains`` entry point::

    [project.entry-points."convoeval.domains"]
    bank = "my_package.domain:bank_domain"        # factory(rest: str) -> Domain

A scenario names its domain in ``domain`` (none: the clinic, whose tools the agents reach through the store as
they always did). For any other, the engine opens ``Domain.open_session(scenario, run_id)`` before the first turn,
hands it to the agent as ``AgentSession.tools`` and closes it after the assertions (``open_session`` below).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from convoeval._util import plugins
from convoeval.errors import ConvoevalError

if TYPE_CHECKING:
    from convoeval.scenarios import Scenario

__all__ = ["DOMAIN_GROUP", "Domain", "DomainError", "DomainSession", "check_domain", "domain_names", "domain_scenarios", "get_domain",
           "open_session", "register_domain"]

DOMAIN_GROUP = "convoeval.domains"


class DomainError(ConvoevalError, ValueError):
    """A domain name no factory knows, or a domain that cannot be loaded (the message names it and why)."""


@runtime_checkable
class DomainSession(Protocol):
    """One conversation's tools on its own copy of the domain's data (``AgentSession.tools``).

    ``specs`` are the tools' OpenAI function schemas, ``instructions`` the policy an LLM agent is given;
    ``call(name, arguments)`` runs one tool and returns its result (an error is a result too, as the domain words
    it: the agent may recover from it); ``calls`` lists every call made, in order; ``close()`` frees the copy.
    """

    specs: list[dict[str, Any]]
    instructions: str
    calls: list[Any]

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> object: ...

    def close(self) -> None: ...


@runtime_checkable
class Domain(Protocol):
    """A registered domain: its name, scenarios, files and a session per conversation."""

    name: str

    def scenarios(self) -> list[Scenario]: ...

    def files(self) -> list[Path]: ...

    def open_session(self, scenario: Scenario, run_id: str) -> DomainSession | None: ...


DomainFactory = Callable[[str], Domain]

#: The domains convoeval ships, as import paths (loaded on first use, like an entry point: the clinic's tools and
#: τ²'s bridge sit in layers above this one).
_BUILTIN: dict[str, str] = {
    "clinic": "convoeval.agents.clinic_domain:clinic_domain",
    "tau2": "convoeval.tau2.domain:tau2_domain",
}
_FACTORIES: dict[str, DomainFactory] = {}


def register_domain(scheme: str, factory: DomainFactory) -> None:
    """Register (or replace) the factory for domain names ``<scheme>`` and ``<scheme>:<rest>``."""
    _FACTORIES[scheme] = factory
    get_domain.cache_clear()


def domain_names() -> list[str]:
    """The schemes a domain name may start with: built in, registered, then declared by installed packages."""
    names = [*_BUILTIN, *_FACTORIES]
    return list(dict.fromkeys([*names, *plugins.plugin_names(DOMAIN_GROUP)]))


def _factory(scheme: str) -> DomainFactory | None:
    if scheme in _FACTORIES:
        return _FACTORIES[scheme]
    if scheme in _BUILTIN:
        module, _, attribute = _BUILTIN[scheme].partition(":")
        factory: DomainFactory = getattr(importlib.import_module(module), attribute)
        return factory
    try:
        found = plugins.plugin_for(DOMAIN_GROUP, scheme, accepts=callable, expected="a domain factory",
                                   register=register_domain)
    except plugins.PluginError as exc:
        raise DomainError(str(exc)) from None
    return found if callable(found) else None


@functools.cache
def get_domain(name: str) -> Domain:
    """The domain ``name`` names (``clinic``, ``tau2:airline``), built once per process.

    Raises:
        DomainError: no factory for its scheme (the known ones named), or the factory refused ``rest``.
    """
    scheme, _, rest = name.partition(":")
    factory = _factory(scheme)
    if factory is None:
        raise DomainError(f"unknown domain {name!r}; known: {', '.join(domain_names())} (a package adds one through "
                          f"the {DOMAIN_GROUP} entry point)")
    return factory(rest)


def open_session(scenario: Scenario, run_id: str) -> DomainSession | None:
    """The domain session of one conversation of ``scenario``; ``None`` for the clinic (its tools use the store)."""
    name = getattr(scenario, "domain", None)
    if not name or name == "clinic":
        return None
    return get_domain(name).open_session(scenario, run_id)


def domain_scenarios(name: str, *, scenario: str | None = None, type: str | None = None,  # noqa: A002 - as --type
                     error: Callable[[str], Exception] = DomainError) -> list[Scenario]:
    """The scenarios of domain ``name``; ``scenario`` keeps the one with that id or task id (``5`` for
    ``tau2-retail-5``), ``type`` one scenario type.

    Raises:
        DomainError: (or ``error``, e.g. a run's ``ConfigError``) an unknown domain, one that cannot be loaded (τ²
            not installed: the message says how), or a selection that keeps nothing.
    """
    try:
        found = get_domain(name).scenarios()
    except (ConvoevalError, ValueError, KeyError) as exc:
        raise error(str(exc) if isinstance(exc, DomainError) else f"domain {name}: {exc}") from None
    if scenario:  # one id, or several separated by commas
        wanted = [w.strip() for w in scenario.split(",") if w.strip()]
        found = [s for s in found if any(s.id == w or s.id.endswith(f"-{w}") for w in wanted)]
    found = [s for s in found if type is None or s.type == type]
    if not found:
        raise error(f"no scenario of domain {name} matches scenario={scenario}")
    return found


def check_domain(name: str) -> tuple[int, list[str]]:
    """What ``convoeval validate --domain NAME`` checks: the domain's files exist and every scenario it makes is
    valid. Returns the number of scenarios and one line per problem (none: the domain is sound)."""
    try:
        domain = get_domain(name)
        problems = [f"{name}: {path}: no such file" for path in domain.files() if not Path(path).exists()]
        count = len(domain.scenarios())
    except (ConvoevalError, ValueError, KeyError, OSError) as exc:
        return 0, [f"{name}: {exc}"]
    return count, problems
