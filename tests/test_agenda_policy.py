"""The agenda patient's policy: facts on demand, options that fit, refusals, patience, and a goal only when earned."""

from __future__ import annotations

from typing import Any

import pytest

from convoeval.scenarios.models import ConversationalScenario
from convoeval.simulator.agenda import AgendaPolicy
from convoeval.simulator.agenda.templates import TEMPLATES, render


def _scenario(agenda: dict[str, Any], *, knows: dict[str, str] | None = None, locale: str = "en",
              traits: list[str] | None = None) -> ConversationalScenario:
    return ConversationalScenario.model_validate({
        "type": "conversational", "id": "shop-order", "agent": "support", "locale": locale,
        "description": "a shop customer", "goal": "order a blue kettle",
        "persona": {"name": "Ann Lee", "phone": "5511999990000", "cpf": "12345678909", "traits": traits or [],
                    "knows": knows or {"delivery address": "12 Elm Road", "order number": "A-7781"}},
        "rubric": ["polite"], "agenda": agenda})


def _acts(scenario: ConversationalScenario, agent: list[str], seed: int = 1) -> list[str]:
    policy = AgendaPolicy(scenario, seed=seed)
    acts = [policy.opening().label]
    acts += [policy.respond(text).label for text in agent]
    return acts


def test_the_patient_opens_with_its_intent_and_gives_facts_only_when_asked() -> None:
    scenario = _scenario({"intent": "I want to order a blue kettle", "done_when": ["booked"]})
    policy = AgendaPolicy(scenario, seed=1)
    assert policy.opening().content == ("I want to order a blue kettle",)
    act = policy.respond("Sure! What's the delivery address?")
    assert (act.kind, act.content) == ("give_fact", ("12 Elm Road",))
    act = policy.respond("And your phone number?")
    assert act.content == ("5511999990000",)
    assert policy.respond("Could you send me your date of birth?").kind == "no_fact"


def test_the_option_that_fits_is_chosen_and_seeds_choose_among_equally_good_ones() -> None:
    scenario = _scenario({"intent": "I want a delivery slot on Tuesday morning", "prefers": ["Tuesday morning"],
                          "done_when": ["booked"]})
    offer = "Free slots:\n1) Tuesday 09:00\n2) Tuesday 11:00\n3) Wednesday 15:00\nWhich one works?"
    chosen = {AgendaPolicy.replay(scenario, [offer], seed=seed)[1].content for seed in range(1, 9)}
    assert chosen == {("Tuesday 09:00",), ("Tuesday 11:00",)}


def test_no_option_fits_the_patient_asks_for_others_once_then_takes_one() -> None:
    scenario = _scenario({"intent": "I need a slot on Friday", "prefers": ["Friday"], "done_when": ["booked"]})
    offer = "Slots:\n- Monday 10:00\n- Tuesday 10:00\nWhich one?"
    policy = AgendaPolicy(scenario, seed=3)
    policy.opening()
    assert policy.respond(offer).kind == "ask_other_options"
    assert policy.respond(offer.replace("10:00", "11:00")).kind == "choose"


def test_a_refused_proposal_is_declined_with_the_preference_and_an_accepted_one_accepted() -> None:
    scenario = _scenario({"intent": "I want to pay my bill", "prefers": ["card"], "refuses": ["transfer"],
                          "done_when": ["payment_link"]})
    policy = AgendaPolicy(scenario, seed=1)
    policy.opening()
    act = policy.respond("Shall I send you a bank transfer slip?")
    assert (act.kind, act.content) == ("decline", ("card",))
    assert policy.respond("Shall I send a card payment link?").kind == "accept"


def test_goal_complete_only_once_the_agent_states_the_outcome() -> None:
    scenario = _scenario({"intent": "I want to pay my bill", "done_when": ["payment_link"]})
    policy = AgendaPolicy(scenario, seed=1)
    policy.opening()
    assert policy.respond("Sure, I'll look into it.").signal is None
    act = policy.respond("Here is your payment link: https://pay.example/abc")
    assert (act.kind, act.signal) == ("thank_done", "GOAL_COMPLETE")


def test_questions_are_asked_in_order_each_once_answered() -> None:
    scenario = _scenario({"intent": "How much is the kettle?", "intent_answer": "amount",
                          "asks": [{"say": "do you deliver on Sundays", "answer": "yes_no"},
                                   {"say": "where is the shop", "answer": "place"}],
                          "done_when": ["answered"]})
    acts = _acts(scenario, ["Hi! How can I help you today?", "The kettle is $39.90.", "Yes, we deliver every day.",
                            "We're at 5 Market Street."])
    assert acts == ["intent", "insist", "ask", "ask", "thank_done"]


def test_patience_runs_out_and_the_patient_gives_up() -> None:
    scenario = _scenario({"intent": "I want to pay my bill", "done_when": ["payment_link"], "patience": 2})
    policy = AgendaPolicy(scenario, seed=5)
    policy.opening()
    first = policy.respond("Our shop sells kettles and toasters.")
    second = policy.respond("Our shop sells kettles and toasters.")
    assert first.signal is None and (second.kind, second.signal) == ("give_up", "STUCK")


def test_a_hand_off_the_goal_did_not_ask_for_ends_stuck_and_one_it_asked_for_completes() -> None:
    not_wanted = _scenario({"intent": "How much is the kettle?", "intent_answer": "amount",
                            "done_when": ["answered"]})
    wanted = _scenario({"intent": "I want to talk to a person", "done_when": ["handoff"]})
    handoff = "I'm transferring you to a human colleague now."
    assert AgendaPolicy.replay(not_wanted, [handoff], seed=1)[1].signal == "STUCK"
    assert AgendaPolicy.replay(wanted, [handoff], seed=1)[1].signal == "GOAL_COMPLETE"


def test_replay_rebuilds_the_same_decisions() -> None:
    scenario = _scenario({"intent": "I want a delivery slot on Tuesday", "prefers": ["Tuesday"],
                          "done_when": ["booked"]})
    agent = ["Which day?", "Slots:\n1) Tuesday 09:00\n2) Tuesday 11:00\nWhich one?", "Shall I book Tuesday 09:00?"]
    live = _acts(scenario, agent, seed=4)
    replayed = [AgendaPolicy.replay(scenario, agent[:i], seed=4)[1].label for i in range(len(agent) + 1)]
    assert live == replayed


@pytest.mark.parametrize("locale", ["pt-BR", "en", "es"])
def test_every_act_has_several_templates_in_every_locale(locale: str) -> None:
    import random

    from convoeval.simulator.agenda.acts import PATIENT_ACTS, PatientAct

    for kind in PATIENT_ACTS:
        assert len(TEMPLATES[locale][kind]) >= 3, (locale, kind)
        text = render(PatientAct(kind, ("X-VALUE",)), locale, random.Random(0))
        assert "{x}" not in text and text[:1] not in " .,"


def test_a_question_about_the_patient_is_never_answered_with_a_preference() -> None:
    scenario = _scenario({"intent": "Quero pagar minha conta", "prefers": ["Pix"], "done_when": ["payment_link"]},
                         locale="pt-BR")
    policy = AgendaPolicy(scenario, seed=1)
    policy.opening()
    assert policy.respond("Qual é a sua data de nascimento?").kind == "no_fact"
    act = policy.respond("Qual forma de pagamento você prefere?")
    assert (act.kind, act.content) == ("choose", ("Pix",))
