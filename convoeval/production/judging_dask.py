"""``convoeval judge --workers N`` / ``--cluster ADDRESS``: an imported folder's conversations judged on Dask workers.

One task per conversation: its saved payload goes to a worker, which judges it (``judging.judge_payload``, the
worker's own LLM cache and accounting, from the same environment) and sends the judged payload back; this process
writes each one the moment its task completes, so a judge killed half-way resumes as a local one does. The cluster
is several processes of this machine (a ``LocalCluster``) or an existing scheduler, as a run's (``pipeline.
distributed``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from convoeval._util.aio import run_sync
from convoeval.llm.models import ModelLike
from convoeval.production.rubric import JudgeFolderError, Rubric

#: ``judging.judge_payload``: passed in (a top-level function pickles by name), so this module needs no import of it.
Judge = Callable[..., Coroutine[Any, Any, dict[str, Any]]]

__all__ = ["judge_on_dask"]


def _judge_task(judge: Judge, payload: dict[str, Any], rubric: Rubric, model: ModelLike, samples: int
                ) -> dict[str, Any]:
    """What a worker runs: one conversation judged."""
    return run_sync(judge(payload, rubric, model=model, samples=samples))


def judge_on_dask(judge: Judge, payloads: Sequence[tuple[str, dict[str, Any]]], rubric: Rubric, *,
                  model: ModelLike = None,
                  samples: int = 1, workers: int = 2, scheduler: str | None = None,
                  on_result: Callable[[str, dict[str, Any]], None]) -> int:
    """Judge ``(key, payload)`` pairs with ``judge`` on Dask workers, handing each judged payload to ``on_result`` as
    it completes.

    Returns:
        How many workers judged them.

    Raises:
        JudgeFolderError: the scheduler cannot be reached, or the local workers cannot start.
    """
    import dask  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster
    from distributed import Client, LocalCluster, as_completed  # noqa: PLC0415 - as above

    cluster = None
    with dask.config.set({"distributed.scheduler.allowed-failures": 1, "distributed.worker.profile.enabled": False}):
        if scheduler:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise JudgeFolderError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        else:
            try:
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
            except Exception as exc:  # noqa: BLE001 - whatever stopped the processes, said in one line
                raise JudgeFolderError(f"could not start {workers} local worker processes: "
                                       f"{type(exc).__name__}: {exc}") from None
            client = Client(cluster)
    try:
        count = max(1, len(client.scheduler_info().get("workers", {})))
        futures = {client.submit(_judge_task, judge, payload, rubric, model, samples, pure=False,
                                 key=f"judge-{key}"): key
                   for key, payload in payloads}
        for future in as_completed(futures):
            on_result(futures[future], future.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return count
