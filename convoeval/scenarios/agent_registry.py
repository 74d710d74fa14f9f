"""The agent names a scenario may belong to: one registry, checked by the scenario model and every filter.

The reference clinic agents register here when they register themselves (``register_clinic_agent``), and so can
another package's agents. The six reference names are registered up front so that a scenario file validates
without importing the agents (the scenario layer sits below them); a test keeps this list equal to the clinic
registry's.
"""

from __future__ import annotations

#: The reference clinic agents' names (``convoeval.agents.clinic``).
REFERENCE_AGENTS = ("support", "scheduling", "confirmation", "nps", "billing", "recall")

_NAMES: dict[str, None] = dict.fromkeys(REFERENCE_AGENTS)


def register_agent_name(name: str) -> str:
    """Let scenarios name ``name`` as their ``agent`` (registering a name twice is harmless).

    Raises:
        ValueError: an empty name or one with spaces or a colon (it is a folder name and part of a target).
    """
    if not name or any(c.isspace() or c == ":" for c in name):
        raise ValueError(f"invalid agent name {name!r}: a non-empty name without spaces or ':'")
    _NAMES[name] = None
    return name


def agent_names() -> list[str]:
    """The agent names scenarios may use, in registration order."""
    return list(_NAMES)


def check_agent_name(name: str) -> str:
    """``name`` when it is a registered agent name.

    Raises:
        ValueError: an unknown name; the message lists the registered ones.
    """
    if name not in _NAMES:
        raise ValueError(f"unknown agent {name!r}; expected one of {', '.join(_NAMES)}")
    return name
