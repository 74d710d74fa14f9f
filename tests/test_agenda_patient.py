"""The agenda patient in a run: the model voices the act when its rewrite passes the checks, templates otherwise;
every shipped conversational scenario reaches its goal against the healthy reference agents, and the run records how
each patient message was made."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from test_reliability_support import fake_responder

from convoeval.fidelity import KnownFacts
from convoeval.pipeline.conversation import arun_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import RunOptions
from convoeval.scenarios import load_scenarios
from convoeval.scenarios.models import ConversationalScenario
from convoeval.simulator.agenda import aagenda_turn
from convoeval.simulator.agenda.acts import PatientAct
from convoeval.simulator.agenda.voice import voice_problem
from convoeval.simulator.choice import resolve_simulator
from convoeval.testing import FakeChatModel

CONVERSATIONAL = [s for s in load_scenarios(None) if isinstance(s, ConversationalScenario)]


def _silent(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """A voice that never rewrites (the templates speak) and a classifier that finds nothing."""
    return {"act": "other"} if kwargs.get("tools") or kwargs.get("response_format") else ""


def _scenario(scenario_id: str) -> ConversationalScenario:
    return next(s for s in CONVERSATIONAL if s.id == scenario_id)


def test_every_shipped_conversational_scenario_has_an_agenda() -> None:
    assert len(CONVERSATIONAL) == 14
    assert all(s.agenda is not None and s.agenda.intent for s in CONVERSATIONAL)


@pytest.mark.parametrize("scenario", CONVERSATIONAL, ids=lambda s: s.id)
def test_the_agenda_patient_reaches_the_goal_with_the_healthy_reference_agent(scenario: ConversationalScenario,
                                                                             store: Any) -> None:
    outcomes = []
    for seed in (1, 2):
        options = RunOptions(simulator_model=FakeChatModel(responder=_silent),
                             judge_model=FakeChatModel(responder=fake_responder), store=store, simulator="agenda")
        result = asyncio.run(arun_any(Job(scenario, seed), options))
        patient = result.transcript[result.transcript["role"] == "patient"]
        outcomes.append((result.score["status"].iloc[0], patient["signal"].dropna().tolist()))
        assert set(patient["voice"]) == {"template"} and patient["act"].notna().all()
        assert result.assertions["passed"].astype(bool).all(), result.assertions
    assert outcomes == [("pass", ["GOAL_COMPLETE"])] * 2


def test_the_models_rewrite_is_the_message_when_it_passes_the_checks() -> None:
    scenario = _scenario("billing-conv-happy-payment")
    model = FakeChatModel(["Oi! Preciso pagar minha fatura que está em aberto."])
    turn = asyncio.run(aagenda_turn([], scenario=scenario, model=model, seed=1, turn=0))
    assert (turn.message, turn.voice, turn.act) == ("Oi! Preciso pagar minha fatura que está em aberto.", "model",
                                                    "intent"), turn.voice_problem
    assert turn.result is not None and turn.result.completion_tokens is not None


@pytest.mark.parametrize(("rewrite", "problem"), [
    ("De nada! Se tiver mais alguma dúvida, estou à disposição para ajudar.", "assistant"),
    ("Hello, I would like to pay my open invoice.", "wrong language"),
    ("", "empty"),
    ("Você quer pagar a sua fatura que está em aberto.", "speaks to the patient"),
    ("Quero pagar a fatura. Meu CPF é 123.456.789-09.", "fact"),
])
def test_a_rewrite_that_breaks_the_patient_is_replaced_by_the_template(rewrite: str, problem: str) -> None:
    scenario = _scenario("billing-conv-happy-payment")
    turn = asyncio.run(aagenda_turn([], scenario=scenario, model=FakeChatModel([rewrite]), seed=1, turn=0))
    assert turn.voice == "template" and problem in (turn.voice_problem or "")
    assert "Quero pagar a minha fatura que está em aberto" in turn.message


def test_the_act_must_survive_the_rewrite() -> None:
    scenario = _scenario("scheduling-conv-book-cleaning-pt")
    known = KnownFacts(scenario)
    act = PatientAct("choose", ("terça-feira, 10/03 às 09:00",))
    check = {"locale": "pt-BR", "persona_name": "Mariana Alves", "known": known, "agent_said": ""}
    assert voice_problem("Pode ser na terça, 10/03, às 09:00!", "Pode ser terça-feira, 10/03 às 09:00.", act,
                         **check) is None
    assert voice_problem("Pode ser na terça de manhã.", "Pode ser terça-feira, 10/03 às 09:00.", act,
                         **check) == "lost a number"


def test_thanks_said_as_the_assistant_is_not_the_patients_voice() -> None:
    scenario = _scenario("scheduling-conv-reschedule-en")
    problem = voice_problem("You're welcome! If you have any other questions, feel free to ask.", "Thanks, that's all!",
                            PatientAct("thank_done"), locale="en", persona_name="Robert Hayes",
                            known=KnownFacts(scenario), agent_said="")
    assert problem is not None


def test_a_failed_voice_call_is_the_conversations_error_not_a_silent_template(store: Any) -> None:
    from convoeval.llm import LLMCallError

    scenario = _scenario("billing-conv-happy-payment")
    broken = FakeChatModel(responder=lambda m, k: LLMCallError("the server is down"))
    options = RunOptions(simulator_model=broken, judge_model=FakeChatModel(), store=store, simulator="agenda")
    result = asyncio.run(arun_any(Job(scenario, 1), options))
    assert result.score["status"].iloc[0] == "error"
    assert "server is down" in str(result.runs[0].get("error") if hasattr(result, "runs") else result.score)


def test_the_simulator_is_agenda_on_the_embedded_model_and_llm_elsewhere() -> None:
    from convoeval.llm.types import ModelInfo

    class Local(FakeChatModel):
        def convoeval_model_info(self) -> ModelInfo:
            return ModelInfo(provider="local", model="qwen")

    assert resolve_simulator(None, Local()) == "agenda"
    assert resolve_simulator(None, FakeChatModel()) == "llm"
    assert resolve_simulator("llm", Local()) == "llm"
    with pytest.raises(ValueError, match="agenda"):
        resolve_simulator("rules")


def test_simulate_continues_a_transcript_frame_with_the_agenda_patient() -> None:
    import pandas as pd

    import convoeval as ce

    first = ce.simulate(scenario="billing-conv-happy-payment", model=FakeChatModel(replies=[""]), simulator="agenda")
    assert first[["role", "voice", "act"]].iloc[0].tolist() == ["patient", "template", "intent"]
    agent = first.assign(role="agent", text="Você prefere pagar com Pix ou boleto?", voice=None, act=None)
    second = ce.simulate(pd.concat([first, agent]), model=FakeChatModel(replies=[""]), simulator="agenda")
    assert second["act"].iloc[0] == "choose" and "Pix" in second["text"].iloc[0]


def test_the_report_shows_how_the_patients_messages_were_made(store: Any) -> None:
    from types import SimpleNamespace

    import pandas as pd

    from convoeval.report.overview import patient_voices

    tx = pd.DataFrame({"role": ["patient", "agent", "patient", "patient"],
                       "voice": ["model", None, "template", "model"]})
    run = SimpleNamespace(frames=SimpleNamespace(transcripts=tx))
    assert patient_voices(run) == "agenda patient: 2 of 3 messages (67%) voiced by the model, 1 by templates"
    llm = SimpleNamespace(frames=SimpleNamespace(transcripts=tx.assign(voice=["llm", None, "llm", "llm"])))
    assert patient_voices(llm) == "LLM patient: 3 messages"


@pytest.mark.parametrize(("fault", "scenario_id"), [
    ("billing:invented_payment_url", "billing-conv-happy-payment"),
    ("billing:link_before_method_confirmed", "billing-conv-confused-patient"),
    ("confirmation:confirms_without_asking", "confirmation-conv-confirms-pt"),
    ("confirmation:cancels_instead_of_rescheduling", "confirmation-conv-reschedule-es"),
    ("nps:never_records", "nps-conv-passive-en"),
    ("recall:books_without_consent", "recall-conv-declines-pt"),
    ("scheduling:double_books", "scheduling-conv-reschedule-en"),
    ("support:never_escalates", "support-conv-wants-human-es"),
])
def test_a_known_fault_fails_an_assertion_in_conversation_offline(fault: str, scenario_id: str, store: Any) -> None:
    agent, name = fault.split(":")
    options = RunOptions(target=f"clinic:{agent}?faults={name}", simulator_model=FakeChatModel(responder=_silent),
                         judge_model=FakeChatModel(responder=fake_responder), store=store, simulator="agenda")
    result = asyncio.run(arun_any(Job(_scenario(scenario_id), 1), options))
    assert result.score["status"].iloc[0] != "simulator_failure"
    assert not result.assertions["passed"].astype(bool).all()


def test_the_classifier_labels_each_unreadable_agent_message_once(store: Any) -> None:
    """Where the rules read nothing the model labels the message, once, however many turns rebuild the policy."""
    from convoeval.simulator.agenda import patient as agenda_patient

    agenda_patient._LABELLED.clear()
    labels: list[str] = []

    def model(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        if kwargs.get("tools") or kwargs.get("response_format"):
            labels.append(str(messages[-1].content))
            return {"act": "request"}
        return ""

    scenario = _scenario("billing-conv-happy-payment")
    fake = FakeChatModel(responder=model)
    entries = [{"role": "patient", "text": "Oi"}, {"role": "agent", "text": "Olá 😊"}]
    for _ in range(3):
        turn = asyncio.run(aagenda_turn(entries, scenario=scenario, model=fake, seed=1, turn=1))
    assert labels == ["Olá 😊"] and turn.act != ""
