"""A list of jobs with shared options, run in this process: the results in memory or streamed to a folder.

A whole run from an ``EvalConfig`` is ``run_eval`` (which writes the report too); ``arun_batch`` is for code and tests
that plan their own jobs (a fault study, a benchmark) and want the conversations' frames back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoeval import frames as F
from convoeval._util.aio import blocking
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.pipeline.conversation import ConversationResult, RunOptions
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.local import arun_jobs
from convoeval.pipeline.progress import Mode, Progress, Reporter, as_mode
from convoeval.pipeline.results import finished, read_frames, write_conversation

if TYPE_CHECKING:
    from convoeval.frames import RunFrames


def write_run(out_dir: Path, job: Job, result: ConversationResult, calls: list[dict[str, Any]] | None = None) -> Path:
    """Write one finished conversation atomically to ``<out_dir>/runs/<key>.json``."""
    if calls is not None:
        result.calls = calls
    return write_conversation(out_dir, job.key, result.payload())


def finished_keys(out_dir: Path) -> set[str]:
    """Keys of the conversations saved under ``out_dir``, including those that ended in error."""
    return finished(out_dir, keep_errors=True)


@dataclass
class BatchSummary:
    """What a batch did: conversations finished now, skipped (already on disk), and the results folder."""

    out_dir: Path | None
    ran: int
    skipped: int
    results: list[ConversationResult]

    def frames(self) -> RunFrames:
        """All conversations' frames: read back from disk when there is a folder, else built from memory once."""
        if self.out_dir is not None:
            return read_frames(self.out_dir)
        return F.RunFrames.from_payloads((r.payload() for r in self.results), call_columns=CALL_COLUMNS)


async def arun_batch(
    jobs: Sequence[Job],
    *,
    options: RunOptions | None = None,
    out_dir: Path | str | None = None,
    concurrency: int = 8,
    resume: bool = True,
    progress: bool | Mode | Reporter = True,
) -> BatchSummary:
    """Run ``jobs`` with at most ``concurrency`` in flight; write each result as it finishes (or keep it in memory).

    With ``resume``, conversations already saved in ``out_dir`` are skipped, but those that ended in ``error``
    are run again. ``progress`` is ``True``/``False`` (a bar or nothing), a ``Progress`` mode (``"lines"`` in
    notebooks), or a ``Progress`` (any ``Reporter``) shared by several batches (reported to, not closed here).
    """
    opts = options or RunOptions()
    folder = Path(out_dir) if out_dir is not None else None
    done = finished(folder) if (folder is not None and resume) else set()
    todo = [j for j in jobs if j.key not in done]
    kept: list[ConversationResult] = []
    report: Reporter
    own: Progress | None = None
    if isinstance(progress, (bool, str)):
        report = own = Progress(len(todo), mode=as_mode(progress))
    else:
        report = progress
    if opts.on_turn is None:
        opts.on_turn = report.turn

    def save(job: Job, result: ConversationResult) -> None:
        if folder is not None:
            write_conversation(folder, job.key, result.payload())
        else:
            kept.append(result)
        report.finished(job.label, result.status)

    try:
        await arun_jobs(todo, opts, concurrency=concurrency, on_result=save)
    finally:
        if own is not None:  # a shared report is its owner's to close
            own.close()
    return BatchSummary(out_dir=folder, ran=len(todo), skipped=len(jobs) - len(todo), results=kept)


#: ``arun_batch``, synchronous (on convoeval's one background loop, see ``_aio``).
run_batch = blocking(arun_batch)
