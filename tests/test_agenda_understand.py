"""The agenda patient reads agent messages as dialogue acts, in pt-BR, en and es, whoever wrote them.

The messages below are written the way different assistants write (an LLM's phrasing, a terse bot's), not in the
reference clinic agents' own words: the rules must read the shape of a message, not one agent's vocabulary.
"""

from __future__ import annotations

import pytest

from convoeval.simulator.agenda.understand import answer_kinds, read_agent, split_options


@pytest.mark.parametrize(("text", "locale", "act"), [
    ("Could you tell me your full name, please?", "en", "request"),
    ("What's the best phone number to reach you?", "en", "request"),
    ("Para continuar, me passa o seu CPF?", "pt-BR", "request"),
    ("¿Cuál es tu fecha de nacimiento?", "es", "request"),
    ("Just to double-check: should I go ahead and cancel it?", "en", "confirm"),
    ("Certo. Posso seguir com o cancelamento?", "pt-BR", "confirm"),
    ("Perfecto. ¿Te parece bien si lo dejamos para el lunes?", "es", "confirm"),
    ("Limpeza, terça 09:00, Dra. Camila. Sim ou não?", "pt-BR", "confirm"),
    ("Move it to Monday 4:30 PM. Yes or no?", "en", "confirm"),
    ("Vem ou não vem?", "pt-BR", "confirm"),
    ("Você confirma sua presença?", "pt-BR", "confirm"),
    ("And your phone number?", "en", "request"),
    ("Pix, boleto ou cartão. Escolhe logo.", "pt-BR", "offer"),
    ("We have three plans:\n- Basic\n- Plus\n- Premium\nWhich one would you like?", "en", "offer"),
    ("Temos entrega expressa ou econômica. Qual você prefere?", "pt-BR", "offer"),
    ("¿Prefieres recogerlo en tienda o que te lo enviemos?", "es", "offer"),
    ("Done! Your order has been booked for Friday.", "en", "inform"),
    ("I'm transferring you to a colleague who can help with this.", "en", "handover"),
    ("Vou te transferir para um atendente humano.", "pt-BR", "handover"),
    ("Is there anything else I can help you with?", "en", "close"),
    ("¿Algo más en lo que pueda ayudarte?", "es", "close"),
])
def test_the_act_of_a_message_in_any_assistants_words(text: str, locale: str, act: str) -> None:
    assert act in read_agent(text, locale).acts


def test_a_greeting_alone_is_no_act() -> None:
    assert read_agent("Olá! 😊", "pt-BR").acts == ("other",)


def test_options_are_read_from_a_list_and_from_alternatives() -> None:
    listed = read_agent("Horários livres:\n1) terça 09:00\n2) terça 11:00\nQual fica melhor?", "pt-BR")
    assert listed.options == ("terça 09:00", "terça 11:00")
    inline = read_agent("You can pay by card or bank transfer. Which do you prefer?", "en")
    assert "bank transfer" in inline.options and any("card" in o for o in inline.options)


def test_spanish_o_splits_only_spanish_and_the_portuguese_article_never_does() -> None:
    assert split_options("¿Pix o boleto?", "es") == ("Pix", "boleto")
    assert split_options("Posso gerar o link de pagamento via Pix?", "pt-BR") == ()


def test_a_question_after_a_lead_in_is_still_a_yes_no_question() -> None:
    acts = read_agent("Perfeito! Só para confirmar: posso gerar o link de R$ 150,00 via Pix? (sim/não)", "pt-BR")
    assert acts.has("confirm") and not acts.has("request")


def test_answer_kinds() -> None:
    assert {"amount", "any"} <= answer_kinds("A teeth cleaning costs R$180.00.")
    assert "place" in answer_kinds("We're at 42 Baker Street, second floor.")
    assert "time" in answer_kinds("Abrimos aos sábados das 8h às 12h.")
    assert "yes_no" in answer_kinds("Sí, aceptamos ese seguro.")
    assert answer_kinds("¿Cuál es tu nombre?") == frozenset()
