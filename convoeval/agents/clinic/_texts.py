"""What the reference agents say, per locale: text tables and their lookup.

A text table maps ``locale -> key -> template``; a template is one WhatsApp bubble (a string) or several (a list of
strings), formatted with ``str.format`` values. Lookup order for an agent with faults: the active faults' override
tables (the agent's own, then the shared ones), the agent's ``TEXTS``, then ``COMMON_TEXTS``. So a tone fault is a
table of overrides, not a branch in the dialogue code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from convoeval.agents.clinic._format import resolve_locale

Template = str | Sequence[str]
TextTable = Mapping[str, Mapping[str, Template]]

#: What every reference agent can say.
COMMON_TEXTS: dict[str, dict[str, Template]] = {
    "pt-BR": {
        "handoff": [
            "Vou passar a sua conversa para a nossa equipe. 🙋",
            "Uma pessoa da clínica vai continuar o atendimento aqui mesmo, em breve. Obrigado pela paciência! 😊",
        ],
        "handed_off": "Nossa equipe já foi avisada e vai responder aqui mesmo em breve. Obrigado por aguardar! 🙏",
        "goodbye": "Eu que agradeço, {name}! Qualquer coisa, é só chamar. Tenha um ótimo dia! 😊",
        "fallback": "Desculpe, não entendi muito bem. Pode me dizer de outro jeito?",
    },
    "en": {
        "handoff": [
            "I'm passing your conversation to our team. 🙋",
            "Someone from the clinic will continue right here in this chat shortly. Thank you for your patience! 😊",
        ],
        "handed_off": "Our team has been notified and will reply right here shortly. Thanks for waiting! 🙏",
        "goodbye": "Thank you, {name}! If you need anything else, just message us. Have a great day! 😊",
        "fallback": "Sorry, I didn't quite get that. Could you say it another way?",
    },
    "es": {
        "handoff": [
            "Voy a pasar tu conversación a nuestro equipo. 🙋",
            "Una persona de la clínica seguirá la atención aquí mismo en breve. ¡Gracias por tu paciencia! 😊",
        ],
        "handed_off": "Nuestro equipo ya fue avisado y responderá aquí mismo en breve. ¡Gracias por esperar! 🙏",
        "goodbye": "¡Gracias a ti, {name}! Si necesitas algo más, escríbenos. ¡Que tengas un excelente día! 😊",
        "fallback": "Perdón, no entendí bien. ¿Me lo puedes decir de otra forma?",
    },
}

#: Shared fault overrides: any agent registering a ``rude_tone`` fault gets these on top of its own.
COMMON_FAULT_TEXTS: dict[str, dict[str, dict[str, Template]]] = {
    "rude_tone": {
        "pt-BR": {
            "handoff": "Tá, vou jogar pra um atendente. Aguarda aí.",
            "handed_off": "Já falei que um atendente vai responder. Espera.",
            "goodbye": "Tá. Tchau.",
            "fallback": "Não entendi. Escreve direito.",
        },
        "en": {
            "handoff": "Fine, I'll dump this on a human. Wait.",
            "handed_off": "I already said a human will answer. Wait.",
            "goodbye": "Ok. Bye.",
            "fallback": "I don't get it. Write properly.",
        },
        "es": {
            "handoff": "Ya, te paso a un humano. Espera ahí.",
            "handed_off": "Ya te dije que un humano va a responder. Espera.",
            "goodbye": "Ya. Chao.",
            "fallback": "No entiendo. Escribe bien.",
        },
    },
}


def lookup(key: str, locale: str, tables: Sequence[TextTable]) -> Template:
    """The first template for ``key`` in ``locale`` among ``tables``.

    Raises:
        KeyError: no table has it (a missing translation is a bug the text-table tests catch).
    """
    loc = resolve_locale(locale)
    for table in tables:
        if key in table.get(loc, {}):
            return table[loc][key]
    raise KeyError(f"no text {key!r} for locale {loc}")


def render(key: str, locale: str, tables: Sequence[TextTable], **values: object) -> list[str]:
    """The bubbles for ``key``: the template(s) formatted with ``values``."""
    template = lookup(key, locale, tables)
    bubbles = [template] if isinstance(template, str) else list(template)
    return [b.format(**values) for b in bubbles]
