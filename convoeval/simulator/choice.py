"""Which simulated patient a run uses: the agenda-based patient or the LLM patient (``resolve_simulator``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from convoeval.llm.types import model_info

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

__all__ = ["SIMULATORS", "SimulatorKind", "resolve_simulator"]

SimulatorKind = Literal["agenda", "llm"]
#: The simulated patients: ``agenda`` (rules decide, the model voices; ``convoeval.simulator.agenda``) and ``llm``
#: (the model plays the patient; ``convoeval.simulator.patient``).
SIMULATORS: tuple[SimulatorKind, ...] = ("agenda", "llm")


def resolve_simulator(choice: str | None, model: BaseChatModel | None = None) -> SimulatorKind:
    """The simulator a run uses: ``choice`` when given; else ``agenda`` on the embedded local model (which cannot
    play a patient by itself) and ``llm`` on any other model.

    Raises:
        ValueError: ``choice`` is neither ``agenda``, ``llm`` nor ``None``.

    Example:
        >>> resolve_simulator("agenda"), resolve_simulator(None, None)
        ('agenda', 'llm')
    """
    if choice is not None:
        if choice not in SIMULATORS:
            raise ValueError(f"simulator must be 'agenda', 'llm' or None (the model decides), got {choice!r}")
        return choice
    if model is None:
        return "llm"
    return "agenda" if model_info(model).provider == "local" else "llm"
