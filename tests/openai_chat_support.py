"""What the openai-chat adapter's tests share: a seeded billing patient and replies as the local server writes them."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from convoeval.agents import AgentSession
from convoeval.scenarios import load_scenario_file
from convoeval.store import open_store
from convoeval.store.fixtures import cleanup_run, seed_run

SCENARIO = Path(__file__).parents[1] / "evals/scenarios/billing/conv-happy-payment.yaml"


def said(*texts: str) -> list[AIMessage]:
    """Replies as the local server returns them: text content, no ``tool_calls`` (a bare JSON *string* scripted
    for ``FakeChatModel`` would come back as a real tool call to the first bound tool, which is not the case here)."""
    return [AIMessage(content=text) for text in texts]


@pytest.fixture
def seeded(tmp_path):
    """A billing patient with an open invoice in a real SQLite store, and the agent session for them."""
    scenario = load_scenario_file(SCENARIO)
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    run = seed_run(store, scenario)
    session = AgentSession(
        run_id=run.run_id, clinic_id=run.clinic_id, patient_id=run.patient_id, patient_phone=scenario.persona.phone,
        patient_name=scenario.persona.name, locale="en", agent="billing", store=store, conversation_id="conv-1",
    )  # fmt: skip
    yield session
    cleanup_run(store, run.run_id)
    store.close()
