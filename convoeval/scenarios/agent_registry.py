"""The agent names a scenario may belong to: one registry, checked by the scenario model and every filter.

The reference clinic agents register here when they register themselves (``register_clinic_agent``), and so can
another package's agents. The six reference names are registered up front so that a scenario file validates
without importing the agents (the scenario layer sits below them); a test keeps this list equal to the clinic
registry's.
"""

from __future__ import annotations

from collections.abc import Iterable

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
        raise ValueError(f"unknown agent {name!r}{did_you_mean(name, _NAMES)}; expected one of {', '.join(_NAMES)}")
    return name


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'billing'?)`` when ``word`` looks like a typo of one of ``known``, else ``""``.

    Every refusal of a name (an agent, a fault, a notebook parameter) appends it, so a mistyped name is answered
    with the name meant rather than only the whole list.

    Example:
        >>> did_you_mean("biling", ["support", "billing"])
        " (did you mean 'billing'?)"
    """
    import difflib  # noqa: PLC0415 - only a refusal needs it; `convoeval --help` does not load it (tests/test_startup.py)

    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
