"""Run jobs in this process: one event loop drives up to ``concurrency`` conversations at once.

Conversations wait on the models most of the time, so one loop keeps many in flight; the LLM layer further
bounds the calls in flight per endpoint. A pool of ``concurrency`` worker coroutines pulls jobs from the list, so
memory does not grow with the number of jobs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from convoeval.llm.accounting import record_calls
from convoeval.pipeline.conversation import ConversationResult, RunOptions, arun_any
from convoeval.pipeline.jobs import Job

__all__ = ["arun_job", "arun_jobs"]

#: Called once per finished conversation, on the event loop, as soon as it ends.
OnResult = Callable[[Job, ConversationResult], None]


async def arun_job(job: Job, options: RunOptions) -> ConversationResult:
    """Run one job and collect the LLM calls it made (each task has its own context, so records don't mix)."""
    with record_calls() as records:
        result = await arun_any(job, options)
    result.calls = [r.to_dict() for r in records]
    return result


async def arun_jobs(jobs: Sequence[Job], options: RunOptions, *, concurrency: int, on_result: OnResult) -> None:
    """Run ``jobs`` with at most ``concurrency`` conversations in flight, handing each result to ``on_result``.

    Args:
        jobs: the conversations to have.
        options: agents, models, judge samples and store, shared by every conversation.
        concurrency: conversations in flight at once.
        on_result: receives each finished conversation (e.g. writes it to the results folder).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    pending = iter(jobs)

    async def worker() -> None:
        for job in pending:  # one shared iterator: each job is taken by exactly one worker
            on_result(job, await arun_job(job, options))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)))))
