"""What the holistic and the per-turn judge share: 0–10 scores, issues and a suggestion, asked for in one call.

A scored answer is validated strictly where it matters (every score present, a number from 0 to 10, never a
boolean) and leniently where it does not (missing issues mean none). ``overall`` is the mean of the dimensions,
computed here: a judge is not asked for its own arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from convoeval.judges._common import JudgeParseError, error_text, is_judge_error, judge_columns
from convoeval.llm import SampleIdentity, acall_model

ISSUE_MAX_CHARS = 300
MAX_ISSUES = 10
SUGGESTION_MAX_CHARS = 500
DEFAULT_MAX_TOKENS = 1200


def _not_a_boolean(value: Any) -> Any:
    # pydantic reads true as 1.0 and false as 0.0: a judge answering a score with a boolean has not scored.
    if isinstance(value, bool):
        raise ValueError(f"a score is a number from 0 to 10, not the boolean {str(value).lower()}")
    return value


#: A 0–10 score. The boolean check runs before validation and adds nothing to the JSON schema the judge is sent.
Score = Annotated[float, Field(ge=0, le=10), BeforeValidator(_not_a_boolean)]
Issue = Annotated[str, Field(max_length=ISSUE_MAX_CHARS)]


def mean_score(scores: Mapping[str, float], dimensions: Iterable[str]) -> float:
    """The mean over ``dimensions`` (NaN if any is missing): the one definition of ``overall``."""
    values = [scores.get(d) for d in dimensions]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return math.nan
    return sum(values) / len(values)  # type: ignore[arg-type]


def validate_scored(data: object, schema: type[BaseModel]) -> BaseModel:
    """Validate a scores/issues/suggestion object leniently where it does not matter: missing or non-list issues
    mean none, a missing suggestion means none; the scores themselves are required.

    Raises:
        JudgeParseError: not an object, or scores missing / out of range.
    """
    if not isinstance(data, dict):
        raise JudgeParseError(f"expected a JSON object, got {type(data).__name__}")
    normalised = {
        "issues": data["issues"] if isinstance(data.get("issues"), list) else [],
        "scores": data.get("scores"),
        "suggestion": data["suggestion"] if isinstance(data.get("suggestion"), str) else "",
    }
    try:
        return schema.model_validate(normalised)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise JudgeParseError(f"invalid answer: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


async def scored_call(
    model: Any,
    messages: list[tuple[str, str]],
    row: dict[str, Any],
    *,
    answer_type: type[BaseModel],
    dimensions: Iterable[str],
    identity: SampleIdentity,
    seed: int | None,
    temperature: float | None,
    max_tokens: int,
) -> dict[str, Any]:
    """One judge sample: ``row`` completed with the scores, ``overall``, issues and suggestion, or NaN and ``error``.

    Only judge errors (``is_judge_error``) become error rows; anything else is raised.
    """
    dimensions = list(dimensions)
    result = None
    try:
        result = await acall_model(model, messages, identity=identity, schema=answer_type, seed=seed,
                                  temperature=temperature, max_tokens=max_tokens)
    except Exception as exc:
        if not is_judge_error(exc):
            raise
        row.update({d: math.nan for d in dimensions}, overall=math.nan, error=error_text(exc))
    else:
        answer: Any = result.parsed
        scores = answer.scores.model_dump()
        row.update(scores, overall=mean_score(scores, dimensions), issues=list(answer.issues),
                   suggestion=answer.suggestion)
    row.update(judge_columns(model, result))
    return row
