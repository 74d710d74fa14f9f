"""A conversation's verdicts as evaluation results: the composite score, each rubric criterion, each holistic or
per-turn judgement and each database or path assertion, one ``Evaluation`` each.

Plain data read from a conversation's rows (no OpenTelemetry here): ``spans.py`` writes them as
``gen_ai.evaluation.result`` events on the conversation's span, ``phoenix.py`` as Phoenix span annotations. A verdict
that could not be reached (a judge's error, an assertion that failed to run) keeps no score and says why, never a
default score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Evaluation", "evaluations"]

#: How long a criterion or an assertion may be in an evaluation's name (Phoenix shows names in table columns).
MAX_NAME = 100


@dataclass(frozen=True)
class Evaluation:
    """One verdict, in the shape both OpenTelemetry's evaluation event and Phoenix's annotation take.

    Attributes:
        name: what was evaluated (``score``, ``rubric: <criterion>``, ``holistic``, ``turn 2``, ``assertion: <key>``).
        score: the number (0–10 for scores, 1/0 for pass/fail), ``None`` when there is none.
        label: ``pass``/``fail``/``warn``/``error``/… (low cardinality, as the convention asks).
        explanation: the judge's evidence and reasoning, or the assertion's message.
        annotator: ``LLM`` (a judge) or ``CODE`` (an assertion, the composite score).
        identifier: tells apart two results of one name (judge samples).
        error: why there is no verdict (the judge's or the check's error), else ``None``.
    """

    name: str
    score: float | None
    label: str | None
    explanation: str | None
    annotator: str
    identifier: str = ""
    error: str | None = None


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _number(value: Any) -> float | None:
    return float(value) if _present(value) else None


def _text(*parts: Any) -> str | None:
    shown = [str(p) for p in parts if _present(p) and str(p).strip()]
    return " — ".join(shown) or None


def _name(prefix: str, text: Any) -> str:
    text = " ".join(str(text).split())
    return f"{prefix}: {text if len(text) <= MAX_NAME else text[:MAX_NAME - 1] + '…'}"


def _passed(passed: Any, error: Any) -> tuple[float | None, str]:
    if not _present(passed):
        return None, "error" if _present(error) else "unknown"
    return (1.0, "pass") if passed else (0.0, "fail")


def _sample(row: Mapping[str, Any]) -> str:
    return f"sample-{row.get('sample') or 0}"


def evaluations(rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Evaluation]:
    """Every verdict in one conversation's rows (``ConversationResult.rows``), the composite score first.

    Example:
        >>> rows = {"scores": [{"status": "pass", "score": 9.0}],
        ...         "assertions": [{"assertion": "paid", "passed": False, "message": "paid: expected true"}]}
        >>> [(e.name, e.score, e.label) for e in evaluations(rows)]
        [('score', 9.0, 'pass'), ('assertion: paid', 0.0, 'fail')]
    """
    found: list[Evaluation] = []
    for row in rows.get("scores") or []:
        found.append(Evaluation("score", _number(row.get("score")), str(row.get("status")),
                                _text(row.get("error")), "CODE", error=row.get("error") or None))
    for row in rows.get("rubric") or []:
        score, label = _passed(row.get("passed"), row.get("error"))
        found.append(Evaluation(_name("rubric", row.get("criterion")), score, label,
                                _text(row.get("evidence"), row.get("reasoning"), row.get("error")), "LLM",
                                identifier=f"{_sample(row)}/criterion-{row.get('criterion_index')}",
                                error=row.get("error") or None))
    for row in rows.get("holistic") or []:
        overall = _number(row.get("overall"))
        found.append(Evaluation("holistic", overall, None if overall is not None else "error",
                                _text(row.get("suggestion"), "; ".join(row.get("issues") or []), row.get("error")),
                                "LLM", identifier=_sample(row), error=row.get("error") or None))
    for row in rows.get("turns") or []:
        failures = list(row.get("check_failures") or [])
        overall = _number(row.get("overall"))
        verdict = "fail" if failures else ("pass" if overall is not None else ("error" if row.get("error") else None))
        found.append(Evaluation(f"turn {row.get('turn')}", overall, verdict,
                                _text("; ".join(failures), row.get("suggestion"), row.get("error")), "LLM",
                                identifier=_sample(row), error=row.get("error") or None))
    for row in rows.get("assertions") or []:
        score, label = _passed(row.get("passed"), row.get("error"))
        found.append(Evaluation(_name("assertion", row.get("assertion")), score, label,
                                _text(row.get("message"), row.get("error")), "CODE", error=row.get("error") or None))
    return found
