"""The reference support agent: answers from its handbook and the store's price list, hands off when asked or when
it cannot help; every known fault's documented effect on the database and the transcript."""

from __future__ import annotations

import asyncio
import re

import pytest
from agents_clinic_support import (  # noqa: F401 - pytest fixtures
    SCENARIOS,
    chats,
    load,
    run_scripted,
    scenario,
    store,
)

from convoeval.agents.clinic import faults_for, make_clinic_agent

SERVICES = [
    {"id": "consulta", "name": "Consulta clínica geral", "price_cents": 25000},
    {"id": "limpeza", "name": "Limpeza dental", "duration_min": 40, "price_cents": 18000},
]
# Patient lines that take the healthy agent to each conversational scenario's goal.
SCRIPTS = {
    "support/conv-prices-insurance-en.yaml": [
        "Hi! How much is a teeth cleaning?",
        "Do you accept SulAmérica insurance?",
        "And where is the clinic?",
        "Great, thanks!",
    ],
    "support/conv-wants-human-es.yaml": ["Hola", "quiero hablar con una persona", "gracias"],
    "support/conv-medical-question-pt.yaml": [
        "Bom dia, vocês abrem no sábado?",
        "Estou com dor e inchaço depois de extrair o siso, é normal?",
        "Tá bom, obrigado",
    ],
}
# Which of each scenario's assertions a fault makes fail (its documented breaks, where the scenario sets them to
# what the healthy agent reaches).
EXPECTED_FAILURES = {
    "never_escalates": {"support/conv-wants-human-es.yaml": {"escalated_to_human"},
                        "support/conv-medical-question-pt.yaml": {"escalated_to_human"}},
    "invented_price": {},
    "rude_tone": {},
    "premature_handoff": {"support/conv-prices-insurance-en.yaml": {"escalated_to_human", "tools_called"}},
}  # fmt: skip
POLITE = re.compile(r"por favor|obrigad|please|thank|gracias|😊|claro|\bsure\b|sorry|desculpe|perdón|sinto|lamento", re.I)
PRICE_RE = re.compile(r"R\$ ?\d[\d.,]*\d")


@pytest.mark.parametrize(
    ("locale", "lines", "expect"),
    [
        ("pt-BR", ["Oi, qual o horário de vocês?", "Quanto custa a limpeza?", "Onde fica a clínica?", "obrigada"],
         ["8h às 18h", "R$ 180,00", "Rua das Flores"]),
        ("en", ["Hello! What are your opening hours?", "What are your prices?", "Do you accept Amil?", "no, thanks"],
         ["8 am to 6 pm", "R$250.00", "Yes, we accept Amil"]),
        ("es", ["Hola, ¿cuál es el horario?", "¿Cuánto cuesta la limpieza?", "¿Aceptan seguro médico?", "gracias"],
         ["de 8 a 18 h", "R$ 180,00", "Unimed"]),
    ],
)  # fmt: skip
async def test_answers_questions_in_each_language(locale: str, lines: list[str], expect: list[str], chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support"), scenario("support", locale, services=SERVICES))
    replies = await chat.script(*lines)
    for reply, text in zip(replies, expect, strict=False):
        assert text in reply.text
    assert "Ana" in replies[0].text and "Clínica Sorriso" in replies[0].text
    assert chat.tools == ["list_services"]  # asked once, reused for later price questions
    assert chat.check({"escalated_to_human": False, "tools_called": ["list_services"]}) == {
        "escalated_to_human": True, "tools_called": True,
    }  # fmt: skip
    assert replies[-1].tool_calls == [] and "Ana" in replies[-1].text  # goodbye


@pytest.mark.parametrize("path", sorted(p.name for p in (SCENARIOS / "support").glob("scripted-*.yaml")))
async def test_scripted_scenarios_pass_on_the_healthy_agent(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support"), load(f"support/{path}"))
    assert await run_scripted(chat) == []
    assert all(chat.check().values()), chat.details()


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_healthy_agent_reaches_each_conversational_goal(path: str, chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support"), load(path))
    await chat.script(*SCRIPTS[path])
    assert all(chat.check().values()), chat.details()


@pytest.mark.parametrize("fault", [f.name for f in faults_for("support")])
@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_each_fault_breaks_its_documented_assertions(fault: str, path: str, chats) -> None:  # noqa: F811
    sc = load(path)
    chat = chats(make_clinic_agent("support", [fault]), sc)
    await chat.script(*SCRIPTS[path])
    failed = {key for key, passed in chat.check().items() if not passed}
    # A privacy fault changes nothing in an ordinary conversation (no other patient is ever named there).
    expected = EXPECTED_FAILURES.get(fault, {}).get(path, set())
    assert failed == expected, chat.details()
    documented = next(f for f in faults_for("support") if f.name == fault).breaks_assertions
    assert failed <= set(documented)


async def test_never_escalates_ignores_requests_and_problems_it_cannot_solve(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support", ["never_escalates"]), scenario("support", "pt-BR", services=SERVICES))
    replies = await chat.script("Quero falar com um atendente", "ATENDENTE!", "Estou com febre, o que eu tomo?", "x", "y")
    assert "handoff_to_human" not in chat.tools and chat.rows("handoffs") == []
    assert all("Eu mesmo posso te ajudar" in r.text for r in replies[:2])
    assert "orientações médicas" in replies[2].text and "não consigo ajudar" in replies[2].text


async def test_invented_price_quotes_prices_the_clinic_does_not_list(chats) -> None:  # noqa: F811
    sc = load("support/conv-prices-insurance-en.yaml")
    chat = chats(make_clinic_agent("support", ["invented_price"]), sc)
    replies = await chat.script("How much is a teeth cleaning?", "and your other prices?")
    assert "list_services" in chat.tools
    quoted = set(PRICE_RE.findall(chat.transcript))
    listed = {f"R${s.price_cents // 100:,}.{s.price_cents % 100:02d}" for s in sc.fixtures.services}
    assert quoted and not quoted & listed, (quoted, listed)
    assert "R$249.90" in replies[0].text  # R$180.00 + 40%, rounded down to x9.90
    assert len(PRICE_RE.findall(replies[1].text)) == len(sc.fixtures.services)


async def test_premature_handoff_answers_nothing(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support", ["premature_handoff"]), load("support/conv-prices-insurance-en.yaml"))
    greeting = await chat.say("Hi there")
    assert greeting.tool_calls == []  # a greeting is not a question yet
    first = await chat.say("How much is a teeth cleaning?")
    assert first.tool_names == ["handoff_to_human"] and not PRICE_RE.search(first.text)
    later = await chat.script("Where are you located?", "Do you accept Amil?")
    assert all(r.tool_calls == [] and "Rua das Flores" not in r.text and "Amil" not in r.text for r in later)
    assert chat.check({"escalated_to_human": False}) == {"escalated_to_human": False}


@pytest.mark.parametrize("path", sorted(SCRIPTS))
async def test_rude_tone_changes_words_not_actions(path: str, chats) -> None:  # noqa: F811
    healthy = chats(make_clinic_agent("support"), load(path))
    rude = chats(make_clinic_agent("support", ["rude_tone"]), load(path))
    for line in SCRIPTS[path]:
        good, bad = await healthy.say(line), await rude.say(line)
        assert good.tool_names == bad.tool_names
        assert PRICE_RE.findall(good.text) == PRICE_RE.findall(bad.text)  # same facts
        assert not POLITE.search(bad.text), bad.text
        assert bad.bubbles != good.bubbles
    assert POLITE.search(healthy.transcript)


async def test_hands_off_when_it_cannot_help(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support"), scenario("support", "en", services=SERVICES))
    assert (await chat.say("hi")).tool_calls == []
    assert "didn't understand" in (await chat.say("qwerty")).text
    reply = await chat.say("zxcvb")  # a second message in a row it cannot read
    assert reply.tool_names == ["handoff_to_human"] and "Someone from the clinic will continue" in reply.text
    assert "Our team has been notified" in (await chat.say("hello?")).text
    complaint = chats(make_clinic_agent("support"), scenario("support", "es", services=SERVICES))
    first = await complaint.say("Me cobraron dos veces la consulta, es inaceptable")
    assert first.tool_names == ["handoff_to_human"] and "Lamento" in first.text
    assert "cobraron dos veces" in complaint.rows("handoffs")[0]["reason"]


async def test_no_price_list_means_no_invented_price(chats) -> None:  # noqa: F811
    chat = chats(make_clinic_agent("support"), scenario("support", "pt-BR"))
    reply = await chat.say("Quanto custa uma consulta?")
    assert reply.tool_names == ["list_services"] and not PRICE_RE.search(reply.text)
    assert "equipe" in reply.text


async def test_concurrent_conversations_do_not_share_state(chats) -> None:  # noqa: F811
    agent = make_clinic_agent("support")
    a = chats(agent, scenario("support", "pt-BR", services=SERVICES))
    b = chats(agent, scenario("support", "en", services=SERVICES))
    ra, rb = await asyncio.gather(a.say("atendente"), b.say("What are your hours?"))
    assert ra.tool_names == ["handoff_to_human"] and rb.tool_calls == []
    ra, rb = await asyncio.gather(a.say("Qual o horário?"), b.say("How much is a cleaning?"))
    assert "equipe" in ra.text and "8h" not in ra.text  # a is with a human now; b is not
    assert "R$180.00" in rb.text and b.rows("handoffs") == []
