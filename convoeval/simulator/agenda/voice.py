"""The patient's voice: the model rewrites the act's draft in the persona's style; checked, else the draft itself.

The model is given one small job a 0.5B model can do — rewrite a short message, keeping its values, in one language
— never the job of deciding what a patient does. Its rewrite is kept only when it passes the checks the gate would
make and the act needs (``voice_problem``): the act's values present (every number, most of the content words), the
scenario's language, no fact the persona does not hold, not the assistant's voice, not a copy of the agent. Otherwise
the template draft is the message, and the row says so (``voice="template"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from convoeval.fidelity import (
    LANGUAGE_OF_LOCALE,
    KnownFacts,
    copied_share,
    detect_language,
    message_words,
    unknown_facts,
)
from convoeval.fidelity.roles import role_reversal
from convoeval.simulator.agenda.acts import PatientAct
from convoeval.simulator.agenda.lexicon import fold, words
from convoeval.simulator.replies import clean_simulator_reply

__all__ = ["VOICE_PROMPTS", "VOICE_PROMPT_VERSION", "clean_voice", "voice_messages", "voice_problem"]

#: Bump when the wording below changes: it is recorded with every voiced message.
VOICE_PROMPT_VERSION = "agenda-voice-v3"

_LANGUAGE_NAMES = {"pt-BR": "Brazilian Portuguese", "en": "English", "es": "Spanish"}

#: Per locale: the system message (a rewording tool, never a party to the conversation: a small model asked to *be*
#: the patient answers as the assistant; asked to reword, it rewords) and the request. Written in the scenario's
#: language: asked in English, the 0.5B model often translates a Portuguese message into English.
VOICE_PROMPTS: dict[str, tuple[str, str]] = {
    "en": ("You are a paraphrasing tool. You never answer messages, you only reword them.",
           'Reword this WhatsApp message written by {name} ({traits}), a customer, to a company. Keep the same '
           "meaning, in English, in the first person (I), with every number and name. Output only the reworded "
           'message.\n\nMessage: "{draft}"\nReworded:'),
    "pt-BR": ("Você é uma ferramenta de paráfrase. Você nunca responde mensagens, só as reescreve.",
              "Reescreva esta mensagem de WhatsApp de {name} ({traits}), um cliente, para uma empresa. Mantenha o "
              "mesmo sentido, em português do Brasil, na primeira pessoa (eu), com todos os números e nomes. Não "
              'traduza. Responda só com a mensagem reescrita.\n\nMensagem: "{draft}"\nReescrita:'),
    "es": ("Eres una herramienta de paráfrasis. Nunca respondes mensajes, solo los reescribes.",
           "Reescribe este mensaje de WhatsApp de {name} ({traits}), un cliente, a una empresa. Mantén el mismo "
           "sentido, en español, en primera persona (yo), con todos los números y nombres. No lo traduzcas. Responde "
           'solo con el mensaje reescrito.\n\nMensaje: "{draft}"\nReescrito:'),
}
_NO_TRAITS = {"en": "an ordinary person", "pt-BR": "uma pessoa comum", "es": "una persona común"}

_STOP_WORDS = frozenset("""
a o as os e de do da dos das em no na um uma para por com que se eu meu minha voce pode sim nao
the an and of to in on at for with i my you it is yes no please
el la los las y del al en con por para mi tu un una es si que lo
""".split())
#: The share of an act's content words the rewrite must keep.
KEEP_SHARE = 0.6
#: A rewrite longer than this many times the draft (plus a margin) added things.
MAX_GROWTH = 3.0
_DIGITS = re.compile(r"\d+")
#: Words an act must keep, whatever the rewrite says: a yes stays a yes, thanks stay thanks (folded, any locale).
_ACT_CUES = {
    "accept": re.compile(r"\b(?:sim|pode|claro|isso|ok|okay|yes|sure|yeah|go ahead|si|vale|dale|adelante|confirm\w*)\b"),
    "decline": re.compile(r"\b(?:nao|no|not|don't|rather|prefiro|prefer\w*|prefiero)\b"),
    "thank_done": re.compile(r"\b(?:obrigad\w*|valeu|thank\w*|thanks|gracias|agradec\w*)\b"),
}
#: Addressing the other party: a rewrite that adds "você" / "you" / "usted" where the draft had none turned the
#: patient's own words into the assistant's ("Quero pagar" -> "Você quer pagar", "Prefiro boleto" -> "Você pode usar
#: boleto").
_SECOND_PERSON = re.compile(r"\b(?:voce|voces|vc|you|your|usted|ustedes|tu|tus|te|ti)\b")
#: What an assistant says and a customer does not ("de nada", "feel free to ask", "estou à disposição").
_ASSISTANT_PHRASES = re.compile(
    r"\b(?:de nada|you'?re welcome|feel free|let me know if|nao hesite|sinta-se a vontade|estou a disposicao|"
    r"fico a disposicao|i'?m here to help|happy to help|no dudes|estoy a (?:tu|su) disposicion|con gusto|"
    r"if you have any (?:other |more )?questions|se tiver (?:mais )?(?:alguma|qualquer)|si tienes (?:alguna|otra))\b")


def voice_messages(draft: str, *, name: str, traits: Sequence[str], locale: str) -> list[tuple[str, str]]:
    """The chat messages that ask the model to reword ``draft`` as the persona would write it, in ``locale``."""
    system, request = VOICE_PROMPTS.get(locale, VOICE_PROMPTS["en"])
    traits_text = ", ".join(traits) or _NO_TRAITS.get(locale, _NO_TRAITS["en"])
    return [("system", system), ("user", request.format(name=name, traits=traits_text, draft=draft))]


def clean_voice(raw: str, name: str) -> str:
    """The model's rewrite without what small models add: a label, quotes, a second paragraph, stop markers."""
    text = re.sub(r"^\s*(?:reworded(?: message)?|message|reescrita|mensagem|reescrito|mensaje)\s*:\s*", "",
                  raw.strip(), flags=re.IGNORECASE)
    text = clean_simulator_reply(text, name)
    text = text.split("\n\n")[0].strip()
    return re.sub(r"\[(?:GOAL_COMPLETE|STUCK)\]", "", text).strip()


def _content_words(values: Sequence[str]) -> set[str]:
    return {w for v in values for w in words(v) if len(w) > 2 and w not in _STOP_WORDS and not w.isdigit()}


def voice_problem(text: str, draft: str, act: PatientAct, *, locale: str, persona_name: str,
                  known: KnownFacts, agent_said: str, fact_min_digits: int = 8) -> str | None:
    """Why the model's rewrite cannot be the patient's message, or ``None`` when it can.

    Args:
        text: the cleaned rewrite.
        draft: the template message it rewrote.
        act: the act it must say (its ``content`` values must survive).
        locale: the scenario's locale.
        persona_name: the patient's name (a rewrite that greets it speaks as the assistant).
        known: the persona's facts plus everything the agent said (``convoeval.fidelity.KnownFacts``).
        agent_said: the agent's last message (a rewrite that copies it is an echo).
        fact_min_digits: digit runs this long are personal facts (the gate's setting).
    """
    if not text:
        return "empty"
    language = LANGUAGE_OF_LOCALE.get(locale)
    found, probability = detect_language(text, ignore=message_words(persona_name), min_words=3)
    if language and found and found != language and probability >= 0.7:
        return f"wrong language ({found})"
    folded = fold(text)
    if role_reversal(text, persona_name) is not None or _ASSISTANT_PHRASES.search(folded):
        return "speaks as the assistant"
    if _SECOND_PERSON.search(folded) and not _SECOND_PERSON.search(fold(draft)):
        return "speaks to the patient"
    if len(text) > MAX_GROWTH * len(draft) + 40:
        return "too long"
    if "?" in text and "?" not in draft:
        return "asks a question the act does not"
    draft_digits = set(_DIGITS.findall(draft))
    if not draft_digits <= set(_DIGITS.findall(text)):
        return "lost a number"
    wanted = _content_words(act.content)
    if wanted:
        kept = wanted & set(words(text)) | {w for w in wanted if fold(w) in fold(text)}
        if len(kept) < KEEP_SHARE * len(wanted):
            return "lost the act's words"
    cue = _ACT_CUES.get(act.kind)
    if cue is not None and not cue.search(folded):
        return f"lost the {act.kind.replace('_', ' ')}"
    if unknown_facts(text, known, fact_min_digits):
        return "states a fact the persona does not hold"
    said = message_words(agent_said)
    mine = message_words(text)
    if said and len(mine) >= 5 and copied_share(said, mine, 3) >= 0.5:
        return "copies the agent"
    return None
