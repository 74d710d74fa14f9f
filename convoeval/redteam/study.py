"""``run_redteam``: the whole red team in one call — load the attacks, pick the targets, run, write, summarise.

The command line (``convoeval redteam``) and the notebook (``notebooks/redteam.ipynb``) both call it, so they give
the same numbers for the same arguments.

Example:
    >>> red = run_redteam(agents=["billing"], locales=["en"], faults=["discloses_third_party"])
    >>> red.cases.groupby("strategy")["leaked"].mean()
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval._aio import run_sync
from convoeval.agents import get_agent
from convoeval.agents.clinic import FAULTS, faults_for
from convoeval.llm.models import ModelLike, as_chat_model
from convoeval.redteam.attacks import STRATEGIES, AttackCase, expand, load_attacks
from convoeval.redteam.metrics import cases_frame, leaks_frame, write_results
from convoeval.redteam.run import AttackResult, arun_cases
from convoeval.scenarios import LOCALES, agent_names, did_you_mean
from convoeval.store import Store, open_store

DEFAULT_ATTACKS = Path("evals/attacks")


class RedTeamError(ValueError):
    """A red-team setting that cannot work (an unknown agent, strategy, locale or fault, a bad target, no case)."""


@dataclass
class RedTeamRun:
    """What ``run_redteam`` ran and found: the results, their frames, and the folder they were written to."""

    results: list[AttackResult]
    cases: pd.DataFrame
    leaks: pd.DataFrame
    folder: Path | None
    targets: dict[str, str]

    @property
    def leaked(self) -> int:
        """How many cases leaked."""
        return int(self.cases["leaked"].sum()) if len(self.cases) else 0


def targets_for(agents: Sequence[str], explicit: dict[str, str] | None = None,
                faults: Sequence[str] = ()) -> dict[str, str]:
    """The target string per agent: ``explicit[agent]``, else the reference agent with the faults it has."""

    targets = dict(explicit or {})
    for agent in agents:
        if agent not in targets:
            mine = [f for f in faults if f in {k.name for k in faults_for(agent)}]
            targets[agent] = f"clinic:{agent}" + (f"?faults={','.join(mine)}" if mine else "")
    return targets


def plan_cases(paths: Sequence[Path | str] | None = None, *, agents: Sequence[str] | None = None,
               strategies: Sequence[str] | None = None, locales: Sequence[str] | None = None,
               faults: Sequence[str] = (), form: str = "scripted") -> list[AttackCase]:
    """The cases a red team would run, every setting checked first.

    Raises:
        RedTeamError: an unknown agent, strategy, locale, fault or form, or no case left.
        AttackError: an attack file that cannot be used (one line naming file and field).
    """

    for values, known, what in ((agents, agent_names(), "agent"), (strategies, STRATEGIES, "strategy"),
                                (locales, LOCALES, "locale"),
                                (faults, sorted({k.split(":", 1)[1] for k in FAULTS}), "fault")):
        unknown = [v for v in values or () if v not in known]
        if unknown:
            raise RedTeamError(f"unknown {what} {unknown[0]!r}{did_you_mean(unknown[0], known)}; "
                               f"expected one of {', '.join(known)}")
    if form not in ("scripted", "simulated", "both"):
        raise RedTeamError(f"unknown form {form!r}; expected scripted, simulated or both")
    attacks = load_attacks(paths or [DEFAULT_ATTACKS])
    cases = expand(attacks, agents=agents, locales=locales, strategies=strategies, form=form)
    if not cases:
        covered = sorted({agent for _, attack in attacks for agent in attack.agents})
        uncovered = [a for a in agents or () if a not in covered]
        if uncovered:  # the usual reason: say which agents the attacks are written for
            raise RedTeamError(f"no attack covers {', '.join(uncovered)}: the attacks cover {', '.join(covered)} "
                               "(an attack file's agents: list)")
        raise RedTeamError("no attack case matches the agents, strategies and locales given")
    return cases


def run_redteam(paths: Sequence[Path | str] | None = None, *, agents: Sequence[str] | None = None,
                strategies: Sequence[str] | None = None, locales: Sequence[str] | None = None,
                targets: dict[str, str] | None = None, faults: Sequence[str] = (), store: Any = None,
                out: Path | str | None = "auto", concurrency: int = 4,
                on_result: Callable[[AttackResult], None] | None = None, form: str = "scripted",
                model: ModelLike = None, seed: int = 42, workers: int = 1, cluster: str | None = None,
                cases: Sequence[AttackCase] | None = None) -> RedTeamRun:
    """Run the attack library against the agents and decide every leak without an LLM.

    Args:
        paths: attack files or folders (default ``evals/attacks``).
        agents, strategies, locales: only these (default: every attack's own agents, all strategies and locales).
        targets: the agent under test per agent name (any ``convoeval run`` target); default the reference agent.
        faults: known faults to switch on in the reference agents, each on the agents that have it.
        store: a ``Store`` or a store URL (default: ``CONVOEVAL_STORE_URL`` or the local SQLite file).
        out: results folder; ``"auto"`` is ``reports/redteam-<time>``, ``None`` writes nothing.
        concurrency: cases in flight at once.
        on_result: called with each case's result as it finishes (progress).
        form: ``scripted`` attacks (deterministic, the default), ``simulated`` attackers (an LLM plays each
            strategy's persona and plan), or ``both``.
        model, seed: the simulated attacker's model (any ``model=`` of the verbs; default the simulator model)
            and seed (seeded calls are deterministic and cached like the simulator's).
        cases: the cases ``plan_cases`` returned for these same settings (a caller that planned them first, to
            count them, need not have the attack files read again).
        workers, cluster: run the cases on ``workers`` local worker processes (a Dask ``LocalCluster``) or on the
            Dask scheduler at ``cluster``. Tasks carry the cases, the target strings and the model *spec* — never a
            client object or a key: workers build their own from their environment, and a remote cluster's workers
            use their own ``CONVOEVAL_STORE_URL``.

    Raises:
        RedTeamError, AttackError: a setting or a file that cannot work; raised before anything runs.
    """

    if cases is None:
        cases = plan_cases(paths, agents=agents, strategies=strategies, locales=locales, faults=faults, form=form)
    cases = list(cases)
    chosen = targets_for(sorted({c.agent for c in cases}), targets, faults)

    for agent, target in chosen.items():
        try:
            get_agent(target)  # a target that cannot be built is a setting error, found before anything runs
        except ValueError as exc:
            raise RedTeamError(f"target for {agent}: {exc}") from None
    if workers > 1 or cluster:
        if model is not None and not isinstance(model, (str, dict)):
            raise RedTeamError("with workers, give the attacker's model as a spec (a name, 'local' or a mapping), "
                               "not a client object: tasks never carry clients or keys")
        if cluster and isinstance(store, str):
            raise RedTeamError("with a remote cluster the workers use the store of their own CONVOEVAL_STORE_URL; "
                               "set it there instead of passing a store")
        if store is not None and not isinstance(store, str):
            raise RedTeamError("with workers, give the store as a URL (each worker opens its own)")
        results = _run_on_dask(cases, chosen, store_url=store, model=model, seed=seed, workers=workers,
                               cluster=cluster, concurrency=concurrency, on_result=on_result)
        return _finish(results, out, chosen)
    if any(c.form == "simulated" for c in cases):

        try:
            model = as_chat_model("simulator", model)
        except ValueError as exc:  # a model spec that cannot work: said before anything runs
            raise RedTeamError(f"the simulated attacker's model: {str(exc).splitlines()[0]}") from None
    opened = store if isinstance(store, Store) else open_store(store)
    try:
        results = run_sync(arun_cases(cases, chosen, opened, concurrency=concurrency, on_result=on_result,
                                      model=model, seed=seed))
    finally:
        if opened is not store:
            opened.close()
    return _finish(results, out, chosen)


def _finish(results: list[AttackResult], out: Path | str | None, targets: dict[str, str]) -> RedTeamRun:
    folder = None
    if out is not None:
        folder = write_results(results, Path(f"reports/redteam-{dt.datetime.now():%Y%m%d-%H%M%S}")
                               if out == "auto" else Path(out))
    return RedTeamRun(results, cases_frame(results), leaks_frame(results), folder, targets)


def run_chunk(cases: list[AttackCase], targets: dict[str, str], model: Any, seed: int,
              concurrency: int) -> list[AttackResult]:
    """A worker's task: run ``cases`` on the worker's own store (``CONVOEVAL_STORE_URL``) and model clients."""

    if any(c.form == "simulated" for c in cases):

        model = as_chat_model("simulator", model)
    store = open_store(None)
    try:
        return run_sync(arun_cases(cases, targets, store, concurrency=concurrency, model=model, seed=seed))
    finally:
        store.close()


def _run_on_dask(cases: list[AttackCase], targets: dict[str, str], *, store_url: str | None, model: Any, seed: int,
                 workers: int, cluster: str | None, concurrency: int,
                 on_result: Callable[[AttackResult], None] | None) -> list[AttackResult]:
    """Run the cases in chunks on Dask workers, in the given order; ``on_result`` as each chunk comes back."""
    from distributed import Client, LocalCluster, as_completed  # noqa: PLC0415 - Dask loads only with workers > 1 or a cluster

    local = None
    try:
        if cluster:
            client = Client(cluster, timeout="10s")
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        else:
            env = {"CONVOEVAL_STORE_URL": store_url} if store_url else {}
            local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                 env=env)
            client = Client(local)
    except (OSError, TimeoutError) as exc:
        raise RedTeamError(f"cannot start or reach the Dask cluster: {exc}") from None
    size = max(1, -(-len(cases) // (workers * 2)))  # two chunks per worker: the last ones do not wait alone
    chunks = [cases[i:i + size] for i in range(0, len(cases), size)]
    try:
        futures = [client.submit(run_chunk, chunk, targets, model, seed, max(1, concurrency // workers),
                                 key=f"redteam-chunk-{n}-{seed}", pure=False) for n, chunk in enumerate(chunks)]
        done: dict[str, list[AttackResult]] = {}
        for future in as_completed(futures):
            key = str(future.key)  # the str given to submit (distributed types a key as any Key)
            done[key] = future.result()
            for result in done[key]:
                if on_result is not None:
                    on_result(result)
        return [r for f in futures for r in done[str(f.key)]]
    finally:
        client.close()
        if local is not None:
            local.close()


__all__ = ["RedTeamError", "RedTeamRun", "plan_cases", "run_redteam", "targets_for"]
