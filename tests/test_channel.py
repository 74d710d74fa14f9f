"""WhatsApp message parts (issue #37): their shapes, the agent protocol carrying them, WhatsApp's limits as the
``whatsapp_limits`` assertion, the transcript's ``parts`` column and older results without it, and the chat drawing
them."""

from __future__ import annotations

import re

import pytest

from convoeval.agents import as_agent
from convoeval.agents.base import AgentError, AgentReply, AgentSession
from convoeval.agents.replies import coerce_reply, reply_from_mapping
from convoeval.agents.webhook import AUTH_HEADER_ENV, WebhookAgent
from convoeval.channel import (
    ButtonsPart,
    ListPart,
    ListRow,
    ListSection,
    MediaPart,
    PartError,
    ReplyButton,
    TemplatePart,
    TextPart,
    parse_parts,
    part_violations,
)
from convoeval.pathcheck import check_whatsapp_limits
from convoeval.report.chat import message_html
from convoeval.scenarios import Assertions, parse_scenario
from convoeval.testing import FakeChatModel


def buttons(*titles: str, body: str = "Como prefere pagar?") -> dict:
    return {"type": "buttons", "body": body, "buttons": [{"id": t.lower(), "title": t} for t in titles]}


# ── Shapes ──


@pytest.mark.parametrize(("raw", "problem"), [
    ([{"type": "buttons", "body": "x", "buttons": [{"id": "a"}]}], "parts[0].buttons[0].title: Field required"),
    ([{"type": "text", "text": "ok"}, {"type": "carousel"}], "parts[1]: unknown type 'carousel' (one of text, "),
    ([{"text": "oi"}], "parts[0]: 'type' is missing"),
    ([{"type": "text", "text": "oi", "txt": "oi"}], "parts[0].txt: unknown field"),
    ([{"type": "list", "body": "x", "button": "Ver", "sections": [{"rows": [{"id": 1, "title": "a"}]}]}],
     "parts[0].sections[0].rows[0].id: Input should be a valid string"),
    ([{"type": "media", "kind": "audio", "path": "evals/media/nota.ogg", "caption": "oi"}],
     "parts[0]: an audio note has no caption on WhatsApp: give its words as 'transcript'"),
    ([{"type": "media", "kind": "image", "path": "evals/media/../../etc/passwd"}],
     "parts[0].path: must be a file under evals/media/"),
    ([{"type": "media", "kind": "video", "path": "evals/media/a.mp4"}], "parts[0].kind: Input should be"),
    ({"type": "text", "text": "oi"}, "parts must be an array of parts, got dict"),
])
def test_a_wrong_part_is_named_with_its_field(raw, problem) -> None:
    with pytest.raises(PartError) as caught:
        parse_parts(raw)
    assert str(caught.value).startswith(problem)


def test_every_type_parses_and_reads_as_text() -> None:
    parts = parse_parts([
        {"type": "text", "text": "Oi"},
        buttons("Pix", "Boleto"),
        {"type": "list", "body": "Horários", "button": "Ver horários",
         "sections": [{"title": "Terça", "rows": [{"id": "t9", "title": "09:00", "description": "Dra. Ana"}]}]},
        {"type": "reply", "id": "pix", "title": "Pix"},
        {"type": "media", "kind": "audio", "path": "evals/media/nota.ogg", "transcript": "já paguei"},
        {"type": "template", "name": "payment_reminder", "parameters": ["Ana", "R$ 150,00"]},
    ])
    assert [AgentReply(parts=[p]).text for p in parts] == [
        "Oi", "Como prefere pagar?\n[Pix] [Boleto]", "Horários\n[Ver horários: 09:00]", "Pix",
        "[audio: nota.ogg] já paguei", "[template payment_reminder: Ana, R$ 150,00]",
    ]


# ── The agent protocol ──


def test_bubbles_alone_are_text_parts_and_parts_alone_give_the_bubbles() -> None:
    assert AgentReply(bubbles=["a", "b"]).parts == [TextPart(text="a"), TextPart(text="b")]
    assert AgentReply(["a"], [], None).parts == [TextPart(text="a")]  # positional, as before parts existed
    reply = AgentReply(parts=[TextPart(text="oi"), ButtonsPart(**buttons("Pix"))])
    assert reply.bubbles == ["oi", "Como prefere pagar?\n[Pix]"]


def test_a_reply_mapping_with_parts_is_checked() -> None:
    reply = reply_from_mapping("bot", {"parts": [{"type": "text", "text": "Fatura de R$ 150"}, buttons("Pix", "Boleto")],
                                       "tool_calls": [{"name": "list_invoices"}], "conversation_id": "c1"})
    assert [p.type for p in reply.parts] == ["text", "buttons"] and reply.tool_names == ["list_invoices"]
    assert reply.bubbles[1] == "Como prefere pagar?\n[Pix] [Boleto]" and reply.conversation_id == "c1"


@pytest.mark.parametrize(("value", "problem"), [
    ({"parts": [{"type": "text", "text": "a"}, {"type": "buttons", "body": "b", "buttons": [{"id": "x", "title": 5}]}]},
     "parts[1].buttons[0].title: Input should be a valid string"),
    ({"parts": [{"type": "reply", "id": "pix"}]}, "parts[0] is a 'reply' (the patient's tap"),
    ({"parts": []}, "parts is empty"),
    ({"parts": "oi"}, "parts must be an array of parts, got str"),
    ({"parts": [{"type": "text", "text": "  "}]}, "parts has no text"),
    ({"bubbles": ["a"], "parts": [{"type": "text", "text": "a"}]}, "give one of 'bubbles', 'text' or 'parts', not"),
    (AgentReply(bubbles=["a"], parts=[TextPart(text="b")]), "AgentReply.bubbles and AgentReply.parts disagree at "
                                                           "message 1"),
    (AgentReply(parts=[{"type": "text"}]), "AgentReply.parts[0].text: Field required"),  # type: ignore[list-item]
])
def test_a_wrong_reply_is_an_agent_error_naming_the_part_and_field(value, problem) -> None:
    with pytest.raises(AgentError, match="agent 'bot' broke the reply protocol: " + re.escape(problem)):
        coerce_reply("bot", value)


@pytest.fixture
def session() -> AgentSession:
    return AgentSession(run_id="r", clinic_id="c", patient_id="p", patient_phone="+5511999990000",
                        patient_name="Ana", locale="pt-BR", agent="billing", conversation_id="conv-1")


async def test_a_python_callable_may_answer_with_parts(session) -> None:
    agent = as_agent(lambda message, session: {"parts": [buttons("Pix", "Boleto", "Cartão")]})
    reply = await agent.respond("oi", session)
    assert reply.parts == [ButtonsPart(**buttons("Pix", "Boleto", "Cartão"))]
    bad = as_agent(lambda message, session: {"parts": [{"type": "template"}]})
    with pytest.raises(AgentError, match=r"parts\[0\]\.name: Field required"):
        await bad.respond("oi", session)


async def test_a_webhook_may_answer_with_parts(httpserver, session, monkeypatch) -> None:
    monkeypatch.delenv(AUTH_HEADER_ENV, raising=False)
    httpserver.expect_oneshot_request("/agent").respond_with_json(
        {"parts": [{"type": "media", "kind": "document", "path": "evals/media/boleto.pdf", "caption": "Seu boleto"},
                   buttons("Já paguei", body="Avise quando pagar")], "conversation_id": "wa-1"})
    httpserver.expect_oneshot_request("/agent").respond_with_json({"parts": [buttons("Pix", body="")[
        "buttons"][0]]})
    async with WebhookAgent(httpserver.url_for("/agent")) as agent:
        reply = await agent.respond("quero o boleto", session)
        assert [p.type for p in reply.parts] == ["media", "buttons"] and reply.conversation_id == "wa-1"
        assert reply.bubbles[0] == "[document: boleto.pdf] Seu boleto"
        with pytest.raises(AgentError, match=r"parts\[0\]: 'type' is missing"):
            await agent.respond("pix", session)


# ── WhatsApp's limits ──


@pytest.mark.parametrize(("part", "problem"), [
    (TextPart(text="x" * 4097), "the text is 4,097 characters (at most 4,096)"),
    (ButtonsPart(**buttons("Pix", "Boleto", "Cartão", "Débito")), "4 reply buttons (at most 3)"),
    (ButtonsPart(**buttons("Cartão de crédito em 12x")), "button title 'Cartão de crédito em 12x' is 24 characters "
                                                          "(at most 20)"),
    (ButtonsPart(body="x", buttons=[ReplyButton(id="a", title="A"), ReplyButton(id="a", title="B")]),
     "button id 'a' is used more than once (must be unique)"),
    (ButtonsPart(body="x", buttons=[ReplyButton(id="a", title=" ")]), "button title ' ' is empty"),
    (ButtonsPart(body="x", buttons=[]), "no reply buttons (at least 1)"),
    (ButtonsPart(body="x" * 1025, buttons=[ReplyButton(id="a", title="A")]), "the body is 1,025 characters (at most "
                                                                             "1,024)"),
    (ButtonsPart(body="x", buttons=[ReplyButton(id="a", title="A")], footer="f" * 61), "the footer is 61 characters"),
    (ListPart(body="x", button="Ver", sections=[ListSection(rows=[ListRow(id=str(i), title=f"{i}h")
                                                                  for i in range(11)])]),
     "11 rows (at most 10 in all sections together)"),
    (ListPart(body="x", button="Ver", sections=[ListSection(rows=[ListRow(id="a", title="Terça-feira, 10 de março")])]),
     "row title 'Terça-feira, 10 de março' is 24 characters"),  # 24 is allowed: no problem expected here
    (ListPart(body="x", button="Ver", sections=[ListSection(rows=[ListRow(id="a", title="Terça-feira, 10 de março!")])]),
     "row title 'Terça-feira, 10 de março!' is 25 characters (at most 24)"),
    (ListPart(body="x", button="Ver", sections=[ListSection(rows=[ListRow(id="a", title="a", description="d" * 73)])]),
     "the description of row 'a' is 73 characters (at most 72)"),
    (ListPart(body="x", button="Ver", sections=[ListSection(rows=[ListRow(id="a", title="a")]),
                                                ListSection(rows=[ListRow(id="b", title="b")])]),
     "section 1 has no title (needed when there are several sections)"),
    (ListPart(body="x", button="Ver todos os horários", sections=[ListSection(rows=[ListRow(id="a", title="a")])]),
     "the list button 'Ver todos os horários' is 21 characters (at most 20)"),
    (MediaPart(kind="image", path="evals/media/r.jpg", caption="c" * 1025), "the caption of 'r.jpg' is 1,025"),
    (TemplatePart(name=""), "a template message has no name"),
    (TemplatePart(name="Lembrete de pagamento"), "template name 'Lembrete de pagamento' is not an approved"),
])
def test_each_limit_is_named(part, problem) -> None:
    found = part_violations(part)
    if "24 characters\"" in problem or problem.endswith("is 24 characters"):
        assert found == []
    else:
        assert any(p.startswith(problem) for p in found), found


def test_messages_within_the_limits_break_none() -> None:
    within = [TextPart(text="x" * 4096), ButtonsPart(**buttons("Pix", "Boleto", "Cartão de crédito")),
              ListPart(body="x", button="Ver horários", sections=[
                  ListSection(title="Manhã", rows=[ListRow(id=f"m{i}", title=f"{i}h") for i in range(5)]),
                  ListSection(title="Tarde", rows=[ListRow(id=f"t{i}", title=f"{i}h") for i in range(5)])]),
              MediaPart(kind="audio", path="evals/media/a.ogg", transcript="x" * 5000),
              TemplatePart(name="payment_reminder", parameters=["Ana"])]
    assert [part_violations(p) for p in within] == [[]] * len(within)


def test_the_assertion_reads_the_recorded_messages_and_older_rows() -> None:
    over = [{"turn": 1, "role": "patient", "text": "x" * 5000},  # the patient's messages are not the agent's
            {"turn": 1, "role": "agent", "parts": [{"type": "text", "text": "oi"}, buttons("A", "B", "C", "D")]},
            {"turn": 2, "role": "agent", "bubbles": ["y" * 4097], "parts": []}]  # results saved before parts
    [result] = check_whatsapp_limits(over, True)
    assert (result.key, result.expected, result.actual, result.passed) == ("whatsapp_limits", True, False, False)
    assert result.detail == ("whatsapp_limits: turn 1, message 2 (buttons): 4 reply buttons (at most 3); turn 2, "
                             "message 1 (text): the text is 4,097 characters (at most 4,096)")
    assert check_whatsapp_limits(over, False)[0].passed  # false: a message over a limit is what is expected
    fine = [{"turn": 1, "role": "agent", "text": "oi", "parts": None}]
    assert check_whatsapp_limits(fine, True)[0].detail == "whatsapp_limits: all 1 agent messages within WhatsApp's limits"
    assert check_whatsapp_limits(fine, None) == []
    broken = [{"turn": 3, "role": "agent", "parts": [{"type": "buttons"}]}]
    assert "turn 3: its parts cannot be read" in check_whatsapp_limits(broken, True)[0].detail


def test_scenarios_declare_the_key_as_a_boolean() -> None:
    assert Assertions.model_validate({"whatsapp_limits": True}).active() == {"whatsapp_limits": True}
    with pytest.raises(ValueError, match="whatsapp_limits"):
        Assertions.model_validate({"whatsapp_limits": "yes please"})


# ── Through the runner: the transcript records the parts, the assertion row names the limit ──

SCENARIO = {
    "type": "conversational", "id": "billing-whatsapp-buttons", "agent": "billing", "locale": "pt-BR",
    "description": "buttons", "persona": {"name": "Ana Souza", "phone": "11987650099", "cpf": "12345678901"},
    "goal": "pay", "rubric": ["Agent offered the methods"], "max_turns": 2,
    "fixtures": {"clinic": {"name": "Clínica Sorriso"}}, "assertions": {"whatsapp_limits": True},
}
JUDGE = [{"verdicts": [{"index": 1, "evidence": "Turn 1", "reasoning": "seen", "passed": True}]},
         {"issues": [], "scores": {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 8,
                                   "goal_completion": 9}, "suggestion": "ok"}]


@pytest.mark.parametrize("titles", [("Pix", "Boleto", "Cartão"), ("Pix", "Boleto", "Cartão", "Débito")])
async def test_a_run_records_the_parts_and_checks_the_limits(titles, store, tmp_path) -> None:
    from convoeval.frames import from_parquet, to_parquet
    from convoeval.pipeline import arun_conversation

    def agent(message, session):
        return {"parts": [{"type": "text", "text": "Sua fatura é de R$ 150,00."}, buttons(*titles)]}

    sc = parse_scenario(SCENARIO)
    patient = FakeChatModel(replies=["Oi, quero pagar", "Pix [GOAL_COMPLETE]"])
    result = await arun_conversation(sc, agent=agent, seed=1, simulator_model=patient,
                                     judge_model=FakeChatModel(replies=JUDGE), store=store, simulator_gate=False)
    [row] = result.assertions[result.assertions["assertion"] == "whatsapp_limits"].to_dict("records")
    assert row["passed"] is (len(titles) <= 3)
    if len(titles) > 3:
        assert "turn 1, message 2 (buttons): 4 reply buttons (at most 3)" in row["message"]
    t = result.transcript
    assert t["parts"].iloc[0] == [{"type": "text", "text": "Oi, quero pagar"}]
    assert t["parts"].iloc[1][1] == buttons(*titles)
    to_parquet(t, tmp_path / "t.parquet")
    assert from_parquet(tmp_path / "t.parquet")["parts"].iloc[1] == t["parts"].iloc[1]


def test_a_results_folder_saved_before_parts_still_loads_and_draws() -> None:
    from convoeval import load_results
    from convoeval.report.transcripts import transcripts

    run = load_results("reports/example")  # saved before the parts column existed
    t = run.frames.transcripts
    assert "parts" in t and all(cell == [] for cell in t["parts"])
    assert "Patient · turn 1" in str(transcripts(run))  # drawn from its bubbles, as before
    assert check_whatsapp_limits(t.to_dict("records"), True)[0].passed


# ── The chat drawing them ──


def test_text_only_messages_draw_exactly_as_before_parts() -> None:
    texts = ["Olá <b>Ana</b>", "Segue o link"]
    before = message_html("Agent", texts, patient=False, quotes=["Ana"])
    as_parts = [{"type": "text", "text": t} for t in texts]
    assert message_html("Agent", texts, patient=False, quotes=["Ana"], parts=as_parts) == before
    assert message_html("Agent", texts, patient=False, quotes=["Ana"], parts=[]) == before
    assert message_html("Agent", texts, patient=False, quotes=["Ana"], parts=[{"type": "buttons"}]) == before


def test_buttons_lists_media_and_templates_are_drawn_escaped_with_the_limits_broken() -> None:
    parts = [buttons("Pix", "<script>alert(1)</script>", "Cartão", "Débito", body="Como <i>pagar</i>?"),
             {"type": "list", "body": "Horários", "button": "Ver horários",
              "sections": [{"title": "Terça", "rows": [{"id": "t9", "title": "09:00", "description": "Dra. Ana"}]}]},
             {"type": "media", "kind": "document", "path": "evals/media/boleto.pdf", "caption": "Seu boleto"},
             {"type": "template", "name": "payment_reminder", "parameters": ["Ana"]}]
    html = message_html("Agent", ["unused"], patient=False, parts=parts)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Como &lt;i&gt;pagar&lt;/i&gt;?" in html and "unused" not in html
    assert "4 reply buttons (at most 3)" in html  # the chip naming the limit
    for shown in (">Pix</div>", ">Ver horários</div>", "Terça", "09:00", "Dra. Ana", "document · boleto.pdf",
                  "Seu boleto", "template · payment_reminder", ">Ana</div>"):
        assert shown in html, shown
    tap = message_html("Patient", ["Pix"], patient=True, parts=[{"type": "reply", "id": "pix", "title": "Pix"}])
    assert "tapped pix" in tap and "at most" not in tap
