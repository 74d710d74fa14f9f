"""A run's progress lines (issue #39 item 6): a heartbeat every ``every_s`` whatever is running, and an ETA that
counts the judging.

Before, the "in flight" line came only when a turn started: while the judges worked (minutes on the local model) the
terminal said nothing, and the first ETA, from finished conversations alone, was far too short.
"""

from __future__ import annotations

import io
import time

import pytest

from convoeval.llm.accounting import CallRecord, emit
from convoeval.pipeline import plan
from convoeval.pipeline.progress import JUDGING, Progress
from convoeval.scenarios import load_scenarios


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def _wait_for(stream: io.StringIO, count: int, deadline_s: float = 10.0) -> list[str]:
    """Until ``count`` heartbeat lines were printed (an event, not a fixed sleep: the machine may be busy)."""
    deadline = time.monotonic() + deadline_s
    while len([line for line in _lines(stream) if line.startswith("  … ")]) < count:
        assert time.monotonic() < deadline, _lines(stream)
        time.sleep(0.02)
    return [line for line in _lines(stream) if line.startswith("  … ")]


def test_a_heartbeat_while_nothing_reports():
    """No turn starts and no conversation ends (the judges are working): a line still comes every ``every_s``."""
    stream = io.StringIO()
    progress = Progress(2, mode="lines", stream=stream, every_s=0.2)
    try:
        progress.turn("billing-conv-happy-payment s42 t1", 3)
        beats = _wait_for(stream, 2)
    finally:
        progress.close()
    assert "in flight: billing-conv-happy-payment s42 t1 turn 3" in beats[0], beats
    assert "0/2 done" in beats[0], beats
    ended = len(_lines(stream))
    time.sleep(0.5)
    assert len(_lines(stream)) == ended  # closed: the heartbeat stopped


def test_the_heartbeat_says_which_conversations_are_being_judged():
    stream = io.StringIO()
    progress = Progress(2, mode="lines", stream=stream, every_s=0.2)
    try:
        progress.turn("a s1 t1", 4)
        progress.turn("a s1 t1", JUDGING)
        progress.turn("b s1 t1", 2)
        beats = _wait_for(stream, 1)
    finally:
        progress.close()
    assert "in flight: a s1 t1 judging, b s1 t1 turn 2" in beats[0], beats


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _call(job, role: str, latency: float, clock: _Clock) -> None:
    clock.now += latency
    emit(CallRecord(role=role, provider="fake", model="fake", scenario=job.scenario.id, seed=job.seed,
                    trial=job.trial, latency_s=latency))


@pytest.fixture
def jobs():
    """Four conversations of a scenario with 3 turns at most and two judge calls (rubric, holistic)."""
    scenario = load_scenarios(agent="billing", scenario="billing-conv-happy-payment")[0]
    scenario = scenario.model_copy(update={"max_turns": 3, "checkpoints": []})
    return plan([scenario], seeds=[1, 2, 3, 4])


def test_the_eta_counts_the_judging(jobs):
    """Four conversations talk side by side (3 simulator calls of 1 s each), then wait in turn for the judge (2 calls
    of 10 s each). When the first ends at 32 s, 60 s are left (three conversations × 20 s of judging); an ETA from
    finished conversations alone said 96 s, and nothing at all before."""
    clock, stream = _Clock(), io.StringIO()
    progress = Progress(len(jobs), mode="lines", stream=stream, every_s=10_000, jobs=jobs, clock=clock)
    try:
        for turn in range(1, 4):
            for job in jobs:
                progress.turn(job.label, turn)
                _call(job, "simulator", 1.0, clock)
        for job in jobs:
            progress.turn(job.label, JUDGING)
        # Before any judge answers, the ETA is there, and says it is a lower bound.
        assert "or more (no judge call timed yet)" in progress.eta_text(), progress.eta_text()
        first = jobs[0]
        _call(first, "judge", 10.0, clock)
        _call(first, "judge", 10.0, clock)
        progress.finished(first.label, "pass", 9.0)
    finally:
        progress.close()
    line = next(line for line in _lines(stream) if line.startswith("[1/4]"))
    assert line.endswith("· 32s elapsed, ETA 1m00s"), line


def test_cache_hits_take_no_time_and_an_untimed_run_falls_back_on_finished_conversations(jobs):
    clock, stream = _Clock(), io.StringIO()
    progress = Progress(len(jobs), mode="lines", stream=stream, every_s=10_000, jobs=jobs, clock=clock)
    try:
        clock.now += 8
        emit(CallRecord(role="simulator", provider="fake", model="fake", scenario=jobs[0].scenario.id,
                        seed=jobs[0].seed, trial=jobs[0].trial, latency_s=0.0, cache_hit=True))
        progress.finished(jobs[0].label, "pass", 9.0)
    finally:
        progress.close()
    line = next(line for line in _lines(stream) if line.startswith("[1/4]"))
    assert line.endswith("· 8s elapsed, ETA 24s"), line  # 8 s per conversation, three left


def test_the_expected_calls_are_those_a_run_makes(fake_llm, tmp_path):
    """``expected_calls`` against a real run (fake model): the judges' calls exactly, the simulator's at most."""
    from convoeval.pipeline import EvalConfig, run_eval
    from convoeval.pipeline.pace import expected_calls

    config = EvalConfig.checked(agent="billing", output_dir=str(tmp_path / "out"), judge_samples=2)
    run = run_eval(config, progress="off", allow_errors=True)
    scenarios = {s.id: s for s in load_scenarios(agent="billing")}
    calls = run.frames.calls.groupby(["scenario", "role"]).size().to_dict()
    statuses = dict(zip(run.scores["scenario"], run.scores["status"], strict=True))
    assert len(statuses) == 6
    for name, scenario in scenarios.items():
        expected = expected_calls(scenario, judge_samples=2)
        judged = statuses[name] != "simulator_failure"
        assert calls.get((name, "judge"), 0) == (expected["judge"] if judged else 0), name
        assert calls.get((name, "simulator"), 0) <= expected["simulator"], name


def test_a_run_s_heartbeat_names_the_conversation_being_judged(fake_llm, tmp_path, monkeypatch, capsys):
    """Through ``run_eval``: once a scripted conversation has played its turns, the lines say it is judging."""
    import functools

    from convoeval.pipeline import EvalConfig, execute, run_eval

    fake_llm.latency = 0.3  # each judge call takes a while, as on the local model (there, minutes)
    monkeypatch.setenv("CONVOEVAL_MAX_CONCURRENCY", "1")  # and they are answered one after another, as there
    monkeypatch.setattr(execute, "Progress", functools.partial(Progress, every_s=0.2))
    config = EvalConfig.checked(agent="billing", scenario="billing-scripted-pix-en", output_dir=str(tmp_path / "o"))
    run_eval(config, progress="lines", allow_errors=True)
    beats = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  … ")]
    assert any("in flight: billing-scripted-pix-en s42 t1 judging" in line for line in beats), beats
    assert any(", ETA " in line for line in beats), beats  # the judges' calls are counted before any conversation ends


def test_the_turns_left_follow_those_the_ended_conversations_used(jobs):
    """A conversation may talk up to max_turns (12 here) but most stop sooner: once one has ended after 3 of its 12
    turns, another at turn 1 is expected to need 2 more simulator calls, not 11."""
    two = [job.__class__(job.scenario.model_copy(update={"max_turns": 12}), job.seed, job.trial) for job in jobs[:2]]
    clock, stream = _Clock(), io.StringIO()
    progress = Progress(2, mode="lines", stream=stream, every_s=10_000, jobs=two, clock=clock)
    try:
        for _ in range(3):
            _call(two[0], "simulator", 1.0, clock)
        _call(two[1], "simulator", 1.0, clock)
        _call(two[0], "judge", 10.0, clock)
        _call(two[0], "judge", 10.0, clock)
        progress.finished(two[0].label, "pass", 9.0)
    finally:
        progress.close()
    line = next(line for line in _lines(stream) if line.startswith("[1/2]"))
    # 24 s of calls so far; left: 2 simulator calls (1 s each) and 2 judge calls (10 s each) = 22 s.
    assert line.endswith("· 24s elapsed, ETA 22s"), line


def test_a_run_with_nothing_left_says_what_it_kept_and_starts_no_heartbeat():
    stream = io.StringIO()
    progress = Progress(0, skipped=6, mode="lines", stream=stream, every_s=0.05)
    time.sleep(0.2)
    progress.close()
    assert _lines(stream) == ["running 0 conversation(s) (6 already saved, kept)"]


def test_the_eta_counts_down_while_a_long_call_runs(jobs):
    """No news while a judge call runs: the ETA counts down rather than growing with the time waited."""
    clock, stream = _Clock(), io.StringIO()
    progress = Progress(len(jobs), mode="lines", stream=stream, every_s=10_000, jobs=jobs, clock=clock)
    try:
        for job in jobs:
            _call(job, "simulator", 1.0, clock)
            _call(job, "judge", 5.0, clock)
        first = progress.eta_text()
        clock.now += 10
        later = progress.eta_text()
        clock.now += 3600
        overdue = progress.eta_text()
    finally:
        progress.close()
    # 24 s spent, 24 s elapsed; left: 4 × (2 simulator calls × 1 s + 1 judge call × 5 s) = 28 s.
    assert first == "24s elapsed, ETA 28s", first
    assert later == "34s elapsed, ETA 18s", later
    assert overdue.endswith("ETA passed (the calls are slower than so far)"), overdue
