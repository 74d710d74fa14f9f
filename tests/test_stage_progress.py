"""convoeval.pipeline.progress.StageProgress: the lines a long study prints while its LLM calls run."""

from __future__ import annotations

import io

import pytest

from convoeval.llm.accounting import CallRecord, emit
from convoeval.pipeline.progress import StageProgress


def _call(cache_hit: bool = False) -> CallRecord:
    return CallRecord(role="judge", provider="fake", model="m", cache_hit=cache_hit)


def test_a_step_counts_the_calls_made_inside_it_and_no_others():
    out = io.StringIO()
    stages = StageProgress(2, stream=out, every_s=0.0)
    emit(_call())  # before the step: not counted
    with stages.step("judging 2 conversation(s) with 'greedy'", calls=4):
        emit(_call())
        emit(_call(cache_hit=True))
    emit(_call())  # after the step: not counted
    lines = out.getvalue().splitlines()
    assert lines[0] == "[1/2] judging 2 conversation(s) with 'greedy' (~4 LLM calls)"
    assert lines[1].startswith("  … 1/4 LLM call(s) · ") and "ETA" in lines[1]
    assert lines[2].startswith("  … 2/4 LLM call(s) (1 from the cache) · ")
    assert lines[3].startswith("  done: 2/4 LLM call(s) (1 from the cache) in ")
    assert len(lines) == 4


def test_lines_within_a_step_are_rate_limited():
    out = io.StringIO()
    with StageProgress(1, stream=out, every_s=3600).step("probes", calls=50):
        for _ in range(50):
            emit(_call())
    lines = out.getvalue().splitlines()
    assert lines == ["[1/1] probes (~50 LLM calls)", lines[1]] and lines[1].startswith("  done: 50/50 LLM call(s)")


def test_a_failing_step_says_it_stopped_and_stops_counting():
    out = io.StringIO()
    stages = StageProgress(2, stream=out, every_s=0.0)
    with pytest.raises(RuntimeError), stages.step("probes"):
        emit(_call())
        raise RuntimeError("boom")
    with stages.step("conversations", count=False):
        emit(_call())
    lines = out.getvalue().splitlines()
    assert lines[2].startswith("  stopped: 1 LLM call(s) in ")
    assert lines[3] == "[2/2] conversations" and lines[4].startswith("  done: in ")


def test_off_prints_nothing():
    out = io.StringIO()
    stages = StageProgress(1, mode="off", stream=out, every_s=0.0)
    with stages.step("x", calls=1):
        emit(_call())
    stages.close()
    assert out.getvalue() == ""


def test_a_step_waiting_on_one_slow_call_still_reports():
    import time

    def beats() -> list[str]:
        return [line for line in out.getvalue().splitlines() if line.startswith("  … 1/3 LLM call(s)")]

    out = io.StringIO()
    with StageProgress(1, stream=out, every_s=0.2).step("probes", calls=3):
        emit(_call())
        # A long call in flight: no record arrives. Wait for two beats (0.4 s apart) rather than a fixed 0.7 s,
        # which a loaded machine's timer thread could miss; 10 s is far past any beat and ends a broken timer.
        deadline = time.monotonic() + 10
        while len(beats()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(beats()) >= 2 and "ETA" in beats()[-1]
