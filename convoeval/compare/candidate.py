"""Run a candidate now, on exactly the baseline's conversations: the same scenarios × seeds × trials.

With ``replay=True`` each candidate conversation first receives the baseline's recorded patient messages, turn by
turn, as long as the candidate's replies stay equivalent to the baseline's (``convoeval.pipeline.replay``); from
the first reply that differs the simulator takes over with the same seed. The candidate's run rows record where
that happened (``divergence_turn``), so differences come from the agent rather than from the simulator's
randomness. Scripted scenarios need no replay: their patient lines are fixed.

Unless told otherwise, the candidate is simulated and judged with the baseline's recorded models and judge samples
(its ``report.json``): a comparison whose judge changed measures the judge too. ``run_candidate`` takes the
``SharedOptions`` of every verb that runs conversations (``convoeval.pipeline.options``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

import pandas as pd

from convoeval._util.paths import default_scenarios_dir, project_root
from convoeval.compare.pairing import CompareError, Side, SideSource, load_side
from convoeval.llm.models import ModelSpec
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.execute import build_agents, run_eval
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import SHARED_DEFAULTS, SharedOptions, settle
from convoeval.pipeline.replay import replay_from_transcript
from convoeval.pipeline.results import EvalResult
from convoeval.scenarios import is_conversational, load_scenarios
from convoeval.simulator.gate import GateSettings
from convoeval.store import Store

__all__ = ["baseline_target", "candidate_jobs", "run_candidate"]

#: Settings a candidate takes from the baseline's ``report.json`` unless given.
INHERITED = ("simulator_model", "judge_model", "judge_samples", "scenarios_dir", "concurrency")


def candidate_jobs(baseline: Side, *, scenarios_dir: Path | str | None = None, replay: bool = False) -> list[Job]:
    """One job per baseline conversation (scenario, seed, trial), with its patient replay when ``replay``.

    Args:
        baseline: the baseline side (already scoped).
        scenarios_dir: where the scenario files are (default: the project's ``evals/scenarios``).
        replay: replay each conversational baseline conversation's patient (until the first divergent reply).

    Returns:
        The jobs in scenario, seed, trial order; a key that occurs twice in the baseline is run once.

    Raises:
        CompareError: a baseline scenario that is not in the scenario folder (it was renamed or removed).
    """

    folder = Path(scenarios_dir) if scenarios_dir is not None else default_scenarios_dir()
    by_id = {s.id: s for s in load_scenarios(folder)}
    runs = baseline.runs.sort_values(["scenario", "seed", "trial"], na_position="first")
    missing = sorted(set(runs["scenario"].dropna()) - set(by_id))
    if missing:
        raise CompareError(f"the baseline's scenario(s) {', '.join(missing)} are not in {folder}; the candidate "
                           "must run the same scenarios (set scenarios_dir)")
    transcripts = baseline.frames.transcripts
    by_run = dict(tuple(transcripts.groupby("run_id"))) if replay and len(transcripts) else {}
    jobs: dict[str, Job] = {}
    for row in runs.itertuples():
        scenario = by_id[row.scenario]
        seed = None if pd.isna(row.seed) else int(row.seed)
        recording = None
        rows = by_run.get(row.run_id)
        if replay and is_conversational(scenario) and rows is not None and (rows["role"] == "patient").any():
            recording = replay_from_transcript(rows.to_dict("records"))
        job = Job(scenario, seed, int(row.trial), recording)
        jobs.setdefault(job.key, job)
    return list(jobs.values())


def baseline_target(baseline: Side) -> str:
    """The baseline's one agent under test (for an A/A comparison).

    Raises:
        CompareError: the baseline ran several targets (or none is recorded).
    """
    targets = baseline.targets
    if len(targets) != 1:
        raise CompareError(f"an A/A comparison needs a baseline of one target, found {len(targets)}: "
                           f"{', '.join(targets) or 'none'}; give --candidate-target instead")
    return targets[0]


def run_candidate(
    baseline: SideSource,
    target: str,
    *,
    out: Path | str | None = None,
    replay: bool = False,
    settings: Mapping[str, Any] | None = None,
    verbose: bool = False,
    **options: Unpack[SharedOptions],
) -> EvalResult:
    """Run ``target`` on the baseline's scenarios × seeds × trials into a results folder of its own.

    Args:
        baseline: the baseline (a results folder, an ``EvalResult`` or a ``Side``; scope it with ``Side.select``).
        target: the candidate agent (``clinic:billing?faults=wrong_amount``, ``my_bot.v2:respond``, a URL …).
        out: the candidate's results folder (default ``reports/candidate-<target>-<time>-<id>``). A folder holding
            conversations of another target is refused; one holding this target's resumes.
        replay: replay the baseline's patient until the candidate's first divergent reply.
        settings: other ``EvalConfig`` settings (workers, cluster, resimulate …); by default the baseline's recorded
            scenario folder.
        verbose: print every turn.
        **options: the ``SharedOptions`` of every verb that runs conversations (``convoeval.pipeline.options``):
            simulator_model, judge_model, judge_samples, concurrency, store, progress, simulator_gate. One not given
            (or given as ``None``) is the baseline's recorded one where it recorded it (models, judge samples,
            concurrency), else its default in ``SHARED_DEFAULTS``. The run is recorded in the candidate's folder and
            may go to worker processes, so the models are names, ``"local"``, mappings or ``ModelSpec`` (not chat
            model objects) and the store is a URL (not an open ``Store``).

    Returns:
        The candidate's ``EvalResult`` (its folder is a normal results folder: ``convoeval compare`` reads it).

    Raises:
        ConfigError: a setting or target that cannot work (nothing ran).
        CompareError: the baseline cannot be read, names unknown scenarios, or ``out`` holds another target.
        TypeError: an option ``run_candidate`` does not take, or a shared option passed in ``settings``, named.

    Example (runs the candidate, so not run as a doctest)::

        candidate = run_candidate("reports/v1", "clinic:billing?faults=wrong_amount", replay=True)
    """
    opts = settle("run_candidate", options, SHARED_DEFAULTS)
    if shared := sorted(set(settings or {}) & set(SHARED_DEFAULTS)):
        raise TypeError(f"run_candidate(): pass {', '.join(shared)} as keyword argument(s), not in settings")
    side = load_side(baseline, label="baseline")
    recorded = (side.meta.get("config") or {})
    values = {k: recorded[k] for k in INHERITED if recorded.get(k) is not None}
    values.update({k: v for k, v in (settings or {}).items() if v is not None})
    values.update(_recordable(options))
    store = opts["store"]
    if isinstance(store, Store):
        raise ConfigError("run_candidate opens its store from a URL (the run may go to worker processes): pass "
                          "store='<url>', not an open Store")
    folder = Path(out).expanduser().absolute() if out is not None else _default_folder(target)
    config = EvalConfig.checked(values, agent=None, seed=None, target=target, output_dir=str(folder), resume=True)
    build_agents(target, [])  # a target that cannot work is one line here, before any folder or progress bar
    _check_folder(folder, config.recorded()["target"])
    jobs = candidate_jobs(side, scenarios_dir=config.scenarios_path(), replay=replay)
    return run_eval(config, jobs=jobs, store_url=store, progress=opts["progress"], verbose=verbose,
                    allow_errors=True)


def _recordable(options: SharedOptions) -> dict[str, Any]:
    """The shared options given (not ``None``) that are ``EvalConfig`` settings, as the values a results folder
    records: a model as a name or mapping, the gate as True, False or a mapping."""
    values: dict[str, Any] = {}
    for name in ("simulator_model", "judge_model"):
        model = options.get(name)
        if isinstance(model, ModelSpec):
            model = model.model_dump(exclude_none=True)
        if model is not None and not isinstance(model, (str, Mapping)):
            raise ConfigError(f"run_candidate records its models in the results folder: give {name} as a name, "
                              f"'local' or a mapping of settings, not a {type(model).__name__} object")
        if model is not None:
            values[name] = dict(model) if isinstance(model, Mapping) else model
    gate = options.get("simulator_gate")
    if gate is not None:
        values["simulator_gate"] = gate.model_dump() if isinstance(gate, GateSettings) else (
            gate if isinstance(gate, bool) else dict(gate))
    for name in ("judge_samples", "concurrency"):
        if (value := options.get(name)) is not None:
            values[name] = value
    return values


def _default_folder(target: str) -> Path:
    from convoeval.agreement.faults import target_folder  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return project_root() / "reports" / f"candidate-{target_folder(target)}-{stamp}-{secrets.token_hex(2)}"


def _check_folder(folder: Path, target: str) -> None:
    """Refuse a folder whose saved conversations another target made: resuming there would mix two agents."""
    if not any(folder.glob("runs/*.json")):
        return
    others = [t for t in load_side(folder).targets if t != target]
    if others:
        raise CompareError(f"{folder} holds conversations of {', '.join(others)}, not {target}; choose another "
                           "folder for the candidate")
