"""Run jobs on Dask workers: several processes of this machine (a ``LocalCluster``) or an existing cluster.

One task per conversation. A worker runs a task on convoeval's event loop in that worker process, so one process
drives as many conversations at once as it has task threads (``concurrency / workers`` each). The finished
conversation's rows come back to the client, which writes them atomically as a run in one process does: workers
need no shared file system.

What crosses the network is each conversation's ``Job`` (the scenario, the seed, the trial, a patient to replay, its
own target, its observer factory) and the run's ``WorkerSettings`` (its ``EvalConfig`` and the budget share): never a
key, a password or a store URL. Each worker reads those from its own environment
(``OPENAI_API_KEY``, ``CONVOEVAL_STORE_URL``, …); a local cluster's workers inherit this process's environment.

A worker that dies loses no finished conversation (each was sent back when it ended); the scheduler runs its
unfinished ones once more elsewhere (``distributed.scheduler.allowed-failures = 1`` for a local cluster), and a
conversation whose worker dies twice ends in ``error`` with that reason.

Per-endpoint call budgets stay global: each of ``n`` workers gets ``budget // n`` calls in flight per endpoint.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convoeval._util.aio import run_sync
from convoeval._util.urls import safe_url
from convoeval.agents import safe_target
from convoeval.llm import set_budget_share
from convoeval.llm.models import resolve_model
from convoeval.pipeline import fork_server
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.conversation import ConversationResult, RunOptions, failed_result
from convoeval.pipeline.jobs import Job, model_roles
from convoeval.pipeline.local import arun_job
from convoeval.store import open_store

__all__ = ["WorkerSettings", "check_before_start", "chunk_size", "run_distributed", "run_tasks"]


#: The settings a worker's run options are built from (``RunOptions.from_config``): what keys its cache of them.
_RUN_OPTION_FIELDS = frozenset({"target", "simulator_model", "judge_model", "judge_samples", "simulator_gate",
                                "resimulate", "simulator"})


@dataclass(frozen=True)
class WorkerSettings:
    """What every conversation of a run shares on the workers: the run's ``EvalConfig`` and the worker's share of
    each endpoint's call budget. No secret is ever part of it: a configuration holds none by design (keys, passwords
    and store URLs come from each worker's environment), and ``check_before_start`` refuses a target or a model
    ``base_url`` that carries credentials before anything is sent."""

    config: EvalConfig
    budget_share: int

    def cache_key(self) -> str:
        """What the worker's run options depend on: the same for every run with the same models and target."""
        return json.dumps([self.config.model_dump(include=set(_RUN_OPTION_FIELDS)), self.budget_share],
                          sort_keys=True, default=str)


_OPTIONS: dict[str, RunOptions] = {}
_OPTIONS_LOCK = threading.Lock()


def _worker_options(settings: WorkerSettings) -> RunOptions:
    """Models, store and agents of this worker process, built from its own environment once per settings."""
    with _OPTIONS_LOCK:
        options = _OPTIONS.get(settings.cache_key())
        if options is None:
            set_budget_share(settings.budget_share)
            options = RunOptions.from_config(settings.config, store=open_store())
            _OPTIONS[settings.cache_key()] = options
    return options


def run_tasks(jobs: list[Job], settings: WorkerSettings) -> list[dict[str, Any]]:
    """Run several conversations at once on this worker's event loop; their payloads, in order.

    Never raises for a failure of the agent, a model or a judge (a payload says ``error``); a failure to set the
    worker up (its store or models) becomes an error payload for each conversation.
    """
    try:
        options = _worker_options(settings)
    except Exception as exc:  # noqa: BLE001 - a worker that cannot start these conversations reports it
        reason = f"worker setup failed: {type(exc).__name__}: {exc}"
        return [failed_result(j.scenario, j.seed, j.trial, j.target or settings.config.target, reason).payload()
                for j in jobs]

    async def all_of_them() -> list[Any]:
        return await asyncio.gather(*(arun_job(job, options) for job in jobs))

    return [result.payload() for result in run_sync(all_of_them())]


def chunk_size(concurrency: int, workers: int) -> int:
    """Conversations per Dask task: one, unless there are enough in flight to share several tasks per worker.

    Each task costs the worker's event loop ~7 ms of CPU in Dask's own messaging (py-spy, benchmarks/RESULTS.md),
    as much as a fifth of a conversation; a task of 16 conversations pays it once. A killed worker then re-runs a
    whole task elsewhere, so small runs keep one conversation per task (and progress per conversation).
    """
    return max(1, min(16, concurrency // (4 * workers)))


def _check_secrets(config: EvalConfig) -> None:
    """Refuse settings that would put a credential into a task payload."""

    if config.target and safe_target(config.target) != config.target:
        raise ConfigError("a target URL with credentials or query values cannot be sent to workers; give the "
                          "webhook's credentials through its environment variables (docs/agents-protocol.md)")
    for role in ("simulator_model", "judge_model"):
        spec = getattr(config, role)
        base = spec.get("base_url") if isinstance(spec, Mapping) else None
        if base and safe_url(base) != base:
            raise ConfigError(f"{role}.base_url carries credentials, which cannot be sent to workers; set "
                              "OPENAI_BASE_URL in the workers' environment instead")


def check_job_targets(jobs: Sequence[Job]) -> None:
    """Refuse jobs whose own target (a red-team case's, say) would carry a credential into a task payload.

    Raises:
        ConfigError: the first such target, without its credentials.
    """
    for job in jobs:
        if job.target and safe_target(job.target) != job.target:
            raise ConfigError(f"the target {safe_target(job.target)} of {job.label} carries credentials or query "
                              "values, which cannot be sent to workers; give the webhook's credentials through its "
                              "environment variables (docs/agents-protocol.md)")


def _check_budgets(config: EvalConfig, workers: int, roles: Collection[str] = ("simulator", "judge")) -> None:
    """Each worker gets ``budget // workers`` calls in flight per endpoint: a budget below that cannot be shared.
    Only the ``roles`` the jobs call are checked (``jobs.model_roles``)."""

    for role, spec in (("simulator", config.simulator_model), ("judge", config.judge_model)):
        if role not in roles:
            continue
        info = resolve_model(role, spec).info
        if info.max_concurrency < workers:
            raise ConfigError(
                f"the {role} endpoint allows {info.max_concurrency} call(s) in flight, fewer than the {workers} "
                f"workers (each needs at least one, and the budget is shared, not multiplied): use workers="
                f"{info.max_concurrency}, or raise its budget (CONVOEVAL_MAX_CONCURRENCY, CONVOEVAL_LOCAL_CONCURRENCY "
                f"or the model's max_concurrency setting)"
            )


def check_before_start(config: EvalConfig, *, store_url: str | None,
                       roles: Collection[str] = ("simulator", "judge")) -> None:
    """Refuse a distributed run that cannot work, before a results folder, a cluster or a model exists.

    Checks that no secret would travel in a task, that ``store_url`` is not given with a remote cluster (its
    workers use their own store), and, for local workers, that every endpoint's call budget can be shared among
    them. A remote cluster's size, and so its budgets, is known only once connected (``run_distributed``).

    Raises:
        ConfigError: the first of these that fails, in one line.
    """
    _check_secrets(config)
    if config.scheduler and store_url:
        raise ConfigError("with a remote cluster the workers use the store of their own CONVOEVAL_STORE_URL; "
                          "set it there instead of --store")
    if not config.scheduler:
        _check_budgets(config, config.workers, roles)


def _describe(config: EvalConfig) -> dict[str, dict[str, Any]]:

    out = {}
    for role, spec in (("simulator", config.simulator_model), ("judge", config.judge_model)):
        info = resolve_model(role, spec).info
        out[role] = {"provider": info.provider, "model": info.model, "base_url": info.base_url,
                     "local_demo": info.is_local_demo}
    return out


def _preload_workers() -> None:
    """Local workers fork from a server that imported what they need (``convoeval.pipeline.fork_server``)."""
    import distributed.utils  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster

    # Dask, on its first forkserver use, imports every optional package it knows in this process to choose its own
    # preload list, which ours replaces anyway: mark that choice as made.
    distributed.utils._forkserver_preload_set = True
    fork_server.start()


def run_distributed(
    jobs: list[Job],
    config: EvalConfig,
    *,
    store_url: str | None,
    on_result: Callable[[Job, ConversationResult], None],
    on_turn: Callable[[str, int], None] | None = None,
) -> tuple[dict[str, dict[str, Any]], int]:
    """Run ``jobs`` on Dask workers; hand each finished conversation to ``on_result`` in this process.

    Args:
        jobs: the conversations to run.
        config: the run's settings (``workers``, ``scheduler``, ``concurrency``, target and models).
        store_url: an explicit store URL: given to a local cluster's workers through their environment; refused
            with a remote cluster (its workers use their own ``CONVOEVAL_STORE_URL``).
        on_result: receives each finished conversation.
        on_turn: unused on workers (turn progress stays on the worker); accepted for the same signature.

    Returns:
        The models' descriptions and the number of workers, for the run's metadata.

    Raises:
        ConfigError: settings that would ship a secret, or call budgets smaller than the number of workers.
    """
    import dask  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster
    from distributed import Client, LocalCluster  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster

    roles = model_roles(jobs)
    check_before_start(config, store_url=store_url, roles=roles)
    scheduler = config.scheduler
    # Dask's statistical profiler samples every thread of a worker every 10 ms: with a thread per conversation in
    # flight it took a fifth of the workers' CPU (py-spy, benchmarks/RESULTS.md). Off on the clusters we start.
    settings_for_dask: dict[str, int | bool | str] = {"distributed.scheduler.allowed-failures": 1, "distributed.worker.profile.enabled": False}
    if fork_server.available():  # not on Windows: Dask's default spawn there
        settings_for_dask["distributed.worker.multiprocessing-method"] = "forkserver"
    with dask.config.set(settings_for_dask):
        if scheduler:
            cluster = None
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        else:
            workers = config.workers
            # A thread runs one task, and a task drives ``chunk_size`` conversations on the worker's loop.
            per_worker = max(1, math.ceil(config.concurrency / workers / chunk_size(config.concurrency, workers)))
            env = {"CONVOEVAL_STORE_URL": store_url} if store_url else {}
            env["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"  # the worker processes read their own config
            try:
                _preload_workers()
                cluster = LocalCluster(n_workers=workers, threads_per_worker=per_worker, processes=True,
                                       dashboard_address=None, env=env)
            except Exception as exc:  # noqa: BLE001 - whatever stopped the processes, said in one line
                raise ConfigError(f"could not start {workers} local worker processes: {type(exc).__name__}: "
                                  f"{exc}") from None
            client = Client(cluster)
    if scheduler:
        _check_budgets(config, workers, roles)
    settings = WorkerSettings(config, budget_share=workers)
    try:
        _stream(client, jobs, settings, window=config.concurrency + workers, on_result=on_result,
                chunk=chunk_size(config.concurrency, workers))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
            fork_server.stop()
    return _describe(config), workers


def _stream(client: Any, jobs: list[Job], settings: WorkerSettings, *, window: int,
            on_result: Callable[[Job, ConversationResult], None], chunk: int = 1) -> None:
    """Keep ``window`` conversations submitted, ``chunk`` per task; hand each result on as its task completes."""
    from distributed import as_completed  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster

    pending = iter(jobs)
    by_key: dict[str, list[Job]] = {}
    run = uuid.uuid4().hex[:8]
    completed = as_completed()

    def submit(group: list[Job]) -> None:
        future = client.submit(run_tasks, group, settings, key=f"conversations-{run}-{group[0].key}", pure=False)
        by_key[future.key] = group
        completed.add(future)

    def next_group() -> list[Job]:
        return [job for _, job in zip(range(chunk), pending, strict=False)]

    for _ in range(max(1, math.ceil(window / chunk))):
        group = next_group()
        if not group:
            break
        submit(group)
    for future in completed:
        group = by_key.pop(future.key)
        try:
            payloads = future.result()
            results = [ConversationResult.from_payload(p) for p in payloads]
        except Exception as exc:  # noqa: BLE001 - a task that failed on the cluster is its conversations' error
            reason = f"worker failed: {type(exc).__name__}: {exc}".strip()
            results = [failed_result(job.scenario, job.seed, job.trial, job.target or settings.config.target, reason)
                       for job in group]
        future.release()
        for job, result in zip(group, results, strict=True):
            on_result(job, result)
        following = next_group()
        if following:
            submit(following)
