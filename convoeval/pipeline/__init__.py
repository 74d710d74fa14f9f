"""Running evaluations: one configuration, one path, one result type — in this process, on several, or a cluster.

    EvalConfig (settings = the run notebook's parameters)
      -> plan (scenario × seed × trial jobs)
      -> conversations (arun_any: simulate ↔ agent, assertions, judges, score — plain rows)
         on this process's event loop (local) or on Dask workers (distributed)
      -> runs/<key>.json per finished conversation (results)
      -> tidy frames once, data/*.parquet, report.json -> EvalResult (execute)

The CLI (``convoeval run``), the run notebook (``configure`` + ``notebook.execute``), sweeps and code all go
through ``execute``; code that plans its own jobs runs them with ``convoeval.pipeline.batch.arun_batch``.
"""

from convoeval._lazy import lazy_exports
from convoeval.pipeline.execute import execute  # noqa: F401 - public; eager, see below

# Each name loads its module on first use: `convoeval --help` (the CLI imports `pipeline.config` for its flags) need
# not load the notebook helpers (issue #28); none of these modules imports pandas at its top any more.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.pipeline.config": ("ConfigError", "EvalConfig", "project_root"),
    "convoeval.pipeline.conversation": (
        "ConversationResult", "RunOptions", "arun_any", "arun_conversation", "run_any", "run_conversation"
    ),
    "convoeval.pipeline.jobs": ("Job", "plan"),
    "convoeval.pipeline.notebook": ("check_threshold", "configure"),
    "convoeval.pipeline.results": ("EvalResult", "load_results", "merge_frames"),
})
# `execute` is also the name of its module: a lazy name would lose to the submodule, which the import system sets as
# this package's attribute once anything imports `convoeval.pipeline.execute`. So it is imported here, light since
# its pandas is imported where frames are built.
__all__ = sorted([*__all__, "execute"])
