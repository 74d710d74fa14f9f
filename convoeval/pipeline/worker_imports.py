"""The modules a worker process needs before its first conversation, imported at once.

Local Dask workers fork from a server that imported this module (``convoeval.pipeline.distributed``), so they
start with convoeval, LangChain and the openai SDK already loaded. Nothing here runs code beyond imports.
"""

from __future__ import annotations

import langchain_openai  # noqa: F401 - the chat models' class (most of the import time)

import convoeval.judges.holistic  # noqa: F401
import convoeval.judges.rubric  # noqa: F401
import convoeval.llm.models  # noqa: F401
import convoeval.pipeline.distributed  # noqa: F401 - run_tasks
import convoeval.pipeline.local  # noqa: F401
import convoeval.simulator  # noqa: F401
import convoeval.store.sql  # noqa: F401
