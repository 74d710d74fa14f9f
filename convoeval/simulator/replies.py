"""Reading the simulated patient's reply: its message and stop signal, echoes of the agent, stray dialogue labels."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:

    pass

from convoeval.simulator.prompts import AGENT_LABEL, SIMULATOR_PROMPT_VERSION, STOP_SIGNALS, StopSignal

#: A patient message is an echo of the agent's when at least this share of its words (stop markers aside) is
#: copied from the agent's last message, in runs of 3 words or more (the whole message when it is shorter).
ECHO_RATIO = 0.5


ECHO_MIN_RUN = 3


@dataclass(frozen=True)
class SimulatorTurn:
    """The patient's next message and its stop signal (``None`` to carry on).

    ``raw`` and ``result`` (the LLM layer's ``LLMResult``: model, tokens, latency, cache hit) are kept for the
    transcript's accounting columns and for debugging; they do not take part in equality, so
    ``SimulatorTurn("Oi", None)`` compares as expected. ``echoed`` names the stop markers removed from ``message``
    because the patient only repeated them from the agent (not stop signals).
    """

    message: str
    signal: StopSignal | None
    raw: str = field(default="", compare=False)
    echoed: tuple[StopSignal, ...] = field(default=(), compare=False)
    prompt_version: str = field(default=SIMULATOR_PROMPT_VERSION, compare=False)
    result: Any = field(default=None, compare=False, repr=False)
    #: How the message was made: ``"llm"`` (the LLM patient), ``"model"`` (the agenda patient's act, voiced by the
    #: model) or ``"template"`` (the agenda patient's act, said by its template bank).
    voice: str = field(default="llm", compare=False)
    #: The agenda patient's act (``give_fact:cpf``); empty for the LLM patient.
    act: str = field(default="", compare=False)
    #: Why the model's rewrite was not kept (the agenda patient's voice checks), when the template spoke.
    voice_problem: str | None = field(default=None, compare=False)


def parse_simulator_response(raw: str, *, agent_said: Sequence[str] = ()) -> SimulatorTurn:
    """Split the model's reply into the message and a stop signal, minus the agent's echoes.

    The first signal found (in ``STOP_SIGNALS`` order) wins; its first ``[TAG]`` is removed and the rest trimmed.
    A marker that is also in ``agent_said`` (the agent's messages since the patient last spoke), in a reply that
    is an echo of them (see ``is_echo``), is not a signal: every copy of it is removed and it is listed in
    ``echoed``.

    Args:
        raw: The simulator's reply.
        agent_said: The agent's last message(s), which the patient is answering.

    Example:
        >>> turn = parse_simulator_response("Obrigado! [GOAL_COMPLETE]")
        >>> turn.message, turn.signal
        ('Obrigado!', 'GOAL_COMPLETE')
        >>> turn = parse_simulator_response("Pagamento confirmado! [GOAL_COMPLETE]",
        ...                                 agent_said=["Pagamento confirmado! [GOAL_COMPLETE]"])
        >>> turn.signal, turn.message, turn.echoed
        (None, 'Pagamento confirmado!', ('GOAL_COMPLETE',))
    """
    message = raw.strip()
    echoed = echoed_markers(message, agent_said)
    for s in echoed:
        message = message.replace(f"[{s}]", "").strip()
    signal: StopSignal | None = None
    for s in STOP_SIGNALS:
        tag = f"[{s}]"
        if tag in message:
            signal = s
            message = message.replace(tag, "", 1).strip()
            break
    return SimulatorTurn(message=message, signal=signal, raw=raw, echoed=echoed)


def echoed_markers(message: str, agent_said: Sequence[str]) -> tuple[StopSignal, ...]:
    """The stop markers of ``message`` that the patient only repeated from ``agent_said``.

    A marker counts as repeated when the agent wrote it too and ``message`` is an echo of the agent's words; a
    patient who answers in words of its own (``"Obrigada! [GOAL_COMPLETE]"`` after a confirmation) keeps its signal.
    """
    shared = tuple(s for s in STOP_SIGNALS if f"[{s}]" in message and any(f"[{s}]" in a for a in agent_said))
    if shared and is_echo(message, agent_said):
        return shared
    return ()


_WORD = re.compile(r"\w+")


_MARKERS = re.compile("|".join(re.escape(f"[{s}]") for s in STOP_SIGNALS))


def _words(text: str) -> list[str]:
    return _WORD.findall(_MARKERS.sub(" ", text).casefold())


def is_echo(message: str, agent_said: Sequence[str], *, ratio: float = ECHO_RATIO) -> bool:
    """Whether ``message`` mostly repeats ``agent_said``: at least ``ratio`` of its words (stop markers aside) copied
    from the agent's, in order, in runs of ``ECHO_MIN_RUN`` words (or the whole message when shorter).

    A message that is nothing but markers is an echo: the patient added nothing of its own.

    Example:
        >>> is_echo("Seu pagamento foi confirmado!", ["Pronto! Seu pagamento foi confirmado."])
        True
        >>> is_echo("Obrigada, paguei agora mesmo", ["Seu pagamento foi confirmado."])
        False
    """
    said = _words(message)
    if not said:
        return True
    agent = [w for text in agent_said for w in _words(text)]
    min_run = min(ECHO_MIN_RUN, len(said))
    matcher = difflib.SequenceMatcher(None, agent, said, autojunk=False)
    copied = sum(block.size for block in matcher.get_matching_blocks() if block.size >= min_run)
    return copied / len(said) >= ratio


@functools.lru_cache(maxsize=256)
def _label_pattern(persona_name: str) -> re.Pattern[str]:
    names = [re.escape(persona_name), re.escape(persona_name.split()[0]) if persona_name.split() else "", "patient",
             "paciente", "you", "você", "voce", "user"]
    alternatives = "|".join(n for n in names if n)
    return re.compile(rf"^\s*(?:{alternatives})(?:\s*\([^)]*\))?\s*:\s*", re.IGNORECASE)


_AGENT_LINE = re.compile(rf"^\s*(?:{AGENT_LABEL}|agent|assistant|assistente|clinic|clínica|clinica)\b[^:\n]{{0,20}}:",
                         re.IGNORECASE | re.MULTILINE)


_QUOTES = {'"': '"', "'": "'", "“": "”", "«": "»"}


def clean_simulator_reply(raw: str, persona_name: str) -> str:
    """Undo what small models add around the patient's line: a speaker label, the chatbot's next line, quotes.

    Applied before ``parse_simulator_response``; a clean reply passes through unchanged.
    """
    text = raw.strip()
    match = _AGENT_LINE.search(text)
    if match and match.start() > 0:
        text = text[: match.start()].rstrip()  # the model went on to write the chatbot's reply too
    text = _label_pattern(persona_name).sub("", text, count=1).strip()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text
