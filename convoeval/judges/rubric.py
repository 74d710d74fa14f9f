"""The rubric judge: per conversation, a pass/fail verdict with evidence for each natural-language criterion.

Fail closed: a criterion the judge left out, conflicting verdicts for one criterion, a verdict for a criterion that
does not exist, or a reply that cannot be validated (after the LLM layer's retry) become error rows — ``passed``
missing, ``error`` saying why — never a pass.
Verdicts are matched to criteria by the number the criterion was given, never by the judge's wording of it.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from convoeval._aio import run_sync
from convoeval.frames import RUBRIC_SCHEMA, as_transcripts, iter_conversations, transcript_to_entries, typed_frame
from convoeval.judges._common import (
    JudgeParseError,
    by_id,
    conversation_row,
    error_text,
    identity_for,
    is_judge_error,
    judge_chat_model,
    judge_columns,
    judge_seed,
    load_json,
)
from convoeval.judges.prompts import RUBRIC_PROMPT_VERSION, RUBRIC_SYSTEM_PROMPT, RUBRIC_USER_TEMPLATE, numbered
from convoeval.judges.render import render_transcript
from convoeval.llm import call_model

# Bounded strings: a small model under greedy decoding can loop inside a string until max_tokens; a bound in the
# schema stops it (grammar-constrained servers enforce it while generating, others fail validation).
EVIDENCE_MAX_CHARS = 500
REASONING_MAX_CHARS = 500
MAX_CRITERIA = 50
#: Output budget: generous, since a cut-off reply is an error for every criterion.
TOKENS_BASE, TOKENS_PER_CRITERION = 200, 400
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
    if isinstance(data, dict) and data and all(_KEY.fullmatch(str(k)) for k in data):
        # The structured form: {"criterion_1": {...}, ...}; the key is the number.
        data = [{**v, "index": int(_KEY.fullmatch(k).group(1))} if isinstance(v, dict) else v for k, v in data.items()]
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


# ── The judge over transcript frames ──

RubricSpec = Sequence[Any] | Mapping[str, Sequence[Any]] | None


def _criteria_for(scenario: str | None, rubric: RubricSpec, scenarios: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(text, assertion)`` pairs for a conversation's scenario."""
    if isinstance(rubric, Mapping):
        items = rubric.get(scenario or "")
    elif rubric is not None:
        items = rubric
    elif scenario in scenarios:
        items = getattr(scenarios[scenario], "rubric", None)
    else:
        items = None
    if not items:
        raise ValueError(f"no rubric for scenario {scenario!r}: pass rubric=... or scenarios=[...]")
    out = []
    for item in items:
        if isinstance(item, str):
            out.append((item, None))
        else:  # a RubricCriterion (or anything with .text / .assertion)
            out.append((item.text, getattr(item, "assertion", None)))
    if len(out) > MAX_CRITERIA:
        raise ValueError(f"scenario {scenario!r} has {len(out)} criteria; at most {MAX_CRITERIA} per judge call")
    return out


async def _judge_sample(
    model: Any,
    messages: list[tuple[str, str]],
    keys: Mapping[str, Any],
    criteria: list[tuple[str, Any]],
    sample: int,
    temperature: float | None,
    max_tokens: int | None,
) -> list[dict[str, Any]]:
    texts = [c for c, _ in criteria]
    result = None
    try:
        result = await call_model(
            model,
            messages,
            identity=identity_for(keys, sample=sample, extra="rubric"),
            schema=rubric_schema(len(criteria)),
            seed=judge_seed(keys, sample),
            temperature=temperature,
            max_tokens=max_tokens or TOKENS_BASE + TOKENS_PER_CRITERION * len(criteria),
        )
        verdicts = [getattr(result.parsed, f"criterion_{i}") for i in range(1, len(texts) + 1)]
        outcomes = [CriterionResult(c, v.passed, v.evidence, v.reasoning) for c, v in zip(texts, verdicts, strict=True)]
    except Exception as exc:  # only judge errors become rows; anything else is re-raised
        if not is_judge_error(exc):
            raise
        outcomes = [CriterionResult(c, None, error=error_text(exc)) for c in texts]
    common = {
        **conversation_row(keys),
        **judge_columns(model, result),
        "sample": sample,
        "prompt_version": RUBRIC_PROMPT_VERSION,
    }
    return [
        {
            **common,
            "criterion_index": i,
            "criterion": o.criterion,
            "assertion": criteria[i][1],
            "passed": o.passed,
            "evidence": o.evidence,
            "reasoning": o.reasoning,
            "error": o.error,
        }
        for i, o in enumerate(outcomes)
    ]


def rubric_messages(entries: Sequence[Mapping[str, Any]], criteria: Sequence[tuple[str, Any]]) -> list[tuple[str, str]]:
    """The rubric judge's prompt for one conversation (system prompt first, so servers can cache the prefix)."""
    user = RUBRIC_USER_TEMPLATE.format(
        count=len(criteria),
        criteria=numbered([c for c, _ in criteria]),
        transcript=render_transcript(entries),
    )
    return [("system", RUBRIC_SYSTEM_PROMPT), ("user", user)]


async def arubric_rows(
    conversations: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
    *,
    rubric: RubricSpec = None,
    scenarios: Iterable[Any] | Mapping[str, Any] | None = None,
    model: Any = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """``judge_rubric`` over plain rows: ``(conversation keys, message dicts)`` in, verdict rows out, no frame built.

    A running conversation is judged this way (its messages are plain rows until the batch ends); the
    DataFrame verbs call it too, so both paths share every rule. Every conversation is checked before the first
    call is made; every conversation × sample is judged concurrently (the LLM layer bounds it).
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    model = judge_chat_model(model)
    lookup = by_id(scenarios)
    prepared = []
    for keys, entries in conversations:
        criteria = _criteria_for(keys["scenario"], rubric, lookup)
        prepared.append((keys, criteria, rubric_messages(entries, criteria)))  # rendered once, shared by samples
    results = await asyncio.gather(
        *(
            _judge_sample(model, messages, keys, criteria, k, temperature, max_tokens)
            for keys, criteria, messages in prepared
            for k in range(samples)
        )
    )
    return [row for rows in results for row in rows]


async def ajudge_rubric(
    transcripts: pd.DataFrame | Sequence[Mapping[str, Any]],
    *,
    rubric: RubricSpec = None,
    scenarios: Iterable[Any] | Mapping[str, Any] | None = None,
    model: Any = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """Async ``judge_rubric``: every conversation × sample is judged concurrently (the LLM layer bounds it)."""
    frame = as_transcripts(transcripts)
    conversations = [(keys, transcript_to_entries(rows)) for keys, rows in iter_conversations(frame)]
    rows = await arubric_rows(conversations, rubric=rubric, scenarios=scenarios, model=model, samples=samples,
                              temperature=temperature, max_tokens=max_tokens)
    return typed_frame(rows, RUBRIC_SCHEMA)


def judge_rubric(
    transcripts: pd.DataFrame | Sequence[Mapping[str, Any]],
    *,
    rubric: RubricSpec = None,
    scenarios: Iterable[Any] | Mapping[str, Any] | None = None,
    model: Any = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """Judge each conversation against its rubric: one row per conversation × criterion × sample.

    Args:
        transcripts: A transcript frame (``convoeval.frames.TRANSCRIPT_COLUMNS``) of one or many conversations, or
            one conversation as a list of message dicts (``role``, ``text``, optionally ``scenario``).
        rubric: The criteria: one list for every conversation, or ``{scenario_id: [criteria]}``. Items are strings
            or ``RubricCriterion`` objects. Default: each conversation's scenario's rubric (from ``scenarios``).
        scenarios: The scenarios (a list or ``{id: scenario}``), used when ``rubric`` is not given; default the
            project's scenarios, looked up by the transcript's ``scenario`` id.
        model: The judge model: a name, ``"local"``, a mapping of model settings or a chat model; default the
            environment's (``convoeval.models.get_model("judge")``).
        samples: Ask the judge this many times per conversation (independent samples, distinct cache identities).
        temperature: Sampling temperature (``None`` = the judge model's own).
        max_tokens: Output cap (default grows with the number of criteria).

    Returns:
        A frame with ``RUBRIC_COLUMNS``. Rows the judge could not produce have ``passed`` missing and an ``error``.

    Raises:
        ValueError: a conversation whose scenario has no rubric (before any call is made).
        CacheMissError: replay-only cache mode and a judge call was never recorded.

    Example:
        >>> judge_rubric(transcripts, scenarios=scenarios, samples=3)  # doctest: +SKIP
    """
    return run_sync(
        ajudge_rubric(
            transcripts,
            rubric=rubric,
            scenarios=scenarios,
            model=model,
            samples=samples,
            temperature=temperature,
            max_tokens=max_tokens,
        )
    )
