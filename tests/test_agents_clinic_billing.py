"""The reference billing agent: happy paths in three languages, its scripted scenarios, and every known fault's
documented effect on the database and the transcript."""

from __future__ import annotations

import asyncio
import re

import pytest
from agents_clinic_support import (  # noqa: F401 - pytest fixtures
    SCENARIOS,
    URL_RE,
    chats,
    load,
    run_scripted,
    scenario,
    store,
)

from convoeval.agents.clinic import faults_for, make_clinic_agent
from convoeval.agents.clinic._channel import CHANNEL_FAULT_NAMES
from convoeval.agents.tools import PAYMENT_URL_BASE
from convoeval.scenarios import load_scenario_file

# Patient lines that take the healthy agent to each seed scenario's goal.
SCRIPTS = {
    "billing/conv-happy-payment.yaml": ["Olá, quero pagar minha fatura", "Pix", "Sim", "Obrigada!"],
    "billing/conv-impatient-patient.yaml": ["quero pagar logo", "manda o link", "pix", "sim", "ok"],
    "billing/conv-confused-patient.yaml": [
        "Oi, recebi uma mensagem sobre uma conta",
        "o que é pix?",
        "e o boleto, o que é?",
        "não entendi o boleto",
        "acho que boleto",
        "sim",
        "obrigada",
    ],
}
# The WhatsApp channel's faults act only through the channel: tests/test_channel_faults.py plays them.
FAULTS = [f.name for f in faults_for("billing") if f.name not in CHANNEL_FAULT_NAMES]
POLITE = re.compile(r"por favor|obrigad|please|thank|gracias|😊|claro|of course|perfeito|perfect", re.IGNORECASE)


def _links_urls(chat) -> set[str]:
    return {row["url"] for row in chat.rows("payment_links")}


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_healthy_agent_reaches_each_seed_goal(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing"), load(path))
    replies = await chat.script(*SCRIPTS[path])
    assert all(chat.check().values()), chat.details()
    # The link came from the tool, was sent as its own bubble, and only after the method was confirmed.
    [link_turn] = [n for n, r in enumerate(replies) if "create_payment_link" in r.tool_names]
    assert set(URL_RE.findall(chat.transcript)) == _links_urls(chat)
    assert any(b == next(iter(_links_urls(chat))) for b in replies[link_turn].bubbles)
    assert re.search(r"confirmar|sim/não", replies[link_turn - 1].text)


@pytest.mark.parametrize(
    ("locale", "lines", "amount", "method"),
    [
        ("pt-BR", ["Bom dia! Quero pagar no boleto", "sim", "valeu"], "R$ 150,00", "boleto"),
        ("en", ["Hello, I want to pay my invoice", "card", "yes please", "thanks"], "R$150.00", "card"),
        ("es", ["Hola, ¿cuánto debo?", "con pix", "sí", "gracias, adiós"], "R$ 150,00", "pix"),
    ],
)
async def test_happy_path_in_each_language(locale: str, lines: list[str], amount: str, method: str, chats) -> None:  # noqa: F811
    sc = scenario("billing", locale, invoices=[{"id": "inv", "amount_cents": 15000, "due_date": "2026-02-20"}])
    chat = chats(make_clinic_agent("billing"), sc)
    replies = await chat.script(*lines)
    assert chat.check({"payment_link_created": True, "payment_method": method, "invoice_status": "pending",
                       "escalated_to_human": False, "tools_called": ["list_invoices", "create_payment_link"]})  \
        == dict.fromkeys(["payment_link_created", "payment_method", "invoice_status", "escalated_to_human", "tools_called"], True)  # fmt: skip
    assert amount in replies[0].text and "Ana" in replies[0].text
    [url] = _links_urls(chat)
    assert url.startswith(f"{PAYMENT_URL_BASE}/{method}/") and url in chat.transcript
    goodbye = {"pt-BR": "agradeço", "en": "Thank you", "es": "Gracias"}[locale]
    assert goodbye in replies[-1].text and replies[-1].tool_calls == []


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "billing").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing"), load(f"billing/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


async def test_link_before_confirmation_fails_the_scripted_confirmation_turn(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing", ["link_before_method_confirmed"]), load("billing/scripted-pix-en.yaml"))
    failures = await run_scripted(chat)
    assert failures and failures[0].startswith("turn 1") and "create_payment_link was called" in failures[0]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_each_fault_breaks_exactly_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    sc = load(path)
    chat = chats(make_clinic_agent("billing", [fault]), sc)
    await chat.script(*SCRIPTS[path])
    failed = {key for key, passed in chat.check().items() if not passed}
    documented = next(f for f in faults_for("billing") if f.name == fault).breaks_assertions
    assert failed == set(documented) & set(sc.assertions.active()), chat.details()


async def test_invented_payment_url_sends_a_url_no_tool_created(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing", ["invented_payment_url"]), load("billing/conv-happy-payment.yaml"))
    await chat.script(*SCRIPTS["billing/conv-happy-payment.yaml"])
    [url] = URL_RE.findall(chat.transcript)
    assert not url.startswith(PAYMENT_URL_BASE) and "create_payment_link" not in chat.tools
    assert chat.rows("payment_links") == []
    assert chat.check({"payment_link_created": True}) == {"payment_link_created": False}


async def test_link_before_method_confirmed_creates_pix_link_in_the_first_answer(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing", ["link_before_method_confirmed"]), load("billing/conv-happy-payment.yaml"))
    first = await chat.say("Olá, quero pagar minha fatura")
    assert first.tool_names == ["list_invoices", "create_payment_link"]
    [link] = chat.rows("payment_links")
    assert link["method"] == "pix" and link["url"] in first.bubbles
    assert "confirmar" not in first.text and "boleto" in first.text  # alternatives only after the fact
    switched = await chat.say("boleto")  # and a switch is not confirmed either
    assert switched.tool_names == ["create_payment_link"]
    assert chat.check({"payment_method": "boleto"}) == {"payment_method": True}


async def test_wrong_amount_quotes_ten_percent_more_but_links_the_real_amount(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing", ["wrong_amount"]), load("billing/conv-happy-payment.yaml"))
    await chat.script(*SCRIPTS["billing/conv-happy-payment.yaml"])
    assert "R$ 165,00" in chat.transcript and "R$ 150,00" not in chat.transcript
    [link] = chat.rows("payment_links")
    assert link["amount_cents"] == 15000


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    healthy, rude = chats(make_clinic_agent("billing"), load(path)), chats(make_clinic_agent("billing", ["rude_tone"]), load(path))
    for line in SCRIPTS[path]:
        good, bad = await healthy.say(line), await rude.say(line)
        assert good.tool_names == bad.tool_names
        assert not POLITE.search(bad.text), bad.text
        assert [b for b in bad.bubbles if not URL_RE.fullmatch(b)] != [b for b in good.bubbles if not URL_RE.fullmatch(b)]
    assert POLITE.search(healthy.transcript)  # the markers are what the healthy agent does say


async def test_never_finishes_keeps_asking_for_confirmation(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing", ["never_finishes"]), load("billing/conv-impatient-patient.yaml"))
    await chat.script("quero pagar", "pix")
    replies = await chat.script("sim", "sim", "SIM, já falei", "pode gerar!")
    assert all("Pix" in r.text and "?" in r.text and r.tool_calls == [] for r in replies)
    assert len({r.text for r in replies}) == 2  # alternating wording, never the link
    assert "create_payment_link" not in chat.tools and URL_RE.search(chat.transcript) is None


async def test_several_invoices_are_listed_and_chosen_by_number_or_amount(chats) -> None:  # noqa: F811
    invoices = [
        {"id": "a", "amount_cents": 15000, "due_date": "2026-02-20", "description": "Consulta"},
        {"id": "b", "amount_cents": 9000, "due_date": "2026-03-20", "status": "overdue"},
        {"id": "c", "amount_cents": 5000, "due_date": "2026-01-20", "status": "paid"},
    ]
    chat = chats(make_clinic_agent("billing"), scenario("billing", "pt-BR", invoices=invoices))
    first = await chat.say("oi")
    assert "2 faturas" in first.text and "R$ 150,00 – Consulta" in first.text and "R$ 50,00" not in first.text
    assert "número" in (await chat.say("hmm")).text
    assert "R$ 90,00" in (await chat.say("a de 90")).text
    await chat.script("pix", "sim")
    [link] = chat.rows("payment_links")
    assert link["invoice_id"] == chat.seeded.refs["invoices"]["b"] and link["amount_cents"] == 9000


async def test_no_open_invoice_means_no_link(chats) -> None:  # noqa: F811
    sc = scenario("billing", "en", invoices=[{"id": "p", "amount_cents": 100, "due_date": "2026-01-01", "status": "paid"}])
    chat = chats(make_clinic_agent("billing"), sc)
    assert "no open invoices" in (await chat.say("hi, I want to pay")).text
    await chat.say("pix")
    assert chat.rows("payment_links") == []


async def test_confused_patient_gets_simple_explanations_without_links(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing"), load("billing/conv-confused-patient.yaml"))
    replies = await chat.script("oi", "o que é pix?", "e boleto?", "não entendi, o que é boleto?")
    assert "aplicativo do seu banco" in replies[1].text and "conta de luz" in replies[2].text
    assert "explico de novo" in replies[3].text  # patient with a repeated question
    assert all(r.tool_calls == [] for r in replies[1:])
    assert "Dona Aparecida" in replies[0].text


async def test_patient_can_ask_for_a_human_mid_payment(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing"), load("billing/conv-happy-payment.yaml"))
    await chat.script("oi", "pix")
    handoff = await chat.say("prefiro falar com um atendente")
    assert handoff.tool_names == ["handoff_to_human"]
    after = await chat.say("sim")  # a late "yes" no longer creates the link
    assert after.tool_calls == [] and chat.check({"escalated_to_human": True, "payment_link_created": False}) == {
        "escalated_to_human": True, "payment_link_created": True,
    }  # fmt: skip


async def test_concurrent_conversations_do_not_share_state(chats) -> None:  # noqa: F811
    agent = make_clinic_agent("billing")
    pix = chats(agent, load("billing/conv-happy-payment.yaml"))
    boleto = chats(agent, load("billing/conv-confused-patient.yaml"))
    for a, b in [("oi", "oi"), ("pix", "boleto"), ("sim", "não")]:
        ra, rb = await asyncio.gather(pix.say(a), boleto.say(b))
        assert ra.conversation_id != rb.conversation_id
    assert pix.check({"payment_method": "pix"}) == {"payment_method": True}
    assert boleto.rows("payment_links") == [] and "Qual forma" in rb.text


def test_seed_scenarios_are_untouched_and_faults_reference_them() -> None:
    criteria = {c for p in SCRIPTS for c in load_scenario_file(SCENARIOS / p).criteria}
    for fault in faults_for("billing"):
        assert set(fault.breaks_criteria) <= criteria
    assert {f.name for f in faults_for("billing")} == {
        "invented_payment_url", "link_before_method_confirmed", "wrong_amount", "rude_tone", "never_finishes",
        "button_overflow",  # WhatsApp's limits (issue #37)
        # the privacy faults every agent that holds records shares (tests/test_redteam.py)
        "discloses_third_party", "trusts_claimed_identity", "follows_injected_instructions", "acts_on_other_patient",
        # the WhatsApp channel's faults (tests/test_channel_faults.py)
        "no_debounce", "answers_last_fragment_only", "not_idempotent", "ignores_window", "orders_by_arrival",
    }  # fmt: skip


# ── WhatsApp's limits (issue #37): the healthy agent stays within them, button_overflow breaks them in 3 languages ──

SCRIPTED = sorted(p.name for p in (SCENARIOS / "billing").glob("scripted-*.yaml"))


@pytest.mark.parametrize("path", SCRIPTED)
async def test_button_overflow_breaks_whatsapp_limits_in_each_language_and_nothing_else(path: str, chats) -> None:  # noqa: F811
    sc = load(f"billing/{path}")
    healthy, faulty = chats(make_clinic_agent("billing"), sc), chats(make_clinic_agent("billing", ["button_overflow"]), sc)
    assert await run_scripted(healthy) == [] and all(healthy.check().values()), healthy.details()
    await run_scripted(faulty)
    assert {k for k, ok in faulty.check().items() if not ok} == {"whatsapp_limits"}, faulty.details()
    [detail] = faulty.details()
    assert re.fullmatch(r"whatsapp_limits: turn 1, message \d \(buttons\): 4 reply buttons \(at most 3\)", detail)
    [(at, offer)] = [(n, p) for n, p in enumerate(faulty.replies[0].parts) if p.type == "buttons"]
    assert [b.id for b in offer.buttons] == ["pix", "boleto", "card", "human"]
    titles = {"pt-BR": "Cartão de crédito", "en": "Credit card", "es": "Tarjeta de crédito"}[sc.locale]
    assert titles in [b.title for b in offer.buttons] and all(len(b.title) <= 20 for b in offer.buttons)
    # The same words and tools as the healthy agent: the body is the healthy bubble, the buttons are added.
    assert offer.body == healthy.replies[0].bubbles[at]
    assert [r.tool_names for r in faulty.replies] == [r.tool_names for r in healthy.replies]


async def test_healthy_billing_replies_are_plain_text_within_the_limits(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("billing"), load("billing/conv-happy-payment.yaml"))
    await chat.script(*SCRIPTS["billing/conv-happy-payment.yaml"])
    assert all(p.type == "text" for r in chat.replies for p in r.parts)
    assert chat.check({"whatsapp_limits": True}) == {"whatsapp_limits": True}
