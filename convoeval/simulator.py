"""The simulated patient: given the conversation so far, write the patient's next WhatsApp message.

The prompt states the persona, goal, traits, locale and the rules of the role, plus the persona's known facts and a rule
not to invent any other fact. Two framings of the conversation are offered (see ``FRAMINGS``):

* ``"chat"`` (the default): role inversion — the patient's own messages are ``assistant`` turns and the agent's are
  ``user`` turns, so the model simply continues the chat;
* ``"transcript"``: the whole dialogue so far in one ``user`` message, labelled by speaker, ending with "write only
  <name>'s next message". Small local models that parrot the agent's last line in chat framing do better with it.

Seeded runs are deterministic: temperature 0 and ``seed + turn`` on every call, with a sample
identity that makes trial 2 a fresh sample rather than a cache replay of trial 1.

Only the patient ends a conversation. A stop marker the agent wrote and the patient merely repeated — a small model
echoing the agent's line, ``[GOAL_COMPLETE]`` included — is not a stop signal: the marker is removed, the echo is
recorded as the patient's message (where the fidelity check ``parroting`` flags it) and the conversation goes on.
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from convoeval._aio import run_sync
from convoeval.frames import as_entries
from convoeval.llm import LLMError, SampleIdentity, call_model

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.scenarios import ConversationalScenario

log = logging.getLogger(__name__)

STOP_SIGNALS = ("GOAL_COMPLETE", "STUCK")
StopSignal = Literal["GOAL_COMPLETE", "STUCK"]
#: A patient message is an echo of the agent's when at least this share of its words (stop markers aside) is
#: copied from the agent's last message, in runs of 3 words or more (the whole message when it is shorter).
ECHO_RATIO = 0.5
ECHO_MIN_RUN = 3

#: Bump when the wording below changes: it is recorded with every simulated message.
SIMULATOR_PROMPT_VERSION = "simulator-v1"

Framing = Literal["chat", "transcript"]
FRAMINGS: tuple[Framing, ...] = ("chat", "transcript")
#: The role-inverted chat is the default: it is what hosted chat models are tuned for, and earlier results were
#: made with it. Pass ``framing="transcript"`` for small local models (see the module docstring).
DEFAULT_FRAMING: Framing = "chat"

#: The sampling temperature of unseeded runs (varied patients); seeded runs use 0.
UNSEEDED_TEMPERATURE = 0.7
#: A patient writes 1–3 sentences; the cap stops a small model that never stops.
DEFAULT_MAX_TOKENS = 200

KICKOFF_MESSAGE = "The conversation is starting now. Send your first message to the clinic chatbot."
DEFAULT_TRAITS_LINE = "You behave like a typical patient — polite but focused on your goal."

SIMULATOR_PROMPT = """\
You are simulating a real patient interacting with a healthcare clinic's WhatsApp chatbot. \
You must behave like a real person — not a test bot.

Your name: {persona_name}
Your goal: {goal}
{traits_line}
Locale: {locale}
{knows_block}
Rules:
- Write short WhatsApp messages (1-3 sentences max)
- React naturally to what the agent says
- Stay in character (traits affect HOW you write, not WHAT you want)
- If the agent asks a question, answer it naturally
- If the agent completed your goal, respond naturally then add [GOAL_COMPLETE] at the end
- If you are stuck and the agent is not helping after multiple attempts, add [STUCK] at the end
- Never mention you are a simulation or test
- Write in the locale language ({locale})
- {no_invent_rule}"""

KNOWS_HEADER = "What you know about yourself (share it when the agent asks or when your goal needs it):"
NO_INVENT_WITH_FACTS = (
    "Do not invent facts about yourself beyond the ones listed above; if the agent asks for something you were "
    "not given, say you do not have it at hand"
)
NO_INVENT_WITHOUT_FACTS = (
    "Do not invent personal data (documents, numbers, dates, names); if the agent asks for something you were "
    "not given, say you do not have it at hand"
)

#: Transcript framing restates who speaks and what they want right before the request: small models follow the
#: last user message far more than the system prompt.
TRANSCRIPT_FRAME = """\
You are {persona_name}, a patient. Your goal: {goal}

The WhatsApp conversation so far between you ({persona_name}) and the clinic's chatbot:

{dialogue}

Write only {persona_name}'s next message to the chatbot, in {locale}: one short WhatsApp message, nothing else (no \
name label, no quotes). Add [GOAL_COMPLETE] at the end only if the chatbot has already done everything your goal \
needs; add [STUCK] only if it keeps failing to help."""
#: Transcript framing's own kick-off: the chat framing's ("Send your first message to the clinic chatbot") reads, to a
#: small model, like a cue to greet as the chatbot.
TRANSCRIPT_KICKOFF = """\
You are {persona_name}, a patient. Your goal: {goal}

The WhatsApp conversation between you and the clinic's chatbot has not started yet. Write only {persona_name}'s \
first message to the chatbot, in {locale}, saying what you want: one short WhatsApp message, nothing else (no name \
label, no quotes)."""
AGENT_LABEL = "Chatbot"


class SimulatorError(LLMError):
    """The simulator produced no usable message (e.g. an empty reply without a stop signal)."""


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


def build_simulator_prompt(
    *,
    persona_name: str,
    goal: str,
    traits: Sequence[str] | None = None,
    locale: str,
    knows: Mapping[str, Any] | None = None,
) -> str:
    """The simulator's system prompt: the role, goal and traits, plus known facts and the rule not to invent others.

    Args:
        persona_name: The patient's name.
        goal: What the patient wants from the conversation.
        traits: Personality traits; without any, a default sentence is used.
        locale: The language to write in, e.g. ``"pt-BR"``.
        knows: Facts the patient may reveal (label -> value), e.g. ``{"cpf": "12345678901"}``.

    Returns:
        The prompt text (never containing ``None``).

    Example:
        >>> "Carlos" in build_simulator_prompt(persona_name="Carlos", goal="Pay", locale="pt-BR")
        True
    """
    traits_line = f"Your personality traits: {', '.join(traits)}" if traits else DEFAULT_TRAITS_LINE
    facts = {k: v for k, v in (knows or {}).items() if v is not None and str(v).strip()}
    if facts:
        lines = "\n".join(f"- {k}: {v}" for k, v in facts.items())
        knows_block = f"{KNOWS_HEADER}\n{lines}\n"
        rule = NO_INVENT_WITH_FACTS
    else:
        knows_block, rule = "", NO_INVENT_WITHOUT_FACTS
    return SIMULATOR_PROMPT.format(
        persona_name=persona_name,
        goal=goal,
        traits_line=traits_line,
        locale=locale,
        knows_block=knows_block,
        no_invent_rule=rule,
    )


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
        >>> parse_simulator_response("Obrigado! [GOAL_COMPLETE]")
        SimulatorTurn(message='Obrigado!', signal='GOAL_COMPLETE')
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
            signal = s  # type: ignore[assignment]
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
        return shared  # type: ignore[return-value]
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


def _agent_since_patient(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The agent's messages after the patient's last one (what the patient is answering), in order."""
    said: list[str] = []
    for entry in reversed(entries):
        if entry["role"] == "patient":
            break
        said.append(str(entry.get("text") or ""))
    return said[::-1]


def persona_fields(scenario: ConversationalScenario) -> dict[str, Any]:
    """The prompt fields of a scenario's persona; its phone and CPF count as known facts (a patient knows them)."""
    p = scenario.persona
    knows: dict[str, Any] = {"phone": p.phone}
    if p.cpf:
        knows["cpf"] = p.cpf
    knows.update(p.knows or {})
    return {
        "persona_name": p.name,
        "goal": scenario.goal,
        "traits": p.traits,
        "locale": scenario.locale,
        "knows": knows,
    }


def build_simulator_messages(
    entries: Sequence[Mapping[str, Any]],
    system_prompt: str,
    *,
    persona_name: str,
    goal: str = "",
    locale: str = "",
    framing: Framing = DEFAULT_FRAMING,
) -> list[tuple[str, str]]:
    """The message list sent to the simulator model for the given conversation so far.

    Args:
        entries: The conversation so far (dicts with ``role`` and ``text``).
        system_prompt: From ``build_simulator_prompt``.
        persona_name: Used to label the patient's lines in transcript framing.
        goal: Restated in transcript framing's request.
        locale: Restated in transcript framing's request.
        framing: ``"chat"`` (role inversion, the default) or ``"transcript"``.

    Returns:
        ``(role, text)`` pairs, system prompt first.
    """
    if framing not in FRAMINGS:
        raise ValueError(f"unknown framing {framing!r}; expected one of {FRAMINGS}")
    messages = [("system", system_prompt)]
    if not entries and framing == "transcript":
        messages.append(("user", TRANSCRIPT_KICKOFF.format(persona_name=persona_name, goal=goal, locale=locale)))
    elif not entries:
        messages.append(("user", KICKOFF_MESSAGE))
    elif framing == "chat":
        # From the simulator's side the patient is the assistant and the agent is the user.
        messages.extend(("assistant" if e["role"] == "patient" else "user", e["text"]) for e in entries)
    else:
        dialogue = "\n".join(_dialogue_line(e, persona_name) for e in entries)
        request = TRANSCRIPT_FRAME.format(persona_name=persona_name, goal=goal, locale=locale, dialogue=dialogue)
        messages.append(("user", request))
    return messages


def _dialogue_line(entry: Mapping[str, Any], persona_name: str) -> str:
    label = persona_name if entry["role"] == "patient" else AGENT_LABEL
    # Continuation lines are indented so only our own labels start a line.
    return f"{label}: " + str(entry["text"]).strip().replace("\n", "\n  ")


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


def _count_patient(entries: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for e in entries if e["role"] == "patient")


async def asimulate(
    transcript: pd.DataFrame | Sequence[Any] = (),
    *,
    scenario: ConversationalScenario | None = None,
    persona_name: str | None = None,
    goal: str | None = None,
    traits: Sequence[str] | None = None,
    locale: str | None = None,
    knows: Mapping[str, Any] | None = None,
    model: Any = None,
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
            a re-simulation samples with its seed (``convoeval.gate``).

    Returns:
        The parsed ``SimulatorTurn`` (message, signal, plus the raw reply and the call's accounting).

    Raises:
        SimulatorError: the reply is empty and carries no stop signal (or only markers echoed from the agent).
        LLMError: the call failed after the LLM layer's retries.

    Example:
        >>> turn = await asimulate([], scenario=scenario, model=FakeChatModel(replies=["Oi!"]))  # doctest: +SKIP
        >>> turn.message
        'Oi!'
    """
    fields = persona_fields(scenario) if scenario is not None else {}
    overrides = {"persona_name": persona_name, "goal": goal, "traits": traits, "locale": locale, "knows": knows}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    missing = [k for k in ("persona_name", "goal", "locale") if not fields.get(k)]
    if missing:
        raise ValueError(f"simulate needs a scenario or {', '.join(missing)}")
    if seed is None and scenario is not None:
        seed = scenario.seed

    entries = as_entries(transcript)
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
        from convoeval.llm.models import get_model

        model = get_model("simulator")

    result = await call_model(
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


async def asimulate_next(
    transcript: pd.DataFrame | Sequence[Any] = (),
    *,
    scenario: str | ConversationalScenario | None = None,
    model: Any = None,
    seed: int | None = None,
    trial: int = 1,
    framing: Framing = DEFAULT_FRAMING,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
) -> pd.DataFrame:
    """Async ``simulate``; the same arguments."""
    import asyncio

    from convoeval.frames import (
        CONVERSATION_KEYS,
        TRANSCRIPT_SCHEMA,
        as_transcripts,
        iter_conversations,
        transcript_to_entries,
        typed_frame,
    )
    from convoeval.llm.models import as_chat_model
    from convoeval.scenarios import scenarios_by_id

    model = as_chat_model("simulator", model)
    fixed = scenarios_by_id(None).get(scenario) if isinstance(scenario, str) else scenario
    if isinstance(scenario, str) and fixed is None:
        raise ValueError(f"no scenario with id {scenario!r} in the project's scenarios")
    frame = as_transcripts(transcript) if len(transcript) else None
    if frame is None:
        if fixed is None:
            raise ValueError("simulate needs a scenario to start a conversation (scenario=<id or object>)")
        conversations = [({**dict.fromkeys(CONVERSATION_KEYS), "run_id": "conversation-1", "scenario": fixed.id,
                           "agent": fixed.agent, "seed": seed if seed is not None else fixed.seed, "trial": trial},
                          [], 0)]
    else:
        conversations = []
        for keys, rows in iter_conversations(frame):
            turns = [t for t in rows["turn"].tolist() if t is not None and t == t] if "turn" in rows else []
            conversations.append((keys, transcript_to_entries(rows), int(max(turns)) if turns else 0))
    lookup = None if fixed is not None else scenarios_by_id(None)

    async def one(keys: dict[str, Any], entries: list[dict[str, Any]], last_turn: int) -> dict[str, Any]:
        chosen = fixed if fixed is not None else lookup.get(keys.get("scenario"))  # type: ignore[union-attr]
        if chosen is None:
            raise ValueError(f"no scenario for conversation {keys.get('run_id')!r} (scenario "
                             f"{keys.get('scenario')!r}): pass scenario=<id or object>")
        use_seed = seed if seed is not None else keys.get("seed")
        turn = await asimulate(entries, scenario=chosen, model=model, seed=use_seed,
                               trial=keys.get("trial") or trial, framing=framing, max_tokens=max_tokens)
        result = turn.result
        return {**keys, "scenario": keys.get("scenario") or chosen.id, "agent": keys.get("agent") or chosen.agent,
                "turn": last_turn + 1, "role": "patient", "text": turn.message, "bubbles": [turn.message],
                "tools": [], "tool_calls": [], "signal": turn.signal, "prompt_version": turn.prompt_version,
                **({} if result is None else {"latency_s": result.latency_s, "prompt_tokens": result.prompt_tokens,
                                              "completion_tokens": result.completion_tokens,
                                              "model": result.info.model, "cache_hit": result.cache_hit})}

    rows = await asyncio.gather(*(one(k, e, t) for k, e, t in conversations))
    return typed_frame(rows, TRANSCRIPT_SCHEMA)


def simulate(
    transcript: pd.DataFrame | Sequence[Any] = (),
    *,
    scenario: str | ConversationalScenario | None = None,
    model: Any = None,
    seed: int | None = None,
    trial: int = 1,
    framing: Framing = DEFAULT_FRAMING,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
) -> pd.DataFrame:
    """The simulated patient's next message in each conversation, as transcript rows (works in notebooks too).

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
        framing: ``"chat"`` or ``"transcript"`` (see ``asimulate``).
        max_tokens: reply length cap.

    Returns:
        One patient row per conversation (``TRANSCRIPT_SCHEMA``).

    Raises:
        ValueError: no scenario for a conversation, or an unknown scenario id.
        SimulatorError: the model returned an empty message.

    Example:
        >>> import pandas as pd, convoeval as ce
        >>> tx = ce.run_conversation("billing-conv-happy-payment", seed=42).transcript  # doctest: +SKIP
        >>> pd.concat([tx, ce.simulate(tx)])  # doctest: +SKIP
    """
    return run_sync(asimulate_next(transcript, scenario=scenario, model=model, seed=seed, trial=trial,
                                   framing=framing, max_tokens=max_tokens))
