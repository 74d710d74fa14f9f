"""The failure profile (``convoeval.forking``) against a known answer: the invented_payment_url fault fires when the
patient confirms the method, turn 3 of the original conversation (see tests/fork_support.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from fork_support import FAULTED, HEALTHY, converse, models, scenario

from convoeval.forking import (
    ForkCostError,
    failure_table,
    fork,
    fork_profile,
    fork_seeds,
    load_conversation,
    locate_failure,
)
from convoeval.pipeline.results import write_conversation
from convoeval.testing import FakeChatModel

N = 6


def test_the_profile_of_a_faulted_run_jumps_at_the_turn_the_fault_fires_and_not_before(store):
    failing = converse(store, FAULTED)
    assert failing.status == "fail"
    profile = fork_profile(failing, n=N, scenario=scenario(), store=store, **models())
    table = profile.table.set_index("fork_turn")
    assert list(table.index) == [0, 1, 2, 3, 4]
    assert (table["n"] == N).all() and (table["errors"] == 0).all()
    # Replayed up to the patient's "Sim" (turn 3), every continuation has the invented link: certain failure.
    assert table.loc[3, "failure_rate"] == table.loc[4, "failure_rate"] == 1.0
    # Before it, a patient who gives up first never gets the invented link: failure is not certain.
    assert (table.loc[[0, 1, 2], "failure_rate"] < 0.5).all()
    assert profile.located == locate_failure(profile) == 3
    assert "turn 3" in profile.summary()
    assert (table["ci_low"] <= table["failure_rate"]).all() and (table["failure_rate"] <= table["ci_high"]).all()
    assert table.loc[3, "ci_low"] < 1.0  # six conversations do not make a certainty


def test_the_healthy_agent_s_profile_is_flat_and_locates_nothing(store):
    passing = converse(store, HEALTHY)
    assert passing.status == "pass"
    profile = fork_profile(passing, n=3, scenario=scenario(), store=store, **models())
    assert (profile.table["failure_rate"] == 0).all()
    assert profile.located is None and "not reproduced" in profile.summary()


def test_a_fork_replays_the_prefix_and_keys_every_frame_by_its_fork_point(store):
    failing = converse(store, FAULTED)
    forked = fork(failing, at_turn=2, n=4, scenario=scenario(), store=store, **models())
    frames = forked.frames
    for name in ("runs", "scores", "transcripts", "rubric", "holistic"):
        frame = frames.frame(name)
        assert set(frame["fork_turn"]) == {2} and set(frame["fork_of"]) == {failing.run_id}, name
    runs = frames.runs
    assert sorted(runs["seed"]) == sorted(fork_seeds(42, 2, 4)) and (runs["replayed_turns"] == 2).all()
    assert (runs["target"] == FAULTED).all()  # the agent the conversation was run against, by default
    patients = frames.transcripts.query("role == 'patient' and turn <= 2")
    prefixes = {tuple(group["text"]) for _, group in patients.sort_values("turn").groupby("run_id")}
    assert prefixes == {("Oi, quero pagar minha fatura", "Pix")}


def test_seeds_are_distinct_repeatable_and_never_the_original():
    seeds = fork_seeds(42, 3, 50)
    assert len(set(seeds)) == 50 and 42 not in seeds and seeds == fork_seeds(42, 3, 50)
    assert not set(seeds) & set(fork_seeds(42, 2, 50))


def test_a_big_job_is_refused_before_anything_runs_unless_confirmed(store):
    failing = converse(store, FAULTED)
    simulator = FakeChatModel(replies=[])
    with pytest.raises(ForkCostError, match=r"may make \d+ LLM calls, above the bound of 10 .*confirm=True"):
        fork_profile(failing, n=5, scenario=scenario(), store=store, simulator_model=simulator,
                     judge_model=simulator, max_calls=10)
    assert simulator.calls == []
    profile = fork_profile(failing, n=1, turns=[3], scenario=scenario(), store=store, max_calls=1, confirm=True,
                           **models())
    assert list(profile.table["n"]) == [1]


def test_bad_fork_points_are_one_clear_error(store):
    failing = converse(store, FAULTED)
    with pytest.raises(ValueError, match="between 0 and the conversation's 4 patient turns"):
        fork(failing, at_turn=5, scenario=scenario(), store=store, **models())


def test_continuations_in_error_are_counted_apart_and_left_out_of_the_rate():
    scores = pd.DataFrame({"fork_turn": [1, 1, 1, 1, 2, 2], "status": ["fail", "pass", "error", "warn", "error",
                                                                         "error"]})
    table = failure_table(scores).set_index("fork_turn")
    assert table.loc[1, ["n", "failed", "errors"]].tolist() == [3, 2, 1]
    assert table.loc[1, "failure_rate"] == pytest.approx(2 / 3)
    assert table.loc[2, "n"] == 0 and pd.isna(table.loc[2, "failure_rate"])  # nothing scored: no rate, no 0
    assert locate_failure(failure_table(scores)) == 1  # a fork point with nothing scored neither confirms nor breaks it
    assert failure_table(scores, failing=("fail",)).set_index("fork_turn").loc[1, "failed"] == 1


def test_a_folder_and_a_conversation_id_find_the_conversation(store, tmp_path):
    failing = converse(store, FAULTED)
    write_conversation(tmp_path / "res", "billing-conv-fork-known__s42__t1", failing.payload())
    write_conversation(tmp_path / "res", "other", converse(store, HEALTHY).payload())
    assert load_conversation(tmp_path / "res", "billing-conv-fork-known").run_id == failing.run_id
    assert load_conversation(tmp_path / "res", failing.run_id[:10]).run_id == failing.run_id
    with pytest.raises(ValueError, match="holds 2 conversations"):
        load_conversation(tmp_path / "res")
    with pytest.raises(ValueError, match="matches 0 of the 2 conversations"):
        load_conversation(tmp_path / "res", "nope")
    with pytest.raises(ValueError, match="neither a conversation file"):
        load_conversation(tmp_path / "missing")
