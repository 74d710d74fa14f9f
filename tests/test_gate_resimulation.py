"""Re-simulating a broken patient must never blame the agent. The gate catches a patient speaking as the
assistant, a single parroting message that would end the conversation, and a [GOAL_COMPLETE] the agent never
claimed; the agent that claims without acting (invented_payment_url) still fails. Real conversations with the
reference clinic agents and the store, scripted fake patients, and the recorded local-model conversations of the
issue (tests/data/gate29/)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_gate import judge

from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import load_scenarios
from convoeval.simulator import KICKOFF_MESSAGE
from convoeval.simulator.gate import GateSettings
from convoeval.testing import FakeChatModel

DATA = Path(__file__).parent / "data" / "gate29"
HAPPY = "billing-conv-happy-payment"


def scenario(scenario_id: str = HAPPY):
    return load_scenarios(scenario=scenario_id)[0]


def attempts(*scripts: list[str]):
    """A simulated patient that plays one script per attempt: a new attempt starts at the kick-off message.

    A line ``"<copy>"`` copies the agent's last message; ``"<copy> [GOAL_COMPLETE]"`` does and ends.
    """
    started = []

    def reply(messages, kwargs):
        if str(messages[-1].content) == KICKOFF_MESSAGE:
            started.append(len(started))
        lines = scripts[started[-1]]
        said = sum(1 for m in messages if m.type == "ai")
        line = lines[min(said, len(lines) - 1)]
        return line.replace("<copy>", str(messages[-1].content)) if "<copy>" in line else line
    return reply


def run_row(result) -> dict:
    return result.run.iloc[0].to_dict()


# ── Role reversal stops the conversation at the message, before the agent reads it ──


@pytest.mark.parametrize(("scenario_id", "opening", "how"), [
    (HAPPY, "Oi Lucia Ferreira! Como posso ajudar você hoje?", "greets its own persona's name"),
    ("billing-conv-confused-patient", "Oi, dona! Como posso ajudar você hoje?", "speaks as the assistant"),
    ("scheduling-conv-reschedule-en", "Hello! How can I assist you today?", "speaks as the assistant"),
    ("support-conv-wants-human-es", "¡Hola! Soy la asistente de la clínica, ¿en qué puedo ayudarte?",
     "speaks as the assistant"),
])
async def test_a_patient_speaking_as_the_assistant_stops_at_its_first_message(store, scenario_id, opening, how):
    agent_calls = []
    opts = RunOptions(simulator_model=FakeChatModel([opening]), judge_model=FakeChatModel(), store=store,
                      verbose=agent_calls.append)
    result = await arun_any(Job(scenario(scenario_id), 1), opts)
    run = run_row(result)
    assert (result.status, run["simulator_failure"], run["simulator_failure_turn"]) == (
        "simulator_failure", "role_reversal", 1)
    assert run["simulator_failure_detail"].startswith(f"turn 1: the patient {how}")
    assert result.transcript["role"].tolist() == ["patient"]  # the agent never answered it


# ── A message that would end the conversation is checked before its stop signal counts ──


@pytest.mark.parametrize("signal", ["[GOAL_COMPLETE]", "[STUCK]"])
async def test_one_parroting_message_that_would_end_the_conversation_is_a_simulator_failure(store, signal):
    patient = attempts(["Oi, quero pagar minha fatura", f"<copy> {signal}"])
    opts = RunOptions(simulator_model=FakeChatModel(responder=patient), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(), 1), opts)
    run = run_row(result)
    assert (result.status, run["stop_reason"], run["simulator_failure"], run["simulator_failure_turn"]) == (
        "simulator_failure", "simulator_failure", "parroting", 2)
    assert run["simulator_failure_detail"].startswith("turn 2: the patient's last message, which would end the "
                                                      "conversation, copies the agent's words (100%")


@pytest.mark.parametrize(("scenario_id", "opening"), [
    # The local patient's fourth attempt at support-conv-prices-insurance-en, seed 1: an empty first message with
    # [GOAL_COMPLETE]. Every outcome assertion passed (nothing was forbidden, nothing done), only tools_called
    # failed: without this rule the agent was scored fail 0.0 for a conversation it never took part in.
    ("support-conv-prices-insurance-en", " [GOAL_COMPLETE]"),
    ("billing-conv-happy-payment", "Não consigo. [STUCK]"),
])
async def test_a_stop_signal_before_the_agent_said_anything_is_a_premature_end(store, scenario_id, opening):
    opts = RunOptions(simulator_model=FakeChatModel([opening]), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(scenario_id), 1), opts)
    run = run_row(result)
    assert (result.status, run["simulator_failure"], run["simulator_failure_turn"]) == (
        "simulator_failure", "premature_goal", 1)
    assert run["simulator_failure_detail"].startswith("turn 1: the patient ended the conversation before the agent "
                                                      "said anything")


async def test_the_same_copy_mid_conversation_waits_for_a_second_one(store):
    # Without a stop signal one copy is not yet a failure (parrot_turns = 2): the patient may still answer.
    patient = attempts(["Oi, quero pagar minha fatura", "<copy>", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"])
    opts = RunOptions(simulator_model=FakeChatModel(responder=patient), judge_model=judge(), store=store)
    result = await arun_any(Job(scenario(), 1), opts)
    assert result.status == "pass" and run_row(result)["stop_reason"] == "GOAL_COMPLETE"


# ── --resimulate: every broken attempt is the simulator's, to the last one ──


#: The three ways issue #29's re-simulated patients ended, one per attempt, against the healthy billing agent.
BROKEN_ATTEMPTS = (
    ["Hello, Lucia Ferreira! I'm your patient. Please tell me what you need assistance with today."],
    ["Oi, quero pagar minha fatura", "<copy> [GOAL_COMPLETE]"],
    ["Oi, quero pagar minha fatura", "Obrigada, já está tudo certo! [GOAL_COMPLETE]"],
)


async def test_re_simulating_a_broken_patient_never_ends_in_the_agents_fail(store):
    opts = RunOptions(simulator_model=FakeChatModel(responder=attempts(*BROKEN_ATTEMPTS, BROKEN_ATTEMPTS[2])),
                      judge_model=FakeChatModel(), store=store, resimulate=3)
    result = await arun_any(Job(scenario(), 42), opts)
    runs = result.run.sort_values("attempt")
    assert runs["simulator_failure"].tolist() == ["role_reversal", "parroting", "premature_goal", "premature_goal"]
    assert result.status == "simulator_failure" and result.score["score"].isna().all()
    premature = runs.iloc[2]["simulator_failure_detail"]
    assert premature.startswith('turn 2: the patient claimed [GOAL_COMPLETE] ("Obrigada, já está tudo certo!") but '
                                "payment_link_created: expected true, got false, and the agent never claimed it")


async def test_a_healthy_attempt_after_broken_ones_is_the_one_scored(store):
    healthy = ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"]
    opts = RunOptions(simulator_model=FakeChatModel(responder=attempts(*BROKEN_ATTEMPTS, healthy)),
                      judge_model=judge(), store=store, resimulate=3)
    result = await arun_any(Job(scenario(), 42), opts)
    assert result.status == "pass" and result.run["attempt"].tolist() == [4, 1, 2, 3]


@pytest.mark.parametrize("scenario_id", ["billing-conv-happy-payment", "billing-conv-confused-patient",
                                         "billing-conv-impatient-patient"])
async def test_an_agent_that_claims_a_link_it_never_made_stays_the_agents_fail(store, scenario_id):
    # invented_payment_url: the patient's [GOAL_COMPLETE] answers a link the agent wrote; the database has none.
    method = "Boleto" if "confused" in scenario_id else "Pix"
    patient = attempts(["Oi, quero pagar minha fatura", method, "Sim", "Obrigada! [GOAL_COMPLETE]"])
    opts = RunOptions(target="clinic:billing?faults=invented_payment_url", simulator_model=FakeChatModel(
        responder=patient), judge_model=judge(), store=store, resimulate=3)
    result = await arun_any(Job(scenario(scenario_id), 42), opts)
    run = run_row(result)
    assert result.status == "fail" and run["stop_reason"] == "GOAL_COMPLETE" and pd.isna(run["simulator_failure"])
    assert result.run["attempt"].tolist() == [1]  # nothing to re-simulate: the patient played its part
    failed = result.assertions[~result.assertions["passed"].astype(bool)]
    assert "payment_link_created" in set(failed["assertion"])


# ── The recorded local-model conversations of the issue: every attempt is the simulator's ──

#: What the gate now says of each attempt of the "before" file (scenario, attempt) -> (check, turn): issue #29's
#: run, made with the gate before it, whose last attempts ended the agent's ``fail`` (0.0, 0.0, 3.5). The "after"
#: files were made with this gate: each attempt must stop as it did then.
KNOWN = {
    ("billing-s42-resimulate3-before", "billing-conv-confused-patient", 1): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-confused-patient", 2): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-confused-patient", 3): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-happy-payment", 1): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-happy-payment", 2): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-happy-payment", 3): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-impatient-patient", 1): ("role_reversal", 1),
    ("billing-s42-resimulate3-before", "billing-conv-impatient-patient", 2): ("role_reversal", 1),
}


def recorded_attempts() -> list:
    """Every attempt of tests/data/gate29/*.json: the embedded 0.5B patient against a healthy reference agent."""
    params = []
    for path in sorted(DATA.glob("*.json")):
        for attempt in json.loads(path.read_text(encoding="utf-8"))["attempts"]:
            name = f"{path.stem}-{attempt['scenario']}-a{attempt['attempt']}"
            params.append(pytest.param(path.stem, attempt, id=name))
    return params


def patient_lines(attempt: dict) -> list[str]:
    """The recorded patient messages as the simulator wrote them (stop signals put back)."""
    return [m["text"] + (f" [{m['signal']}]" if m["signal"] else "") for m in attempt["messages"]
            if m["role"] == "patient"]


def test_the_recordings_hold_the_issues_three_fails():
    before = json.loads((DATA / "billing-s42-resimulate3-before.json").read_text(encoding="utf-8"))["attempts"]
    kept = sorted((a["scenario"], a["then"]["status"], a["then"]["score"]) for a in before if not a["superseded"])
    assert [(s, status) for s, status, _score in kept] == [("billing-conv-confused-patient", "fail"),
                                                           ("billing-conv-happy-payment", "fail"),
                                                           ("billing-conv-impatient-patient", "fail")]
    assert sum(a["superseded"] for a in before) == 5  # "5 attempt(s) stopped by the gate were re-simulated"
    assert set(KNOWN) == {(stem, a["scenario"], a["attempt"]) for stem, a in (p.values for p in recorded_attempts())
                          if stem.endswith("-before")}


@pytest.mark.parametrize(("stem", "attempt"), recorded_attempts())
async def test_every_recorded_attempt_of_the_local_patient_is_a_simulator_failure(store, stem, attempt):
    # The recorded patient lines, sent in order to the same (deterministic) reference agent under today's gate:
    # whatever the recording's gate said, each attempt stops as the simulator's failure, never the agent's fail.
    opts = RunOptions(simulator_model=FakeChatModel(patient_lines(attempt)), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(attempt["scenario"]), attempt["seed"]), opts)
    run = run_row(result)
    assert result.status == "simulator_failure", run
    then = attempt["then"]
    expected = KNOWN.get((stem, attempt["scenario"], attempt["attempt"]),
                         (then["simulator_failure"], then["simulator_failure_turn"]))
    assert (run["simulator_failure"], run["simulator_failure_turn"]) == expected


THEN_FAILED = [p for p in recorded_attempts() if p.values[1]["then"]["status"] == "fail"]


@pytest.mark.parametrize(("stem", "attempt"), THEN_FAILED)
async def test_the_issues_fails_are_simulator_failures_even_past_their_role_reversed_opening(store, stem, attempt):
    # Without role_reversal the same three attempts still end as the simulator's: by the [GOAL_COMPLETE] that the
    # agent never claimed (it quoted the invoice and offered methods; no link, no URL, no "sent").
    checks = ("invented_fact", "parroting", "loop", "wrong_language", "premature_goal")
    opts = RunOptions(simulator_model=FakeChatModel(patient_lines(attempt)), judge_model=FakeChatModel(), store=store,
                      gate=GateSettings(checks=checks))
    result = await arun_any(Job(scenario(attempt["scenario"]), attempt["seed"]), opts)
    run = run_row(result)
    assert result.status == "simulator_failure", run
    turn = {"billing-conv-confused-patient": 2, "billing-conv-happy-payment": 2, "billing-conv-impatient-patient": 3}
    assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("premature_goal", turn[attempt["scenario"]])
    assert "payment_link_created: expected true, got false" in run["simulator_failure_detail"]
