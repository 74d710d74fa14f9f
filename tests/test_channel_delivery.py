"""The WhatsApp channel's pieces (issue #37): the delivery plan, the scenario fields, the assertions on recorded rows,
and a Python agent of the user's own that debounces with ``idle`` and taps handled through the pipeline."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from convoeval.agents.base import AgentReply, AgentSession
from convoeval.channel import ButtonsPart, ReplyButton, TextPart
from convoeval.channel.delivery import Idle, InboundMessage, channel_rng, plan_turn
from convoeval.channel.settings import ChannelSettings, parse_duration
from convoeval.pathcheck.channel import check_channel, fragment_facts
from convoeval.pipeline.conversation import arun_conversation
from convoeval.scenarios import ScriptedTurn
from convoeval.scenarios.loader import parse_scenario

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.timezone.utc)
BURST = [[TextPart(text="oi")], [TextPart(text="quero pagar")], [TextPart(text="no pix")]]


def plan(settings: ChannelSettings, seed: int = 1, **kw: object) -> list[InboundMessage | Idle]:
    return plan_turn(BURST, turn=1, conversation_key="run", start=T0, settings=settings,
                     rng=channel_rng("sc", seed, 1, 1), **kw)  # type: ignore[arg-type]


def test_a_quiet_channel_delivers_the_burst_in_order_then_the_quiet() -> None:
    events = plan(ChannelSettings())
    messages = [e for e in events if isinstance(e, InboundMessage)]
    assert [m.fragment for m in messages] == [0, 1, 2] and {m.delivery for m in messages} == {"delivered"}
    assert len({m.id for m in messages}) == 3 and all(m.burst == 3 for m in messages)
    assert isinstance(events[-1], Idle) and events[-1].kind == "quiet"
    assert events[-1].at - messages[-1].arrived_at == dt.timedelta(seconds=10)


def test_redelivery_repeats_the_id_after_the_answer_and_is_seeded() -> None:
    events = plan(ChannelSettings(), redeliver=1.0)
    first_quiet = next(i for i, e in enumerate(events) if isinstance(e, Idle))
    again = [e for e in events[first_quiet:] if isinstance(e, InboundMessage)]
    assert [m.delivery for m in again] == ["redelivered"] * 3
    assert [m.id for m in again] == [e.id for e in events[:3] if isinstance(e, InboundMessage)]
    half = ChannelSettings(redeliver=0.5, reorder=0.5, delay_s=3)
    assert plan(half, seed=7) == plan(half, seed=7)  # the same seed misbehaves the same way
    assert any(plan(half, seed=s) != plan(half, seed=7) for s in range(1, 7))


def test_reorder_marks_the_fragment_that_overtook_and_keeps_sent_times() -> None:
    events = plan(ChannelSettings(reorder=1.0))
    messages = [e for e in events if isinstance(e, InboundMessage)]
    assert [m.fragment for m in messages] == [1, 0, 2]
    assert messages[0].delivery == "reordered" and messages[0].sent_at > messages[1].sent_at
    assert [m.arrived_at for m in messages] == sorted(m.arrived_at for m in messages)


def test_a_silent_turn_is_one_wait_after_the_duration() -> None:
    [event] = plan_turn([], turn=4, conversation_key="run", start=T0, settings=ChannelSettings(),
                        rng=random.Random(0), after_s=parse_duration("26h"))
    assert isinstance(event, Idle) and event.kind == "wait" and event.at - T0 == dt.timedelta(hours=26)


@pytest.mark.parametrize("bad", ["26 hours ago", "-3", True, "h"])
def test_a_bad_duration_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(bad if bad != "-3" else -3)


def test_scripted_turn_fields_are_strict() -> None:
    with pytest.raises(ValidationError, match="a turn needs 'user'"):
        ScriptedTurn()
    with pytest.raises(ValidationError, match="not a duration"):
        ScriptedTurn(user="oi", after="tomorrow")
    with pytest.raises(ValidationError, match="evals/media/"):
        ScriptedTurn(media={"kind": "image", "path": "../secret.jpg"})
    with pytest.raises(ValidationError, match="redeliverr"):
        ScriptedTurn.model_validate({"user": "oi", "redeliverr": True})
    assert not ScriptedTurn(user="oi").uses_channel and ScriptedTurn(user=["oi", "tudo bem?"]).uses_channel


def test_fragment_facts_and_the_assertions_on_rows() -> None:
    assert fragment_facts("Terça de manhã, CPF 123.456.789-09") == {
        "cpf": "123.456.789-09", "date": "terca", "time": "de manha"}
    rows = [
        {"turn": 1, "role": "patient", "text": "quero pagar", "delivery": "delivered", "sent_at": "2026-03-02T09:00:20+00:00"},
        {"turn": 1, "role": "patient", "text": "no pix", "delivery": "delivered", "sent_at": "2026-03-02T09:00:23+00:00"},
        {"turn": 1, "role": "agent", "text": "Qual forma de pagamento prefere: Pix ou boleto?", "delivery": "quiet",
         "sent_at": "2026-03-02T09:00:33+00:00"},
        {"turn": 1, "role": "patient", "text": "no pix", "delivery": "redelivered", "message_id": "wamid.x.1.1",
         "sent_at": "2026-03-02T09:00:23+00:00"},
        {"turn": 1, "role": "agent", "text": "Link!", "tools": ["create_payment_link"], "delivery": "quiet",
         "sent_at": "2026-03-02T09:00:48+00:00"},
        {"turn": 2, "role": "agent", "text": "Oi?", "parts": [{"type": "text", "text": "Oi?"}], "delivery": "wait",
         "sent_at": "2026-03-03T11:00:00+00:00"},
    ]
    keys = {"one_reply_per_burst": True, "fragments_covered": True, "no_duplicate_effects": True,
            "whatsapp_window": True}
    results = {r.key: r for r in check_channel(rows, keys)}
    assert results["one_reply_per_burst"].passed  # one answer before the redelivery
    assert "asked again for the payment the patient gave in message 2 of 2" in results["fragments_covered"].detail
    assert "wamid.x.1.1 was delivered twice and answered twice, called create_payment_link" in (
        results["no_duplicate_effects"].detail)
    assert "turn 2: sent text 26 h after" in results["whatsapp_window"].detail
    without = [{k: v for k, v in r.items() if k not in ("delivery", "sent_at")} for r in rows]
    assert all(not r.passed and "did not go through the WhatsApp channel" in r.detail
               for r in check_channel(without, keys))


class DebouncingBot:
    """A user's own Python agent written against the channel protocol: keeps fragments, answers at the quiet."""

    name = "debouncing-bot"

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.seen: set[str] = set()

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        inbound = session.inbound
        assert inbound is not None and session.now is not None
        if inbound.id in self.seen:
            return AgentReply()
        self.seen.add(inbound.id)
        self.kept.append(message)
        return AgentReply()

    async def idle(self, session: AgentSession) -> AgentReply:
        if not self.kept:
            return AgentReply()
        said, self.kept = " + ".join(self.kept), []
        if said == "Pix":
            return AgentReply(bubbles=[f"ok: {said}"])
        return AgentReply(parts=[ButtonsPart(body=f"got: {said}", buttons=[ReplyButton(id="pix", title="Pix")])])


async def test_a_users_agent_debounces_and_the_patient_taps_its_button(tmp_path: Path) -> None:
    scenario = parse_scenario({
        "id": "own-bot", "agent": "billing", "description": "a burst, then a tap", "persona": {"name": "Ana Lima",
        "phone": "11900000000"}, "channel": {"redeliver": 1},
        "turns": [{"user": ["oi", "quero pagar"], "judge": False, "expect": {"response_contains": ["oi + quero pagar"]}},
                  {"tap": "pix", "judge": False, "expect": {"response_contains": ["ok: Pix"]}},
                  {"tap": "boleto", "judge": False}],
        "assertions": {"one_reply_per_burst": True, "no_duplicate_effects": True}})
    result = await arun_conversation(scenario, agent=DebouncingBot(), seed=3)
    rows = result.transcript.to_dict("records")
    assert [r["delivery"] for r in rows if r["turn"] == 1] == [
        "delivered", "delivered", "quiet", "redelivered", "redelivered"]
    assert rows[2]["parts"][0]["type"] == "buttons"
    tap = next(r for r in rows if r["turn"] == 2 and r["role"] == "patient")
    assert tap["parts"] == [{"type": "reply", "id": "pix", "title": "Pix"}] and tap["text"] == "Pix"
    assert result.assertions["passed"].all(), result.assertions["message"].tolist()
    checks = {r["turn"]: r["check_failures"] for r in result.turns.to_dict("records")}
    assert list(checks[1]) == [] and list(checks[2]) == []
    assert any("'boleto' was not offered" in c for c in checks[3])


async def test_the_docs_webhook_bot_debounces_and_drops_redeliveries_end_to_end() -> None:
    import importlib.util  # noqa: PLC0415 - the example lives in docs/, not in the package
    import threading  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location(
        "whatsapp_webhook_bot", Path(__file__).resolve().parents[1] / "docs" / "examples" / "whatsapp_webhook_bot.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    server = example.serve(0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        scenario = parse_scenario({
            "id": "webhook-bot", "agent": "billing", "description": "a burst and a retry to a webhook",
            "persona": {"name": "Ana Lima", "phone": "11900000000"}, "channel": {"reorder": 1},
            "turns": [{"user": ["oi", "quero pagar", "no pix"], "judge": False, "redeliver": True,
                       "expect": {"response_contains": ["oi / quero pagar / no pix"]}}],
            "assertions": {"one_reply_per_burst": True, "no_duplicate_effects": True}})
        with_idle = await arun_conversation(scenario, agent=url + "#idle", seed=1)
        assert with_idle.run.iloc[0]["status"] == "completed", with_idle.run.iloc[0]["error"]
        assert with_idle.assertions["passed"].all(), with_idle.assertions["message"].tolist()
        rows = with_idle.transcript.to_dict("records")
        assert [r["delivery"] for r in rows].count("reordered") == 1  # it arrived out of order, read in order
        # Without #idle the webhook is never told the patient stopped typing: it never answers.
        without = await arun_conversation(scenario, agent=url, seed=1)
        assert not (without.transcript["role"] == "agent").any()
        assert any("missing" in c for c in without.turns.iloc[0]["check_failures"])
    finally:
        server.shutdown()


async def test_a_simulated_patient_bursts_and_taps_the_button_it_names() -> None:
    from convoeval.scenarios import load_scenarios  # noqa: PLC0415
    from convoeval.testing import FakeChatModel  # noqa: PLC0415

    [shipped] = [s for s in load_scenarios() if s.id == "billing-conv-happy-payment"]
    raw = shipped.model_dump(exclude_none=True)
    raw["channel"] = {"bursts": 0.2}
    raw["persona"]["traits"] = ["impatient"]  # a bursty persona: at least one message in two is split
    scenario = parse_scenario(raw)
    silent = FakeChatModel(responder=lambda messages, kwargs: "")  # the agenda patient's template voice
    result = await arun_conversation(scenario, agent="clinic:billing?faults=button_overflow", seed=2,
                                     simulator="agenda", simulator_model=silent, judge_model=None)
    rows = result.transcript.to_dict("records")
    turns = [r["turn"] for r in rows if r["role"] == "patient" and r.get("delivery") == "delivered"]
    assert any(turns.count(t) > 1 for t in turns), "no burst"  # a turn of several patient messages
    taps = [r for r in rows if r["role"] == "patient" and r["parts"][0]["type"] == "reply"]
    assert taps and taps[0]["parts"][0]["id"] == "pix" and taps[0]["text"] == "Pix"
    assert result.run.iloc[0]["stop_reason"] == "GOAL_COMPLETE"


async def test_a_simulated_patient_sends_the_receipt_when_the_agent_asks_for_it() -> None:
    from convoeval.scenarios import load_scenarios  # noqa: PLC0415
    from convoeval.testing import FakeChatModel  # noqa: PLC0415

    [shipped] = [s for s in load_scenarios() if s.id == "billing-conv-happy-payment"]
    raw = shipped.model_dump(exclude_none=True)
    raw["channel"] = {"media": [{"kind": "image", "path": "evals/media/comprovante-pix.png",
                                 "caption": "segue o comprovante", "when": ["confirmar"]}]}
    silent = FakeChatModel(responder=lambda messages, kwargs: "")
    result = await arun_conversation(parse_scenario(raw), agent="clinic:billing", seed=1, simulator="agenda",
                                     simulator_model=silent, judge_model=None)
    rows = result.transcript.to_dict("records")
    media = [r for r in rows if r["role"] == "patient" and r["parts"][0]["type"] == "media"]
    assert len(media) == 1 and media[0]["parts"][0]["path"] == "evals/media/comprovante-pix.png"
    asked = max(i for i, r in enumerate(rows) if r["role"] == "agent" and rows.index(media[0]) > i)
    assert "confirmar" in rows[asked]["text"]  # sent right after the agent's message that named it, once
    from convoeval.scenarios.errors import ScenarioError  # noqa: PLC0415

    with pytest.raises(ScenarioError, match="channel.media.0..when: required field is missing"):
        parse_scenario({**raw, "channel": {"media": [{"kind": "image", "path": "evals/media/comprovante-pix.png"}]}})


@pytest.mark.parametrize(("fault", "window_kept"), [(None, True), ("ignores_window", False)])
async def test_a_simulated_patient_who_answers_a_day_later_crosses_the_window(fault: str | None,
                                                                              window_kept: bool) -> None:
    from convoeval.scenarios import load_scenarios  # noqa: PLC0415
    from convoeval.testing import FakeChatModel  # noqa: PLC0415

    [shipped] = [s for s in load_scenarios() if s.id == "billing-conv-happy-payment"]
    raw = shipped.model_dump(exclude_none=True)
    raw["channel"] = {"later": {2: "26h"}}
    raw["assertions"] = {"whatsapp_window": True}
    silent = FakeChatModel(responder=lambda messages, kwargs: "")
    agent = "clinic:billing" + (f"?faults={fault}" if fault else "")
    result = await arun_conversation(parse_scenario(raw), agent=agent, seed=1, simulator="agenda",
                                     simulator_model=silent, judge_model=None)
    rows = result.transcript.to_dict("records")
    follow_up = next(i for i, r in enumerate(rows) if r["role"] == "agent" and r.get("delivery") == "wait")
    assert rows[follow_up + 1]["role"] == "patient" and rows[follow_up + 1]["turn"] == 2  # the silence, then turn 2
    assert (rows[follow_up]["parts"][0]["type"] == "template") is window_kept
    [window] = result.assertions.to_dict("records")
    assert window["passed"] is window_kept, window["message"]


class NamingBot:
    """Waits on every message and names its conversation only in those empty replies."""

    name = "naming-bot"

    def __init__(self) -> None:
        self.seen_ids: list[str | None] = []

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        self.seen_ids.append(session.conversation_id)
        return AgentReply(conversation_id="wa-conv-1")

    async def idle(self, session: AgentSession) -> AgentReply:
        return AgentReply(bubbles=[f"conversation {session.conversation_id}"], conversation_id="wa-conv-1")


async def test_a_conversation_named_in_an_empty_reply_comes_back_with_the_next_message() -> None:
    bot = NamingBot()
    scenario = parse_scenario({
        "id": "naming", "agent": "billing", "description": "ids", "persona": {"name": "Ana Lima", "phone": "11900000000"},
        "turns": [{"user": ["oi", "tudo bem?"], "judge": False}, {"user": "e aí?", "judge": False}]})
    result = await arun_conversation(scenario, agent=bot, seed=1)
    assert bot.seen_ids == [None, "wa-conv-1", "wa-conv-1"]
    assert result.transcript[result.transcript["role"] == "agent"]["text"].tolist() == ["conversation wa-conv-1"] * 2
