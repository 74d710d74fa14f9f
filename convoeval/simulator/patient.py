"""The simulated patient's next turn: one LLM call per turn (seeded, cached), its reply read into a message and a stop
signal; ``simulate`` over a whole transcript frame, ``asimulate`` inside a running conversation."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from convoeval import frames as F
from convoeval._util.aio import blocking
from convoeval.frames import CONVERSATION_KEYS, TRANSCRIPT_SCHEMA
from convoeval.llm import LLMError, SampleIdentity, acall_model
from convoeval.llm.models import ModelLike, as_chat_model, get_model
from convoeval.scenarios import scenarios_by_id
from convoeval.scenarios.models import ConversationalScenario, Scenario

if TYPE_CHECKING:
    import pandas as pd

from convoeval.simulator.agenda.patient import aagenda_turn
from convoeval.simulator.choice import resolve_simulator
from convoeval.simulator.prompts import (
    DEFAULT_FRAMING,
    SIMULATOR_PROMPT_VERSION,
    Framing,
    _agent_since_patient,
    _count_patient,
    build_simulator_messages,
    build_simulator_prompt,
    persona_fields,
)
from convoeval.simulator.replies import SimulatorTurn, clean_simulator_reply, parse_simulator_response

log = logging.getLogger(__name__)


#: The sampling temperature of unseeded runs (varied patients); seeded runs use 0.
UNSEEDED_TEMPERATURE = 0.7


#: A patient writes 1–3 sentences; the cap stops a small model that never stops.
DEFAULT_MAX_TOKENS = 200


class SimulatorError(LLMError):
    """The simulator produced no usable message (e.g. an empty reply without a stop signal)."""


async def apatient_turn(
    transcript: pd.DataFrame | Sequence[Any] = (),
    *,
    scenario: ConversationalScenario | None = None,
    persona_name: str | None = None,
    goal: str | None = None,
    traits: Sequence[str] | None = None,
    locale: str | None = None,
    knows: Mapping[str, Any] | None = None,
    model: ModelLike = None,
    seed: int | None = None,
    turn: int | None = None,
    trial: int = 1,
    identity: SampleIdentity | None = None,
    framing: Framing = DEFAULT_FRAMING,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    temperature: float | None = None,
) -> SimulatorTurn:
    """Ask the simulator model for the patient's next message.

    Args:
        transcript: The conversation so far: a transcript frame of one conversation or a list of entries
            (``role`` + ``text``/``message``). Empty means the patient speaks first.
        scenario: A conversational scenario supplying persona, goal, traits, locale, known facts and seed.
        persona_name, goal, traits, locale, knows: The same fields given one by one (they override the scenario's).
        model: A chat model; default ``convoeval.llm.models.get_model("simulator")``.
        seed: Base seed; seeded calls use temperature 0 and ``seed + turn``. Defaults to the scenario's seed.
        turn: 0-based index of the patient message being written; defaults to the patient messages so far.
        trial: Trial number, part of the sample identity.
        identity: Overrides the sample identity built from scenario, seed, trial and turn.
        framing: ``"chat"`` (role inversion, the default) or ``"transcript"``.
        max_tokens: Reply length cap.
        temperature: Overrides the sampling temperature (default: 0 when seeded, ``UNSEEDED_TEMPERATURE`` otherwise);
            a re-simulation samples with its seed (``convoeval.simulator.gate``).

    Returns:
        The parsed ``SimulatorTurn`` (message, signal, plus the raw reply and the call's accounting).

    Raises:
        SimulatorError: the reply is empty and carries no stop signal (or only markers echoed from the agent).
        LLMError: the call failed after the LLM layer's retries.

    Example:
        ``await apatient_turn(...)`` in a coroutine or a notebook cell; here with the fake model:

        >>> import asyncio
        >>> from convoeval.testing import FakeChatModel
        >>> turn = asyncio.run(apatient_turn([], persona_name="Maria", goal="pay her invoice", locale="en",
        ...                                  model=FakeChatModel(replies=["Hi! I'd like to pay my invoice."])))
        >>> turn.message, turn.signal
        ("Hi! I'd like to pay my invoice.", None)
    """
    fields = persona_fields(scenario) if scenario is not None else {}
    overrides = {"persona_name": persona_name, "goal": goal, "traits": traits, "locale": locale, "knows": knows}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    missing = [k for k in ("persona_name", "goal", "locale") if not fields.get(k)]
    if missing:
        raise ValueError(f"simulate needs a scenario or {', '.join(missing)}")
    if seed is None and scenario is not None:
        seed = scenario.seed

    entries = F.as_entries(transcript)
    turn = _count_patient(entries) if turn is None else turn
    system_prompt = build_simulator_prompt(**fields)
    messages = build_simulator_messages(
        entries, system_prompt, persona_name=fields["persona_name"], goal=fields["goal"], locale=fields["locale"],
        framing=framing,
    )
    if identity is None:
        name = scenario.id if scenario is not None else f"persona:{fields['persona_name']}"
        identity = SampleIdentity(scenario=name, seed=seed, trial=trial, role="simulator", turn=turn, extra=framing)
    if model is None:

        model = get_model("simulator")

    result = await acall_model(
        model,
        messages,
        identity=identity,
        seed=None if seed is None else seed + turn,
        temperature=temperature if temperature is not None else 0 if seed is not None else UNSEEDED_TEMPERATURE,
        max_tokens=max_tokens,
    )
    raw = result.text or ""
    parsed = parse_simulator_response(clean_simulator_reply(raw, fields["persona_name"]),
                                      agent_said=_agent_since_patient(entries))
    if parsed.echoed:
        markers = ", ".join(f"[{s}]" for s in parsed.echoed)
        log.info("turn %s: the simulated patient echoed the agent's %s; not a stop signal", turn, markers)
        if not parsed.message and parsed.signal is None:
            raise SimulatorError(f"the simulated patient only repeated the agent's {markers} at turn {turn} "
                                 f"(raw reply: {raw[:80]!r})")
    if not parsed.message and parsed.signal is None:
        raise SimulatorError(f"the simulator returned an empty message at turn {turn} (raw reply: {raw[:80]!r})")
    return SimulatorTurn(
        message=parsed.message,
        signal=parsed.signal,
        raw=raw,
        echoed=parsed.echoed,
        prompt_version=f"{SIMULATOR_PROMPT_VERSION}/{framing}",
        result=result,
    )


async def asimulate(
    transcript: pd.DataFrame | Sequence[Any] = (),
    *,
    scenario: str | ConversationalScenario | None = None,
    model: ModelLike = None,
    seed: int | None = None,
    trial: int = 1,
    framing: Framing = DEFAULT_FRAMING,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    simulator: str | None = None,
) -> pd.DataFrame:
    """The simulated patient's next message in each conversation, as transcript rows (``simulate``: blocking).

    The result has the transcript's columns and dtypes, the next ``turn`` number and the stop signal in ``signal``,
    so ``pd.concat([transcript, simulate(transcript)])`` continues the conversations.

    Args:
        transcript: the conversations so far: a transcript frame of one or many conversations, or one conversation
            as a list of message dicts (``role``, ``text``). Empty: the patient opens a new conversation.
        scenario: a scenario object or a project scenario's id; default each conversation's ``scenario`` column.
        model: a model name, ``"local"``, a mapping of model settings or a chat model (default: the environment's
            simulator model).
        seed: the simulator seed (default: each conversation's ``seed``, else the scenario's).
        trial: the trial number, where the transcript has none.
        framing: ``"chat"`` or ``"transcript"`` (see ``apatient_turn``; the LLM patient's).
        max_tokens: reply length cap (the LLM patient's).
        simulator: ``"agenda"`` (rules decide, the model voices: ``convoeval.simulator.agenda``), ``"llm"`` or
            ``None`` (agenda on the embedded local model, llm on any other; docs/simulator.md).

    Returns:
        One patient row per conversation (``TRANSCRIPT_SCHEMA``).

    Raises:
        ValueError: no scenario for a conversation, or an unknown scenario id.
        SimulatorError: the model returned an empty message.

    Example (calls the simulator model, so not run as a doctest)::

        import pandas as pd, convoeval as ce
        tx = ce.run_conversation("billing-conv-happy-payment", seed=42).transcript
        pd.concat([tx, ce.simulate(tx)])
    """
    model = as_chat_model("simulator", model)
    kind = resolve_simulator(simulator, model)
    fixed = _playable(scenarios_by_id(None).get(scenario)) if isinstance(scenario, str) else scenario
    if isinstance(scenario, str) and fixed is None:
        raise ValueError(f"no scenario with id {scenario!r} in the project's scenarios")
    conversations: list[tuple[dict[str, Any], list[dict[str, Any]], int]]  # keys, entries, last turn
    frame = F.as_transcripts(transcript) if len(transcript) else None
    if frame is None:
        if fixed is None:
            raise ValueError("simulate needs a scenario to start a conversation (scenario=<id or object>)")
        conversations = [({**dict.fromkeys(CONVERSATION_KEYS), "run_id": "conversation-1", "scenario": fixed.id,
                           "agent": fixed.agent, "seed": seed if seed is not None else fixed.seed, "trial": trial},
                          [], 0)]
    else:
        conversations = []
        for keys, rows in F.iter_conversations(frame):
            turns = [t for t in rows["turn"].tolist() if t is not None and t == t] if "turn" in rows else []
            conversations.append((keys, F.transcript_to_entries(rows), int(max(turns)) if turns else 0))
    lookup = {} if fixed is not None else scenarios_by_id(None)

    async def one(keys: dict[str, Any], entries: list[dict[str, Any]], last_turn: int) -> dict[str, Any]:
        named = keys.get("scenario")
        chosen = fixed if fixed is not None else _playable(lookup.get(named) if isinstance(named, str) else None)
        if chosen is None:
            raise ValueError(f"no scenario for conversation {keys.get('run_id')!r} (scenario "
                             f"{keys.get('scenario')!r}): pass scenario=<id or object>")
        use_seed = seed if seed is not None else keys.get("seed")
        if kind == "agenda":
            turn = await aagenda_turn(entries, scenario=chosen, model=model, seed=use_seed,
                                      trial=keys.get("trial") or trial)
        else:
            turn = await apatient_turn(entries, scenario=chosen, model=model, seed=use_seed,
                                       trial=keys.get("trial") or trial, framing=framing, max_tokens=max_tokens)
        result = turn.result
        return {**keys, "scenario": keys.get("scenario") or chosen.id, "agent": keys.get("agent") or chosen.agent,
                "turn": last_turn + 1, "role": "patient", "text": turn.message, "bubbles": [turn.message],
                "tools": [], "tool_calls": [], "signal": turn.signal, "prompt_version": turn.prompt_version,
                "voice": turn.voice, "act": turn.act or None,
                **({} if result is None else {"latency_s": result.latency_s, "prompt_tokens": result.prompt_tokens,
                                              "completion_tokens": result.completion_tokens,
                                              "model": result.info.model, "cache_hit": result.cache_hit})}

    rows = await asyncio.gather(*(one(k, e, t) for k, e, t in conversations))
    return F.typed_frame(rows, TRANSCRIPT_SCHEMA)


#: ``asimulate``, blocking (on convoeval's one background loop; works in notebooks too).
def _playable(scenario: Scenario | None) -> ConversationalScenario | None:
    """``scenario`` when the simulated patient can play it (a conversational one); ``None`` stays ``None``.

    Raises:
        ValueError: a scripted scenario (its patient messages are written out; there is no persona to simulate).
    """
    if scenario is None or isinstance(scenario, ConversationalScenario):
        return scenario
    raise ValueError(f"scenario {scenario.id!r} is scripted: the simulated patient plays conversational scenarios")


simulate = blocking(asimulate)
