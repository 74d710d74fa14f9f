"""The template bank: how the patient says each act in pt-BR, en and es, several ways each (``render``).

Templates are the safety net under the model's voice and the draft the model rewrites. They carry the act's values
as the scenario wrote them (``{x}``) and nothing else: no domain word, no reference agent's phrase.
"""

from __future__ import annotations

import random

from convoeval.simulator.agenda.acts import PatientAct, PatientActKind

__all__ = ["TEMPLATES", "render"]

_Bank = dict[PatientActKind, tuple[str, ...]]

_PT: _Bank = {
    "intent": ("Oi, boa tarde! {x}.", "Olá! {x}.", "Oi! {x}.", "Bom dia. {x}."),
    "ask": ("E outra coisa: {x}?", "Mais uma dúvida: {x}?", "Queria saber também {x}.", "Me diz uma coisa: {x}?"),
    "give_fact": ("{x}.", "É {x}.", "Então, {x}.", "Claro: {x}."),
    "no_fact": ("Isso eu não tenho aqui agora.", "Não sei te dizer isso agora.", "Não tenho essa informação comigo."),
    "choose": ("Pode ser {x}.", "Prefiro {x}.", "Quero {x}.", "{x}, por favor."),
    "ask_other_options": ("Tem outra opção? {x}.", "Nenhuma dessas serve. {x}.", "Teria outro jeito? {x}."),
    "accept": ("Sim, pode.", "Pode sim, obrigado.", "Isso, pode fazer.", "Sim, confirmo."),
    "decline": ("Não, obrigado. {x}.", "Não, prefiro não. {x}.", "Não quero isso. {x}."),
    "insist": ("Mas eu preciso resolver isso: {x}.", "Como eu disse, {x}.", "Voltando ao meu pedido: {x}."),
    "clarify": ("Não entendi, pode explicar de outro jeito?", "Como assim? Não entendi.", "Pode repetir, por favor?"),
    "thank_done": ("Obrigado, era isso!", "Perfeito, muito obrigado!", "Ótimo, obrigado pela ajuda!"),
    "give_up": ("Deixa pra lá, vou resolver de outro jeito.", "Assim não dá, desisto por hoje.",
                "Tudo bem, depois eu vejo isso."),
}

_EN: _Bank = {
    "intent": ("Hi! {x}.", "Hello! {x}.", "Hi there. {x}.", "Good morning. {x}."),
    "ask": ("One more thing: {x}?", "Also, {x}?", "I'd also like to know {x}.", "Quick question: {x}?"),
    "give_fact": ("{x}.", "It's {x}.", "Sure, {x}.", "That would be {x}."),
    "no_fact": ("I don't have that at hand right now.", "Sorry, I don't know that.", "I don't have that with me."),
    "choose": ("{x} works for me.", "I'd prefer {x}.", "Let's go with {x}.", "{x}, please."),
    "ask_other_options": ("Is there another option? {x}.", "None of those work. {x}.", "Anything else? {x}."),
    "accept": ("Yes, please.", "Yes, go ahead.", "Sure, that's fine.", "Yes, I confirm."),
    "decline": ("No, thanks. {x}.", "No, I'd rather not. {x}.", "I don't want that. {x}."),
    "insist": ("But I still need this: {x}.", "As I said, {x}.", "Back to my request: {x}."),
    "clarify": ("Sorry, I didn't get that. Could you explain?", "What do you mean?", "Could you say that again?"),
    "thank_done": ("Thanks, that's all!", "Perfect, thank you!", "Great, thanks for the help!"),
    "give_up": ("Never mind, I'll sort it out another way.", "This isn't working, I'll give up for now.",
                "Forget it, I'll deal with it later."),
}

_ES: _Bank = {
    "intent": ("¡Hola! {x}.", "Hola, buenas. {x}.", "Hola. {x}.", "Buenos días. {x}."),
    "ask": ("Otra cosa: ¿{x}?", "Una duda más: ¿{x}?", "También quería saber {x}.", "Oye, ¿{x}?"),
    "give_fact": ("{x}.", "Es {x}.", "Claro: {x}.", "Pues {x}."),
    "no_fact": ("Eso no lo tengo a mano ahora.", "No sé decirte eso ahora.", "No tengo ese dato conmigo."),
    "choose": ("Me viene bien {x}.", "Prefiero {x}.", "Quiero {x}.", "{x}, por favor."),
    "ask_other_options": ("¿Hay otra opción? {x}.", "Ninguna de esas me sirve. {x}.", "¿Tienes otra? {x}."),
    "accept": ("Sí, adelante.", "Sí, por favor.", "Vale, perfecto.", "Sí, lo confirmo."),
    "decline": ("No, gracias. {x}.", "No, prefiero que no. {x}.", "No quiero eso. {x}."),
    "insist": ("Pero necesito resolver esto: {x}.", "Como te dije, {x}.", "Vuelvo a lo mío: {x}."),
    "clarify": ("No entendí, ¿me lo explicas de otra forma?", "¿Cómo? No te entendí.", "¿Puedes repetirlo?"),
    "thank_done": ("¡Gracias, eso era todo!", "Perfecto, ¡muchas gracias!", "Genial, gracias por la ayuda."),
    "give_up": ("Déjalo, lo resuelvo de otra forma.", "Así no puedo, lo dejo por hoy.", "Bueno, ya lo veré luego."),
}

#: Locale -> act -> its variants.
TEMPLATES: dict[str, _Bank] = {"pt-BR": _PT, "en": _EN, "es": _ES}


def render(act: PatientAct, locale: str, rng: random.Random, *, avoid: frozenset[str] = frozenset()) -> str:
    """One way of saying ``act`` in ``locale``, chosen by the seeded ``rng``, avoiding texts already sent.

    Example:
        >>> render(PatientAct("choose", ("Pix",)), "pt-BR", random.Random(1))
        'Prefiro Pix.'
    """
    bank = TEMPLATES.get(locale, _EN)[act.kind]
    value = ", ".join(act.content)
    variants = [v.replace("{x}", value) for v in bank]
    fresh = [v for v in variants if v not in avoid] or variants
    text = rng.choice(fresh)
    return _sentence_case(text.replace(" .", ".").replace("..", "."))


def _sentence_case(text: str) -> str:
    """An upper-case first letter (``{x}`` may open the message), and no doubled punctuation from the value."""
    for mark in ("?.", "!.", "?:"):
        text = text.replace(mark, mark[0])
    stripped = text.lstrip("¡¿")
    start = len(text) - len(stripped)
    return text[:start] + stripped[:1].upper() + stripped[1:] if stripped else text
