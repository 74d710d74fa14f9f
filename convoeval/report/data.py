"""A finished run as the report reads it: the tidy frames, the run's metadata and the folder they live in.

``load_run(folder)`` reads any results folder written by ``convoeval run``, the notebook or a sweep (the per-run
JSON files under ``runs/`` and ``report.json``), so a report can be rebuilt later without re-running anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval.accounting import CALL_COLUMNS
from convoeval.report._html import badge, css, esc, shown_path, wrap

__all__ = ["RunData", "load_run"]


@dataclass
class RunData:
    """One run's results.

    Attributes:
        out_dir: the results folder (``runs/``, ``data/``, ``report.json``).
        frames: ``runs``, ``scores``, ``transcripts``, ``rubric``, ``holistic``, ``turns``, ``assertions``, ``calls``.
        meta: what ``convoeval.runs`` recorded: config, models, versions, times (empty when unknown).
        lines: the console summary lines, when the run was made in this process.
    """

    out_dir: Path
    frames: dict[str, pd.DataFrame]
    meta: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        calls = self.frames.get("calls")
        if calls is None or calls.empty:
            self.frames["calls"] = pd.DataFrame(columns=list(CALL_COLUMNS))

    @property
    def scores(self) -> pd.DataFrame:
        return self.frames["scores"]

    @property
    def data_dir(self) -> Path:
        return self.out_dir / "data"

    @classmethod
    def from_outcome(cls, outcome: Any) -> RunData:
        """From the ``RunOutcome`` that ``convoeval.runs.aexecute_run`` returns."""
        return cls(out_dir=Path(outcome.out_dir), frames=dict(outcome.frames), meta=dict(outcome.meta),
                   lines=list(outcome.lines))

    def status_counts(self) -> dict[str, int]:
        """How many conversations ended pass / warn / fail / error."""
        counts = self.scores["status"].value_counts().to_dict() if len(self.scores) else {}
        return {s: int(counts.get(s, 0)) for s in ("pass", "warn", "fail", "error")}

    def _repr_html_(self) -> str:
        counts = self.status_counts()
        parts = " ".join(f"{badge(s)} {n}" for s, n in counts.items() if n)
        n = len(self.scores)
        body = (f"<b>{n} conversation(s)</b> {parts or ''} &nbsp;·&nbsp; data saved in "
                f"<code>{esc(shown_path(self.data_dir))}</code>")
        if self.lines:
            lines = esc("\n".join(self.lines))
            body += (f"<details{css(margin_top='4px')}><summary>console summary</summary>"
                     f"<pre{css(white_space='pre-wrap', font_size='12px')}>{lines}</pre></details>")
        return wrap(body)

    def __repr__(self) -> str:
        return f"RunData({str(self.out_dir)!r}, {len(self.scores)} conversation(s), {self.status_counts()})"


def load_run(out_dir: Path | str) -> RunData:
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
    from convoeval.batch import load_results

    out = Path(out_dir)
    if not (out / "runs").is_dir() or not any((out / "runs").glob("*.json")):
        raise FileNotFoundError(f"{out} holds no finished conversation (no runs/*.json)")
    meta: dict[str, Any] = {}
    report = out / "report.json"
    if report.exists():
        meta = json.loads(report.read_text(encoding="utf-8")).get("meta") or {}
    return RunData(out_dir=out, frames=load_results(out), meta=meta)
