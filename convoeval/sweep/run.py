"""Sweeps: the run notebook executed by papermill for every agent × seed, then an index over all of them.

Layout of a sweep folder::

    reports/<sweep>/
      sweep.json                 the settings (trials, extra parameters); a re-run must use the same ones
      <agent>-s<seed>/           one combination: the executed run.ipynb, report.html, data/, runs/, report.json
        done.json                written LAST, once the notebook finished: the combination is complete
        failed.json              the one-line reason the last attempt failed (removed when it succeeds)
      data/*.csv                 the aggregated tables
      index.html                 the index report

A combination with ``done.json`` is skipped when the sweep is started again, and a combination interrupted midway
resumes inside its own folder (its finished conversations are kept by ``convoeval.pipeline``), so a killed sweep
re-run finishes only the rest. A failed combination is reported and the sweep goes on. Every LLM call goes through
the response cache, so re-running a sweep into a new folder replays the calls instead of making them again.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from convoeval._util.paths import project_root
from convoeval.errors import ConvoevalError
from convoeval.frames import RunFrames
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.results import load_folders
from convoeval.report.index import CombinationRow, write_index
from convoeval.scenarios import agent_names, did_you_mean

__all__ = ["DONE_MARKER", "Combination", "SweepError", "SweepResult", "default_sweep_dir", "load_sweep",
           "papermill_executor", "run_sweep"]

DONE_MARKER = "done.json"
FAILED_MARKER = "failed.json"
SETTINGS_FILE = "sweep.json"
NOTEBOOK = Path("notebooks") / "run.ipynb"
#: A combination's folder name (``Combination.name``: ``billing-s2``).
_COMBINATION = re.compile(r"^(?P<agent>.+)-s(?P<seed>-?\d+)$")
#: Parameters the sweep sets per combination; the others may be passed through ``parameters``.
_PER_COMBINATION = ("agent", "seed", "output_dir")

#: ``executor(notebook, output_notebook, parameters, cwd)`` runs one combination; raises when it fails.
Executor = Callable[[Path, Path, dict[str, Any], Path], None]


class SweepError(ConvoevalError, ValueError):
    """A sweep that cannot start (bad agents, seeds, parameters, or a folder holding another sweep)."""


@dataclass(frozen=True)
class Combination:
    """One agent × seed of a sweep."""

    agent: str
    seed: int

    @property
    def name(self) -> str:
        """The combination's folder name, e.g. ``billing-s2``."""
        return f"{self.agent}-s{self.seed}"


@dataclass
class SweepResult:
    """What a sweep did: per combination done / skipped / failed, the folder and the index page."""

    folder: Path
    combinations: list[CombinationRow] = field(default_factory=list)
    index: Path | None = None

    @property
    def failed(self) -> list[CombinationRow]:
        return [c for c in self.combinations if c.status == "failed"]

    @property
    def frames(self) -> RunFrames:
        """Every finished combination's conversations as one ``RunFrames`` (read from their folders)."""
        return load_folders([c.folder for c in self.combinations if c.status in ("done", "skipped")])

    def lines(self) -> list[str]:
        """One line per combination, then the totals and where the index is."""
        out = []
        for c in self.combinations:
            took = f" in {c.seconds:.0f} s" if c.seconds is not None else ""
            why = f": {c.error}" if c.error else ""
            label = "skipped (already done)" if c.status == "skipped" else c.status
            out.append(f"  {c.name:<24} {label}{took}{why}")
        counts = {s: sum(c.status == s for c in self.combinations) for s in ("done", "skipped", "failed")}
        out.append(f"{len(self.combinations)} combination(s): {counts['done']} done now, {counts['skipped']} already "
                   f"done, {counts['failed']} failed")
        if self.index is not None:
            out.append(f"index: {self.index}")
        return out


def default_sweep_dir(agents: Sequence[str], seeds: Sequence[int], trials: int, root: Path | None = None) -> Path:
    """``reports/sweep-<agents>-s<seeds>-t<trials>``: the same command finds the same folder, so it resumes."""
    root = root or project_root()
    name = f"sweep-{'-'.join(agents)}-s{'-'.join(map(str, seeds))}-t{trials}"
    return root / "reports" / name


def papermill_executor(notebook: Path, output: Path, parameters: dict[str, Any], cwd: Path) -> None:
    """Execute ``notebook`` with papermill into ``output`` (the kernel runs in ``cwd``)."""
    import papermill  # noqa: PLC0415 - papermill loads only when a notebook runs

    papermill.execute_notebook(str(notebook), str(output), parameters=parameters, cwd=str(cwd),
                               progress_bar=False, log_output=False)


def run_sweep(
    agents: Sequence[str],
    seeds: Sequence[int],
    *,
    trials: int = 1,
    out: Path | str | None = None,
    parameters: Mapping[str, Any] | None = None,
    notebook: Path | str | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    rerun: bool = False,
) -> SweepResult:
    """Run the notebook for every agent × seed, continue past failures, skip finished combinations, write the index.

    Args:
        agents: agent names, e.g. ``["billing", "scheduling"]``.
        seeds: simulator seeds, e.g. ``[1, 2, 3]``.
        trials: repetitions of each scenario per combination (pass^k needs more than one conversation).
        out: the sweep folder (default ``default_sweep_dir``: re-running the same command resumes).
        parameters: other notebook parameters for every combination (``type``, ``judge_samples``, models …).
        notebook: the notebook to run (default ``notebooks/run.ipynb`` of the project).
        executor: runs one combination (default ``papermill_executor``); tests pass a fake.
        progress: show a progress bar over combinations.
        rerun: run combinations again even when they are done.

    Returns:
        A ``SweepResult``; ``result.failed`` lists the combinations that failed, with their reasons.

    Raises:
        SweepError: bad agents, seeds or parameters (one line), or the folder holds a sweep with other settings.

    Example (runs the notebook four times, so not run as a doctest)::

        result = run_sweep(["billing", "scheduling"], [1, 2], trials=2)
        print("\\n".join(result.lines()))
    """
    root = project_root()
    notebook = Path(notebook) if notebook else root / NOTEBOOK
    combos = _plan(agents, seeds)
    extra = dict(parameters or {})
    _check(notebook, combos, trials, extra)
    folder = Path(out) if out else default_sweep_dir(agents, seeds, trials, root)
    settings = {"trials": trials, "parameters": extra}
    _claim(folder, settings)
    executor = executor or papermill_executor
    result = SweepResult(folder=folder)
    bar = tqdm(combos, desc="sweep", unit="combination", disable=not progress)
    try:
        for combo in bar:
            bar.set_postfix_str(combo.name, refresh=True)
            result.combinations.append(_run_one(combo, folder, notebook, root, trials, extra, executor, rerun))
    finally:
        bar.close()
    result.index = write_index(folder, result.combinations, settings={"agents": ",".join(agents),
                                                                      "seeds": ",".join(map(str, seeds)),
                                                                      "trials": trials, **extra})
    return result


def load_sweep(folder: Path | str) -> SweepResult:
    """A sweep folder read back: each combination (``<agent>-s<seed>/``) done, failed (with its reason) or pending,
    and the index page. The loader of the ``sweep`` kind of ``convoeval.load_results``; ``result.frames`` reads the
    finished combinations' conversations.

    Raises:
        FileNotFoundError: ``folder`` holds no sweep (no ``sweep.json``).
    """
    folder = Path(folder)
    if not (folder / SETTINGS_FILE).is_file():
        raise FileNotFoundError(f"{folder} holds no sweep (no {SETTINGS_FILE})")
    rows = []
    for where in sorted(p for p in folder.iterdir() if p.is_dir() and _COMBINATION.match(p.name)):
        match = _COMBINATION.match(where.name)
        assert match is not None  # the filter above
        row = CombinationRow(name=where.name, agent=match["agent"], seed=int(match["seed"]), folder=where.resolve(),
                             status="pending")
        if (where / DONE_MARKER).is_file():
            done = json.loads((where / DONE_MARKER).read_text(encoding="utf-8"))
            row.status, row.seconds = "done", done.get("seconds")
        elif (where / FAILED_MARKER).is_file():
            row.status = "failed"
            row.error = json.loads((where / FAILED_MARKER).read_text(encoding="utf-8")).get("error")
        rows.append(row)
    index = folder / "index.html"
    return SweepResult(folder=folder, combinations=rows, index=index if index.is_file() else None)


def _plan(agents: Sequence[str], seeds: Sequence[int]) -> list[Combination]:
    if not agents:
        raise SweepError("give at least one agent (--agent billing,scheduling)")
    if not seeds or any(not isinstance(s, int) or isinstance(s, bool) for s in seeds):
        raise SweepError(f"seeds must be integers, got {list(seeds)!r}")
    if len(set(agents)) != len(agents) or len(set(seeds)) != len(seeds):
        raise SweepError("agents and seeds must not repeat")
    return [Combination(a, s) for a in agents for s in seeds]


def _check(notebook: Path, combos: Sequence[Combination], trials: int, extra: Mapping[str, Any]) -> None:
    """Check names and values before any kernel starts (papermill would only warn about an unknown name)."""
    import papermill  # noqa: PLC0415 - papermill loads only when a notebook runs

    if not notebook.exists():
        raise SweepError(f"notebook {notebook} not found")
    clash = sorted(set(extra) & {*_PER_COMBINATION, "trials"})
    if clash:
        raise SweepError(f"{', '.join(clash)} are set by the sweep itself; use --agent/--seed/--trials/--out")

    bad = [c.agent for c in combos if c.agent not in agent_names()]
    if bad:
        named = ", ".join(a + did_you_mean(a, agent_names()) for a in sorted(set(bad)))
        raise SweepError(f"unknown agent(s) {named}; expected some of {', '.join(agent_names())}")
    declared = set(papermill.inspect_notebook(str(notebook)))
    for combo in combos:
        values = {"agent": combo.agent, "seed": combo.seed, "trials": trials, "output_dir": "-", **extra}
        unknown = sorted(set(values) - declared)
        if unknown:
            raise SweepError(f"{notebook} declares no parameter(s) {', '.join(unknown)}")
        try:
            EvalConfig.checked(values)  # the same checks as the notebook's, before any kernel starts
        except ConfigError as exc:
            raise SweepError(str(exc)) from None


def _claim(folder: Path, settings: dict[str, Any]) -> None:
    """Record the sweep's settings; refuse a folder that holds a sweep made with other ones (it would mix them)."""
    path = folder / SETTINGS_FILE
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8"))
        if previous != json.loads(json.dumps(settings, default=str)):
            raise SweepError(f"{folder} holds a sweep made with other settings ({previous}); use another --out")
        return
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(path, settings)


def _run_one(combo: Combination, folder: Path, notebook: Path, root: Path, trials: int, extra: Mapping[str, Any],
             executor: Executor, rerun: bool) -> CombinationRow:
    where = (folder / combo.name).resolve()
    row = CombinationRow(name=combo.name, agent=combo.agent, seed=combo.seed, folder=where, status="pending")
    if (where / DONE_MARKER).exists() and not rerun:
        row.status = "skipped"
        return row
    where.mkdir(parents=True, exist_ok=True)
    (where / DONE_MARKER).unlink(missing_ok=True)
    params = {"agent": combo.agent, "seed": combo.seed, "trials": trials, **extra, "output_dir": str(where)}
    started = time.monotonic()
    try:
        executor(notebook, where / "run.ipynb", params, root)
    except Exception as exc:  # noqa: BLE001 - any failure of one combination is reported and the sweep goes on
        row.status, row.error = "failed", _one_line(exc)
        row.seconds = time.monotonic() - started
        _write_json(where / FAILED_MARKER, {"error": row.error, "at": time.strftime("%Y-%m-%dT%H:%M:%S")})
        return row
    row.status, row.seconds = "done", time.monotonic() - started
    (where / FAILED_MARKER).unlink(missing_ok=True)
    # Last, and atomically: a combination without this file is not finished, whatever else its folder holds.
    _write_json(where / DONE_MARKER, {"seconds": round(row.seconds, 1), "parameters": params,
                                      "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S")})
    return row


def _one_line(exc: BaseException) -> str:
    """The reason of a failed combination in one line (papermill's error carries the cell's exception)."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:400]


def _write_json(path: Path, payload: Mapping[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, default=str)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
