"""The simulator-failure gate: a broken simulated patient stops the conversation while it runs, is re-simulated when
asked, and never counts for or against the agent. Every conversation here is a real one (the reference clinic agents,
the store, the assertions) with a scripted fake patient."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
from agents_clinic_support import SCENARIOS, load
from test_agents_clinic_billing import SCRIPTS as BILLING
from test_agents_clinic_confirmation import CONFIRMS, RESCHEDULES
from test_agents_clinic_confirmation import SCRIPTS as CONFIRMATION
from test_agents_clinic_nps import DETRACTOR, PASSIVE
from test_agents_clinic_nps import SCRIPTS as NPS
from test_agents_clinic_recall import PATIENTS as RECALL
from test_agents_clinic_scheduling import PATIENTS as SCHEDULING
from test_agents_clinic_support import SCRIPTS as SUPPORT
from test_reliability_support import fake_responder, forced_tool, llm_responder

from convoeval import load_results
from convoeval.agents.python_callable import PythonCallableAgent
from convoeval.cli import build_parser
from convoeval.pipeline import ConfigError, EvalConfig, plan, run_eval
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.execute import EXIT_BELOW_THRESHOLD, EXIT_OK, EXIT_SIMULATOR_FAILURES, exit_code
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.notebook import check_threshold
from convoeval.pipeline.replay import PatientReplay
from convoeval.pipeline.summary import failures_frame, summary_lines
from convoeval.report import score_table_data
from convoeval.report.index import _by_agent_seed
from convoeval.report.stability import score_spread
from convoeval.report.trust import fidelity
from convoeval.scenarios import load_scenario_file, load_scenarios, parse_scenario
from convoeval.simulator import KICKOFF_MESSAGE
from convoeval.simulator import gate as gate_module
from convoeval.simulator.gate import GateSettings, SimulatorGate, exclude_simulator_failures, simulator_failures
from convoeval.stats import run_outcomes
from convoeval.testing import FakeChatModel, FakeOpenAIServer

HAPPY = "billing-conv-happy-payment"
FIRST_LINE = "Oi, quero pagar minha fatura pendente"
HEALTHY = ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"]


def scenario(scenario_id: str = HAPPY):
    return load_scenarios(scenario=scenario_id)[0]


def opening(messages) -> bool:
    return str(messages[-1].content) == KICKOFF_MESSAGE


def parrot(messages, kwargs):
    """The 0.5B local model's habit: after its first line, it repeats the agent's last message."""
    return FIRST_LINE if opening(messages) else str(messages[-1].content)


def healthy(messages, kwargs):
    said = sum(1 for m in messages if m.type == "ai")
    return HEALTHY[min(said, len(HEALTHY) - 1)]


def judge() -> FakeChatModel:
    return FakeChatModel(responder=fake_responder)


def patient_turns(result) -> list[int]:
    t = result.transcript
    return t.loc[t["role"] == "patient", "turn"].tolist()


# ── The gate stops a broken patient at the right turn ──


async def test_a_parroting_patient_stops_at_its_second_copy_with_simulator_failure(store):
    judges = FakeChatModel()  # no reply scripted: a judge call would be recorded, and fail the run
    opts = RunOptions(simulator_model=FakeChatModel(responder=parrot), judge_model=judges, store=store)
    result = await arun_any(Job(scenario(), 42), opts)

    run = result.run.iloc[0]
    assert (run["status"], run["stop_reason"]) == ("simulator_failure", "simulator_failure")
    assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("parroting", 3)
    assert run["simulator_failure_detail"].startswith("turns 2–3: 2 patient messages in a row copy the agent's words")
    assert patient_turns(result) == [1, 2, 3]  # the third message never reached the agent
    assert result.transcript["role"].tolist()[-1] == "patient"
    assert judges.calls == []  # a broken patient's conversation is not judged
    score = result.score.iloc[0]
    assert score["status"] == "simulator_failure" and math.isnan(score["score"])
    assert pd.isna(score["rubric_total"]) and pd.isna(score["assertion_failures"]) and pd.isna(score["error"])
    assert len(result.assertions) == 5  # the database and the path (4 path rows) were still checked, and are kept


async def test_a_looping_patient_stops_at_its_second_repeat(store):
    def loop(messages, kwargs):  # the example report's confused patient, word for word
        return "Oi, recebi uma mensagem sobre uma conta" if opening(messages) else \
            "Peço que me informe qual forma você preferir pagar."

    opts = RunOptions(simulator_model=FakeChatModel(responder=loop), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario("billing-conv-confused-patient"), 42), opts)
    run = result.run.iloc[0]
    assert (run["status"], run["simulator_failure"], run["simulator_failure_turn"]) == ("simulator_failure", "loop", 4)
    assert "turns 3–4" in run["simulator_failure_detail"]
    assert patient_turns(result) == [1, 2, 3, 4]


def stonewall(message, session):
    return "Desculpe, não entendi. Pode repetir?"


def answering():
    """An agent that says something new every turn (a fresh function each test: it counts its turns)."""
    answers = iter(["Olá! Qual forma de pagamento?", "Pix ou boleto?", "Certo, Pix. Confirma?", "Confirma o Pix?",
                    "Posso gerar o link?"])
    return lambda message, session: next(answers)


@pytest.mark.parametrize("target", ["stonewall", "answering"])
async def test_a_patient_repeating_itself_is_the_agents_problem_only_when_the_agent_looped_first(store, target):
    # Against an agent that repeats itself from turn 2, the patient repeating its request is not a break: the
    # conversation runs on and is scored against the agent (no payment link). Against an agent that answers, the
    # same patient started the loop: the gate stops it at its second repeat.
    lines = ["Oi, quero pagar minha fatura", "Quero pagar com Pix, por favor"]

    def insists(messages, kwargs):
        return lines[min(sum(1 for m in messages if m.type == "ai"), 1)]

    sc = parse_scenario({**scenario().model_dump(exclude_none=True), "max_turns": 5})
    name = f"tests.test_gate:{target}"
    fn = stonewall if target == "stonewall" else answering()
    opts = RunOptions(target=name, agents={name: PythonCallableAgent(name, fn=fn)},
                      simulator_model=FakeChatModel(responder=insists), judge_model=judge(), store=store)
    result = await arun_any(Job(sc, 1), opts)
    run = result.run.iloc[0]
    if target == "stonewall":
        assert run["stop_reason"] == "max_turns" and result.status == "fail" and pd.isna(run["simulator_failure"])
    else:
        assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("loop", 4)


async def test_a_patient_switching_language_stops_at_its_second_foreign_message(store):
    lines = ["Hola, quiero pagar mi factura pendiente por favor", "Prefiero pagar con Pix, muchas gracias por la ayuda"]

    def spanish(messages, kwargs):
        return lines[min(sum(1 for m in messages if m.type == "ai"), 1)]

    opts = RunOptions(simulator_model=FakeChatModel(responder=spanish), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(), 1), opts)  # a pt-BR scenario; the agent answers in pt-BR
    run = result.run.iloc[0]
    assert (run["status"], run["simulator_failure"], run["simulator_failure_turn"]) == (
        "simulator_failure", "wrong_language", 2)
    assert "read as es, not pt" in run["simulator_failure_detail"]


def english_agent(message, session):
    return "Sorry, I only speak English here. How can I help you today?"


@pytest.mark.parametrize("target", ["tests.test_gate:english_agent", "clinic:billing"])
async def test_a_patient_following_the_agents_language_is_not_a_simulator_failure(store, target):
    lines = ["Oi, quero pagar minha fatura", "Okay, I would like to pay my invoice please"]

    def english(messages, kwargs):
        return lines[min(sum(1 for m in messages if m.type == "ai"), 1)]

    sc = parse_scenario({**scenario().model_dump(exclude_none=True), "max_turns": 3})
    opts = RunOptions(target=target, simulator_model=FakeChatModel(responder=english), judge_model=judge(),
                      store=store)
    result = await arun_any(Job(sc, 1), opts)
    run = result.run.iloc[0]
    if target == "clinic:billing":  # the agent writes pt-BR: the patient's English is its own
        assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("wrong_language", 3)
    else:  # the agent wrote English first: the agent's doing, scored against it
        assert run["stop_reason"] == "max_turns" and result.status == "fail"


async def test_a_patient_inventing_a_cpf_stops_at_once(store):
    patient = FakeChatModel(["Oi, quero pagar minha fatura", "Meu CPF é 987.654.321-00, pode conferir?"])
    opts = RunOptions(simulator_model=patient, judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(), 1), opts)
    run = result.run.iloc[0]
    assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("invented_fact", 2)
    assert "987.654.321-00" in run["simulator_failure_detail"]


PREMATURE = ["Oi, quero pagar minha fatura", "Já paguei, obrigada! [GOAL_COMPLETE]"]
PAYS = ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"]


@pytest.mark.parametrize(("target", "lines", "checks", "expected"), [
    # Nothing was paid and the agent never said it was: the patient's claim is premature, the simulator's failure.
    ("clinic:billing", PREMATURE, None, ("simulator_failure", "premature_goal")),
    # The agent sent a made-up link (invented_payment_url): it claimed the outcome, so the same unpaid invoice under
    # the same [GOAL_COMPLETE] is the agent's fail.
    ("clinic:billing?faults=invented_payment_url", PAYS, None, ("fail", None)),
    # False_goal_complete, switched on, takes any [GOAL_COMPLETE] the database contradicts, claimed or not.
    ("clinic:billing", PREMATURE, ("parroting", "false_goal_complete"), ("simulator_failure", "false_goal_complete")),
    ("clinic:billing?faults=invented_payment_url", PAYS, ("parroting", "false_goal_complete"),
     ("simulator_failure", "false_goal_complete")),
    # With neither goal check on, the database's verdict stands against the agent, as before the gate knew better.
    ("clinic:billing", PREMATURE, ("parroting",), ("fail", None)),
])
async def test_a_goal_claim_the_database_contradicts_is_the_simulators_unless_the_agent_claimed_it(
        store, target, lines, checks, expected):
    gate = GateSettings() if checks is None else GateSettings(checks=checks)
    opts = RunOptions(target=target, simulator_model=FakeChatModel(list(lines)), judge_model=judge(), store=store,
                      gate=gate)
    result = await arun_any(Job(scenario(), 1), opts)
    run = result.run.iloc[0]
    assert (result.status, None if pd.isna(run["simulator_failure"]) else run["simulator_failure"]) == expected
    assert bool(run["goal_completed"])  # what the patient claimed stays recorded
    if expected[0] == "simulator_failure":
        assert run["stop_reason"] == "simulator_failure" and run["simulator_failure_turn"] == len(lines)
        assert "payment_link_created: expected true, got false" in run["simulator_failure_detail"]
    else:
        assert run["stop_reason"] == "GOAL_COMPLETE"
    if expected[1] == "premature_goal":
        assert run["simulator_failure_detail"] == (
            'turn 2: the patient claimed [GOAL_COMPLETE] ("Já paguei, obrigada!") but payment_link_created: expected '
            "true, got false, and the agent never claimed it (no payment link, URL or payment confirmation in its "
            "messages)")


async def test_replayed_turns_are_recorded_messages_and_not_gated(store):
    # Two recorded parroting messages are sent as they are; the simulator's own two copies after them still stop it.
    agent_line = "Olá, Lucia! Aqui é o assistente financeiro da Clínica Exemplo."
    replay = PatientReplay(messages=((agent_line, None), (agent_line, None)), agent_replies=None)
    opts = RunOptions(simulator_model=FakeChatModel(responder=parrot), judge_model=FakeChatModel(), store=store)
    result = await arun_any(Job(scenario(), 42, replay=replay), opts)
    run = result.run.iloc[0]
    assert run["replayed_turns"] == 2
    assert (run["simulator_failure"], run["simulator_failure_turn"]) == ("parroting", 4)


# ── Re-simulation ──


def parrot_then_healthy(messages, kwargs):
    """Greedy (temperature 0) the patient parrots; sampled, as a re-simulation asks, it plays its part."""
    return parrot(messages, kwargs) if kwargs.get("temperature") == 0 else healthy(messages, kwargs)


async def test_a_re_simulation_with_the_next_seed_is_the_result_kept_and_the_failed_attempt_stays_visible(store):
    simulator = FakeChatModel(responder=parrot_then_healthy)
    opts = RunOptions(simulator_model=simulator, judge_model=judge(), store=store, resimulate=2)
    result = await arun_any(Job(scenario(), 42), opts)

    assert result.status == "pass" and len(result.score) == 1  # one job, one score: the re-simulation's
    runs = result.run
    assert runs["attempt"].tolist() == [2, 1] and runs["superseded"].tolist() == [False, True]
    assert runs["status"].tolist() == ["completed", "simulator_failure"]
    assert result.run_id == runs["run_id"].iloc[0] == result.score["run_id"].iloc[0]
    assert set(result.transcript["run_id"]) == set(runs["run_id"])  # the failed attempt's messages are kept
    assert runs["seed"].tolist() == [42, 42]  # the job's seed; the simulator's is seed + attempt - 1, sampled
    second = [c.kwargs for c in simulator.calls[3:]]
    assert [k["seed"] for k in second] == [43, 44, 45, 46] and {k["temperature"] for k in second} == {0.7}
    stopped = simulator_failures(result.frames())
    assert stopped[["attempt", "check", "turn", "resimulated"]].values.tolist() == [[1, "parroting", 3, True]]


async def test_re_simulation_stops_after_k_attempts_and_keeps_the_last_failure(store):
    opts = RunOptions(simulator_model=FakeChatModel(responder=parrot), judge_model=FakeChatModel(), store=store,
                      resimulate=2)
    result = await arun_any(Job(scenario(), 42), opts)
    assert result.status == "simulator_failure"
    assert result.run["attempt"].tolist() == [3, 1, 2]
    assert result.run["superseded"].tolist() == [False, True, True]


# ── Kept out of the agent's scores, pass rates, thresholds and failures; counted apart ──


async def test_simulator_failures_are_kept_out_of_every_aggregate_of_the_agent(store, tmp_path):
    out = tmp_path / "out"
    for responder, seed in ((healthy, 1), (parrot, 2)):
        opts = RunOptions(simulator_model=FakeChatModel(responder=responder), judge_model=judge(), store=store)
        await arun_batch(plan([scenario()], seeds=[seed]), options=opts, out_dir=out, progress=False)
    frames = load_results(out).frames
    scores = frames.scores.set_index("seed")
    assert scores.loc[1, "status"] == "pass" and scores.loc[2, "status"] == "simulator_failure"

    lines = summary_lines(frames, fail_threshold=9.5)
    assert lines[-3].startswith("2 run(s): 1 pass, 0 warn, 0 fail, 0 error, 1 simulator_failure; mean score "
                                f"{scores.loc[1, 'score']:.1f}")
    assert lines[-2].startswith("1 simulator_failure: the simulated patient broke, so the agent was not scored")
    assert lines[-1] == "1 run(s) below the fail threshold 9.5 or in error"  # the healthy one only
    assert any(line.split()[0] == "SIMFAIL" and "simulator failure, parroting: turns 2–3" in line for line in lines)
    # The parrot's unpaid invoice is not one of the agent's failures.
    assert failures_frame(frames).empty
    assert exit_code(frames.scores, None) == EXIT_SIMULATOR_FAILURES
    assert exit_code(frames.scores, None, allow_errors=True) == EXIT_OK
    assert exit_code(frames.scores, 9.5) == EXIT_BELOW_THRESHOLD  # an agent's low score outranks it
    assert run_outcomes(frames.scores).isna().tolist() == [False, True]  # no pass-rate outcome
    spread = score_spread(frames.scores).iloc[0]
    assert (spread["conversations"], spread["errors"], spread["simulator_failures"]) == (2, 0, 1)
    assert spread["mean"] == scores.loc[1, "score"]
    by_seed = _by_agent_seed(frames.scores.assign(sweep_seed=1)).iloc[0]
    counts = by_seed[["conversations", "scored", "passed", "simulator_failures"]].tolist()
    assert counts == [2, 1, 1, 1]
    clean = exclude_simulator_failures(frames)
    assert clean.scores["status"].tolist() == ["pass"] and set(clean.assertions["run_id"]) == {
        scores.loc[1, "run_id"]}

    run = load_results(out)
    assert run.status_counts()["simulator_failure"] == 1
    assert check_threshold(run, 5).endswith("1 ended simulator_failure (the simulated patient broke) and were not "
                                            "scored")
    table = score_table_data(run).set_index("Seed")
    assert table.loc[2, "Stopped"] == "simulator_failure (parroting, turn 3)" and pd.isna(table.loc[2, "Score"])
    # Its database was checked all the same: the unpaid invoice reads as a failed assertion, never a passed one.
    # (3 of its 5 assertions pass: path assertions about a link that was never made have nothing to break.)
    assert table.loc[2, "Assertions passed"] == "3/5"
    assert next(line for line in lines if line.split()[:1] == ["SIMFAIL"]).split()[4] == "3/5"
    html = str(fidelity(run))
    assert "Stopped by the simulator-failure gate" in html and "not scored" in html


# ── No false positives: every reference scenario's happy path, with the gate on ──


def _scripted(lines: list[str]):
    def reply(messages, kwargs):
        said = sum(1 for m in messages if m.type == "ai")
        return lines[said] + (" [GOAL_COMPLETE]" if said == len(lines) - 1 else "")
    return reply


def _rules(first: str, rules: list[tuple[str, str]]):
    def reply(messages, kwargs):
        if opening(messages):
            return first
        last = str(messages[-1].content)
        return next((line for pattern, line in rules if re.search(pattern, last, re.IGNORECASE)), "[GOAL_COMPLETE]")
    return reply


HAPPY_PATHS = {
    **{path: _scripted(lines) for path, lines in {**BILLING, **SUPPORT}.items()},
    CONFIRMS: _scripted(CONFIRMATION[CONFIRMS]), RESCHEDULES: _scripted(CONFIRMATION[RESCHEDULES]),
    # The detractor asks for a person and ends only once the agent has handed off: ending on the request itself
    # would be a premature [GOAL_COMPLETE] (the hand-off not done, none claimed), which the gate stops.
    PASSIVE: _scripted(NPS[PASSIVE]), DETRACTOR: _scripted([*NPS[DETRACTOR], "Obrigada!"]),
    **{path: _rules(*patient) for path, patient in {**SCHEDULING, **RECALL}.items()},
}


def test_every_conversational_reference_scenario_has_a_happy_path_here():
    files = SCENARIOS.glob("*/*.yaml")
    conversational = {f.relative_to(SCENARIOS).as_posix() for f in files
                      if load_scenario_file(f).type == "conversational"}
    assert conversational == set(HAPPY_PATHS)


@pytest.mark.parametrize("path", sorted(HAPPY_PATHS))
async def test_a_healthy_patient_on_a_reference_happy_path_is_never_stopped(store, monkeypatch, path):
    seen = []
    check = SimulatorGate.patient

    def spy(self, turn, text, **flags):
        seen.append(turn)
        return check(self, turn, text, **flags)

    monkeypatch.setattr(SimulatorGate, "patient", spy)
    opts = RunOptions(simulator_model=FakeChatModel(responder=HAPPY_PATHS[path]), judge_model=judge(), store=store)
    result = await arun_any(Job(load(path)), opts)
    assert result.status in ("pass", "warn", "fail"), result.run.to_dict("records")
    assert pd.isna(result.run["simulator_failure"].iloc[0])
    assert seen == patient_turns(result)  # the gate saw every patient message


# ── Settings: one place, checked, switchable ──


def test_gate_settings_are_checked_in_one_line_and_the_gate_can_be_switched_off():
    assert EvalConfig().gate_settings() == GateSettings()
    assert EvalConfig(simulator_gate=False).gate_settings() is None
    assert EvalConfig(simulator_gate={"parrot_turns": 3}).gate_settings().parrot_turns == 3
    with pytest.raises(ConfigError, match=r"^simulator_gate has a bad gate setting parrot_turns: .*, got"):
        EvalConfig.checked(simulator_gate={"parrot_turns": 0})
    with pytest.raises(ConfigError, match=r"^simulator_gate must be True, False or a mapping"):
        EvalConfig.checked(simulator_gate="off")
    with pytest.raises(ConfigError, match=r"^resimulate must be from 0 to 10, got -1"):
        EvalConfig.checked(resimulate=-1)
    assert build_parser().parse_args(["run", "--resimulate", "2"]).resimulate == 2
    assert gate_module.GateSettings().checks == gate_module.DEFAULT_GATE_CHECKS


def parrot_request(request):
    """The fake server's simulator parrots; its judges answer as the cooperative ones do."""
    if forced_tool(request.get("tools"), request.get("tool_choice")):
        return llm_responder(request)
    last = str((request.get("messages") or [{}])[-1].get("content") or "")
    return FIRST_LINE if last == KICKOFF_MESSAGE else last


def test_execute_passes_the_gate_and_re_simulations_from_the_config(tmp_path, monkeypatch):
    with FakeOpenAIServer(responder=parrot_request) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
        monkeypatch.setenv("CONVOEVAL_CACHE", "off")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        store = f"sqlite:///{tmp_path / 'store.db'}"
        first = run_eval(EvalConfig.checked(scenario=HAPPY, output_dir=str(tmp_path / "a")), store_url=store,
                        progress="off")
        assert first.frames.runs["attempt"].tolist() == [1] and first.scores["status"].tolist() == [
            "simulator_failure"]
        # The same folder asked for a re-simulation: the saved simulator failure is not "finished" any more.
        gated = run_eval(EvalConfig.checked(scenario=HAPPY, output_dir=str(tmp_path / "a"), resimulate=1),
                        store_url=store, progress="off")
        assert gated.meta["runs_now"] == 1 and gated.meta["runs_resumed"] == 0
        assert gated.exit_code == EXIT_SIMULATOR_FAILURES
        runs = gated.frames.runs.sort_values("attempt")
        assert runs["attempt"].tolist() == [1, 2] and runs["superseded"].tolist() == [True, False]
        assert gated.scores["status"].tolist() == ["simulator_failure"]
        assert any("simulator_failure: the simulated patient broke" in line for line in gated.lines)
        off = run_eval(EvalConfig.checked(scenario=HAPPY, output_dir=str(tmp_path / "b"), simulator_gate=False),
                      store_url=store, progress="off")
        assert off.frames.runs["stop_reason"].tolist() == ["max_turns"]
        assert off.scores["status"].iloc[0] in ("pass", "warn", "fail")
        # Workers get the gate's settings too (tests/test_pipeline_distributed.py checks what they build from them).


async def test_the_run_conversation_verb_takes_the_gate_setting(store):
    from convoeval.pipeline.conversation import arun_conversation

    sc = parse_scenario({**scenario().model_dump(exclude_none=True), "max_turns": 4})
    gated = await arun_conversation(sc, seed=42, simulator_model=FakeChatModel(responder=parrot),
                                    judge_model=FakeChatModel(), store=store)
    assert gated.status == "simulator_failure"
    off = await arun_conversation(sc, seed=42, simulator_model=FakeChatModel(responder=parrot), judge_model=judge(),
                                  store=store, simulator_gate=False)
    assert off.run["stop_reason"].iloc[0] == "max_turns" and off.status == "fail"
