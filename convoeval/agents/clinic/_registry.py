"""The registry of reference clinic agents and their known faults."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from convoeval.agents.clinic._agent import ClinicAgent
from convoeval.agents.clinic._fault import Fault
from convoeval.scenarios import assertion_keys, did_you_mean, register_agent_name

#: Every known fault of every registered agent, keyed ``agent:name`` (``billing:rude_tone``).
FAULTS: dict[str, Fault] = {}
_AGENTS: dict[str, type[ClinicAgent]] = {}

A = TypeVar("A", bound="type[ClinicAgent]")


def register_clinic_agent(name: str, *, faults: Sequence[Fault] = ()) -> Callable[[A], A]:
    """Class decorator: make ``ClinicAgent`` subclass available as ``clinic:<name>``, with its known faults.

    Raises:
        ValueError: a name registered twice, a fault of another agent, a duplicate fault, or an unknown
            assertion key in ``breaks_assertions``.
    """

    def register(cls: A) -> A:
        if name in _AGENTS and _AGENTS[name] is not cls:
            raise ValueError(f"clinic agent {name!r} is already registered by {_AGENTS[name].__qualname__}")
        known: dict[str, Fault] = {}
        for fault in faults:
            if fault.agent != name:
                raise ValueError(f"fault {fault.name!r} belongs to {fault.agent!r}, not {name!r}")
            if fault.name in known:
                raise ValueError(f"fault {fault.name!r} is declared twice for {name!r}")
            unknown = [a for a in fault.breaks_assertions if a not in assertion_keys(plugins=False)]
            if unknown:
                raise ValueError(f"fault {fault.key!r} names unknown assertion(s): {', '.join(unknown)}")
            known[fault.name] = fault
        cls.agent = name
        cls.known_faults = known
        _AGENTS[name] = cls
        register_agent_name(name)  # scenarios may now name it as their agent
        FAULTS.update({f.key: f for f in known.values()})
        return cls

    return register


def clinic_agent_names() -> list[str]:
    """The registered reference agents, sorted."""
    return sorted(_AGENTS)


def _agent_class(name: str) -> type[ClinicAgent]:
    bare = name.removeprefix("clinic:")
    if bare not in _AGENTS:
        raise ValueError(f"unknown clinic agent {name!r}{did_you_mean(bare, _AGENTS)}; "
                         f"expected one of {', '.join(clinic_agent_names())}")
    return _AGENTS[bare]


def faults_for(agent: str) -> list[Fault]:
    """The known faults of one reference agent, in declaration order.

    Raises:
        ValueError: unknown agent (the message lists the registered ones).
    """
    return list(_agent_class(agent).known_faults.values())


def make_clinic_agent(name: str, faults: Iterable[str] = (), **options: object) -> ClinicAgent:
    """A fresh reference clinic agent, optionally with known faults.

    Args:
        name: ``billing``, ``support``, … (a ``clinic:`` prefix is accepted).
        faults: names of this agent's known faults to switch on.
        **options: none are accepted today; present so ``get_agent(target, **options)`` fails clearly.

    Returns:
        An ``Agent`` whose ``name`` is ``clinic:<name>`` (plus ``?faults=a,b`` when faults are on).

    Raises:
        ValueError: unknown agent, fault or option; the message lists the valid ones.

    Example:
        >>> agent = make_clinic_agent("billing", faults=["rude_tone"])
        >>> agent.name
        'clinic:billing?faults=rude_tone'
    """
    cls = _agent_class(name)
    if options:
        raise ValueError(f"clinic agents take no options, got: {', '.join(sorted(options))}")
    return cls(faults)

