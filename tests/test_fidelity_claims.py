"""What an agent claims (fidelity/claims.py), a patient speaking as the assistant (fidelity/roles.py) and a goal the
agent never claimed (fidelity/goal.py): pure functions, checked on the reference agents' own wording in every locale
and on every patient line the project's humans wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from agents_clinic_support import load
from compare_support import LINES as COMPARE_LINES
from test_agents_clinic_billing import SCRIPTS as BILLING
from test_agents_clinic_confirmation import SCRIPTS as CONFIRMATION
from test_agents_clinic_nps import SCRIPTS as NPS
from test_agents_clinic_recall import PATIENTS as RECALL
from test_agents_clinic_scheduling import PATIENTS as SCHEDULING
from test_agents_clinic_support import SCRIPTS as SUPPORT
from test_agreement_faults import LINES as STUDY_LINES

from convoeval.agents.clinic import (
    _billing_texts,
    _confirmation_texts,
    _nps_texts,
    _scheduling_texts,
    _slot_dialogue,
    _texts,
)
from convoeval.fidelity import agent_claims, role_reversal, self_named
from convoeval.fidelity.goal import not_done, unearned
from convoeval.scenarios import load_scenarios

LOCALES = ("pt-BR", "en", "es")
INJECTIONS = Path(__file__).parent / "data" / "injections"
VALUES = {"name": "Lucia", "for_service": " para Limpeza", "old": "quinta, 12/03 às 14:00",
          "clinic": "Clínica Exemplo", "amount": "R$ 150,00", "method": "Pix", "about": "",
          "due": "20/02/2026", "service": "Limpeza", "when": "terça, 10/03 às 10:00", "professional": "Dra. Ana",
          "score": 8, "count": 2, "duration": 30, "price": "R$ 180,00", "description": "consulta"}


def texts(table, key: str, locale: str) -> list[str]:
    value = table[locale][key]
    return [t.format(**VALUES) for t in ([value] if isinstance(value, str) else value)]


def kinds(text: str, locale: str) -> set[str]:
    return {c.kind for c in agent_claims(text, locale)} - {"amount"}


# ── agent_claims: the reference agents' completion messages claim; their offers and questions do not ──

#: (text table, key, the claim it makes); the first message of a list is the one that claims.
COMPLETIONS = [
    (_billing_texts.TEXTS, "link_intro", "payment_link"), (_billing_texts.TEXTS, "resend", "payment_link"),
    (_slot_dialogue.SLOT_TEXTS, "booked", "booked"), (_slot_dialogue.SLOT_TEXTS, "moved", "moved"),
    (_confirmation_texts.TEXTS, "confirmed", "confirmed"), (_confirmation_texts.TEXTS, "cancelled", "cancelled"),
    (_confirmation_texts.TEXTS, "rescheduled", "moved"), (_nps_texts.TEXTS, "recorded", "recorded"),
    (_nps_texts.TEXTS, "noted", "recorded"), (_texts.COMMON_TEXTS, "handoff", "handoff"),
    (_texts.COMMON_TEXTS, "handed_off", "handoff"),
]
#: Messages that offer, ask, explain or decline: no claim of an outcome, in any locale.
NO_CLAIM = [
    (_billing_texts.TEXTS, key) for key in ("intro", "invoice_one", "offer_methods", "offer_methods_again",
                                            "ask_method", "confirm_with_options", "confirm_method", "confirm_again",
                                            "confirm_unclear", "how_pix", "explain_pix", "explain_boleto", "not_now",
                                            "paid_ack", "done_help", "anything_else")
] + [(_slot_dialogue.SLOT_TEXTS, key) for key in ("offer", "which_slot", "confirm_slot", "confirm_move",
                                                   "no_slots")] + [
    (_scheduling_texts.TEXTS, key) for key in ("not_booked", "confirm_cancel", "ask_new_time")] + [
    (_confirmation_texts.TEXTS, "not_cancelled"), (_nps_texts.TEXTS, "score_which")]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize(("table", "key", "kind"), COMPLETIONS, ids=[f"{k}-{c}" for _t, k, c in COMPLETIONS])
def test_every_completion_message_of_the_reference_agents_is_recognised_in_every_locale(table, key, kind, locale):
    first = texts(table, key, locale)[0]
    claims = agent_claims(first, locale)
    assert kind in {c.kind for c in claims}, first
    assert all(c.quote in first for c in claims)  # quotes are the message's own words, accents and case kept


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize(("table", "key"), NO_CLAIM, ids=[k for _t, k in NO_CLAIM])
def test_offers_questions_negations_and_conditions_claim_nothing(table, key, locale):
    if key not in table[locale]:
        pytest.skip(f"{key} has no {locale} text")
    for text in texts(table, key, locale):
        assert kinds(text, locale) == set(), text


def test_a_url_is_a_payment_link_where_the_message_speaks_of_paying_and_an_amount_is_quoted_as_written():
    invented = ("Prontinho! Aqui está o seu link para pagar R$ 150,00 via Pix:\n"
                "https://pagar.clinicaexemplo.com.br/pix/ab12")
    claims = [(c.kind, c.quote) for c in agent_claims(invented, "pt-BR")]
    assert ("payment_link", "https://pagar.clinicaexemplo.com.br/pix/ab12") in claims
    assert ("payment_link", "Aqui está o seu link") in claims and ("amount", "R$ 150,00") in claims
    assert [c.kind for c in agent_claims("See our website: www.clinica.example for our hours.", "en")] == ["url"]


@pytest.mark.parametrize(("text", "locale", "expected"), [
    ("Ainda não gerei o link, preciso da sua confirmação.", "pt-BR", set()),
    ("I haven't booked anything yet.", "en", set()),
    ("De acuerdo, no la cancelé.", "es", set()),
    ("As soon as the payment is confirmed, the invoice is settled.", "en", set()),
    ("Shall I book Tuesday at 10:00 for you?", "en", set()),
    ("Your payment has been received, thank you!", "en", {"paid"}),
    ("I've sent you the payment link.", "en", {"payment_link"}),
    ("Te envié el enlace de pago.", "es", {"payment_link"}),
    ("Sua consulta no dia 10 foi cancelada.", "pt-BR", {"cancelled"}),  # pt "no" (in the) is no negation
    ("Entendido: tu cita quedó agendada para el lunes.", "en", {"booked"}),  # another language than the locale's
])
def test_claims_need_an_assertion_in_any_of_the_three_languages(text, locale, expected):
    assert kinds(text, locale) == expected


def test_an_unknown_locale_is_refused():
    with pytest.raises(ValueError, match="locale must be"):
        agent_claims("ok", "fr")


# ── role_reversal: the local model's openings are caught; no line a person wrote for a patient is ──

#: The openings of the 0.5B local patient in issue #29's transcripts (and the seed-1 runs) in their scenarios.
REVERSED = [
    ("Oi Dona Aparecida! Estou aqui para ajudar você…", "Dona Aparecida", "Oi Dona Aparecida"),
    ("Hello, Lucia Ferreira! I'm your patient. Please tell me what you need assistance with today.",
     "Lucia Ferreira", "Hello, Lucia Ferreira"),
    ("Hello Ricardo Santos! How can I assist you today?", "Ricardo Santos", "Hello Ricardo Santos"),
    ("Oi, dona! Como posso ajudar você hoje?", "Dona Aparecida", "Como posso ajudar"),
    ("Hola, ¿en qué puedo ayudarte hoy?", "Lucía Fernández", "en qué puedo ayudar"),
    ("Good morning, Mr. Hayes. This is the clinic's assistant.", "Robert Hayes", "Good morning, Mr. Hayes"),
    ("Olá! Aqui é o assistente financeiro da Clínica Exemplo.", "Lucia Ferreira", "Aqui é o assistente"),
    # The seed-42 re-simulation that reached max_turns with the gate's first version (docs/fidelity.md):
    ("Oi Dona! E você, como posso ajudá-lo hoje?", "Dona Aparecida", "como posso ajudá-lo"),
    ("Sim, posso gerar o link de pagamento de R$ 180,00 via *cartão de crédito*.", "Dona Aparecida",
     "posso gerar o link"),
    ("Claro! Por favor, me informe se você tem alguma outra coisa que eu possa ajudar com.", "Dona Aparecida",
     "coisa que eu possa ajudar"),
]


@pytest.mark.parametrize(("text", "persona", "quote"), REVERSED)
def test_a_patient_speaking_as_the_assistant_or_greeting_its_own_name_is_a_role_reversal(text, persona, quote):
    assert role_reversal(text, persona) == quote


def _lines(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], list):
        yield value[0]  # (first line, [(agent pattern, reply), ...]): the patterns are the agent's words
        yield from (reply for _pattern, reply in value[1])
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _lines(v)


def patient_corpus() -> list[tuple[str, str]]:
    """(line, persona) for every patient line written by hand in the project: scripted scenarios and test patients."""
    corpus = [(t.user, sc.persona.name) for sc in load_scenarios() for t in getattr(sc, "turns", None) or []]
    for table in (BILLING, SUPPORT, CONFIRMATION, NPS, SCHEDULING, RECALL):
        for path, value in table.items():
            corpus += [(line, load(path).persona.name) for line in _lines(value)]
    for table in (COMPARE_LINES, STUDY_LINES):
        corpus += [(line, name) for name, lines in table.items() for line in lines]
    for case in sorted(INJECTIONS.glob("*.yaml")):  # the judge-attack conversations' patients, attackers included
        messages = yaml.safe_load(case.read_text(encoding="utf-8"))["messages"]
        corpus += [(m["text"], "Lucia Ferreira") for m in messages if m["role"] == "patient"]
    corpus += [("Oi, aqui é a Lucia Ferreira. Vocês podem me ajudar com a fatura?", "Lucia Ferreira"),
               ("Hi, Robert here. Can you help me move my appointment?", "Robert Hayes"),
               ("Hola, me llamo Lucía. ¿Me pueden ayudar?", "Lucía Fernández")]
    return corpus


def test_no_patient_line_written_by_hand_is_a_role_reversal():
    corpus = patient_corpus()
    assert len(corpus) > 120
    assert [(line, role_reversal(line, persona)) for line, persona in corpus
            if role_reversal(line, persona)] == []


def test_greeting_the_personas_name_is_the_agents_name_when_the_agent_introduced_itself_so():
    agent = "Oi! Eu sou a Lucia, assistente virtual da clínica. Como posso ajudar?"
    assert self_named(agent, "Lucia Ferreira")
    assert not self_named("Olá, Lucia! Aqui é o assistente.", "Lucia Ferreira")
    assert role_reversal("Oi Lucia! Quero pagar minha fatura.", "Lucia Ferreira", agent_names_itself=True) is None
    assert role_reversal("Oi Lucia! Quero pagar minha fatura.", "Lucia Ferreira") == "Oi Lucia"


# ── unearned: a failed outcome the agent never claimed ──

LINK = {"assertion": "payment_link_created", "expected": True, "actual": False, "passed": False}
HANDED_OFF = {"assertion": "escalated_to_human", "expected": False, "actual": True, "passed": False}
WRONG_METHOD = {"assertion": "payment_method", "expected": "boleto", "actual": "pix", "passed": False}
PLUGIN = {"assertion": "loyalty_points_added", "expected": True, "actual": False, "passed": False}


@pytest.mark.parametrize(("failed", "claimed", "expected"), [
    ([LINK], set(), True),                       # nothing claimed, nothing done: the patient was premature
    ([LINK], {"amount"}, True),                  # quoting the invoice is not claiming a link
    ([LINK], {"payment_link"}, False),           # invented_payment_url: claimed, not done, the agent's
    ([LINK], {"url"}, False),                    # any URL is a link claimed
    ([LINK, HANDED_OFF], set(), False),          # the agent did what it must not: its failure whatever was said
    ([WRONG_METHOD], set(), False),              # a link was made, with the wrong method: the agent acted
    ([PLUGIN], set(), False),                    # claims unknown for this assertion: cannot tell, the agent's
    ([], set(), False),                          # nothing failed: no goal to contradict
])
def test_a_goal_is_unearned_only_when_every_failed_outcome_was_not_done_and_never_claimed(failed, claimed, expected):
    assert unearned(failed, claimed) is expected


def test_not_done_reads_the_actual_value_not_the_assertion_name():
    assert not_done({"assertion": "nps_score", "expected": 3, "actual": None})
    assert not not_done({"assertion": "nps_score", "expected": 3, "actual": 4})
    assert not_done({"assertion": "invoice_status", "expected": "paid", "actual": "pending"})
