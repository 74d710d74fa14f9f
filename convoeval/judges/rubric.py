"""The rubric judge: per conversation, a pass/fail verdict with evidence for each natural-language criterion.

Fail closed: a criterion the judge left out, conflicting verdicts for one criterion, a verdict for a criterion that
does not exist, or a reply that cannot be validated (after the LLM layer's retry) become error rows — ``passed``
missing, ``error`` saying why — never a pass.
Verdicts are matched to criteria by the number the criterion was given, never by the judge's wording of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from convoeval import frames as F
from convoeval._util.aio import blocking
from convoeval.frames import RUBRIC_SCHEMA
from convoeval.judges._common import (
    conversation_row,
    error_text,
    identity_for,
    is_judge_error,
    judge_chat_model,
    judge_columns,
    judge_seed,
)
from convoeval.judges.prompts import RUBRIC_PROMPT_VERSION, RUBRIC_SYSTEM_PROMPT, RUBRIC_USER_TEMPLATE, numbered
from convoeval.judges.render import render_transcript
from convoeval.judges.rubric_answer import (  # noqa: F401 - the answer's models and parser, re-exported
    EVIDENCE_MAX_CHARS,
    MAX_CRITERIA,
    REASONING_MAX_CHARS,
    CriterionResult,
    CriterionVerdict,
    Verdict,
    match_verdicts,
    parse_rubric_response,
    rubric_schema,
)
from convoeval.llm import acall_model
from convoeval.llm.models import ModelLike
from convoeval.scenarios import scenarios_by_id

#: Output budget: generous, since a cut-off reply is an error for every criterion.
TOKENS_BASE, TOKENS_PER_CRITERION = 200, 400


# ── The judge over transcript frames ──

RubricSpec = Sequence[Any] | Mapping[str, Sequence[Any]] | None


def _criteria_for(scenario: str | None, rubric: RubricSpec, scenarios: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(text, assertion)`` pairs for a conversation's scenario."""
    if isinstance(rubric, Mapping):
        items = rubric.get(scenario or "")
    elif rubric is not None:
        items = rubric
    elif scenario is not None and scenario in scenarios:
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
        result = await acall_model(
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
    model: ModelLike = None,
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
    lookup = scenarios_by_id(scenarios)
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
    model: ModelLike = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """Judge each conversation against its rubric: one row per conversation × criterion × sample.

    ``judge_rubric`` is the blocking form of ``ajudge_rubric`` (scripts, notebooks).

    Args:
        transcripts: A transcript frame (``convoeval.frames.TRANSCRIPT_COLUMNS``) of one or many conversations, or
            one conversation as a list of message dicts (``role``, ``text``, optionally ``scenario``).
        rubric: The criteria: one list for every conversation, or ``{scenario_id: [criteria]}``. Items are strings
            or ``RubricCriterion`` objects. Default: each conversation's scenario's rubric (from ``scenarios``).
        scenarios: The scenarios (a list or ``{id: scenario}``), used when ``rubric`` is not given; default the
            project's scenarios, looked up by the transcript's ``scenario`` id.
        model: The judge model: a name, ``"local"``, a mapping of model settings or a chat model; default the
            environment's (``convoeval.llm.models.get_model("judge")``).
        samples: Ask the judge this many times per conversation (independent samples, distinct cache identities).
        temperature: Sampling temperature (``None`` = the judge model's own).
        max_tokens: Output cap (default grows with the number of criteria).

    Returns:
        A frame with ``RUBRIC_COLUMNS``. Rows the judge could not produce have ``passed`` missing and an ``error``.

    Raises:
        ValueError: a conversation whose scenario has no rubric (before any call is made).
        CacheMissError: replay-only cache mode and a judge call was never recorded.

    Example (calls the judge model, so not run as a doctest)::

        judge_rubric(transcripts, scenarios=scenarios, samples=3)
    """
    frame = F.as_transcripts(transcripts)
    conversations = [(keys, F.transcript_to_entries(rows)) for keys, rows in F.iter_conversations(frame)]
    rows = await arubric_rows(conversations, rubric=rubric, scenarios=scenarios, model=model, samples=samples,
                              temperature=temperature, max_tokens=max_tokens)
    return F.typed_frame(rows, RUBRIC_SCHEMA)


judge_rubric = blocking(ajudge_rubric)
