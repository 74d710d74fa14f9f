"""convoeval: conversational evaluation of chat agents.

The public verbs, each from the module that defines it. They load on first use (``convoeval._util.lazy``), so
``import convoeval`` stays cheap: pandas, LangChain and the store drivers load only when a verb that needs them is used.
"""

from convoeval._util.lazy import lazy_exports

__version__ = "0.1.0"

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.scenarios": (
        "load_scenarios", "load_scenario_file", "validate_paths", "ScenarioError", "ConversationalScenario",
        "ScriptedScenario"
    ),
    "convoeval.simulator.patient": ("simulate",),
    "convoeval.pipeline.conversation": ("run_conversation", "run_any"),
    "convoeval.judges.rubric": ("judge_rubric",),
    "convoeval.judges.holistic": ("judge_holistic",),
    "convoeval.judges.scoring": ("calculate_score", "score_frame"),
    "convoeval.store.assertions": ("check_assertions",),
    "convoeval.frames": ("RunFrames", "transcript_frame"),
    "convoeval.pipeline.config": ("EvalConfig",),
    "convoeval.pipeline.results": ("EvalResult",),
    "convoeval.folders": ("load_results",),
    "convoeval.pipeline.execute": ("run_eval",),
    "convoeval.forking": ("fork", "fork_profile", "locate_failure"),
    "convoeval.forking.pinning": ("pin",),
    "convoeval.llm.models": ("get_model",),
    "convoeval.agents": ("get_agent",),
    "convoeval.store": ("open_store",),
    "convoeval.errors": ("ConvoevalError",),
    "convoeval.tau2.pass_k": ("pass_k",),
})
__all__ += ["__version__"]
