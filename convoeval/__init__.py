"""convoeval: conversational evaluation of chat agents.

The public verbs are re-exported here and imported lazily, so ``import convoeval`` stays cheap
(pandas, LangChain and the store drivers load only when a verb that needs them is used).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    # scenarios
    "load_scenarios": "convoeval.scenarios",
    "load_scenario_file": "convoeval.scenarios",
    "validate_paths": "convoeval.scenarios",
    "ScenarioError": "convoeval.scenarios",
    "ConversationalScenario": "convoeval.scenarios",
    "ScriptedScenario": "convoeval.scenarios",
    # the four verbs, DataFrames in and out
    "simulate": "convoeval.simulator",
    "run_conversation": "convoeval.pipeline.conversation",
    "judge_rubric": "convoeval.judges.rubric",
    "judge_holistic": "convoeval.judges.holistic",
    # scoring and the database's word
    "calculate_score": "convoeval.judges.scoring",
    "score_frame": "convoeval.judges.scoring",
    "check_assertions": "convoeval.store.assertions",
    "transcript_frame": "convoeval.frames",
    # whole runs
    "EvalConfig": "convoeval.pipeline.config",
    "EvalResult": "convoeval.pipeline.results",
    "execute": "convoeval.pipeline.execute",
    "load_run": "convoeval.report.data",
    "load_results": "convoeval.pipeline.results",
    "run_any": "convoeval.pipeline.conversation",
    # a failing conversation: where it went wrong, and a regression test from it
    "fork": "convoeval.forking",
    "fork_profile": "convoeval.forking",
    "locate_failure": "convoeval.forking",
    "pin": "convoeval.forking.pinning",
    # building blocks
    "get_model": "convoeval.llm.models",
    "get_agent": "convoeval.agents",
    "open_store": "convoeval.store",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'convoeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
