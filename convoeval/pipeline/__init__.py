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

from convoeval.pipeline.config import ConfigError, EvalConfig, project_root
from convoeval.pipeline.conversation import (
    ConversationResult,
    RunOptions,
    arun_any,
    arun_conversation,
    run_any,
    run_conversation,
)
from convoeval.pipeline.execute import execute
from convoeval.pipeline.jobs import Job, plan
from convoeval.pipeline.notebook import check_threshold, configure
from convoeval.pipeline.results import EvalResult, load_results, merge_frames

__all__ = [
    "ConfigError",
    "ConversationResult",
    "EvalConfig",
    "EvalResult",
    "Job",
    "RunOptions",
    "arun_any",
    "arun_conversation",
    "check_threshold",
    "configure",
    "execute",
    "load_results",
    "merge_frames",
    "plan",
    "project_root",
    "run_any",
    "run_conversation",
]
