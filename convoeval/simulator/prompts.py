"""The simulated patient's prompt: its versioned texts, the persona's facts, and the two framings of the conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:

    from convoeval.scenarios import ConversationalScenario



StopSignal = Literal["GOAL_COMPLETE", "STUCK"]


STOP_SIGNALS: tuple[StopSignal, ...] = ("GOAL_COMPLETE", "STUCK")


#: Bump when the wording below changes: it is recorded with every simulated message.
SIMULATOR_PROMPT_VERSION = "simulator-v1"


Framing = Literal["chat", "transcript"]


FRAMINGS: tuple[Framing, ...] = ("chat", "transcript")


#: The role-inverted chat is the default: it is what hosted chat models are tuned for, and earlier results were
#: made with it. Pass ``framing="transcript"`` for small local models (see the module docstring).
DEFAULT_FRAMING: Framing = "chat"


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


def _count_patient(entries: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for e in entries if e["role"] == "patient")
