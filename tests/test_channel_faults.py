"""The WhatsApp channel end to end (issue #37): the shipped channel scenarios through the real pipeline, the healthy
reference agents pass every channel assertion, and each channel fault breaks exactly its documented assertion, in
pt-BR, en and es, on every agent that has it, on seeds 1-5."""

from __future__ import annotations

from pathlib import Path

import pytest

from convoeval.agents.clinic import faults_for
from convoeval.agents.clinic._channel import CHANNEL_FAULTS, ORDER_FAULT
from convoeval.pipeline.conversation import arun_conversation
from convoeval.scenarios import ScriptedScenario
from convoeval.scenarios.loader import load_scenario_file, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
CHANNEL_KEYS = {"one_reply_per_burst", "fragments_covered", "no_duplicate_effects", "whatsapp_window"}
WHATSAPP = ROOT / "evals" / "whatsapp"  # the channel's scenarios: opt-in, beside evals/scenarios (docs/whatsapp.md)
SCENARIOS = sorted(p.name for p in WHATSAPP.glob("*.yaml"))
AGENTS = sorted({p.split("-")[0] for p in SCENARIOS})


def unjudged(path: str) -> ScriptedScenario:
    """The scenario with its per-turn judge off (these tests read the deterministic checks, not a model)."""
    scenario = load_scenario_file(WHATSAPP / path)
    raw = scenario.model_dump(exclude_none=True)
    for turn in raw["turns"]:
        turn["judge"] = False
    parsed = parse_scenario(raw, path)
    assert isinstance(parsed, ScriptedScenario)
    return parsed


async def failed_keys(path: str, fault: str | None, seed: int) -> tuple[set[str], list[str]]:
    scenario = unjudged(path)
    target = f"clinic:{scenario.agent}" + (f"?faults={fault}" if fault else "")
    result = await arun_conversation(scenario, agent=target, seed=seed)
    run = result.run.iloc[0]
    assert run["status"] == "completed", run["error"]
    rows = result.assertions.to_dict("records")
    return {r["assertion"] for r in rows if not r["passed"]}, [r["message"] for r in rows if not r["passed"]]


def test_every_agent_with_channel_faults_has_a_scenario_in_each_locale() -> None:
    assert AGENTS == ["billing", "scheduling"]
    for agent in AGENTS:
        assert {f.name for f in faults_for(agent)} >= set(CHANNEL_FAULTS)
        locales = {load_scenario_file(WHATSAPP / p).locale for p in SCENARIOS if p.startswith(agent)}
        assert locales == {"pt-BR", "en", "es"}
        for path in (p for p in SCENARIOS if p.startswith(agent)):
            active = set(load_scenario_file(WHATSAPP / path).assertions.active())
            assert CHANNEL_KEYS <= active, path


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("path", SCENARIOS)
async def test_the_healthy_agent_passes_every_assertion(path: str, seed: int) -> None:
    failed, messages = await failed_keys(path, None, seed)
    assert failed == set(), messages


@pytest.mark.parametrize("fault", sorted(CHANNEL_FAULTS))
@pytest.mark.parametrize("path", SCENARIOS)
async def test_each_channel_fault_breaks_its_documented_assertion(path: str, fault: str) -> None:
    failed, messages = await failed_keys(path, fault, seed=1)
    documented = {next(f for f in faults_for(path.split("-")[0]) if f.name == fault).breaks_assertions[0]}
    assert failed & CHANNEL_KEYS == documented, messages


@pytest.mark.parametrize("path", [p for p in SCENARIOS if p.startswith("billing-")])
async def test_a_bot_that_reads_a_burst_in_arrival_order_loses_the_correction(path: str) -> None:
    healthy, _ = await failed_keys(path, None, seed=1)
    failed, messages = await failed_keys(path, ORDER_FAULT.name, seed=1)
    assert healthy == set() and failed == set(ORDER_FAULT.breaks_assertions), messages
    assert "payment_method: expected pix" in " ".join(messages)


async def test_not_idempotent_makes_the_second_payment_link_and_the_assertion_says_so() -> None:
    scenario = unjudged("billing-pt.yaml")
    result = await arun_conversation(scenario, agent="clinic:billing?faults=not_idempotent", seed=1)
    links = [t for tools in result.transcript["tools"] for t in tools if t == "create_payment_link"]
    assert len(links) == 2
    [detail] = [m for m in result.assertions["message"] if m.startswith("no_duplicate_effects")]
    assert "delivered twice and answered twice, called create_payment_link again" in detail
