"""A finished run as the report reads it: ``RunData`` is the pipeline's ``EvalResult`` (the one result type).

``load_run(folder)`` reads any results folder written by ``convoeval run``, the notebook or a sweep (the per-run
JSON files under ``runs/`` and ``report.json``), so a report can be rebuilt later without re-running anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convoeval.pipeline.results import EvalResult, load_results

__all__ = ["RunData", "load_run"]

#: The report's name for a run's results: the same type the pipeline returns.
RunData = EvalResult


def load_run(out_dir: Path | str) -> EvalResult:
    """Read a results folder back (no LLM calls, no re-run).

    Args:
        out_dir: a folder written by ``convoeval run``, ``notebooks/run.ipynb`` or one combination of a sweep.

    Returns:
        The run's frames and metadata.

    Raises:
        FileNotFoundError: when the folder holds no finished conversation.

    Example:
        >>> run = load_run("reports/example")
        >>> score_table(run)
    """
    out = Path(out_dir)
    if not (out / "runs").is_dir() or not any((out / "runs").glob("*.json")):
        raise FileNotFoundError(f"{out} holds no finished conversation (no runs/*.json)")
    meta: dict[str, Any] = {}
    report = out / "report.json"
    if report.exists():
        meta = json.loads(report.read_text(encoding="utf-8")).get("meta") or {}
    return EvalResult(out_dir=out, frames=load_results(out), meta=meta)
