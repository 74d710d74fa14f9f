"""Run many conversations at once: scenarios × seeds × trials, bounded concurrency, results streamed to disk.

Each finished run is written to ``<out>/runs/<key>.json`` atomically (a temporary file renamed into place) the
moment it finishes, so a sweep killed at any point loses nothing finished and counts nothing partial; started
again with the same folder it skips the runs already on disk (``resume=True``). ``load_results`` turns the folder
back into tidy frames.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from convoeval import frames as F
from convoeval.conversation import RunOptions, RunResult, arun_any
from convoeval.scenarios import Scenario

#: Frame name -> column contract, in the order reports use them.
FRAME_SCHEMAS: dict[str, dict[str, str]] = {
    "runs": F.RUN_SCHEMA,
    "scores": F.SCORE_SCHEMA,
    "transcripts": F.TRANSCRIPT_SCHEMA,
    "rubric": F.RUBRIC_SCHEMA,
    "holistic": F.HOLISTIC_SCHEMA,
    "turns": F.TURN_SCHEMA,
    "assertions": F.ASSERTION_SCHEMA,
}


@dataclass(frozen=True)
class Job:
    """One conversation to run: a scenario, a seed and a trial number."""

    scenario: Scenario
    seed: int | None
    trial: int

    @property
    def key(self) -> str:
        """A file-name-safe key, unique within a batch, e.g. ``billing-conv-happy-payment__s42__t1``."""
        seed = "none" if self.seed is None else str(self.seed)
        return f"{self.scenario.id}__s{seed}__t{self.trial}"


def plan(scenarios: Iterable[Scenario], *, seeds: Sequence[int | None] = (None,), trials: int = 1) -> list[Job]:
    """Every scenario × seed × trial. A ``None`` seed means the scenario's own ``seed`` (conversational) or none."""
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    jobs = []
    for scenario in scenarios:
        for seed in seeds:
            effective = seed if seed is not None else getattr(scenario, "seed", None)
            jobs.extend(Job(scenario, effective, t) for t in range(1, trials + 1))
    return jobs


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as plain Python values, missing ones (``NA``, ``NaN``, ``None``) as ``None``.

    Column by column with ``tolist`` rather than ``astype(object).where(notna)``: the same values for about a
    tenth of the CPU (measured ~40 ms per finished conversation before, see benchmarks/RESULTS.md).
    """
    if not len(frame):
        return []
    columns = [str(c) for c in frame.columns]
    values = [[_plain(v) for v in frame[c].tolist()] for c in frame.columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):  # a numpy scalar kept in an object column
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def write_run(out_dir: Path, job: Job, result: RunResult, calls: list[dict[str, Any]] | None = None) -> Path:
    """Write one finished run atomically to ``<out_dir>/runs/<key>.json``."""
    runs = out_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    payload = {name: _records(df) for name, df in result.frames().items()}
    payload["calls"] = calls or []
    fd, tmp = tempfile.mkstemp(dir=runs, prefix=f".{job.key}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False, default=str)
        final = runs / f"{job.key}.json"
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return final


def finished_keys(out_dir: Path) -> set[str]:
    """Keys of the runs already written under ``out_dir`` (partial temporary files do not count)."""
    runs = out_dir / "runs"
    return {p.stem for p in runs.glob("*.json")} if runs.is_dir() else set()


def load_results(out_dir: Path | str) -> dict[str, pd.DataFrame]:
    """Read every finished run under ``out_dir`` back into tidy frames (runs, scores, transcripts, …, calls)."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in [*FRAME_SCHEMAS, "calls"]}
    runs = Path(out_dir) / "runs"
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        payload = json.loads(path.read_text(encoding="utf-8"))
        for name, kept in rows.items():
            kept.extend(payload.get(name, []))
    out = {name: F.typed_frame(rows[name], schema) for name, schema in FRAME_SCHEMAS.items()}
    out["calls"] = pd.DataFrame(rows["calls"])
    return out


def merge_frames(parts: Iterable[Mapping[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Concatenate several results' frames (``load_results`` of several folders) into one set, name by name.

    A frame missing from a part, or empty, is skipped; a name no part has comes back as an empty typed frame.
    """
    parts = list(parts)
    out: dict[str, pd.DataFrame] = {}
    for name, schema in FRAME_SCHEMAS.items():
        pieces = [p[name] for p in parts if name in p and len(p[name])]
        out[name] = pd.concat(pieces, ignore_index=True) if pieces else F.empty_frame(schema)
    calls = [p["calls"] for p in parts if "calls" in p and len(p["calls"])]
    out["calls"] = pd.concat(calls, ignore_index=True) if calls else pd.DataFrame()
    return out


@dataclass
class BatchSummary:
    """What a batch did: runs finished now, skipped (already on disk), and the results folder."""

    out_dir: Path | None
    ran: int
    skipped: int
    results: list[RunResult]

    def frames(self) -> dict[str, pd.DataFrame]:
        """All runs' frames: read back from disk when there is a folder, else from memory."""
        if self.out_dir is not None:
            return load_results(self.out_dir)
        merged = {}
        for name, schema in FRAME_SCHEMAS.items():
            parts = [r.frames()[name] for r in self.results if len(r.frames()[name])]
            merged[name] = pd.concat(parts, ignore_index=True) if parts else F.empty_frame(schema)
        merged["calls"] = pd.DataFrame([c for r in self.results for c in r.calls])
        return merged


async def arun_batch(
    jobs: Sequence[Job],
    *,
    options: RunOptions | None = None,
    out_dir: Path | str | None = None,
    concurrency: int = 8,
    resume: bool = True,
    progress: bool = True,
) -> BatchSummary:
    """Run ``jobs`` with at most ``concurrency`` conversations in flight; write each result as it finishes.

    Args:
        jobs: from ``plan``.
        options: agent target, models, judge samples, store — shared by every run.
        out_dir: where to stream results (``runs/<key>.json``). Without it results stay in memory.
        concurrency: conversations in flight at once (LLM calls are further limited per endpoint).
        resume: skip jobs whose result is already in ``out_dir``.
        progress: show a progress bar.

    Returns:
        A ``BatchSummary``; results are in memory only when there is no ``out_dir`` (so large sweeps do not hold
        every transcript in memory).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    opts = options or RunOptions()
    folder = Path(out_dir) if out_dir is not None else None
    done = finished_keys(folder) if (folder is not None and resume) else set()
    todo = [j for j in jobs if j.key not in done]
    keys = [j.key for j in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("two jobs share a key (same scenario id, seed and trial)")
    limit = asyncio.Semaphore(concurrency)
    kept: list[RunResult] = []
    bar = tqdm(total=len(todo), desc="conversations", unit="conv", disable=not progress or not todo)

    async def one(job: Job) -> None:
        async with limit:
            result, calls = await _run_recorded(job, opts)
        if folder is not None:
            await asyncio.to_thread(write_run, folder, job, result, calls)
        else:
            result.calls = calls
            kept.append(result)
        bar.update(1)
        bar.set_postfix_str(f"{job.scenario.id}: {result.status}", refresh=False)

    try:
        await asyncio.gather(*(one(j) for j in todo))
    finally:
        bar.close()
    return BatchSummary(out_dir=folder, ran=len(todo), skipped=len(jobs) - len(todo), results=kept)


async def _run_recorded(job: Job, opts: RunOptions) -> tuple[RunResult, list[dict[str, Any]]]:
    """Run one job, collecting the LLM calls it makes (each task has its own context, so records don't mix)."""
    from convoeval.accounting import record_calls

    with record_calls() as records:
        result = await arun_any(job.scenario, seed=job.seed, trial=job.trial, options=opts)
    return result, [r.to_dict() for r in records]


def run_batch(jobs: Sequence[Job], **kwargs: Any) -> BatchSummary:
    """Synchronous ``arun_batch`` for scripts and the CLI (on convoeval's one background loop, see ``_aio``)."""
    from convoeval._aio import run_sync

    return run_sync(arun_batch(jobs, **kwargs))
