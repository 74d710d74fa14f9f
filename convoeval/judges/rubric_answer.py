"""The rubric judge's answer: its schema (one key per criterion), the verdicts, and parsing them, failing closed.

A verdict is matched to its criterion by the number the criterion was given, never by the judge's wording of it; a
criterion left out, two verdicts for one criterion or a verdict for a criterion that does not exist is an error.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from convoeval.judges._common import JudgeParseError, load_json

# Bounded strings: a small model under greedy decoding can loop inside a string until max_tokens; a bound in the
# schema stops it (grammar-constrained servers enforce it while generating, others fail validation).
EVIDENCE_MAX_CHARS = 500
REASONING_MAX_CHARS = 500
MAX_CRITERIA = 50
_KEY = re.compile(r"criterion_(\d+)")


class Verdict(BaseModel):
    """One criterion's verdict; evidence and reasoning come before the verdict so the judge reasons first."""

    evidence: str = Field(max_length=EVIDENCE_MAX_CHARS, description="Turn(s) showing whether it was met")
    reasoning: str = Field(max_length=REASONING_MAX_CHARS, description="Why the evidence does or does not meet it")
    passed: bool


class CriterionVerdict(Verdict):
    """A verdict naming its criterion by number: the list form of an answer, parsed from text."""

    index: int = Field(ge=1, le=MAX_CRITERIA, description="The criterion's number, as given")


class _KeyedAnswer(BaseModel):
    """Base of the per-count answers; also accepts the list form ``{"verdicts": [{"index": k, ...}]}``.

    A judge (or a recorded reply) that answers with a list is re-keyed by the numbers it gives, or by position when
    it gives none; any criterion still missing fails validation, so the list form never yields a partial pass.
    A well-formed answer that is wrong fails validation too (and gets the LLM layer's retry with the reason, then
    becomes an error row): two verdicts on one criterion that disagree, a verdict on a criterion the rubric does
    not have (``criterion_9`` of four, a fifth unnumbered verdict), any other key, numbered and unnumbered verdicts
    mixed, or a verdict that is not an object. The checks run before field validation, so the JSON schema the judge
    is sent (and the response cache's key) stays as it was.
    """

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("verdicts"), list) and len(data) == 1:
            data = _keyed_from_list(data["verdicts"])
        if isinstance(data, dict):
            _refuse_unknown_keys(data, cls.model_fields)
        return data


def _keyed_from_list(items: list[Any]) -> dict[str, Any]:
    """``[{"index": k, ...}, ...]`` as ``{"criterion_k": {...}}``; raises ``JudgeParseError`` where they conflict."""
    if any(not isinstance(item, dict) for item in items):
        raise JudgeParseError("every verdict must be a JSON object")
    numbered = ["index" in item for item in items]
    if any(numbered) and not all(numbered):
        raise JudgeParseError("some verdicts are numbered and some are not; cannot match them to criteria")
    keyed: dict[str, Any] = {}
    for pos, item in enumerate(items, 1):
        number = item.get("index", pos)
        verdict = {k: v for k, v in item.items() if k != "index"}
        seen = keyed.setdefault(f"criterion_{number}", verdict)
        # A repeated verdict that agrees keeps the first one's evidence, as parse_rubric_response does.
        if seen is not verdict and seen.get("passed") != verdict.get("passed"):
            raise JudgeParseError(f"conflicting verdicts for criterion {number}")
    return keyed


def _refuse_unknown_keys(data: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Raise ``JudgeParseError`` for a key that is not one of ``fields`` (``criterion_1`` … ``criterion_N``)."""
    count = len(fields)
    for key in data:
        if key in fields:
            continue
        match = _KEY.fullmatch(str(key))
        if match and not 1 <= int(match.group(1)) <= count:
            raise JudgeParseError(f"a verdict for criterion {int(match.group(1))}, but the rubric has {count} "
                                  f"criteria (criterion_1 to criterion_{count})")
        raise JudgeParseError(f"unexpected key {str(key)[:40]!r}: answer with criterion_1 to criterion_{count} only")


@functools.lru_cache(maxsize=MAX_CRITERIA)
def rubric_schema(count: int) -> type[BaseModel]:
    """The structured answer for ``count`` criteria: one required key per criterion, ``criterion_1`` … ``criterion_N``.

    The position is the key, so a judge cannot skip, merge or reorder criteria: grammar-constrained servers generate
    every key, others fail validation (and get the LLM layer's retry with the missing key named). A list of verdicts
    let the local 0.5B model answer only the first criterion. Built once per count.
    """
    if not 1 <= count <= MAX_CRITERIA:
        raise ValueError(f"a rubric has 1 to {MAX_CRITERIA} criteria, got {count}")
    fields: dict[str, Any] = {
        f"criterion_{i}": (Verdict, Field(description=f"The verdict on criterion {i}")) for i in range(1, count + 1)
    }
    # One name for every count: it is the tool name the judge is asked to call.
    return create_model(
        "RubricAnswer", __base__=_KeyedAnswer, __doc__=f"Verdicts on the {count} criteria, by number.", **fields
    )


@dataclass(frozen=True)
class CriterionResult:
    """A criterion's outcome: a verdict, or an error (``passed is None``) saying why there is none."""

    criterion: str
    passed: bool | None
    evidence: str = ""
    reasoning: str = ""
    error: str | None = None


def match_verdicts(verdicts: Sequence[CriterionVerdict], criteria: Sequence[str]) -> list[CriterionResult]:
    """Pair verdicts with criteria by number; a missing or contradictory criterion becomes an error result.

    Args:
        verdicts: The judge's verdicts (``index`` is 1-based, as the criteria were numbered in the prompt).
        criteria: Our criteria, in order.

    Returns:
        One ``CriterionResult`` per criterion, in the criteria's order.

    Raises:
        JudgeParseError: a verdict names a criterion past the last one (an extra, unnumbered verdict included).
    """
    found: dict[int, list[CriterionVerdict]] = {}
    for v in verdicts:
        if v.index > len(criteria):
            # Not silently dropped: a judge numbering past the rubric has not answered the rubric it was given.
            raise JudgeParseError(f"a verdict for criterion {v.index}, but there are {len(criteria)} criteria")
        found.setdefault(v.index, []).append(v)
    results = []
    for number, criterion in enumerate(criteria, 1):
        given = found.get(number, [])
        if not given:
            missing = f"criterion {number} missing from the judge's answer"
            results.append(CriterionResult(criterion, None, error=missing))
        elif len({v.passed for v in given}) > 1:
            results.append(CriterionResult(criterion, None, error=f"conflicting verdicts for criterion {number}"))
        else:
            v = given[0]
            results.append(CriterionResult(criterion, v.passed, v.evidence, v.reasoning))
    return results


def parse_rubric_response(text: str, criteria: Sequence[str]) -> list[CriterionResult]:
    """Parse a rubric judge's JSON text, failing closed.

    Accepted forms: an array of verdicts, ``{"verdicts": [...]}``, and the structured form
    ``{"criterion_1": {...}, ...}``.

    Items may carry ``index`` (matched by it) or not (matched by list position); any ``criterion`` text the judge
    wrote is ignored. Markdown fences are stripped.

    Args:
        text: The judge's reply.
        criteria: The criteria it was asked about, in order.

    Returns:
        One ``CriterionResult`` per criterion; a criterion the answer does not cover is an error result.

    Raises:
        JudgeParseError: the reply is not JSON, not a list of verdicts, or a verdict is malformed — never ``[]``.

    Example:
        >>> parse_rubric_response('[{"criterion": "x", "passed": true, "evidence": "Turn 1"}]', ["x"])[0].passed
        True
    """
    data = load_json(text)
    numbered = {k: m for k in data if (m := _KEY.fullmatch(str(k)))} if isinstance(data, dict) else {}
    if isinstance(data, dict) and data and len(numbered) == len(data):
        # The structured form: {"criterion_1": {...}, ...}; the key is the number.
        data = [{**v, "index": int(numbered[k].group(1))} if isinstance(v, dict) else v for k, v in data.items()]
    items = data.get("verdicts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise JudgeParseError(f"expected a list of verdicts, got {type(items).__name__}")
    if any(not isinstance(i, dict) for i in items):
        raise JudgeParseError("every verdict must be a JSON object")
    with_index = [("index" in i) for i in items]
    if any(with_index) and not all(with_index):
        raise JudgeParseError("some verdicts are numbered and some are not; cannot match them to criteria")
    try:
        verdicts = [
            CriterionVerdict(
                index=item.get("index", pos),
                evidence=str(item.get("evidence", "")),
                reasoning=str(item.get("reasoning", "")),
                passed=item["passed"],
            )
            for pos, item in enumerate(items, 1)
        ]
    except KeyError:
        raise JudgeParseError("a verdict has no 'passed' field") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise JudgeParseError(f"invalid verdict: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    return match_verdicts(verdicts, criteria)
