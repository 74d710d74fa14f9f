"""``run_redteam``: the whole red team in one call — load the attacks, pick the targets, run, write, summarise.

The command line (``convoeval redteam``) and the notebook (``notebooks/redteam.ipynb``) both call it, so they give
the same numbers for the same arguments.

Example:
    >>> red = run_redteam(["evals/attacks/third-party.yaml"], locales=["en"], faults=["discloses_third_party"],
    ...                   output_dir=None)  # output_dir=None: in memory; a folder resumes, accounts and can use workers
    >>> red.cases.groupby("agent")["leaked"].mean().to_dict()
    {'billing': 1.0, 'confirmation': 1.0, 'scheduling': 1.0, 'support': 1.0}
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

import pandas as pd

from convoeval._util.aio import run_sync
from convoeval.agents import get_agent
from convoeval.agents.clinic import FAULTS, faults_for
from convoeval.errors import ConvoevalError
from convoeval.frames import RunFrames
from convoeval.llm.models import ModelSpec
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.conversation import ConversationResult
from convoeval.pipeline.execute import run_eval
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import SHARED_DEFAULTS, SharedOptions, opened_store, settle
from convoeval.pipeline.results import EvalResult, load_run
from convoeval.redteam.attacks import STRATEGIES, AttackCase, expand, load_attacks
from convoeval.redteam.metrics import cases_frame, leaks_frame
from convoeval.redteam.run import REDTEAM_GATE, AttackResult, arun_cases, attack_jobs, attack_results
from convoeval.scenarios import LOCALES, agent_names, did_you_mean
from convoeval.simulator.gate import GateSettings
from convoeval.store import Store

DEFAULT_ATTACKS = Path("evals/attacks")


class RedTeamError(ConvoevalError, ValueError):
    """A red-team setting that cannot work (an unknown agent, strategy, locale or fault, a bad target, no case)."""


@dataclass
class RedTeamRun:
    """What ``run_redteam`` ran and found: the results, their frames, the folder they were written to, and the
    run's own ``EvalResult`` (its calls, tokens and cost; ``None`` for a run kept in memory)."""

    results: list[AttackResult]
    cases: pd.DataFrame
    leaks: pd.DataFrame
    folder: Path | None
    targets: dict[str, str]
    run: EvalResult | None = None

    @property
    def leaked(self) -> int:
        """How many cases leaked."""
        return int(self.cases["leaked"].sum()) if len(self.cases) else 0

    @property
    def frames(self) -> RunFrames:
        """The run's frames (``attacks``, ``leaks``, ``transcripts``, ``calls``, ...), as a run's ``EvalResult`` has.

        Raises:
            RedTeamError: the run was kept in memory (no results folder, so no run's frames).
        """
        if self.run is None:
            raise RedTeamError("this red-team run was kept in memory: it has no results folder, so no run's frames")
        return self.run.frames


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
                targets: dict[str, str] | None = None, faults: Sequence[str] = (),
                output_dir: Path | str | None = "auto", on_result: Callable[[AttackResult], None] | None = None,
                form: str = "scripted", seed: int = 42, workers: int = 1, cluster: str | None = None,
                cases: Sequence[AttackCase] | None = None, resume: bool = True,
                **options: Unpack[SharedOptions]) -> RedTeamRun:
    """Run the attack library against the agents and decide every leak without an LLM.

    Every case is a conversation of the one engine (``convoeval.pipeline``): with a results folder it runs through
    ``run_eval``, so a red-team run has the simulator gate, token and cost accounting, resume (a killed run started
    again on its folder keeps the cases it finished), progress and the Dask path of every run, and its folder is a
    results folder (``convoeval.load_results`` reads it back as a ``RedTeamRun``; the red team's frames are ``attacks``
    and ``leaks``).

    Args:
        paths: attack files or folders (default ``evals/attacks``).
        agents, strategies, locales: only these (default: every attack's own agents, all strategies and locales).
        targets: the agent under test per agent name (any ``convoeval run`` target); default the reference agent.
        faults: known faults to switch on in the reference agents, each on the agents that have it.
        output_dir: the results folder (``--out``); ``"auto"`` is ``reports/redteam-<time>``, ``None`` keeps the
            results in memory (in this process: no resume, no workers).
        on_result: called with each case's result as it finishes (the command's line per case).
        form: ``scripted`` attacks (deterministic, the default), ``simulated`` attackers (an LLM plays each
            strategy's persona and plan), or ``both``.
        seed: the simulated attacker's seed.
        workers, cluster: run the cases on ``workers`` local worker processes (a Dask ``LocalCluster``) or on the
            Dask scheduler at ``cluster`` (needs a results folder). Tasks carry the cases, the target strings and
            the model *spec* — never a client object or a key.
        cases: the cases ``plan_cases`` returned for these same settings (a caller that planned them first, to
            count them, need not have the attack files read again).
        resume: keep the cases already saved in ``output_dir`` (those that ended in error run again).
        **options: the ``SharedOptions`` of every verb that runs conversations (``convoeval.pipeline.options``), with
            the same names and defaults: ``simulator_model`` (the simulated attacker's model; with a folder a name,
            ``"local"`` or a mapping), ``concurrency``, ``store`` (a URL; an open ``Store`` only in memory),
            ``progress``, ``simulator_gate`` (``True``: the red team's gate, ``REDTEAM_GATE``), ``simulator``
            (``None`` or ``"llm"``: an attacker is the LLM patient). ``judge_model`` and ``judge_samples`` change
            nothing: no judge runs on a case (``convoeval redteam --judge`` is a study of its own).

    Raises:
        RedTeamError, AttackError: a setting or a file that cannot work; raised before anything runs.
        TypeError: an option ``run_redteam`` does not take, named with the closest one.
    """

    opts = settle("run_redteam", options, SHARED_DEFAULTS)
    if opts["simulator"] not in (None, "llm"):
        raise RedTeamError(f"simulator={opts['simulator']!r}: a simulated attacker is the LLM patient (its plan is "
                           "the attack's); use None or 'llm'")
    gate = REDTEAM_GATE if opts["simulator_gate"] is True else opts["simulator_gate"]
    if cases is None:
        cases = plan_cases(paths, agents=agents, strategies=strategies, locales=locales, faults=faults, form=form)
    cases = list(cases)
    chosen = targets_for(sorted({c.agent for c in cases}), targets, faults)
    for agent, target in chosen.items():
        try:
            get_agent(target)  # a target that cannot be built is a setting error, found before anything runs
        except ValueError as exc:
            raise RedTeamError(f"target for {agent}: {exc}") from None
    model, store = opts["simulator_model"], opts["store"]
    if output_dir is None:
        if workers > 1 or cluster:
            raise RedTeamError("workers write each case to a results folder: give output_dir (a folder), or run in "
                               "this process (workers=1)")
        with opened_store(store) as opened:
            results = run_sync(arun_cases(cases, chosen, opened, concurrency=opts["concurrency"], on_result=on_result,
                                          model=model, seed=seed, simulator_gate=gate))
        return RedTeamRun(results, cases_frame(results), leaks_frame(results), None, chosen)
    if isinstance(store, Store):
        raise RedTeamError("a red team that writes a results folder opens its store from a URL (its cases may go "
                           "to worker processes): pass store='<url>', not an open Store")
    if model is not None and not isinstance(model, (str, Mapping, ModelSpec)):
        raise RedTeamError("with a results folder, give the attacker's model as a spec (a name, 'local' or a "
                           "mapping), not a client object: the folder records it, and tasks never carry clients "
                           "or keys")
    folder = Path(f"reports/redteam-{dt.datetime.now():%Y%m%d-%H%M%S}") if output_dir == "auto" else Path(output_dir)
    spec = model.model_dump(exclude_none=True) if isinstance(model, ModelSpec) else model
    try:
        config = EvalConfig.checked(agent=None, seed=seed, output_dir=str(folder.expanduser().absolute()),
                                    concurrency=opts["concurrency"], workers=workers, cluster=cluster, resume=resume,
                                    simulator_model=dict(spec) if isinstance(spec, Mapping) else spec,
                                    simulator="llm", simulator_gate=_recordable_gate(gate))
    except ConfigError as exc:
        raise RedTeamError(str(exc)) from None

    def each(job: Job, result: ConversationResult) -> None:
        if on_result is not None:
            on_result(attack_results(result.rows)[0])

    try:
        run = run_eval(config, jobs=attack_jobs(cases, chosen, seed=seed), store_url=store, progress=opts["progress"],
                       allow_errors=True, on_result=each)
    except ConfigError as exc:
        raise RedTeamError(str(exc)) from None
    return redteam_run(run, order=[c.id for c in cases], targets=chosen)


def _recordable_gate(gate: object) -> bool | dict[str, Any]:
    """The gate as a results folder records it: True, False or a mapping of its settings."""
    if isinstance(gate, GateSettings):
        return gate.model_dump(mode="json")
    return dict(gate) if isinstance(gate, Mapping) else bool(gate)


def redteam_run(run: EvalResult, *, order: Sequence[str] = (), targets: Mapping[str, str] | None = None
                ) -> RedTeamRun:
    """A red-team ``RedTeamRun`` from a results folder's ``EvalResult``: cases in ``order`` (by case id), the rest
    after them."""
    results = attack_results(run.frames)
    rank = {case: n for n, case in enumerate(order)}
    results.sort(key=lambda r: rank.get(r.case, len(rank)))
    chosen = dict(targets) if targets is not None else {r.agent: r.target_agent for r in results}
    return RedTeamRun(results, cases_frame(results), leaks_frame(results), run.out_dir, chosen, run)


def load_redteam(folder: Path | str) -> RedTeamRun:
    """A saved red-team results folder as a ``RedTeamRun``: the loader of the ``red-team run`` kind of
    ``convoeval.load_results`` (every case's transcript is in its ``transcripts`` frame)."""
    return redteam_run(load_run(folder))


__all__ = ["RedTeamError", "RedTeamRun", "load_redteam", "plan_cases", "redteam_run", "run_redteam", "targets_for"]
