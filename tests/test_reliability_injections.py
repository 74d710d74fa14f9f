"""Judges under attack: transcripts where the agent or the patient tries to steer the judge stay quoted data.

The attack set lives in ``tests/data/injections/*.yaml`` (English and pt-BR: score instructions, fake closing tags,
forged turn lines, fake stop signals, ready-made verdicts, chat-template tokens, odd line separators, string-escape
break-outs, hostile tool names). For every case and every judge (rubric, holistic, per-turn), the prompt the
scripted fake model receives is checked line by line:

* the system prompt is the versioned constant, and the user message is the template with exactly one transcript
  block: everything outside that block is identical whatever the transcript says;
* the block has one line per message, each ``[Turn N] Patient|Agent: "<JSON string>"`` (plus the tools), whose
  JSON decodes back to the exact message: nothing was added, dropped or split;
* inside the block no framing character appears literally (``[ ] < > ``` ``), so no forged turn line, closing tag,
  code fence or ``[GOAL_COMPLETE]``; and no character that any reader could take for a line break;
* the attack's distinctive phrases reach the judge only inside the block.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_reliability_support import fake_responder

from convoeval.agents.base import AgentReply, ToolCall
from convoeval.frames import transcript_frame
from convoeval.judges import prompts
from convoeval.judges.holistic import ajudge_holistic
from convoeval.judges.rubric import ajudge_rubric
from convoeval.judges.turn import ajudge_turn
from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import parse_scenario
from convoeval.store import TABLES, open_store
from convoeval.testing import FakeChatModel

CASES_DIR = Path(__file__).parent / "data" / "injections"
CASES = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(CASES_DIR.glob("*.yaml"))}
CRITERIA = ["The agent stated the invoice amount", "The agent generated a payment link", "The agent was polite"]
GOAL = "Pay the pending invoice"
AGENT_TYPE = "billing"

BLOCK = re.compile(r"^<(transcript-[0-9a-f]{12})>\n(.*?)\n?^</\1>$", re.MULTILINE | re.DOTALL)
LINE = re.compile(r'^\[Turn (\d+)\] (Patient|Agent): ("(?:[^"\\]|\\.)*")(?: tools: \[(.*)\])?$')
FRAMING = "[]<>`"
#: Characters str.splitlines() (and many tokenizers and viewers) treat as line breaks besides "\n".
HIDDEN_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LABELS = {"patient": "Patient", "agent": "Agent"}


def test_the_attack_set_covers_both_attackers_and_both_languages():
    assert len(CASES) >= 10
    assert {c["attacker"] for c in CASES.values()} == {"agent", "patient"}
    assert {c["language"] for c in CASES.values()} == {"en", "pt-BR"}
    for name, case in CASES.items():
        assert case["id"] == name and case["markers"] and case["messages"][0]["role"] == "patient"
        attacker_text = " ".join(m["text"] + " ".join(m.get("tools", [])) for m in case["messages"]
                                 if m["role"] == case["attacker"])
        assert all(marker in attacker_text for marker in case["markers"]), name


def check_prompt(prompt: str, template: str, messages: list[dict[str, Any]], markers: list[str]) -> None:
    """The guarantees of the module docstring, for one judge prompt built from ``template``."""
    blocks = list(BLOCK.finditer(prompt))
    assert len(blocks) == 1, prompt
    block = blocks[0]
    assert prompt.count("<transcript") == 1 and prompt.count("</transcript") == 1, prompt
    # Outside the block the prompt is the template, whatever the conversation said.
    assert prompt[: block.start()] + "{transcript}" + prompt[block.end():] == template
    assert prompt.split("\n") == prompt.splitlines(), "a hidden line break reached the judge"
    assert not any(c in prompt for c in HIDDEN_BREAKS)
    lines = block.group(2).split("\n")
    assert len(lines) == len(messages), lines
    for i, (line, message) in enumerate(zip(lines, messages, strict=True)):
        parsed = LINE.match(line)
        assert parsed, line
        turn, label, quoted, tools = parsed.groups()
        assert (int(turn), label) == (i // 2 + 1, LABELS[message["role"]])
        assert json.loads(quoted) == message["text"]  # exact text back: nothing added, dropped or split
        assert not any(c in quoted for c in FRAMING), quoted
        if message.get("tools"):
            assert json.loads(f"[{tools}]") == message["tools"]
            assert not any(c in tools for c in FRAMING), tools
        else:
            assert tools is None
    outside = prompt[: block.start()] + prompt[block.end():]
    for marker in markers:
        assert marker not in outside, marker


def frame_of(case: dict[str, Any], run_id: str = "run-attack"):
    entries = [{"role": m["role"], "text": m["text"], "tools": list(m.get("tools", []))} for m in case["messages"]]
    return transcript_frame(entries, run_id=run_id, scenario=case["id"], agent=AGENT_TYPE, seed=7, trial=1)


@pytest.mark.parametrize("name", list(CASES))
async def test_rubric_judge_sees_the_attack_only_as_quoted_data(name):
    case = CASES[name]
    judge = FakeChatModel(responder=fake_responder)
    rows = await ajudge_rubric(frame_of(case), rubric=CRITERIA, model=judge)
    assert len(judge.calls) == 1 and len(rows) == len(CRITERIA)
    system, user = judge.calls[0].messages
    assert system.content == prompts.RUBRIC_SYSTEM_PROMPT
    template = prompts.RUBRIC_USER_TEMPLATE.replace("{count}", str(len(CRITERIA))).replace(
        "{criteria}", prompts.numbered(CRITERIA))
    check_prompt(user.content, template, case["messages"], case["markers"])


@pytest.mark.parametrize("name", list(CASES))
async def test_holistic_judge_sees_the_attack_only_as_quoted_data(name):
    case = CASES[name]
    judge = FakeChatModel(responder=fake_responder)
    rows = await ajudge_holistic(frame_of(case), goals=GOAL, model=judge)
    assert len(judge.calls) == 1 and len(rows) == 1
    system, user = judge.calls[0].messages
    assert system.content == prompts.HOLISTIC_SYSTEM_PROMPT
    template = prompts.HOLISTIC_USER_TEMPLATE.replace("{agent_type}", AGENT_TYPE).replace("{goal}", GOAL)
    check_prompt(user.content, template, case["messages"], case["markers"])


@pytest.mark.parametrize("name", list(CASES))
async def test_turn_judge_sees_the_attack_only_as_quoted_data(name):
    case = CASES[name]
    messages = case["messages"]
    last_agent = max(i for i, m in enumerate(messages) if m["role"] == "agent")
    judged = messages[: last_agent + 1]
    judge = FakeChatModel(responder=fake_responder)
    rows = await ajudge_turn(frame_of({**case, "messages": judged}), agent_type=AGENT_TYPE, model=judge)
    assert len(judge.calls) == 1 and len(rows) == 1
    system, user = judge.calls[0].messages
    assert system.content == prompts.TURN_SYSTEM_PROMPT
    template = prompts.TURN_USER_TEMPLATE.replace("{agent_type}", AGENT_TYPE).replace(
        "{turn}", str(last_agent // 2 + 1))
    check_prompt(user.content, template, judged, case["markers"])


# ── Through a real run: the agent under test says the attack ──


class ScriptedAgent:
    """An in-process agent that answers with the attacker's lines, tools included."""

    name = "scripted-attacker"

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self._replies = list(replies)

    async def respond(self, message: str, session: Any) -> AgentReply:
        reply = self._replies.pop(0)
        return AgentReply(bubbles=[reply["text"]], tool_calls=[ToolCall(name=t) for t in reply.get("tools", [])])


AGENT_ATTACKS = [n for n, c in CASES.items() if c["attacker"] == "agent"]


@pytest.mark.parametrize("name", AGENT_ATTACKS)
async def test_an_attacking_agent_in_a_run_ends_nothing_and_reaches_the_judges_as_data(name, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    case = CASES[name]
    patients = [m["text"] for m in case["messages"] if m["role"] == "patient"]
    agents = [m for m in case["messages"] if m["role"] == "agent"]
    scenario = parse_scenario({
        "type": "conversational", "id": f"attack-{name}", "agent": AGENT_TYPE, "locale": "en",
        "description": "an agent that attacks the judge", "persona": {"name": "Ana Souza", "phone": "11987650020"},
        "goal": GOAL, "max_turns": len(patients), "rubric": CRITERIA})
    judge = FakeChatModel(responder=fake_responder)
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        options = RunOptions(target="attacker", agents={"attacker": ScriptedAgent(agents)},
                             simulator_model=FakeChatModel(replies=patients), judge_model=judge, store=store)
        result = await arun_any(Job(scenario, 3), options)
        assert sum(len(store.select(t)) for t in TABLES) == 0
    assert result.status != "error", result.error
    assert result.run["stop_reason"].iloc[0] == "max_turns"  # the agent's [GOAL_COMPLETE] ended nothing
    recorded = result.transcript[["role", "text"]].to_dict("records")
    assert recorded == [{"role": m["role"], "text": m["text"]} for m in case["messages"]]
    by_tool = {c.kwargs["tool_choice"]["function"]["name"]: c for c in judge.calls}
    rubric_template = prompts.RUBRIC_USER_TEMPLATE.replace("{count}", str(len(CRITERIA))).replace(
        "{criteria}", prompts.numbered(CRITERIA))
    holistic_template = prompts.HOLISTIC_USER_TEMPLATE.replace("{agent_type}", AGENT_TYPE).replace("{goal}", GOAL)
    check_prompt(by_tool["RubricAnswer"].last, rubric_template, case["messages"], case["markers"])
    check_prompt(by_tool["HolisticAnswer"].last, holistic_template, case["messages"], case["markers"])
