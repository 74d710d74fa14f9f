"""Checkpoint rubric criteria: each judged on the conversation up to the turn its checkpoint fired at.

A checkpoint's criteria become ordinary rubric rows (same judge, samples and columns), read as ``[checkpoint <id>]
<text>`` and numbered after the scenario's own rubric, in declaration order, so a criterion keeps its
``criterion_index`` whichever checkpoints fired. A checkpoint that never fired is not judged: its ``checkpoint:<id>``
assertion row already says so (when it is required).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from convoeval.judges.rubric import arubric_rows
from convoeval.llm.models import ModelLike
from convoeval.pathcheck import PathLog
from convoeval.pathcheck.run import fired_at
from convoeval.scenarios import ConversationalScenario

__all__ = ["acheckpoint_rubric_rows"]


async def acheckpoint_rubric_rows(keys: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                                  scenario: ConversationalScenario, *, model: ModelLike = None,
                                  samples: int = 1) -> list[dict[str, Any]]:
    """The rubric rows of every checkpoint with criteria that fired in this conversation.

    Args:
        keys: the conversation's keys (``run_id``, ``scenario``, ``seed``, ``trial``, …).
        rows: its transcript rows.
        scenario: the scenario whose ``checkpoints`` to judge.
        model: the judge model; samples: independent judge samples.

    Returns:
        Rubric rows (``RUBRIC_SCHEMA``) of the fired checkpoints' criteria; empty when none has criteria or fired.
    """
    log = PathLog.from_rows(rows)
    base = len(scenario.rubric)
    jobs = []
    for cp in scenario.checkpoints:
        turn = fired_at(cp, log) if cp.rubric else None
        if turn is not None:
            so_far = [r for r in rows if int(r["turn"]) <= turn]
            jobs.append((cp, base, arubric_rows([(keys, so_far)], rubric=cp.rubric, model=model, samples=samples)))
        base += len(cp.rubric)
    judged = await asyncio.gather(*(job for _cp, _base, job in jobs))
    out = []
    for (cp, first, _job), found in zip(jobs, judged, strict=True):
        out += [{**row, "criterion": cp.criterion(row["criterion"]),
                 "criterion_index": first + int(row["criterion_index"])} for row in found]
    return out
