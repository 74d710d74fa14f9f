"""Scripted scenarios, turn by turn: the fixed per-turn checks and the five-dimension per-turn judge."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
from pydantic import BaseModel, Field

from convoeval import frames as F
from convoeval._util.aio import blocking
from convoeval.frames import TURN_DIMENSIONS
from convoeval.judges._common import identity_for, judge_chat_model, judge_seed
from convoeval.judges.prompts import TURN_PROMPT_VERSION, TURN_SYSTEM_PROMPT, TURN_USER_TEMPLATE
from convoeval.judges.render import render_transcript
from convoeval.judges.scored import SUGGESTION_MAX_CHARS, Issue, Score, scored_call
from convoeval.llm.models import ModelLike

MAX_ISSUES = 5
DEFAULT_MAX_TOKENS = 800


class TurnScores(BaseModel):  # noqa: D101 - a docstring would become the schema's description the judge is sent
    correctness: Score
    helpfulness: Score
    tone: Score
    safety: Score
    conciseness: Score


class TurnAnswer(BaseModel):
    """The per-turn judge's structured answer: issues (the evidence) before the scores."""

    issues: list[Issue] = Field(max_length=MAX_ISSUES)
    scores: TurnScores
    suggestion: str = Field(max_length=SUGGESTION_MAX_CHARS)


# ── Fixed checks ──


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def _reply_parts(reply: Any) -> tuple[str, list[str]]:
    """Text and called tool names of an ``AgentReply``, a transcript entry or a plain mapping."""
    text = _get(reply, "text")
    if text is None:
        text = "\n".join(_get(reply, "bubbles") or [])
    tools = _get(reply, "tools")
    if tools is None:
        tools = [_get(t, "name") for t in (_get(reply, "tool_calls") or [])]
    return str(text or ""), [str(t) for t in tools]


def check_turn(expectations: Any, reply: Any) -> list[str]:
    """Check one agent reply against a scripted turn's expectations.

    Args:
        expectations: A ``TurnExpectations`` (or a mapping with its fields): ``tools_called``,
            ``tools_not_called``, ``response_contains`` / ``response_not_contains`` (case-insensitive),
            ``response_matches`` (a Python regular expression, searched), ``max_tool_calls``.
        reply: An ``AgentReply``, a transcript entry, or a mapping with ``text``/``bubbles`` and
            ``tools``/``tool_calls``.

    Returns:
        One message per failed expectation (empty when all hold), e.g.
        ``"tools_called: expected generate_payment_link, got [lookup_invoices]"``.

    Example:
        >>> check_turn({"response_contains": ["pix"]}, {"text": "Pague via PIX", "tools": []})
        []
    """
    text, tools = _reply_parts(reply)
    lowered = text.casefold()
    failures = []
    for name in _get(expectations, "tools_called") or []:
        if name not in tools:
            failures.append(f"tools_called: expected {name}, got [{', '.join(tools)}]")
    for name in _get(expectations, "tools_not_called") or []:
        if name in tools:
            failures.append(f"tools_not_called: {name} was called")
    for needle in _get(expectations, "response_contains") or []:
        if needle.casefold() not in lowered:
            failures.append(f"response_contains: missing {needle!r}")
    for needle in _get(expectations, "response_not_contains") or []:
        if needle.casefold() in lowered:
            failures.append(f"response_not_contains: found {needle!r}")
    pattern = _get(expectations, "response_matches")
    if pattern and not re.search(pattern, text):
        failures.append(f"response_matches: no match for /{pattern}/")
    limit = _get(expectations, "max_tool_calls")
    if limit is not None and len(tools) > limit:
        failures.append(f"max_tool_calls: expected at most {limit}, got {len(tools)}")
    return failures


# ── Per-turn judge ──


async def _judge_sample(model: Any, messages: list[tuple[str, str]], keys: Mapping[str, Any], turn: int,
                        sample: int, temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
    row = {**keys, "turn": turn, "sample": sample, "prompt_version": TURN_PROMPT_VERSION}
    return await scored_call(model, messages, row, answer_type=TurnAnswer, dimensions=TURN_DIMENSIONS,
                             identity=identity_for(keys, sample=sample, extra="turn", turn=turn),
                             seed=judge_seed(keys, sample), temperature=temperature,
                             max_tokens=max_tokens or DEFAULT_MAX_TOKENS)


async def ajudge_turn(
    transcript: pd.DataFrame | Sequence[Any],
    *,
    agent_type: str,
    model: ModelLike = None,
    samples: int = 1,
    run_id: str | None = None,
    scenario: str = "",
    seed: int | None = None,
    trial: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """Score the agent's last reply of a scripted conversation on five 0–10 dimensions.

    ``judge_turn`` is the blocking form of ``ajudge_turn`` (scripts, notebooks).

    Args:
        transcript: The conversation up to and including the reply to judge (frame or entries).
        agent_type: The agent type shown to the judge (e.g. ``"billing"``).
        model: The judge model; default ``convoeval.llm.models.get_model("judge")``.
        samples: Independent judge samples (distinct cache identities).
        run_id, scenario, seed, trial: The conversation's identity, copied into the rows and the cache identity.
        temperature: Sampling temperature (``None`` = the judge model's own).
        max_tokens: Output cap.

    Returns:
        One row per sample with ``TURN_COLUMNS`` keys (``check_failures`` is left to the caller, from
        ``check_turn``); a failed judge call gives NaN scores and an ``error``.

    Example (calls the judge model, so not run as a doctest)::

        rows = judge_turn(entries, agent_type="billing", scenario="billing-pix")
    """
    entries = F.as_entries(transcript)
    if not entries or entries[-1]["role"] != "agent":
        raise ValueError("judge_turn needs a transcript that ends with the agent's reply to judge")
    if samples < 1:
        raise ValueError("samples must be at least 1")
    model = judge_chat_model(model)
    turn = (len(entries) - 1) // 2 + 1  # the turn numbering of render_transcript
    user = TURN_USER_TEMPLATE.format(agent_type=agent_type, transcript=render_transcript(entries), turn=turn)
    messages = [("system", TURN_SYSTEM_PROMPT), ("user", user)]
    keys = {"run_id": run_id, "scenario": scenario, "agent": agent_type, "seed": seed, "trial": trial}
    return list(
        await asyncio.gather(
            *(_judge_sample(model, messages, keys, turn, k, temperature, max_tokens) for k in range(samples))
        )
    )


judge_turn = blocking(ajudge_turn)
