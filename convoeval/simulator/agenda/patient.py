"""The agenda-based patient's next turn (``aagenda_turn``): read the agent, pick the act, voice it.

1. The agent's messages so far are read as dialogue acts (rules; where they find nothing in the last message and a
   model is given, the model as a constrained classifier).
2. The policy, rebuilt from those messages (``AgendaPolicy.replay``), picks the patient's act and its stop signal.
3. A template says the act (the draft); the model rewrites the draft in the persona's style, and the rewrite is kept
   when it passes ``voice_problem``'s checks. The turn records which: ``voice`` is ``"model"`` or ``"template"``.

A failed model call (after the LLM layer's retries) raises, as the LLM patient's does: the conversation ends
``error`` with the reason, never with a silently weaker patient.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from convoeval.fidelity import KnownFacts
from convoeval.llm import SampleIdentity, acall_model
from convoeval.scenarios.models import ConversationalScenario
from convoeval.simulator.agenda.acts import AgentActs, PatientAct
from convoeval.simulator.agenda.classify import aclassify_agent
from convoeval.simulator.agenda.policy import AgendaPolicy, turn_rng
from convoeval.simulator.agenda.templates import render
from convoeval.simulator.agenda.understand import read_agent
from convoeval.simulator.agenda.voice import VOICE_PROMPT_VERSION, clean_voice, voice_messages, voice_problem
from convoeval.simulator.replies import SimulatorTurn

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

__all__ = ["AGENDA_PROMPT_VERSION", "VOICE_MAX_TOKENS", "VOICE_TEMPERATURE", "aagenda_turn"]

log = logging.getLogger(__name__)

#: Recorded in every agenda patient row's ``prompt_version``.
AGENDA_PROMPT_VERSION = f"agenda-v1/{VOICE_PROMPT_VERSION}"
#: A rewrite is one or two short sentences.
VOICE_MAX_TOKENS = 80
#: Seeded rewrites sample (a different seed, another wording); temperature 0 would give every seed one wording, and
#: at 0.7 the 0.5B model invents words ("Peito, muito obrigado!").
VOICE_TEMPERATURE = 0.4


def _messages_of(entries: Sequence[dict[str, Any]], role: str) -> list[str]:
    return [str(e.get("text") or e.get("message") or "") for e in entries if e.get("role") == role]


async def _agent_acts(texts: list[str], scenario: ConversationalScenario, *, model: BaseChatModel | None,
                      seed: int | None,
                      trial: int) -> list[AgentActs | None]:
    """Each agent message's acts; the model labels those the rules cannot read (when a model is given)."""
    acts: list[AgentActs | None] = []
    for i, text in enumerate(texts):
        read = read_agent(text, scenario.locale)
        if read.acts == ("other",) and model is not None and text.strip():
            # The policy is rebuilt from every agent message each turn: a label is asked for once per message,
            # not once per turn (with the response cache off, the same call would be made again every turn).
            key = (scenario.id, seed, trial, i, text)
            if key not in _LABELLED:
                identity = SampleIdentity(scenario=scenario.id, seed=seed, trial=trial, role="simulator",
                                          turn=i + 1, extra="agenda-classify")
                _LABELLED[key] = await aclassify_agent(text, model=model, identity=identity)
                while len(_LABELLED) > _LABELLED_MAX:
                    _LABELLED.pop(next(iter(_LABELLED)))
            read = _LABELLED[key]
        acts.append(read)
    return acts


#: The classifier's labels of this process, by conversation and message (oldest dropped first).
_LABELLED: dict[tuple[str, int | None, int, int, str], AgentActs] = {}
_LABELLED_MAX = 4096


async def aagenda_turn(
    transcript: Sequence[dict[str, Any]],
    *,
    scenario: ConversationalScenario,
    model: BaseChatModel | None = None,
    seed: int | None = None,
    turn: int | None = None,
    trial: int = 1,
    voice: bool = True,
    identity: SampleIdentity | None = None,
) -> SimulatorTurn:
    """The agenda-based patient's next message.

    Args:
        transcript: the conversation so far, as entries (``role`` + ``text``); empty: the patient opens.
        scenario: the conversational scenario (its ``agenda``, persona and locale).
        model: the chat model that voices the patient and classifies what the rules cannot read; ``None``: templates
            and rules only.
        seed: the conversation's seed (default: the scenario's).
        turn: 0-based index of the patient message being written (default: the patient messages so far).
        trial: the trial number (part of every seeded choice and sample identity).
        voice: let the model rewrite the template (``False``: templates only).
        identity: the voice call's sample identity (default: scenario, seed, trial, turn).

    Returns:
        A ``SimulatorTurn`` whose ``voice`` is ``"model"`` or ``"template"`` and whose ``act`` names the patient's act.

    Raises:
        LLMError: a model call failed after the LLM layer's retries.
    """
    seed = scenario.seed if seed is None else seed
    entries = list(transcript)
    turn = len(_messages_of(entries, "patient")) if turn is None else turn
    agent_texts = _messages_of(entries, "agent")
    acts = await _agent_acts(agent_texts, scenario, model=model, seed=seed, trial=trial)
    _, act = AgendaPolicy.replay(scenario, agent_texts, seed=seed, trial=trial, acts=acts)
    rng = turn_rng(scenario, seed, trial, turn + 1)
    earlier = frozenset(_messages_of(entries, "patient"))
    draft = render(act, scenario.locale, rng, avoid=earlier)
    if not voice or model is None:
        return _turn(draft, act, "template")
    identity = identity or SampleIdentity(scenario=scenario.id, seed=seed, trial=trial, role="simulator", turn=turn,
                                          extra="agenda-voice")
    persona = scenario.persona
    result = await acall_model(
        model, voice_messages(draft, name=persona.name, traits=persona.traits or (), locale=scenario.locale),
        identity=identity, seed=None if seed is None else seed + turn,
        temperature=VOICE_TEMPERATURE, max_tokens=VOICE_MAX_TOKENS)
    text = clean_voice(result.text or "", persona.name)
    known = KnownFacts(scenario)
    for said in agent_texts:
        known.add(said)
    problem = voice_problem(text, draft, act, locale=scenario.locale, persona_name=persona.name, known=known,
                            agent_said=agent_texts[-1] if agent_texts else "")
    if problem is None and text in earlier:
        problem = "repeats an earlier message"
    if problem is not None:
        log.debug("turn %s: the voice's rewrite %r was not kept (%s); the template speaks", turn, text, problem)
        return _turn(draft, act, "template", result=result, raw=text, problem=problem)
    return _turn(text, act, "model", result=result, raw=draft)


def _turn(message: str, act: PatientAct, voice: str, *, result: Any = None, raw: str = "",
          problem: str | None = None) -> SimulatorTurn:
    return SimulatorTurn(message=message, signal=act.signal,  # type: ignore[arg-type]
                         raw=raw or message, prompt_version=AGENDA_PROMPT_VERSION, result=result, voice=voice,
                         act=act.label, voice_problem=problem)
