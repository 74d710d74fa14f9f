"""One evaluation run as the CLI and the notebook do it: validated settings in, a results folder out.

``RunConfig`` holds what a user chooses (agent, seeds, trials, target, models, …) and checks it with one clear
message per mistake. ``execute_run`` loads the scenarios, builds the models and the agent once, runs every
scenario × seed × trial concurrently (streaming each finished conversation to ``<out>/runs/``), then writes the
tidy frames (Parquet and CSV), a JSON report, and returns the console summary.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval import __version__
from convoeval.agents import safe_target
from convoeval.batch import arun_batch, load_results, plan
from convoeval.conversation import RunOptions
from convoeval.llm import model_info
from convoeval.scenarios import AGENTS, ScenarioError, load_scenarios
from convoeval.store import open_store
from convoeval.summary import (
    below_threshold,
    failures_frame,
    save_json_report,
    summary_lines,
)

LOCAL_MODEL_NOTE = (
    "Made with the embedded local demo model: these numbers show that the pipeline works, "
    "not how good the agent is. Use a stronger model (OPENAI_API_KEY, OPENAI_BASE_URL or "
    "CONVOEVAL_LOCAL_MODEL) for real evaluations."
)


class RunConfigError(ValueError):
    """A setting of a run that cannot work; the message says which and why, in one line."""


@dataclass
class RunConfig:
    """What to run. Every field has a sensible default: the billing agent, offline, on the local model."""

    agent: str | None = "billing"
    scenario: str | None = None
    type: str | None = None
    seeds: list[int | None] = field(default_factory=lambda: [None])
    trials: int = 1
    target: str | None = None
    simulator_model: Any = None
    judge_model: Any = None
    judge_samples: int = 1
    fail_threshold: float | None = None
    scenarios_dir: str = "evals/scenarios"
    store_url: str | None = None
    concurrency: int = 4

    def validate(self) -> RunConfig:
        """Check every value; raise ``RunConfigError`` naming the first bad one."""
        if self.agent is not None and self.agent not in AGENTS:
            raise RunConfigError(f"agent must be one of {', '.join(AGENTS)} (or None for all), got {self.agent!r}")
        if self.type not in (None, "scripted", "conversational"):
            raise RunConfigError(f"type must be 'scripted', 'conversational' or None, got {self.type!r}")
        if not isinstance(self.trials, int) or self.trials < 1:
            raise RunConfigError(f"trials must be a positive integer, got {self.trials!r}")
        if not isinstance(self.judge_samples, int) or self.judge_samples < 1:
            raise RunConfigError(f"judge_samples must be a positive integer, got {self.judge_samples!r}")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise RunConfigError(f"concurrency must be a positive integer, got {self.concurrency!r}")
        if not self.seeds or any(s is not None and not isinstance(s, int) for s in self.seeds):
            raise RunConfigError(f"seeds must be integers (or None for each scenario's own seed), got {self.seeds!r}")
        if self.fail_threshold is not None and not (
            isinstance(self.fail_threshold, (int, float)) and 0 <= self.fail_threshold <= 10
        ):
            raise RunConfigError(f"fail_threshold must be a number from 0 to 10, got {self.fail_threshold!r}")
        if not Path(self.scenarios_dir).exists():
            raise RunConfigError(f"scenarios folder {self.scenarios_dir!r} does not exist")
        return self

    def scenarios(self) -> list[Any]:
        """The selected scenarios; none selected is an error (a typo in an id must not pass silently)."""
        try:
            found = load_scenarios(self.scenarios_dir, agent=self.agent, scenario=self.scenario, type=self.type)
        except ScenarioError as exc:
            raise RunConfigError(exc.one_line()) from None
        if not found:
            wanted = ", ".join(f"{k}={v}" for k, v in
                               (("agent", self.agent), ("scenario", self.scenario), ("type", self.type)) if v)
            raise RunConfigError(f"no scenario in {self.scenarios_dir} matches {wanted or 'the selection'}")
        return found


@dataclass
class RunOutcome:
    """What ``execute_run`` leaves: the folder, the frames, the summary lines and the exit code."""

    out_dir: Path
    frames: dict[str, pd.DataFrame]
    meta: dict[str, Any]
    lines: list[str]
    exit_code: int


def describe_model(model: Any) -> dict[str, Any]:
    """Provider, model and endpoint of a chat model (never a key), for the report's "what ran" table."""
    info = model_info(model)
    # A proxy URL may carry credentials (http://user:password@proxy/v1): record it as the webhook adapter logs URLs.
    return {"provider": info.provider, "model": info.model, "base_url": safe_target(info.base_url),
            "local_demo": info.is_local_demo}


def build_agents(config: RunConfig, scenarios: list[Any]) -> dict[str, Any]:
    """Every agent the run talks to (``config.target``, else each scenario's reference agent), built once up front.

    A target that cannot work (unknown form, a module that cannot be imported, a malformed URL) is then one
    ``RunConfigError`` before any conversation, as docs/agents-protocol.md promises, instead of one error per
    conversation and a run that "succeeds".

    Args:
        config: the run's settings; ``config.target`` None means the reference clinic agent of each scenario.
        scenarios: the selected scenarios.

    Returns:
        Agents by target string, for ``RunOptions(agents=...)``.

    Raises:
        RunConfigError: the first target that cannot be built, with ``get_agent``'s reason (URLs shown without
            credentials).

    Example:
        >>> build_agents(RunConfig(target="no_such_module:respond"), scenarios)  # doctest: +SKIP
        Traceback (most recent call last):
        RunConfigError: agent target 'no_such_module:respond': cannot import module 'no_such_module' (...)
    """
    from convoeval.agents import get_agent
    from convoeval.conversation import default_target

    targets = [config.target] if config.target else sorted({default_target(s) for s in scenarios})
    agents = {}
    for target in targets:
        try:
            agents[target] = get_agent(target)
        except ValueError as exc:
            raise RunConfigError(str(exc)) from None
    return agents


def build_models(config: RunConfig) -> tuple[Any, Any]:
    """The simulator and judge chat models, built once for the whole run."""
    from convoeval.models import get_model

    return get_model("simulator", config.simulator_model), get_model("judge", config.judge_model)


async def aexecute_run(config: RunConfig, out_dir: Path | str, *, verbose: bool = False, progress: bool = True,
                       resume: bool = True) -> RunOutcome:
    """Run ``config`` into ``out_dir``; see the module docstring. Async for notebooks (``await aexecute_run``)."""
    config.validate()
    out = Path(out_dir)
    scenarios = config.scenarios()
    agents = build_agents(config, scenarios)
    simulator, judge = build_models(config)
    jobs = plan(scenarios, seeds=config.seeds, trials=config.trials)
    started = time.time()
    with open_store(config.store_url) as store:
        options = RunOptions(target=config.target, simulator_model=simulator, judge_model=judge,
                             judge_samples=config.judge_samples, store=store,
                             verbose=print if verbose else None, agents=agents)
        batch = await arun_batch(jobs, options=options, out_dir=out, concurrency=config.concurrency,
                                 resume=resume, progress=progress)
        store_url = store.url
    frames = load_results(out)
    models = {"simulator": describe_model(simulator), "judge": describe_model(judge)}
    meta = {
        "convoeval_version": __version__,
        "config": recorded_config(config, store_url=store_url, models=models),
        "models": models,
        "local_demo": any(m["local_demo"] for m in models.values()),
        "store": store_url,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "duration_s": round(time.time() - started, 1),
        "runs_now": batch.ran,
        "runs_resumed": batch.skipped,
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
    }
    save_outputs(frames, out, meta)
    lines = summary_lines(frames, fail_threshold=config.fail_threshold)
    if meta["local_demo"]:
        lines.append(LOCAL_MODEL_NOTE)
    lines.append(f"results: {out}")
    return RunOutcome(out_dir=out, frames=frames, meta=meta, lines=lines,
                      exit_code=exit_code(frames["scores"], config.fail_threshold))


def recorded_config(config: RunConfig, *, store_url: str, models: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The run's settings as ``report.json`` records them: nothing that may hold a secret is written raw.

    Args:
        config: the run's settings.
        store_url: the store's own redacted URL (``Store.url``), recorded when the run was given one.
        models: ``describe_model`` of the simulator and the judge; their names stand for the model settings.

    Returns:
        ``asdict(config)`` with ``store_url`` redacted (a ``--store`` URL carries the database password),
        ``target`` without URL credentials, and the model names.
    """
    return {**asdict(config), "store_url": store_url if config.store_url else None,
            "target": safe_target(config.target), "simulator_model": models["simulator"]["model"],
            "judge_model": models["judge"]["model"]}


def execute_run(config: RunConfig, out_dir: Path | str, **kwargs: Any) -> RunOutcome:
    """Synchronous ``aexecute_run`` for the CLI and scripts."""
    from convoeval._aio import run_sync

    # One long-lived loop (convoeval._aio): clients cached by an earlier call stay usable (asyncio.run closes its loop).
    return run_sync(aexecute_run(config, out_dir, **kwargs))


def exit_code(scores: pd.DataFrame, fail_threshold: float | None) -> int:
    """1 when a threshold is set and any run is below it or in error; else 0."""
    if fail_threshold is None:
        return 0
    return 1 if len(below_threshold(scores, fail_threshold)) else 0


def save_outputs(frames: dict[str, pd.DataFrame], out: Path, meta: dict[str, Any]) -> None:
    """Write the tidy frames as Parquet and CSV, the analyst's failure table, and the JSON report."""
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name, df in frames.items():
        _to_parquet(df, data / f"{name}.parquet")
        df.to_csv(data / f"{name}.csv", index=False)
    failures_frame(frames).to_csv(data / "failures.csv", index=False)
    save_json_report(frames, out / "report.json", meta=_jsonable(meta))


def _to_parquet(df: pd.DataFrame, path: Path) -> None:
    # List and dict cells (bubbles, tool calls, expected values) vary in type across rows; Parquet wants one type per
    # column, so mixed object columns are stored as JSON text. The CSV and JSON outputs keep them readable too.
    import json

    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and len(out):
            out[c] = out[c].map(lambda v: None if v is None else json.dumps(v, ensure_ascii=False, default=str))
    out.to_parquet(path, index=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
