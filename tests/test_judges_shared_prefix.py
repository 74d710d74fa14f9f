"""The judges of one conversation send one shared prefix (the conversation), then each its own task, and none of
them sees another's answer (issue #49, item 1)."""

from __future__ import annotations

import re
from typing import Any

from convoeval.frames import HOLISTIC_DIMENSIONS, TURN_DIMENSIONS
from convoeval.judges.prompts import HOLISTIC_TASK, RUBRIC_TASK_TEMPLATE, TURN_TASK_TEMPLATE
from convoeval.pipeline import Job
from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.scenarios import load_scenarios, parse_scenario
from convoeval.testing import FakeChatModel

_COUNT = re.compile(r"Criteria \((\d+)\)")


def marked_judge() -> FakeChatModel:
    """A judge answering one call at a time, every answer carrying a marker unique to its call (``MARK-<n>``)."""
    calls = {"n": 0}

    def answer(messages: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        mark = f"MARK-{calls['n']}"
        tool = kwargs["tool_choice"]["function"]["name"]
        if tool == "RubricAnswer":
            count = int(_COUNT.findall(str(messages[-1].content))[-1])
            return {f"criterion_{i}": {"evidence": f"{mark} turn 1", "reasoning": f"{mark} seen", "passed": True}
                    for i in range(1, count + 1)}
        dimensions = HOLISTIC_DIMENSIONS if tool == "HolisticAnswer" else TURN_DIMENSIONS
        return {"issues": [f"{mark} issue"], "scores": dict.fromkeys(dimensions, 9), "suggestion": f"{mark} advice"}

    return FakeChatModel(responder=answer, max_concurrency=1)  # one call at a time, as on the local server


def with_checkpoint_criteria():
    happy = load_scenarios(scenario="billing-conv-happy-payment")[0].model_dump(exclude_none=True)
    happy["checkpoints"] = [{"id": "opening", "when": {"turn": 1}, "path": [{"calls": "list_invoices", "at_least": 1}],
                             "rubric": ["Agent greeted the patient"]}]
    return parse_scenario(happy)


def transcript_part(system: str) -> str:
    """The system message up to its transcript's last message line (the closing tag excluded)."""
    return system[: system.rindex("\n</transcript-")]


async def test_the_judges_of_a_conversation_share_its_prefix_and_not_each_others_answers(store):
    sc = with_checkpoint_criteria()
    judge = marked_judge()
    patient = FakeChatModel(replies=["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"])
    result = await arun_any(Job(sc, 42), RunOptions(simulator_model=patient, judge_model=judge, store=store))
    assert result.status != "error", result.error
    by_task = {}
    for call in judge.calls:
        system, user = (str(m.content) for m in call.messages)
        by_task[user] = system
    rubric_task = RUBRIC_TASK_TEMPLATE.format(count=4, criteria="\n".join(
        f"{i}. {c}" for i, c in enumerate(sc.criteria, 1)))
    checkpoint_task = RUBRIC_TASK_TEMPLATE.format(count=1, criteria="1. Agent greeted the patient")
    assert set(by_task) == {rubric_task, HOLISTIC_TASK, checkpoint_task}  # each judge's own part: its user message

    # The rubric and holistic judges send the very same system message: the whole conversation, then the task.
    assert by_task[rubric_task] == by_task[HOLISTIC_TASK]
    shared = by_task[rubric_task]
    assert "Patient goal: Patient pays a pending R$150 invoice using Pix" in shared
    assert shared.count("\n[Turn ") == len(result.transcript)
    assert "Criteria" not in shared and "goal_completion" not in shared  # no judge's own instructions in it
    # The checkpoint's judge reads the conversation up to turn 1: a prefix of the others' (up to its closing tag).
    assert shared.startswith(transcript_part(by_task[checkpoint_task]))

    # Independent: no prompt holds anything any judge answered, though each call began after the previous ended.
    prompts = "\n".join(str(m.content) for call in judge.calls for m in call.messages)
    assert "MARK-" not in prompts
    assert result.rubric["evidence"].str.contains("MARK-").all()  # (the answers did reach the results)


async def test_per_turn_judges_extend_the_previous_turns_prefix_and_never_read_its_scores(store):
    sc = load_scenarios(scenario="billing-scripted-pix-en")[0].model_dump(exclude_none=True)
    for step in sc["turns"]:
        step["judge"] = True
    judge = marked_judge()
    result = await arun_any(Job(parse_scenario(sc), 42), RunOptions(judge_model=judge, store=store))
    assert result.status != "error", result.error
    systems = [str(call.messages[0].content) for call in judge.calls]
    users = [str(call.messages[1].content) for call in judge.calls]
    assert len(systems) == 4
    assert users == [TURN_TASK_TEMPLATE.format(turn=k) for k in range(1, 5)]
    for earlier, later in zip(systems, systems[1:], strict=False):
        assert later.startswith(transcript_part(earlier))  # turn k+1's prompt extends turn k's conversation
    assert "MARK-" not in "\n".join(systems + users)
