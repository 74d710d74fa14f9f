"""Role reversal: a simulated patient that speaks as the assistant, or greets its own persona as the other party.

A small model asked to play the patient often plays the clinic instead: "Oi Dona Aparecida! Estou aqui para ajudar
você", "Hello, Lucia Ferreira! I'm your patient. Please tell me what you need assistance with today." Such a message
says nothing about the agent. ``role_reversal(text, persona_name)`` finds the two signs, in pt-BR, en and es, with
regular expressions (no LLM):

* the persona's own name **greeted** as the other party ("Oi Lucia!", "Hello, Mr. Hayes"), unless the message
  goes on to say it is the speaker ("Oi, Lucia aqui", "Hi, Lucia here");
* the **assistant's phrases** in the patient's mouth: offering help ("como posso ajudar", "how can I assist you",
  "¿en qué puedo ayudarte?", "I'm here to help"), asking the patient for its need ("tell me what you need help
  with", "qual é a sua dúvida"), or introducing itself as the clinic or its assistant ("aqui é o assistente",
  "this is the clinic", "soy la asistente", "bem-vinda à clínica").

A patient asking the agent for help ("você pode me ajudar?", "can you help me?") or introducing itself ("aqui é a
Lucia", "my name is Robert") is not one.
"""

from __future__ import annotations

import re

from convoeval.fidelity.text import fold_keeping_offsets as _fold

__all__ = ["name_words", "role_reversal", "self_named"]

# Honorifics and particles of a persona's name: "Dona Aparecida", "Seu Antônio Pereira", "Maria da Silva".
_HONORIFICS = {"dona", "seu", "sr", "sra", "srta", "senhor", "senhora", "don", "mr", "mrs", "ms", "miss",
               "dr", "dra", "doutor", "doutora", "doctor", "da", "de", "do", "das", "dos", "del", "la", "e", "y"}
_GREETING = (r"(?:oi|ola|ola|bom dia|boa tarde|boa noite|prezad[oa]|querid[oa]|hello|hi|hey|dear|good morning|"
             r"good afternoon|good evening|hola|buenos dias|buenas tardes|buenas noches|estimad[oa])")
_HONORIFIC = r"(?:(?:dona|seu|sr|sra|srta|senhor|senhora|don|mr|mrs|ms|miss)\.?\s+)?"
# After the name, these words make it the speaker's own ("Oi, Lucia aqui", "Hi, Lucia here").
_SPEAKER = re.compile(r"^[\s,!.]*(?:aqui|here|speaking|falando|hablando|al habla)\b")

_ASSISTANT = re.compile("|".join(f"(?:{p})" for p in (
    # pt-BR
    r"\b(?:como|em que)(?: mais)? (?:eu )?(?:posso|poderia) (?:te |lhe |a |o )?"
    r"(?:ajudar|ajuda-l[oa]s?|auxiliar|auxilia-l[oa]s?|atende-l[oa]s?|ser util)",
    r"\bposso (?:te |lhe )?ajudar (?:em|com) (?:algo|alguma coisa|mais alguma|o que)",
    r"\b(?:coisa|algo) (?:mais )?(?:em )?que eu (?:possa|posso) (?:te |lhe )?(?:ajudar|ajuda-l[oa])",
    r"\b(?:posso|vou) (?:te |lhe )?(?:gerar|enviar|mandar|criar) (?:o |um |seu |o seu )?link",
    r"\bestou aqui (?:para|pra) (?:te |lhe )?(?:ajudar|auxiliar|atender)",
    r"\b(?:aqui e|sou|somos|falo) (?:o |a |da |do )?(?:assistente|atendente|recepcionista|secretaria|"
    r"clinica|equipe da clinica|atendimento)",
    r"\bbem[- ]vind[oa]s? (?:a|ao|à) (?:clinica|nossa clinica|nosso atendimento)",
    r"\bqual (?:e )?(?:a )?sua (?:duvida|necessidade)\b",
    r"\b(?:me )?(?:diga|conte|fale)(?:-me)? (?:o que|do que|em que) (?:voce|o senhor|a senhora) precisa",
    # en
    r"\bhow (?:can|may|could) i (?:help|assist|be of (?:help|assistance))",
    r"\bwhat can i (?:do|help you with)\b(?! to)",
    r"\b(?:is there )?anything (?:else )?i can (?:help|assist|do for you)",
    r"\bi(?:'m| am) (?:here|happy|glad) to (?:help|assist)(?! me)",
    r"\b(?:tell me|let me know) (?:what|how) (?:you need|i can)",
    r"\bwhat (?:do )?you need (?:help|assistance) with",
    r"\bi(?:'ll| will| can) (?:generate|send|create) (?:you )?(?:the |a |your )?(?:payment )?link",
    r"\b(?:this is|i(?:'m| am)) (?:the |your )(?:virtual |billing |scheduling |clinic's )?"
    r"(?:assistant|receptionist|clinic|front desk|secretary)\b",
    r"\bwelcome to (?:the |our )?clinic",
    # es
    r"\b(?:en que|como) (?:te |le )?(?:puedo|podria) (?:ayudar|servir|asistir)",
    r"\bestoy aqui para (?:ayudar|asistir|atender)",
    r"\b(?:soy|somos) (?:el |la |tu |su )?(?:asistente|recepcionista|secretari[ao]|clinica)\b",
    r"\bbienvenid[oa]s? a (?:la |nuestra )?clinica",
    r"\b(?:hay )?algo (?:mas )?en (?:lo )?que (?:te |le )?(?:pueda|podamos) ayudar",
    r"\bcual es (?:tu|su) (?:duda|consulta|necesidad)\b",
    r"\b(?:puedo|voy a) (?:generar|enviar|mandar|crear)(?:te|le)? (?:el |un |tu )?(?:enlace|link)",
    r"\b(?:dime|cuentame|digame) (?:que|en que|como) (?:necesitas|te puedo|le puedo)",
)))
# A speaker naming itself: "sou a Lucia", "I'm Lucia", "me llamo Lucía". An agent that does so with the persona's
# name (an assistant called Lucia) makes a patient's "Oi Lucia!" a greeting of the agent, not a reversal.
_SELF_NAMING = r"(?:sou|me chamo|meu nome e|i'm|i am|my name is|this is|soy|me llamo|mi nombre es)\s+(?:o |a |el |la )?"




def name_words(persona_name: str) -> list[str]:
    """The words of a persona's name that name it, folded: honorifics and particles left out, 3+ letters.

    Example:
        >>> name_words("Seu Antônio Pereira")
        ['antonio', 'pereira']
    """
    return [w for w in re.findall(r"[^\W\d_]+", _fold(persona_name)) if w not in _HONORIFICS and len(w) >= 3]


def self_named(text: str, persona_name: str) -> bool:
    """Whether ``text`` (an agent's message) introduces its speaker with a word of the persona's name.

    Example:
        >>> self_named("Oi! Eu sou a Lucia, assistente da clínica.", "Lucia Ferreira")
        True
    """
    words = name_words(persona_name)
    if not words:
        return False
    return bool(re.search(rf"\b{_SELF_NAMING}(?:{'|'.join(map(re.escape, words))})\b", _fold(text)))


def role_reversal(text: str, persona_name: str, *, agent_names_itself: bool = False) -> str | None:
    """The words by which a patient message speaks as the assistant, or ``None``.

    Args:
        text: one simulated patient message.
        persona_name: the scenario persona's name (the patient the simulator plays).
        agent_names_itself: the agent introduced itself with a word of the persona's name (``self_named``); the
            greeting check is then off, since greeting that name greets the agent.

    Returns:
        The quote that gives the patient away (``"Oi Dona Aparecida"``, ``"how can I assist"``), or ``None``.

    Example:
        >>> role_reversal("Oi Dona Aparecida! Estou aqui para ajudar você.", "Dona Aparecida")
        'Oi Dona Aparecida'
        >>> role_reversal("Oi, aqui é a Aparecida. Como eu pago a conta?", "Dona Aparecida") is None
        True
    """
    folded = _fold(text)
    words = name_words(persona_name)
    if words and not agent_names_itself:
        name = "|".join(map(re.escape, words))
        greeted = re.compile(rf"(?:^|[^\w])({_GREETING}[\s,!]+{_HONORIFIC}(?:(?:{name})\b[\s]*)+)")
        for match in greeted.finditer(folded):
            if not _SPEAKER.match(folded[match.end(1):]):
                return text[match.start(1):match.end(1)].strip()
    hit = _ASSISTANT.search(folded)
    return text[hit.start():hit.end()] if hit else None

