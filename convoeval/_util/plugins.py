"""Extensions from other packages, through entry points: agent transports, stores and model providers.

A package adds to convoeval without touching it by declaring entry points in its own ``pyproject.toml``; the
name is the scheme, the value the factory the registry would otherwise get from ``register_*``::

    [project.entry-points."convoeval.agents"]
    grpc = "my_package.transport:grpc_agent"        # factory(target: AgentTarget, **options) -> Agent

    [project.entry-points."convoeval.stores"]
    mysql = "my_package.store:open_mysql"           # factory(url: str) -> Store

    [project.entry-points."convoeval.providers"]
    acme = "my_package.models:ACME"                 # a ProviderDefaults

A registry looks here only for a name it does not hold, loads that one entry point (a broken plugin never stops
an unrelated one), and keeps what it loaded. What is registered in code wins over an entry point of the same name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from convoeval.errors import ConvoevalError

__all__ = ["AGENT_GROUP", "PROVIDER_GROUP", "STORE_GROUP", "PluginError", "clear_plugin_cache", "load_plugin", "plugin_names",
           "plugin_for"]

AGENT_GROUP = "convoeval.agents"
STORE_GROUP = "convoeval.stores"
PROVIDER_GROUP = "convoeval.providers"


class PluginError(ConvoevalError, ValueError):
    """An entry point that names something that cannot be imported, or a name two packages both declare."""


@functools.cache
def _group(group: str) -> dict[str, list[EntryPoint]]:
    # Scanning the installed distributions takes milliseconds: once per group per process (see clear_plugin_cache).
    found: dict[str, list[EntryPoint]] = {}
    for point in entry_points(group=group):
        found.setdefault(point.name, []).append(point)
    return found


def plugin_names(group: str) -> list[str]:
    """The names other packages declare in ``group``, sorted (nothing is imported)."""
    return sorted(_group(group))


def load_plugin(group: str, name: str) -> Any | None:
    """What the entry point ``name`` of ``group`` names, imported; ``None`` when no package declares it.

    Raises:
        PluginError: the entry point cannot be loaded (the message names it and the reason), or two distributions
            declare the same name.
    """
    points = _group(group).get(name, [])
    if not points:
        return None
    if len({p.value for p in points}) > 1:
        values = ", ".join(sorted(p.value for p in points))
        raise PluginError(f"the {group} entry point {name!r} is declared twice ({values}); uninstall one")
    try:
        return points[0].load()
    except Exception as exc:  # noqa: BLE001 - any import failure of a third-party module is reported the same way
        raise PluginError(f"the {group} entry point {name!r} ({points[0].value}) cannot be loaded: "
                          f"{type(exc).__name__}: {exc}") from None


def plugin_for(group: str, name: str, *, accepts: Callable[[Any], bool], expected: str,
               register: Callable[[str, Any], Any]) -> Any | None:
    """A registry's look-up of ``name`` among the entry points: loaded, checked, registered, returned (None: absent).

    Args:
        group: The entry point group.
        name: The name the registry does not hold.
        accepts: Whether what the entry point names is usable (e.g. ``callable``).
        expected: What it should be, for the error (``"a factory"``).
        register: The registry's own ``register_*`` function, called as ``register(name, value)``.

    Raises:
        PluginError: the entry point cannot be loaded, or names something ``accepts`` refuses.
    """
    found = load_plugin(group, name)
    if found is None:
        return None
    if not accepts(found):
        raise PluginError(f"the {group} entry point {name!r} names {type(found).__name__}, not {expected}")
    register(name, found)
    return found


def clear_plugin_cache() -> None:
    """Forget the entry points read so far (after installing a package in a running process, and in tests)."""
    _group.cache_clear()
