"""What the judges share: model resolution, which failures become error rows, scenario look-ups, JSON clean-up."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from convoeval.llm import CacheMissError, LLMError, LLMResult, SampleIdentity, model_info


class JudgeParseError(ValueError):
    """A judge's reply could not be turned into verdicts or scores. Never replaced by a default."""


def resolve_model(model: Any) -> Any:
    """A chat model for the judges: ``model`` itself when it is one, else ``get_model("judge", model)``.

    ``model`` may be ``None`` (the environment decides), a model name, ``"local"``, a mapping of model settings or a
    ``ModelSpec`` — the one model builder resolves them all — or a chat model object.
    """
    from convoeval.models import as_chat_model

    return as_chat_model("judge", model)


def judge_columns(model: Any, result: LLMResult | None) -> dict[str, Any]:
    """``judge_model`` / ``judge_provider`` from the call's result, or from the model when the call failed."""
    info = result.info if result is not None else model_info(model, "judge")
    return {"judge_model": info.model, "judge_provider": info.provider}


def is_judge_error(exc: BaseException) -> bool:
    """Failures recorded as judge error rows. A replay-only cache miss is not one: it must stop the run (CI)."""
    return isinstance(exc, LLMError) and not isinstance(exc, CacheMissError)


def error_text(exc: BaseException) -> str:
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


def by_id(scenarios: Iterable[Any] | Mapping[str, Any] | None) -> dict[str, Any]:
    """Scenarios indexed by id, from a list of scenario objects or an id -> scenario mapping.

    ``None`` means the project's scenarios (``load_scenarios()``), so a transcript from ``run_conversation`` can be
    judged without passing its scenario again; none when there is no project folder.
    """
    if scenarios is None:
        return _project_scenarios()
    if isinstance(scenarios, Mapping):
        return dict(scenarios)
    return {s.id: s for s in scenarios}


def _project_scenarios() -> dict[str, Any]:
    from convoeval.paths import default_scenarios_dir

    folder = default_scenarios_dir()
    if not folder.is_dir():
        return {}
    stamp = max((p.stat().st_mtime_ns for p in folder.rglob("*.y*ml")), default=0)
    key = (str(folder), stamp)
    if key not in _LOADED:
        from convoeval.scenarios import ScenarioError, load_scenarios

        try:
            _LOADED[key] = {s.id: s for s in load_scenarios(folder)}
        except ScenarioError:
            _LOADED[key] = {}
    return dict(_LOADED[key])


_LOADED: dict[tuple[str, int], dict[str, Any]] = {}


def conversation_row(keys: Mapping[str, Any]) -> dict[str, Any]:
    """The columns every judge row repeats from its conversation."""
    return {k: keys.get(k) for k in ("run_id", "scenario", "agent", "seed", "trial")}


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*|\s*```\s*$")


def load_json(text: str) -> Any:
    """Parse a judge's JSON reply, tolerating a surrounding markdown fence (as the seed's ``cleanJson``).

    Raises:
        JudgeParseError: the text is not JSON.
    """
    cleaned = _FENCE.sub("", text.strip()).strip()
    try:
        return json.loads(cleaned)
    except ValueError as exc:
        raise JudgeParseError(f"the judge's reply is not JSON ({exc.args[0]}): {text[:120]!r}") from None
