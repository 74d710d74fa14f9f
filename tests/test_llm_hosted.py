"""Opt-in checks against a hosted API (OPENAI_API_KEY and CONVOEVAL_TEST_HOSTED=1): text and strict structured output."""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel, Field

from convoeval.llm import SampleIdentity, acall_model
from convoeval.llm.models import clear_model_cache, get_model

pytestmark = [
    pytest.mark.hosted,
    pytest.mark.skipif(
        os.environ.get("CONVOEVAL_TEST_HOSTED") != "1" or not os.environ.get("OPENAI_API_KEY"),
        reason="hosted API tests are opt-in: CONVOEVAL_TEST_HOSTED=1 and OPENAI_API_KEY",
    ),
]


class Verdict(BaseModel):
    passed: bool
    reason: str = Field(max_length=80)


async def test_hosted_text_and_structured_output():
    clear_model_cache()
    judge = get_model("judge")
    identity = SampleIdentity(scenario="hosted-smoke", seed=1, trial=1, role="judge")
    text = await acall_model(judge, [("user", "Say OK.")], identity=identity, cache="off")
    assert text.text.strip() and text.prompt_tokens and text.cost_usd is not None
    verdict = await acall_model(
        judge, [("user", "Agent: your bill is R$ 120. Criterion: the agent states the amount. Judge it.")],
        identity=identity, schema=Verdict, cache="off",
    )  # fmt: skip
    assert isinstance(verdict.parsed, Verdict)
