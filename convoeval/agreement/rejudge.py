"""Judge saved conversations again with other judge configurations: the raw material for judge × judge agreement.

A run's transcripts are judged once, by the run's judge. To compare judges, the same transcripts are judged again by
each configuration (another model, another endpoint, another structured-output method, more samples); the result
frames carry a ``judge`` column naming the configuration, so ``rubric_ratings(..., rater="judge")`` and
``holistic_ratings(..., rater="judge")`` turn them into ratings frames for ``binary_agreement``/``score_agreement``.

Calls go through the response cache like every other judge call: re-judging a transcript with the configuration
that judged it first replays the recorded verdict, and re-running a notebook replays every re-judgement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from convoeval import frames as F
from convoeval._util.aio import run_sync
from convoeval.frames import RunFrames
from convoeval.judges.holistic import ajudge_holistic
from convoeval.judges.rubric import ajudge_rubric
from convoeval.llm.models import get_model

__all__ = ["judge_label", "judged_transcripts", "rejudge"]


def judge_label(spec: Any) -> str:
    """A short readable name for a judge specification (``local``, ``gpt-5-mini | json_mode``).

    Example:
        >>> judge_label({"provider": "local", "structured_method": "json_mode"})
        'local | json_mode'
    """
    if spec is None:
        return "default"
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        head = spec.get("model") or spec.get("provider") or spec.get("base_url") or "default"
        tail = [f"{k}={v}" if k not in ("structured_method",) else str(v)
                for k, v in sorted(spec.items()) if k not in ("model", "provider", "base_url", "api_key_env")]
        return " | ".join([str(head), *tail])
    return type(spec).__name__


def judged_transcripts(frames: RunFrames) -> pd.DataFrame:
    """The transcripts worth judging again: conversational runs that completed (errored runs have no verdicts).

    Args:
        frames: A run's or sweep's ``RunFrames`` (``convoeval.load_results(folder).frames``).

    Returns:
        The transcript rows of those runs (``TRANSCRIPT_SCHEMA``).
    """
    runs = frames.runs
    keep = runs[(runs["type"] == "conversational") & (runs["status"] == "completed")]["run_id"]
    transcripts = frames.transcripts
    return transcripts[transcripts["run_id"].isin(set(keep))].reset_index(drop=True)


def rejudge(
    frames: RunFrames,
    judges: Mapping[str, Any] | Iterable[Any],
    *,
    scenarios: Iterable[Any] | Mapping[str, Any],
    samples: int = 1,
    rubric: bool = True,
    holistic: bool = True,
) -> dict[str, pd.DataFrame]:
    """Judge every completed conversational run again with each judge configuration.

    Args:
        frames: A run's or sweep's ``RunFrames`` (``convoeval.load_results(folder).frames``).
        judges: ``{name: spec}`` (a spec is what ``convoeval.llm.models.get_model("judge", spec)`` takes, or a chat model),
            or a list of specs named by ``judge_label``.
        scenarios: The scenarios the runs came from (their rubrics and goals).
        samples: Samples per judge and conversation (``samples > 1`` feeds self-consistency).
        rubric: Re-run the rubric judge.
        holistic: Re-run the holistic judge.

    Returns:
        ``{"rubric": ..., "holistic": ...}``: the judges' frames concatenated, each row with a ``judge`` column.
        Judge failures are rows with ``error`` set, as in a run.

    Raises:
        ValueError: no judge configuration, or two with the same name.

    Example (calls the judge models, so not run as a doctest)::

        out = rejudge(frames, {"fc": {"provider": "local"},
                               "json": {"provider": "local", "structured_method": "json_mode"}},
                      scenarios=load_scenarios())
        binary_agreement(rubric_ratings(out["rubric"], rater="judge"))
    """
    named = _named(judges)
    return run_sync(_arejudge(frames, named, scenarios=scenarios, samples=samples, rubric=rubric,
                              holistic=holistic))


def _named(judges: Mapping[str, Any] | Iterable[Any]) -> dict[str, Any]:
    if isinstance(judges, Mapping):
        named = dict(judges)
    else:
        named = {}
        for spec in judges:
            label = judge_label(spec)
            if label in named:
                raise ValueError(f"two judge configurations are both named {label!r}; pass a dict to name them")
            named[label] = spec
    if not named:
        raise ValueError("rejudge needs at least one judge configuration")
    return named


async def _arejudge(frames: RunFrames, judges: dict[str, Any], *, scenarios: Any, samples: int,
                    rubric: bool, holistic: bool) -> dict[str, pd.DataFrame]:

    transcripts = judged_transcripts(frames)
    out: dict[str, list[pd.DataFrame]] = {"rubric": [], "holistic": []}
    for name, spec in judges.items():
        model = spec if _is_chat_model(spec) else get_model("judge", spec)
        if rubric:
            verdicts = await ajudge_rubric(transcripts, scenarios=scenarios, model=model, samples=samples)
            out["rubric"].append(verdicts.assign(judge=name))
        if holistic:
            scores = await ajudge_holistic(transcripts, scenarios=scenarios, model=model, samples=samples)
            out["holistic"].append(scores.assign(judge=name))
    empty = {"rubric": F.RUBRIC_SCHEMA, "holistic": F.HOLISTIC_SCHEMA}
    return {
        kind: (pd.concat(parts, ignore_index=True) if parts else F.empty_frame(empty[kind]).assign(judge=pd.Series(
            dtype="string")))
        for kind, parts in out.items()
    }


def _is_chat_model(spec: Any) -> bool:
    return hasattr(spec, "ainvoke") and hasattr(spec, "bind")
