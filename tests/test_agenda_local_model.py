"""The agenda patient with the real embedded model as its voice (marked local_llm): the default offline simulator,
a conversation that reaches its goal, and most messages voiced by the model rather than the templates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_reliability_support import fake_responder

from convoeval.llm import local as local_llm
from convoeval.pipeline.conversation import arun_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import RunOptions
from convoeval.scenarios import load_scenarios
from convoeval.simulator.choice import resolve_simulator
from convoeval.testing import FakeChatModel


@pytest.fixture(scope="module")
def local_model() -> Any:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed")
    from convoeval.llm.models import clear_model_cache, get_model

    was_running = local_llm.server_status()["running"]
    local_llm.ensure_server(progress=False)
    clear_model_cache()
    yield get_model("simulator", "local")
    if not was_running:
        local_llm.stop_server()


@pytest.mark.local_llm
@pytest.mark.parametrize("scenario_id", ["billing-conv-happy-payment", "scheduling-conv-reschedule-en",
                                         "recall-conv-accepts-checkup-es"])
def test_the_embedded_model_voices_an_agenda_patient_to_the_goal(local_model: Any, scenario_id: str,
                                                                store: Any) -> None:
    assert resolve_simulator(None, local_model) == "agenda"  # the default offline
    scenario = next(s for s in load_scenarios(None) if s.id == scenario_id)
    options = RunOptions(simulator_model=local_model, judge_model=FakeChatModel(responder=fake_responder),
                         store=store)
    result = asyncio.run(arun_any(Job(scenario, 1), options))
    patient = result.transcript[result.transcript["role"] == "patient"]
    assert result.score["status"].iloc[0] != "simulator_failure", result.runs
    assert patient["signal"].dropna().tolist() == ["GOAL_COMPLETE"], patient["text"].tolist()
    assert set(patient["voice"]) <= {"model", "template"} and (patient["voice"] == "model").any()
