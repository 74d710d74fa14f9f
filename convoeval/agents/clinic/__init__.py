"""The built-in reference clinic agents: deterministic WhatsApp-style dialogue policies with known faults.

``make_clinic_agent("billing", faults=["rude_tone"])`` builds one (the ``clinic:billing?faults=rude_tone`` target).
``FAULTS`` lists every documented fault with the rubric criteria and assertions it breaks; ``faults_for(agent)``
lists one agent's. See ``docs/agents.md``.

Adding an agent: write ``convoeval/agents/clinic/<name>.py`` with a ``ClinicAgent`` subclass decorated by
``@register_clinic_agent("<name>", faults=[...])``. Every public (non-underscore) module of this package is imported
here, so the new agent registers itself; the framework lives in the underscore modules.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

from convoeval.agents.clinic._agent import HANDED_OFF, ClinicAgent, ClinicConversation, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._nlu import Understanding, understand
from convoeval.agents.clinic._registry import (
    FAULTS,
    clinic_agent_names,
    faults_for,
    make_clinic_agent,
    register_clinic_agent,
)

__all__ = [
    "FAULTS",
    "HANDED_OFF",
    "ClinicAgent",
    "ClinicConversation",
    "Fault",
    "Turn",
    "Understanding",
    "clinic_agent_names",
    "faults_for",
    "make_clinic_agent",
    "register_clinic_agent",
    "understand",
]



def __getattr__(name: str) -> object:
    """``Conversation``, this package's name for ``ClinicConversation`` until the engine's ``Conversation`` took it
    (``convoeval.pipeline.Conversation``): kept one release, with a ``DeprecationWarning``."""
    if name == "Conversation":
        warnings.warn("convoeval.agents.clinic.Conversation is ClinicConversation now (convoeval.pipeline.Conversation "
                      "is the engine's); the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return ClinicConversation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Agent modules register themselves on import; discovering them keeps this file free of per-agent edits.
for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
