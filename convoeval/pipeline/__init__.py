"""Running evaluations: one configuration, one path, one result type — in this process, on several, or a cluster.

    EvalConfig (settings = the run notebook's parameters)
      -> plan (scenario × seed × trial jobs)
      -> conversations (arun_any(job, options): one Conversation per attempt — simulate ↔ agent, assertions,
         judges, score — plain rows)
         on this process's event loop (local) or on Dask workers (distributed)
      -> runs/<key>.json per finished conversation (results)
      -> tidy frames once, data/*.parquet, report.json -> EvalResult (run_eval)

The CLI (``convoeval run``), the run notebook (``notebook_config`` + ``run_notebook_config``), sweeps and code all go
through ``run_eval``; code that plans its own jobs runs them with ``convoeval.pipeline.batch.arun_batch``.
"""

from convoeval._util.lazy import lazy_exports

# Each name loads its module on first use: `convoeval --help` (the CLI imports `pipeline.config` for its flags) need
# not load the notebook helpers (issue #28); none of these modules imports pandas at its top any more.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.pipeline.config": ("ConfigError", "EvalConfig"),
    "convoeval.pipeline.conversation": (
        "ConversationResult", "RunOptions", "arun_any", "arun_conversation", "run_any", "run_conversation"
    ),
    "convoeval.pipeline.conversation_state": ("Conversation",),
    "convoeval.pipeline.execute": ("run_eval",),
    "convoeval.pipeline.jobs": ("Job", "plan"),
    "convoeval.pipeline.notebook": ("check_threshold", "notebook_config", "run_notebook_config"),
    "convoeval.pipeline.results": ("EvalResult", "load_run"),
})
