"""Replaying a recorded patient (``convoeval.pipeline.replay``): the messages are sent verbatim, the simulator takes
over at the first agent reply that differs from the recording, and a fork replays whatever the agent says."""

from __future__ import annotations

import pandas as pd
import pytest

from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.replay import PatientReplay, RecordedReply, replay_from_transcript, same_reply
from convoeval.scenarios import load_scenarios
from convoeval.testing import FakeChatModel

HAPPY = "billing-conv-happy-payment"
PATIENT = ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"]
HOLISTIC = {"issues": [], "suggestion": "ok", "scores": {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10,
                                                          "conciseness": 8, "goal_completion": 9}}


def judge(sc) -> FakeChatModel:
    verdicts = {"verdicts": [{"index": i + 1, "evidence": "Turn 1", "reasoning": "seen", "passed": True}
                             for i in range(len(sc.criteria))]}
    return FakeChatModel(replies=[verdicts, HOLISTIC])


async def baseline(sc, store, target=None):
    opts = RunOptions(target=target, simulator_model=FakeChatModel(replies=list(PATIENT)), judge_model=judge(sc),
                      store=store)
    return await arun_any(Job(sc, 42), opts)


async def test_an_identical_agent_replays_every_turn_and_never_calls_the_simulator(store):
    sc = load_scenarios(scenario=HAPPY)[0]
    first = await baseline(sc, store)
    replay = replay_from_transcript(first.rows["transcripts"])
    simulator = FakeChatModel(replies=["must not be asked"])
    again = await arun_any(Job(sc, 42, replay=replay),
                           RunOptions(simulator_model=simulator, judge_model=judge(sc), store=store))
    assert simulator.calls == []
    run = again.rows["runs"][0]
    assert run["replayed_turns"] == 4 and run["divergence_turn"] is None
    assert run["stop_reason"] == "GOAL_COMPLETE"  # the recorded signal ends the replay as it ended the original
    def patients(result):
        return [r["text"] for r in result.rows["transcripts"] if r["role"] == "patient"]

    assert patients(again) == patients(first) == ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada!"]


async def test_a_different_reply_hands_over_to_the_simulator_at_the_next_turn(store):
    sc = load_scenarios(scenario=HAPPY)[0]
    first = await baseline(sc, store)
    replay = replay_from_transcript(first.rows["transcripts"])
    # The faulted agent's first reply is the same; the fault fires when the amount is stated (turn 1 or later):
    # wherever it first differs, the simulator must be asked from the following turn on, with the same seed.
    simulator = FakeChatModel(replies=["Pode repetir?", "Ok [GOAL_COMPLETE]", "x", "y"])
    result = await arun_any(Job(sc, 42, replay=replay), RunOptions(
        target="clinic:billing?faults=wrong_amount", simulator_model=simulator, judge_model=judge(sc), store=store))
    run = result.rows["runs"][0]
    k = run["divergence_turn"]
    assert k is not None and run["replayed_turns"] == k
    patients = [r["text"] for r in result.rows["transcripts"] if r["role"] == "patient"]
    assert patients[:k] == [p.replace(" [GOAL_COMPLETE]", "") for p in PATIENT[:k]]
    assert patients[k] == "Pode repetir?"
    assert [c.kwargs.get("seed") for c in simulator.calls][0] == 42 + k  # the simulator's own turn index


async def test_a_fork_replays_its_prefix_whatever_the_agent_answers(store):
    sc = load_scenarios(scenario=HAPPY)[0]
    first = await baseline(sc, store)
    replay = replay_from_transcript(first.rows["transcripts"], up_to_turn=2, until_divergence=False)
    simulator = FakeChatModel(replies=["E agora? [GOAL_COMPLETE]"])
    result = await arun_any(Job(sc, 7, replay=replay), RunOptions(
        target="clinic:billing?faults=wrong_amount", simulator_model=simulator, judge_model=judge(sc), store=store))
    run = result.rows["runs"][0]
    assert run["replayed_turns"] == 2 and run["divergence_turn"] is None
    patients = [r["text"] for r in result.rows["transcripts"] if r["role"] == "patient"]
    assert patients == PATIENT[:2] + ["E agora?"]
    assert len(simulator.calls) == 1


def test_replies_compare_on_tools_and_normalized_text():
    recorded = RecordedReply("Olá,  Maria!\nSua fatura", ("lookup_invoice",))
    assert same_reply(recorded, "olá, maria! sua fatura", ["lookup_invoice"])
    assert not same_reply(recorded, "olá, maria! sua fatura", [])
    assert not same_reply(recorded, "olá, maria! outra fatura", ["lookup_invoice"])


def test_a_replay_is_built_from_one_conversation_and_a_frame_works_too():
    rows = pd.DataFrame([
        {"run_id": "r1", "turn": 1, "role": "agent", "text": "Oi", "tools": ["a"], "signal": pd.NA},
        {"run_id": "r1", "turn": 1, "role": "patient", "text": "Olá", "tools": [], "signal": pd.NA},
        {"run_id": "r1", "turn": 2, "role": "patient", "text": "Tchau", "tools": [], "signal": "GOAL_COMPLETE"},
    ])
    replay = replay_from_transcript(rows.to_dict("records"))
    assert replay.messages == (("Olá", None), ("Tchau", "GOAL_COMPLETE"))
    assert replay.agent_replies == (RecordedReply("Oi", ("a",)),)
    with pytest.raises(ValueError, match="one conversation"):
        replay_from_transcript([{**rows.iloc[0].to_dict(), "run_id": "r2"}, *rows.to_dict("records")])
    with pytest.raises(ValueError, match="recorded agent replies"):
        PatientReplay(messages=(("a", None), ("b", None), ("c", None)), agent_replies=(RecordedReply("x"),))


def test_identifiers_made_afresh_in_each_conversation_do_not_count_as_a_difference():
    recorded = RecordedReply("Link: https://pay.example/pix/42b6ce295e8b4e4eb9084a3b07a5ce45 R$ 150,00")
    assert same_reply(recorded, "Link: https://pay.example/pix/8947832d76d646d2800c1dfb511ad38a R$ 150,00", [])
    assert not same_reply(recorded, "Link: https://pay.example/pix/8947832d76d646d2800c1dfb511ad38a R$ 165,00", [])
