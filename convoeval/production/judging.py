"""``convoeval judge FOLDER``: the rubric and holistic judges on an imported folder's conversations.

Each conversation is judged from its saved rows, as a run's conversation is judged after it talked: the same judges
(``judges.rubric.arubric_rows``, ``judges.holistic.aholistic_rows``), the same composite score and statuses
(``judges.scoring.score_conversation``: ``pass``/``warn``/``fail``, ``error`` with its reason when a judge cannot
answer), every LLM call cached, retried and accounted (``llm.accounting.record_calls``: the conversation's
``calls``, with tokens and cost), the progress bar or lines of a run (``pipeline.progress.Progress``), and each
judged conversation written back the moment it is done (``pipeline.results.write_conversation``), so a judge killed
half-way resumes where it stopped. ``workers > 1`` or a ``cluster`` judges the conversations on Dask workers (one
task per conversation, its payload in and out, as the distributed runner sends a job). At the end the frames,
``report.json`` and ``report.html`` are written as a run leaves them.

The criteria and goal: ``production.rubric`` (a file, one scenario's rubric, or the agent family's).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoeval._util.aio import blocking
from convoeval.frames.schemas import CONVERSATION_KEYS, PRODUCTION
from convoeval.judges.holistic import aholistic_rows
from convoeval.judges.rubric import arubric_rows
from convoeval.judges.scoring import score_conversation
from convoeval.llm.accounting import record_calls
from convoeval.llm.models import ModelLike
from convoeval.pipeline.progress import JUDGING, Mode, Progress
from convoeval.pipeline.results import EvalResult, load_run, write_conversation
from convoeval.production.rubric import JudgeFolderError, Rubric

__all__ = ["ajudge_folder", "judge_folder", "judge_payload"]

@dataclass
class _Folder:
    out: Path
    keys: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)


def _plan(folder: Path, resume: bool) -> _Folder:
    runs = folder / "runs"
    plan = _Folder(folder, sorted(p.stem for p in runs.glob("*.json")) if runs.is_dir() else [])
    if not plan.keys:
        raise JudgeFolderError(f"{folder} holds no conversation (runs/*.json): import some with convoeval import")
    for key in plan.keys:
        payload = _read(folder, key)
        scores = payload.get("scores") or []
        if not resume or not scores or any(s.get("status") == "error" for s in scores):
            plan.todo.append(key)
    return plan


def _read(folder: Path, key: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((folder / "runs" / f"{key}.json").read_text(encoding="utf-8"))
    return value


async def judge_payload(payload: dict[str, Any], rubric: Rubric, *, model: ModelLike = None, samples: int = 1
                        ) -> dict[str, Any]:
    """One saved conversation's payload with its rubric, holistic and score rows and its judges' calls.

    Never raises for a judge's failure: a judge that cannot even start makes the conversation ``error`` with why.
    """
    run = dict(payload["runs"][0])
    keys = {k: run.get(k) for k in CONVERSATION_KEYS}
    transcript = payload.get("transcripts") or []
    rubric_rows: list[dict[str, Any]] = []
    holistic_rows: list[dict[str, Any]] = []
    error = None
    with record_calls() as records:
        try:
            rubric_rows, holistic_rows = await asyncio.gather(
                arubric_rows([(keys, transcript)], rubric=list(rubric.criteria), model=model, samples=samples),
                aholistic_rows([(keys, transcript)], goals=rubric.goal, model=model, samples=samples))
        except Exception as exc:  # noqa: BLE001 - a judge that cannot start is this conversation's error, not a crash
            error = f"{type(exc).__name__}: {exc}"
    score = score_conversation(run, rubric_rows, holistic_rows, payload.get("assertions") or [], transcript)
    if error is not None:
        score.update(status="error", score=float("nan"), error=error)
    calls = [r.to_dict() for r in records]
    return {**payload, "rubric": rubric_rows, "holistic": holistic_rows, "scores": [score],
            "calls": [*(c for c in payload.get("calls") or [] if c.get("role") != "judge"), *calls],
            "judged_with": {"criteria": list(rubric.criteria), "goal": rubric.goal, "source": rubric.source}}


async def ajudge_folder(folder: Path | str, rubric: Rubric, *, model: ModelLike = None, samples: int = 1,
                        resume: bool = True, progress: Mode = "bar", concurrency: int = 8,
                        allow_unscrubbed: bool = False, hosted: bool = False, workers: int = 1,
                        scheduler: str | None = None, on_done: Callable[[str, str], None] | None = None
                        ) -> EvalResult:
    """Judge every conversation of an imported folder (those judged already are kept when ``resume``).

    Args:
        folder: a folder ``convoeval import`` wrote (any run folder works).
        rubric: the criteria and goal (``production_rubric``).
        model: the judge model (default: the judge role's, ``CONVOEVAL_JUDGE_MODEL`` or the local model).
        samples: judge samples per conversation.
        resume: keep conversations already judged (not those judged ``error``).
        progress: ``bar``, ``lines`` or ``off``, as a run's.
        concurrency: conversations judged at once (the LLM layer bounds the calls).
        allow_unscrubbed: send unscrubbed production text to a hosted judge anyway.
        hosted: whether the judge is hosted (the caller resolved it).
        workers: judge on this many local Dask worker processes (1: in this process).
        scheduler: judge on the workers of this Dask scheduler (``tcp://host:8786``).

    Raises:
        JudgeFolderError: no conversation, or a hosted judge on a folder imported with ``--no-scrub``.
    """
    out = Path(folder).expanduser()
    plan = _plan(out, resume)
    meta = load_run(out).meta
    if hosted and meta.get("source") == PRODUCTION and not meta.get("scrubbed") and not allow_unscrubbed:
        raise JudgeFolderError(f"{out} was imported with --no-scrub and the judge is a hosted model: real patients' "
                               "data would leave the machine; re-import with --scrub, judge with --judge-model local, "
                               "or pass --allow-unscrubbed")
    bar = Progress(len(plan.todo), skipped=len(plan.keys) - len(plan.todo), mode=progress, judge_samples=samples)
    gate = asyncio.Semaphore(max(1, concurrency))

    def save(key: str, judged: dict[str, Any]) -> None:
        write_conversation(out, key, {k: v for k, v in judged.items() if k != "settings"},
                           settings=judged.get("settings"))
        status = judged["scores"][0]["status"]
        bar.finished(key, status, judged["scores"][0].get("score"))
        if on_done is not None:
            on_done(key, status)

    async def one(key: str) -> None:
        async with gate:
            bar.turn(key, JUDGING)
            save(key, await judge_payload(_read(out, key), rubric, model=model, samples=samples))

    try:
        if (workers > 1 or scheduler) and plan.todo:
            from convoeval.production.judging_dask import judge_on_dask  # noqa: PLC0415 - loads Dask

            await asyncio.to_thread(judge_on_dask, judge_payload, [(key, _read(out, key)) for key in plan.todo], rubric,
                                    model=model, samples=samples, workers=workers, scheduler=scheduler,
                                    on_result=save)
        else:
            await asyncio.gather(*(one(key) for key in plan.todo))
    finally:
        bar.close()
    return _finish(out, rubric)


judge_folder = blocking(ajudge_folder)


def _finish(out: Path, rubric: Rubric) -> EvalResult:
    """The frames, ``report.json`` and ``report.html`` written as a run leaves them."""
    from convoeval.pipeline.execute import save_outputs  # noqa: PLC0415 - loads pandas and the run's machinery
    from convoeval.report import save_html  # noqa: PLC0415 - the report's views, only at the end

    result = load_run(out)
    meta = {**result.meta, "judged_with": {"criteria": list(rubric.criteria), "goal": rubric.goal,
                                           "source": rubric.source}}
    save_outputs(result.frames, out, meta)
    result = load_run(out)
    save_html(result)
    return result


