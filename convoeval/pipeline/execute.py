"""Run an ``EvalConfig`` into a results folder: the one path the CLI, the notebook, sweeps and code share.

In order, so that a mistake costs nothing: check the scenarios, the agent target, the call budgets, the models and
the store — all before the results folder is created or locked, and before any model is started — then create and
lock the folder, refuse to resume it if a conversation it would keep was made with other settings
(``convoeval.pipeline.resume``), run every scenario × seed × trial (in this process, on local worker processes, or
on a Dask cluster), write each finished conversation with its settings the moment it ends, and at the end build the
tidy frames of the conversations the run selected once, save them (Parquet, CSV, ``report.json``) and return an
``EvalResult``. A run refused after the folder was made (a Dask scheduler that
cannot be reached, a local model that cannot start) removes the folder again if it made it and nothing was saved.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

from convoeval import __version__
from convoeval import frames as F
from convoeval._util.aio import run_sync
from convoeval.agents import get_agent, safe_target
from convoeval.domains import domain_scenarios
from convoeval.fidelity.text import load_language_model_meanwhile
from convoeval.frames import SIMULATOR_FAILURE
from convoeval.llm import LLMError, model_info
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.conversation import ConversationResult, RunOptions, default_target
from convoeval.pipeline.jobs import Job, model_roles, plan
from convoeval.pipeline.progress import Mode, Progress, as_mode
from convoeval.pipeline.results import (
    LOCK_FILE,
    EvalResult,
    FolderInUseError,
    kept_conversations,
    read_frames,
    results_lock,
    write_conversation,
)
from convoeval.pipeline.resume import check_resumable, conversation_settings
from convoeval.scenarios import ScenarioError, load_scenarios
from convoeval.store import StoreError, open_store

__all__ = ["EXIT_BELOW_THRESHOLD", "EXIT_EVALUATION_ERRORS", "EXIT_OK", "EXIT_SIMULATOR_FAILURES", "EXIT_USAGE",
           "LOCAL_MODEL_NOTE", "exit_code", "run_eval", "save_outputs"]

LOCAL_MODEL_NOTE = (
    "Made with the embedded local demo model: these numbers show that the pipeline works, "
    "not how good the agent is. Use a stronger model (OPENAI_API_KEY, OPENAI_BASE_URL or "
    "CONVOEVAL_LOCAL_MODEL) for real evaluations."
)

#: Exit codes of ``convoeval run`` (documented in the README).
EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1  # a conversation scored under --fail-threshold
EXIT_USAGE = 2  # a setting that cannot work; nothing ran
EXIT_EVALUATION_ERRORS = 3  # a conversation ended in error: agent down, LLM failed after retries, unusable judge
EXIT_SIMULATOR_FAILURES = 4  # a conversation ended in simulator_failure: not evaluated, the agent is not blamed


def run_eval(
    config: EvalConfig,
    *,
    store_url: str | None = None,
    verbose: bool | Callable[[str], None] = False,
    progress: Mode | bool = "bar",
    allow_errors: bool = False,
    jobs: Sequence[Job] | None = None,
    on_result: Callable[[Job, ConversationResult], None] | None = None,
) -> EvalResult:
    """Run ``config`` and save its results; see the module docstring.

    Args:
        config: what to run (``EvalConfig.checked(...)`` builds one from plain values).
        store_url: the fixtures store (default ``CONVOEVAL_STORE_URL``, else SQLite in convoeval's state folder).
            Never part of the configuration: it may carry a password.
        verbose: print every turn, each line prefixed with its conversation (or pass a function taking lines).
        progress: ``"bar"`` (terminal), ``"lines"`` (notebooks, logs), ``"off"``; ``True``/``False`` for bar/off.
        allow_errors: conversations that end in ``error`` or ``simulator_failure`` do not make the exit code
            non-zero.
        jobs: run exactly these conversations instead of the scenarios × seeds × trials ``config`` selects (e.g.
            a candidate on a baseline's conversations, each with its patient replay; the red team's cases, each
            with its target and observer); the other settings apply.
        on_result: called with each job and its result as soon as it is saved (the red team's verdict lines).

    Returns:
        The ``EvalResult``; its data is already saved under ``result.out_dir``.

    Raises:
        ConfigError: a setting that cannot work (one line); nothing was run and no model was started. Among them,
            a resumed folder holding a conversation made with other settings (``convoeval.pipeline.resume``).
        StoreError: the store cannot be opened.

    Example (a whole evaluation: it calls the simulator's and the judges' model)::

        result = run_eval(EvalConfig.checked(agent="billing", seed=42))
        print("\\n".join(result.lines))
    """

    mode = as_mode(progress)
    if jobs is None:
        scenarios = select_scenarios(config)
        jobs = plan(scenarios, seeds=config.seeds, trials=config.trials)
    else:
        jobs = list(jobs)
        scenarios = list({id(j.scenario): j.scenario for j in jobs}.values())
        if not jobs:
            raise ConfigError("no conversation to run (the list of jobs is empty)")
    out = config.output_path()
    # Every check that can refuse the run comes before the folder exists: a refused run must not leave an empty
    # folder with a .lock behind that looks like a run (issue #22).
    agents = _preflight(config, scenarios, store_url=store_url, roles=model_roles(jobs))
    if config.distributed:
        from convoeval.pipeline.distributed import check_job_targets  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

        check_job_targets(jobs)
    settings = conversation_settings(config, jobs)  # resolves the models (no client, no server): a bad one stops here
    traces = config.traces()  # does nothing, imports nothing, unless OTEL_EXPORTER_OTLP_ENDPOINT or otel is set
    started = time.time()
    with open_store(store_url) as store, _run_folder(out):
        todo, skipped = _todo(jobs, out, config.resume, config.resimulate, settings)
        if _checks_language_here(config, todo):
            load_language_model_meanwhile()  # beside the model client's imports below (get_model)
        log = verbose if callable(verbose) else (print if verbose else None)
        report = Progress(len(todo), skipped=skipped, mode=mode, jobs=todo, judge_samples=config.judge_samples)

        def save(job: Job, result: ConversationResult) -> None:
            write_conversation(out, job.key, result.payload(), settings=settings[job.key])
            score = result.rows["scores"][0]
            report.finished(job.label, str(score["status"]), score.get("score"))
            traces.conversation(result.rows, result.calls)  # built from the saved rows, after the conversation
            if on_result is not None:
                on_result(job, result)

        try:
            if config.distributed:
                from convoeval.pipeline.distributed import run_distributed  # noqa: PLC0415 - loads Dask

                models, workers = run_distributed(todo, config, store_url=store_url, on_result=save,
                                                  on_turn=report.turn)
            else:
                models, workers = _run_here(todo, config, agents, store=store, log=log, on_result=save,
                                            on_turn=report.turn), 1
        finally:
            report.close()
            traced = traces.close()  # what was sent where, in one line ("" when off)
        store_shown = store.url  # redacted: no password
    frames = read_frames(out, settings.keys())  # this run's selection (--type, --scenario), not the whole folder
    meta = {
        "convoeval_version": __version__,
        "config": {**config.recorded(), "output_dir": str(out), "store_url": store_shown if store_url else None},
        "models": models,
        "local_demo": any(m.get("local_demo") for m in models.values()),
        "store": store_shown,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "duration_s": round(time.time() - started, 1),
        "runs_now": len(todo),
        "runs_resumed": skipped,
        "workers": workers,
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
    }
    save_outputs(frames, out, meta)
    from convoeval.pipeline.summary import summary_lines  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    lines = summary_lines(frames, fail_threshold=config.fail_threshold)
    if meta["local_demo"]:
        lines.append(LOCAL_MODEL_NOTE)
    lines.extend([traced] if traced else [])
    lines.append(f"results: {out}")
    return EvalResult(out_dir=out, frames=frames, meta=meta, lines=lines,
                      exit_code=exit_code(frames.scores, config.fail_threshold, allow_errors=allow_errors))


def select_scenarios(config: EvalConfig) -> list[Any]:
    """The scenarios ``config`` selects; a folder that is missing or selects none is a ``ConfigError``."""

    if config.domain and config.domain != "clinic":  # a task id in config.scenario (convoeval.domains)
        return domain_scenarios(config.domain, scenario=config.scenario, type=config.type, error=ConfigError)
    folder = config.scenarios_path()
    if not folder.exists():
        raise ConfigError(f"scenarios folder {folder} does not exist (set scenarios_dir, or run inside the project)")
    try:
        found = load_scenarios(folder, agent=config.agent, scenario=config.scenario, type=config.type)
    except ScenarioError as exc:
        raise ConfigError(exc.one_line()) from None
    if not found:
        wanted = ", ".join(f"{k}={v}" for k, v in
                           (("agent", config.agent), ("scenario", config.scenario), ("type", config.type)) if v)
        raise ConfigError(f"no scenario in {folder} matches {wanted or 'the selection'}")
    return found


def _preflight(config: EvalConfig, scenarios: list[Any], *, store_url: str | None,
               roles: Sequence[str] = ("simulator", "judge")) -> dict[str, Any]:
    """The checks that need no folder and no model: the agent target and, for Dask workers, what they are sent.

    Returns:
        The agents built for a run in this process (empty for a distributed one: its workers build their own).

    Raises:
        ConfigError: a target that cannot be built, a secret that would travel to workers, a ``store_url`` with a
            remote cluster, or call budgets smaller than the number of local workers.
    """
    if not config.distributed:
        return build_agents(config.target, scenarios)
    from convoeval.pipeline.distributed import check_before_start  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    if config.scheduler is None:
        # Local workers share this process's environment: a target that cannot be built here cannot there either.
        # A remote cluster's workers may have modules this machine lacks, so their target is theirs to check.
        build_agents(config.target, scenarios)
    check_before_start(config, store_url=store_url, roles=roles)
    return {}


def check_writable(out: Path) -> None:
    """Create ``out`` and check a file can be written in it, before any conversation spends a model call."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(f"output folder {out} cannot be written: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _run_folder(out: Path) -> Iterator[None]:
    """Create ``out`` (checked writable) and hold its lock for the run; remove it again if the run is refused.

    A refusal that can only come after the folder exists (a Dask scheduler that cannot be reached, a local model
    that cannot start) must not leave an empty folder that looks like a run either. Only a folder this call created
    is removed, only while nothing but the lock file is in it, and while the lock is still held, so a resumed or
    shared folder, a saved conversation and another run's lock are never touched.

    Raises:
        ConfigError: the folder cannot be written, or a live run holds it.
    """
    # Imported here like open_store in run_eval: these packages pull in LangChain and SQLAlchemy.

    made = [p for p in (out, *out.parents) if not p.exists()]  # this folder and the parents it brings
    check_writable(out)
    try:
        with results_lock(out):
            try:
                yield
            except (ConfigError, LLMError, StoreError):
                if made:
                    with contextlib.suppress(OSError):  # a file appeared meanwhile: the folder stays
                        if {p.name for p in out.iterdir()} <= {LOCK_FILE}:
                            (out / LOCK_FILE).unlink()
                            for folder in made:
                                folder.rmdir()  # only empty ones go; a parent another run filled stays
                raise
    except FolderInUseError as exc:
        raise ConfigError(str(exc)) from None


def _todo(jobs: list[Job], out: Path, resume: bool, resimulate: int,
          settings: dict[str, dict[str, Any]]) -> tuple[list[Job], int]:
    """The jobs still to run: without ``resume`` all of them; with it, all but those saved without an error (and
    but simulator failures saved with fewer attempts than ``resimulate`` asks now).

    Raises:
        ConfigError: a conversation it would keep was saved with other ``settings`` (``resume.check_resumable``).
    """
    if not resume:
        return jobs, 0
    done = kept_conversations(out, keys=settings.keys(), resimulate=resimulate)
    check_resumable(out, done, settings)
    todo = [j for j in jobs if j.key not in done]
    return todo, len(jobs) - len(todo)


def build_agents(target: str | None, scenarios: list[Any]) -> dict[str, Any]:
    """Every agent the run talks to (``target``, else each scenario's reference agent), built once up front.

    A target that cannot work (unknown form, a module that cannot be imported, a malformed URL) is then one
    ``ConfigError`` before any conversation, instead of one error per conversation.

    Raises:
        ConfigError: the first target that cannot be built, with ``get_agent``'s reason (URLs without credentials).
    """

    targets = [target] if target else sorted({default_target(s) for s in scenarios})
    agents = {}
    for name in targets:
        try:
            agents[name] = get_agent(name)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return agents


def describe_model(model: Any) -> dict[str, Any]:
    """Provider, model and endpoint of a chat model (never a key), for the report's "what ran" table."""

    info = model_info(model)
    # A proxy URL may carry credentials (http://user:password@proxy/v1): recorded without them.
    return {"provider": info.provider, "model": info.model, "base_url": safe_target(info.base_url),
            "local_demo": info.is_local_demo}


def _run_here(todo: list[Job], config: EvalConfig, agents: dict[str, Any], *, store: Any,
              log: Callable[[str], None] | None, on_result: Callable[[Job, ConversationResult], None],
              on_turn: Callable[[str, int], None]) -> dict[str, dict[str, Any]]:
    """Run ``todo`` on convoeval's event loop in this process (``agents`` from ``build_agents``); returns the models'
    descriptions."""
    from convoeval.pipeline.local import arun_jobs  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    options = RunOptions.from_config(config, store=store, verbose=log, agents=agents, on_turn=on_turn)
    if todo:
        load_frames_meanwhile()
        run_sync(arun_jobs(todo, options, concurrency=config.concurrency, on_result=on_result))
    return {"simulator": describe_model(options.simulator_model), "judge": describe_model(options.judge_model)}


def _checks_language_here(config: EvalConfig, jobs: Sequence[Job]) -> bool:
    """Whether conversations in this process will check the patient's language (the gate's ``wrong_language``)."""
    gate = config.gate_settings()
    return (not config.distributed and gate is not None and "wrong_language" in gate.checks
            and any(job.scenario.type == "conversational" for job in jobs))


def load_frames_meanwhile() -> threading.Thread:
    """Import pandas and PyArrow on a background thread while the first conversations wait on their models.

    The end of every run builds its frames and Parquet files with them (~1.5 s of CPU to import on this machine):
    imported while the event loop mostly waits, that time is off the run's wall clock. Nothing is built with them
    here, so results are the same either way.
    """

    def load() -> None:
        import pandas  # noqa: F401, PLC0415 - on this thread, while the loop waits (see the docstring)
        import pyarrow  # noqa: F401, PLC0415 - as above: the Parquet files need it

    thread = threading.Thread(target=load, name="convoeval-load-frames", daemon=True)
    thread.start()
    return thread


def exit_code(scores: pd.DataFrame, fail_threshold: float | None, *, allow_errors: bool = False) -> int:
    """The CLI's exit code for a run's scores, the most serious first.

    ``EXIT_EVALUATION_ERRORS`` when a conversation ended in error; ``EXIT_BELOW_THRESHOLD`` when a threshold is set
    and one of the agent's scores is under it; ``EXIT_SIMULATOR_FAILURES`` when a conversation ended in
    ``simulator_failure`` (it was not evaluated, so the run cannot vouch for the agent, nor blame it); else
    ``EXIT_OK``. ``allow_errors`` lets errors and simulator failures through.
    """

    statuses = set(scores["status"].dropna()) if len(scores) else set()
    if "error" in statuses and not allow_errors:
        return EXIT_EVALUATION_ERRORS
    if fail_threshold is not None:
        from convoeval.pipeline.summary import below_threshold  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

        if len(below_threshold(scores, fail_threshold)):
            return EXIT_BELOW_THRESHOLD
    if SIMULATOR_FAILURE in statuses and not allow_errors:
        return EXIT_SIMULATOR_FAILURES
    return EXIT_OK


def save_outputs(frames: RunFrames, out: Path, meta: dict[str, Any]) -> None:
    """Write the tidy frames as Parquet and CSV, the analyst's failure table, and the JSON report."""
    from convoeval.pipeline.summary import failures_frame, save_json_report  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name, df in frames.items():  # every frame, by its file name
        F.to_parquet(df, data / f"{name}.parquet")
        F.to_spreadsheet_csv(df, data / f"{name}.csv")  # transcripts are the attacker's text: no formula runs
    F.to_spreadsheet_csv(failures_frame(frames), data / "failures.csv")
    save_json_report(frames, out / "report.json", meta=_jsonable(meta))


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
