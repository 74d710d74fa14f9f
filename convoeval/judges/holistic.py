"""The holistic judge: six 0–10 scores for a whole conversation, the issues found and one suggestion.

``overall`` is the mean of the six dimensions, computed here: the judge is not asked for its own arithmetic (a
small local model got it wrong). A reply that cannot be validated (after the LLM layer's retry) is an error row
with NaN scores — never a default score such as 5.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
from pydantic import BaseModel, Field

from convoeval import frames as F
from convoeval._util.aio import blocking
from convoeval.frames import HOLISTIC_DIMENSIONS, HOLISTIC_SCHEMA
from convoeval.judges._common import conversation_row, identity_for, judge_chat_model, judge_seed, load_json
from convoeval.judges.prompts import HOLISTIC_PROMPT_VERSION, HOLISTIC_SYSTEM_PROMPT, HOLISTIC_USER_TEMPLATE
from convoeval.judges.render import render_transcript
from convoeval.judges.scored import (  # noqa: F401 - Score, Issue, mean_score: their names here before scored.py
    SUGGESTION_MAX_CHARS,
    Issue,
    Score,
    mean_score,
    scored_call,
    validate_scored,
)
from convoeval.llm.models import ModelLike
from convoeval.scenarios import scenarios_by_id

MAX_ISSUES = 10
DEFAULT_MAX_TOKENS = 1200


class HolisticScores(BaseModel):  # noqa: D101 - a docstring would become the schema's description the judge is sent
    correctness: Score
    helpfulness: Score
    tone: Score
    safety: Score
    conciseness: Score
    goal_completion: Score


class HolisticAnswer(BaseModel):
    """The holistic judge's structured answer: issues (the evidence) before the scores."""

    issues: list[Issue] = Field(max_length=MAX_ISSUES)
    scores: HolisticScores
    suggestion: str = Field(max_length=SUGGESTION_MAX_CHARS)


@dataclass(frozen=True)
class HolisticResult:
    """A parsed holistic answer: ``overall`` is our mean; ``judge_overall`` the judge's own figure, if it gave one."""

    scores: dict[str, float]
    overall: float
    issues: list[str] = field(default_factory=list)
    suggestion: str = ""
    judge_overall: float | None = None


def parse_holistic_response(text: str) -> HolisticResult:
    """Parse a holistic judge's JSON text, failing closed.

    Args:
        text: The judge's reply (markdown fences tolerated).

    Returns:
        The six scores, our ``overall`` (their mean), the issues, the suggestion and the judge's own ``overall``.

    Raises:
        JudgeParseError: when the reply is not JSON or a score is missing or outside 0–10 — never a default 5.

    Example:
        >>> r = parse_holistic_response('{"scores": {"correctness": 8, "helpfulness": 8, "tone": 8, "safety": 8, '
        ...                             '"conciseness": 8, "goal_completion": 8}}')
        >>> r.overall
        8.0
    """
    data = load_json(text)
    answer = validate_scored(data, HolisticAnswer)
    scores = answer.scores.model_dump()  # type: ignore[attr-defined]
    judge_overall = data.get("overall")
    if isinstance(judge_overall, bool) or not isinstance(judge_overall, (int, float)):
        judge_overall = None  # true is not a figure
    return HolisticResult(
        scores=scores,
        overall=mean_score(scores, HOLISTIC_DIMENSIONS),
        issues=list(answer.issues),  # type: ignore[attr-defined]
        suggestion=answer.suggestion,  # type: ignore[attr-defined]
        judge_overall=None if judge_overall is None else float(judge_overall),
    )


# ── The judge over transcript frames ──


def _lookup(values: str | Mapping[str, str] | None, scenario: str | None) -> str | None:
    if values is None or isinstance(values, str):
        return values
    return values.get(scenario or "")


async def _judge_sample(
    model: Any, messages: list[tuple[str, str]], keys: Mapping[str, Any], sample: int,
    temperature: float | None, max_tokens: int | None,
) -> dict[str, Any]:
    row = {**conversation_row(keys), "sample": sample, "prompt_version": HOLISTIC_PROMPT_VERSION}
    return await scored_call(model, messages, row, answer_type=HolisticAnswer, dimensions=HOLISTIC_DIMENSIONS,
                             identity=identity_for(keys, sample=sample, extra="holistic"),
                             seed=judge_seed(keys, sample), temperature=temperature,
                             max_tokens=max_tokens or DEFAULT_MAX_TOKENS)


def holistic_messages(entries: Sequence[Mapping[str, Any]], *, goal: str, agent_type: str | None
                      ) -> list[tuple[str, str]]:
    """The holistic judge's prompt for one conversation (system prompt first, so servers can cache the prefix)."""
    user = HOLISTIC_USER_TEMPLATE.format(
        agent_type=agent_type or "unknown",
        goal=" ".join(goal.split()),
        transcript=render_transcript(entries),
    )
    return [("system", HOLISTIC_SYSTEM_PROMPT), ("user", user)]


async def aholistic_rows(
    conversations: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
    *,
    goals: str | Mapping[str, str] | None = None,
    agent_types: str | Mapping[str, str] | None = None,
    scenarios: Iterable[Any] | Mapping[str, Any] | None = None,
    model: ModelLike = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """``judge_holistic`` over plain rows: ``(conversation keys, message dicts)`` in, score rows out, no frame built.

    Every conversation is checked before the first call is made; every conversation × sample is judged
    concurrently (the LLM layer bounds it).
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    model = judge_chat_model(model)
    lookup = scenarios_by_id(scenarios)
    prepared = []
    for keys, entries in conversations:
        scenario = lookup.get(keys["scenario"])
        goal = _lookup(goals, keys["scenario"]) or getattr(scenario, "goal", None)
        agent_type = _lookup(agent_types, keys["scenario"]) or keys.get("agent") or getattr(scenario, "agent", None)
        if not goal:
            raise ValueError(f"no goal for scenario {keys['scenario']!r}: pass goals=... or scenarios=[...]")
        prepared.append((keys, holistic_messages(entries, goal=goal, agent_type=agent_type)))
    return list(await asyncio.gather(
        *(
            _judge_sample(model, messages, keys, k, temperature, max_tokens)
            for keys, messages in prepared
            for k in range(samples)
        )
    ))


async def ajudge_holistic(
    transcripts: pd.DataFrame | Sequence[Mapping[str, Any]],
    *,
    goals: str | Mapping[str, str] | None = None,
    agent_types: str | Mapping[str, str] | None = None,
    scenarios: Iterable[Any] | Mapping[str, Any] | None = None,
    model: ModelLike = None,
    samples: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> pd.DataFrame:
    """Score each whole conversation on six 0–10 dimensions: one row per conversation × sample.

    ``judge_holistic`` is the blocking form of ``ajudge_holistic`` (scripts, notebooks).

    Args:
        transcripts: A transcript frame of one or many conversations, or one conversation as a list of message
            dicts (``role``, ``text``, optionally ``scenario``).
        goals: The patient's goal: one for all, or ``{scenario_id: goal}``. Default: each scenario's ``goal``.
        agent_types: The agent type shown to the judge; default the transcript's ``agent`` column.
        scenarios: The scenarios (a list or ``{id: scenario}``), used for what is not given explicitly; default the
            project's scenarios, looked up by the transcript's ``scenario`` id.
        model: The judge model: a name, ``"local"``, a mapping of model settings or a chat model; default the
            environment's (``convoeval.llm.models.get_model("judge")``).
        samples: Ask the judge this many times per conversation (distinct cache identities).
        temperature: Sampling temperature (``None`` = the judge model's own).
        max_tokens: Output cap.

    Returns:
        A frame with ``HOLISTIC_COLUMNS``; ``overall`` is the mean of the six scores. A failed judge call gives
        NaN scores and an ``error``.

    Raises:
        ValueError: a conversation without a goal (before any call is made).
        CacheMissError: replay-only cache mode and a judge call was never recorded.

    Example (calls the judge model, so not run as a doctest)::

        judge_holistic(transcripts, scenarios=scenarios)
    """
    frame = F.as_transcripts(transcripts)
    conversations = [(keys, F.transcript_to_entries(rows)) for keys, rows in F.iter_conversations(frame)]
    rows = await aholistic_rows(conversations, goals=goals, agent_types=agent_types, scenarios=scenarios,
                                model=model, samples=samples, temperature=temperature, max_tokens=max_tokens)
    return F.typed_frame(rows, HOLISTIC_SCHEMA)


judge_holistic = blocking(ajudge_holistic)
