"""What the judges share: the judge's chat model, which failures become error rows, scenario look-ups, JSON clean-up."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from convoeval.errors import ConvoevalError
from convoeval.llm import CacheMissError, LLMError, LLMResult, SampleIdentity, model_info
from convoeval.llm.models import as_chat_model


class JudgeParseError(ConvoevalError, ValueError):
    """A judge's reply could not be turned into verdicts or scores. Never replaced by a default."""


def judge_chat_model(model: Any) -> Any:
    """A chat model for the judges: ``model`` itself when it is one, else ``get_model("judge", model)``.

    ``model`` may be ``None`` (the environment decides), a model name, ``"local"``, a mapping of model settings or a
    ``ModelSpec`` — the one model builder resolves them all — or a chat model object.
    """
    return as_chat_model("judge", model)


def judge_columns(model: Any, result: LLMResult | None) -> dict[str, Any]:
    """``judge_model`` / ``judge_provider`` from the call's result, or from the model when the call failed."""
    info = result.info if result is not None else model_info(model, "judge")
    return {"judge_model": info.model, "judge_provider": info.provider}


def is_judge_error(exc: BaseException) -> bool:
    """Failures recorded as judge error rows. A replay-only cache miss is not one: it must stop the run (CI)."""
    return isinstance(exc, LLMError) and not isinstance(exc, CacheMissError)


def error_text(exc: BaseException) -> str:
    """The error column's text for a failed call: the exception's type and message, at most 500 characters."""
    return f"{type(exc).__name__}: {exc}"[:500]


def identity_for(keys: Mapping[str, Any], *, sample: int, extra: str, turn: int | None = None) -> SampleIdentity:
    """The judge call's sample identity: sample ``k`` of ``samples=N`` is a distinct cache entry."""
    return SampleIdentity(
        scenario=str(keys.get("scenario") or keys.get("run_id") or ""),
        seed=keys.get("seed"),
        trial=int(keys.get("trial") or 0),
        role="judge",
        turn=turn,
        sample=sample,
        extra=extra,
    )


def judge_seed(keys: Mapping[str, Any], sample: int) -> int | None:
    """A seeded conversation gets seeded judge samples (reproducible); sample ``k`` uses ``seed + k``."""
    seed = keys.get("seed")
    return None if seed is None else int(seed) + sample


def conversation_row(keys: Mapping[str, Any]) -> dict[str, Any]:
    """The columns every judge row repeats from its conversation."""
    return {k: keys.get(k) for k in ("run_id", "scenario", "agent", "seed", "trial")}


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")


def load_json(text: str) -> Any:
    """Parse a judge's JSON reply, tolerating a surrounding markdown fence (small models add one).

    Raises:
        JudgeParseError: the text is not JSON.
    """
    cleaned = _FENCE.sub("", text.strip()).strip()
    try:
        return json.loads(cleaned)
    except ValueError as exc:
        raise JudgeParseError(f"the judge's reply is not JSON ({exc.args[0]}): {text[:120]!r}") from None
