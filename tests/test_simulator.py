"""The simulated patient: prompt and parsing, role inversion, seeding, framings, failures."""

from __future__ import annotations

import pytest
from engine_support import CallRecorder, conversation, isolated_state, scenario  # noqa: F401 - fixture

import convoeval.simulator.patient as simulator_module  # where acall_model is called
from convoeval.simulator import (
    DEFAULT_TRAITS_LINE,
    KICKOFF_MESSAGE,
    NO_INVENT_WITH_FACTS,
    NO_INVENT_WITHOUT_FACTS,
    SIMULATOR_PROMPT_VERSION,
    STOP_SIGNALS,
    SimulatorError,
    SimulatorTurn,
    apatient_turn,
    build_simulator_messages,
    build_simulator_prompt,
    clean_simulator_reply,
    parse_simulator_response,
    simulate,
)
from convoeval.testing import FakeChatModel

pytestmark = pytest.mark.usefixtures("isolated_state")

HISTORY = [
    {"role": "patient", "text": "Oi, quero pagar minha fatura"},
    {"role": "agent", "text": "Olá! Prefere Pix ou boleto?"},
]


# ── Prompt and parsing ──


def test_prompt_includes_persona_name_goal_traits_and_locale():
    prompt = build_simulator_prompt(persona_name="Carlos Mendes", goal="Pay invoice via Pix",
                                    traits=["impaciente", "direto"], locale="pt-BR")
    for text in ("Carlos Mendes", "Pay invoice via Pix", "impaciente", "direto", "pt-BR"):
        assert text in prompt


def test_prompt_works_without_traits():
    prompt = build_simulator_prompt(persona_name="Maria", goal="Book appointment", locale="pt-BR")
    assert "Maria" in prompt and "Book appointment" in prompt
    assert "undefined" not in prompt and "None" not in prompt
    assert DEFAULT_TRAITS_LINE in prompt


def test_parse_detects_goal_complete():
    assert parse_simulator_response("Obrigado! [GOAL_COMPLETE]") == SimulatorTurn("Obrigado!", "GOAL_COMPLETE")


def test_parse_detects_stuck():
    assert parse_simulator_response("Nao entendi nada [STUCK]") == SimulatorTurn("Nao entendi nada", "STUCK")


def test_parse_returns_no_signal_for_normal_messages():
    result = parse_simulator_response("Quero pagar via Pix")
    assert result.message == "Quero pagar via Pix"
    assert result.signal is None


def test_parse_trims_whitespace_from_cleaned_message():
    result = parse_simulator_response("  Valeu!  [GOAL_COMPLETE]  ")
    assert (result.message, result.signal) == ("Valeu!", "GOAL_COMPLETE")


def test_stop_signals_contain_both():
    assert "GOAL_COMPLETE" in STOP_SIGNALS and "STUCK" in STOP_SIGNALS


# ── Role inversion, seeding, framings, failures ──


def test_prompt_keeps_the_seed_rules():
    prompt = build_simulator_prompt(persona_name="Maria", goal="g", locale="en")
    for rule in ("Write short WhatsApp messages (1-3 sentences max)", "add [GOAL_COMPLETE] at the end",
                 "add [STUCK] at the end", "Never mention you are a simulation or test",
                 "Write in the locale language (en)"):
        assert rule in prompt


def test_prompt_lists_known_facts_and_forbids_inventing_others():
    prompt = build_simulator_prompt(persona_name="Lucia", goal="g", locale="pt-BR",
                                    knows={"cpf": "11122233344", "forma de pagamento": "pix", "empty": None})
    assert "- cpf: 11122233344" in prompt
    assert "- forma de pagamento: pix" in prompt
    assert "empty" not in prompt
    assert NO_INVENT_WITH_FACTS in prompt
    bare = build_simulator_prompt(persona_name="Lucia", goal="g", locale="pt-BR")
    assert NO_INVENT_WITHOUT_FACTS in bare and "What you know" not in bare


def test_parse_removes_only_the_first_signal_tag_as_the_seed():
    # JavaScript's String.replace with a string replaces the first occurrence only.
    assert parse_simulator_response("Ok [STUCK] [STUCK]") == SimulatorTurn("Ok  [STUCK]", "STUCK")
    assert parse_simulator_response("Fim [STUCK] [GOAL_COMPLETE]") == SimulatorTurn("Fim [STUCK]", "GOAL_COMPLETE")


def test_chat_framing_inverts_roles_as_the_seed():
    messages = build_simulator_messages(HISTORY, "SYS", persona_name="Carlos", framing="chat")
    assert messages == [("system", "SYS"), ("assistant", HISTORY[0]["text"]), ("user", HISTORY[1]["text"])]


def test_empty_transcript_gets_the_seed_kickoff():
    assert build_simulator_messages([], "SYS", persona_name="Carlos", framing="chat") == [
        ("system", "SYS"), ("user", KICKOFF_MESSAGE)]


def test_transcript_framing_has_its_own_kickoff_naming_the_patient():
    messages = build_simulator_messages([], "SYS", persona_name="Carlos", goal="Pagar", framing="transcript")
    assert messages[0] == ("system", "SYS")
    assert messages[1][0] == "user"
    assert "Your goal: Pagar" in messages[1][1]
    assert "Write only Carlos's first message to the chatbot" in messages[1][1]


def test_transcript_framing_puts_the_dialogue_in_one_user_message():
    agent_multiline = {"role": "agent", "text": "Olá!\nCarlos: fake line"}
    messages = build_simulator_messages([HISTORY[0], agent_multiline], "SYS", persona_name="Carlos",
                                        goal="Pagar a fatura", framing="transcript")
    assert [role for role, _ in messages] == ["system", "user"]
    body = messages[1][1]
    assert body.startswith("You are Carlos, a patient. Your goal: Pagar a fatura\n")
    assert "Carlos: Oi, quero pagar minha fatura\nChatbot: Olá!\n  Carlos: fake line" in body
    assert body.rstrip().endswith("only if it keeps failing to help.")
    assert "Write only Carlos's next message" in body


def test_unknown_framing_is_an_error():
    with pytest.raises(ValueError, match="framing"):
        build_simulator_messages(HISTORY, "SYS", persona_name="C", framing="screenplay")  # type: ignore[arg-type]


@pytest.mark.parametrize(("raw", "clean"), [
    ("Lucia: Quero pagar via Pix", "Quero pagar via Pix"),
    ("Lucia Ferreira (you): Pode ser Pix", "Pode ser Pix"),
    ("Paciente: Ok", "Ok"),
    ('"Pix, por favor"', "Pix, por favor"),
    ("“Pix, por favor”", "Pix, por favor"),
    ("Pix, por favor\nChatbot: Perfeito, gerando o link", "Pix, por favor"),
    ("Quero pagar: pode ser Pix?", "Quero pagar: pode ser Pix?"),
])
def test_clean_reply_removes_labels_and_continuations(raw, clean):
    assert clean_simulator_reply(raw, "Lucia Ferreira") == clean


async def test_asimulate_first_turn_sends_kickoff_and_parses_signal():
    model = FakeChatModel(replies=["Oi! Quero pagar minha fatura"])
    turn = await apatient_turn([], scenario=scenario(), model=model)
    assert turn == SimulatorTurn("Oi! Quero pagar minha fatura", None)
    call = model.calls[0]
    assert call.last == KICKOFF_MESSAGE
    assert "Lucia Ferreira" in call.messages[0].content
    assert "- cpf: 11122233344" in call.messages[0].content  # the persona's own CPF is a known fact
    assert turn.prompt_version == f"{SIMULATOR_PROMPT_VERSION}/chat"
    assert turn.result.prompt_tokens is not None


async def test_seeded_calls_use_temperature_zero_and_seed_plus_turn(monkeypatch):
    recorder = CallRecorder(monkeypatch, simulator_module)
    model = FakeChatModel(replies=["Pix, por favor [GOAL_COMPLETE]"])
    turn = await apatient_turn(HISTORY, scenario=scenario(), model=model, seed=42, trial=3)
    assert (turn.message, turn.signal) == ("Pix, por favor", "GOAL_COMPLETE")
    assert model.calls[0].kwargs["temperature"] == 0
    assert model.calls[0].kwargs["seed"] == 43  # one patient message so far → turn index 1
    identity = recorder.identities[0]
    assert (identity.scenario, identity.seed, identity.trial, identity.role, identity.turn) == (
        "billing-conv-happy-payment", 42, 3, "simulator", 1)


async def test_unseeded_calls_sample_at_the_seed_temperature():
    model = FakeChatModel(replies=["Oi"])
    await apatient_turn([], persona_name="Maria", goal="Book", locale="en", model=model)
    assert model.calls[0].kwargs["temperature"] == 0.7
    assert "seed" not in model.calls[0].kwargs


async def test_scenario_seed_is_used_when_none_is_given():
    model = FakeChatModel(replies=["Oi"])
    await apatient_turn([], scenario=scenario(seed=5), model=model)
    assert model.calls[0].kwargs["seed"] == 5


async def test_frame_and_list_transcripts_give_the_same_call():
    frame = conversation(messages=[(e["role"], e["text"]) for e in HISTORY])
    model = FakeChatModel(replies=["a", "b"])
    await apatient_turn(frame, scenario=scenario(), model=model)
    await apatient_turn(HISTORY, scenario=scenario(), model=model)
    first, second = ([(m.type, m.content) for m in c.messages] for c in model.calls)
    assert first == second
    assert [t for t, _ in first] == ["system", "ai", "human"]


async def test_transcript_framing_reaches_the_model():
    model = FakeChatModel(replies=["Lucia: Pix [GOAL_COMPLETE]"])
    turn = await apatient_turn(HISTORY, scenario=scenario(), model=model, framing="transcript")
    assert (turn.message, turn.signal) == ("Pix", "GOAL_COMPLETE")
    assert len(model.calls[0].messages) == 2
    assert turn.prompt_version.endswith("/transcript")


async def test_empty_reply_is_an_error_not_an_empty_message():
    with pytest.raises(SimulatorError, match="empty"):
        await apatient_turn(HISTORY, scenario=scenario(), model=FakeChatModel(replies=["   "]))


async def test_signal_alone_is_a_valid_turn():
    turn = await apatient_turn(HISTORY, scenario=scenario(), model=FakeChatModel(replies=["[STUCK]"]))
    assert (turn.message, turn.signal) == ("", "STUCK")


async def test_missing_persona_fields_are_named():
    with pytest.raises(ValueError, match="goal"):
        await apatient_turn([], persona_name="Maria", locale="en", model=FakeChatModel())


async def test_sync_simulate_works_inside_a_running_loop():
    # A notebook cell runs inside an event loop; simulate() must still work there.
    nxt = simulate([], scenario=scenario(), model=FakeChatModel(replies=["Hi"]))
    assert nxt["text"].tolist() == ["Hi"] and nxt["turn"].tolist() == [1] and nxt["role"].tolist() == ["patient"]


def test_sync_simulate_without_a_loop():
    nxt = simulate(HISTORY, scenario=scenario(), model=FakeChatModel(replies=["Pix"]))
    assert nxt["text"].tolist() == ["Pix"]


def test_a_scripted_scenario_is_a_clear_error_not_a_crash(monkeypatch):
    from pathlib import Path

    from convoeval.scenarios import load_scenario_file

    scripted = load_scenario_file(Path(__file__).parents[1] / "evals/scenarios/billing/scripted-pix-en.yaml")
    monkeypatch.setattr(simulator_module, "scenarios_by_id", lambda _: {scripted.id: scripted})
    with pytest.raises(ValueError, match="billing-scripted-pix-en' is scripted"):  # was: AttributeError 'seed'
        simulate([], scenario=scripted.id, model=FakeChatModel(replies=["Hi"]))
