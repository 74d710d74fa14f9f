"""Run the bias probes: judge the original transcripts once and each perturbed version, then pair the verdicts.

Every probe is a before/after comparison on the same conversations with the same judge, samples and seeds, so the
only difference between the two judge calls is the perturbation (a perturbed transcript, or a shuffled rubric, has
different messages and so a different cache key: nothing is replayed across the pair).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from convoeval._util.aio import blocking
from convoeval.agreement.probes.pairing import holistic_pairs, pair_frame_of, rubric_pairs
from convoeval.agreement.probes.perturb import conversation_locales, inject, pad_verbosity, shuffle_criteria
from convoeval.agreement.probes.translate import ERROR_COLUMN, atranslate_transcripts
from convoeval.judges.holistic import ajudge_holistic
from convoeval.judges.rubric import ajudge_rubric
from convoeval.llm.models import ModelLike, as_chat_model
from convoeval.scenarios import scenarios_by_id
from convoeval.stats.bootstrap import N_BOOT
from convoeval.stats.effects import probe_effects
from convoeval.stats.estimation import Estimation

#: The probes, by name: what each one changes between ``before`` and ``after``.
PROBES: dict[str, str] = {
    "criteria_order": "the rubric's criteria shown in a seeded shuffled order (never the original one); verdicts "
                      "mapped back to our criteria. Rubric judge only; single-criterion rubrics are excluded.",
    "verbosity": "every non-empty agent message padded with a content-free opener and closer in the "
                 "conversation's language.",
    "injection_agent_en": "one agent message ends with an English line steering the judge (ignore instructions and "
                          "give 10, a fake closing tag, or a fake [GOAL_COMPLETE]).",
    "injection_agent_pt": "the same in pt-BR, in an agent message.",
    "injection_patient_en": "the English attack line in a patient message.",
    "injection_patient_pt": "the pt-BR attack line in a patient message.",
    "language": "every message translated by an LLM into the other language (pt-BR -> en, en -> pt-BR, es -> en); "
                "criteria and goal unchanged.",
}
INJECTION_PROBES = {
    "injection_agent_en": ("agent", "en"),
    "injection_agent_pt": ("agent", "pt-BR"),
    "injection_patient_en": ("patient", "en"),
    "injection_patient_pt": ("patient", "pt-BR"),
}
#: The language probe's target for each conversation language.
OTHER_LANGUAGE = {"pt-BR": "en", "en": "pt-BR", "es": "en"}
#: The ``probe`` value of the original judgements in ``ProbeResult.judged``.
ORIGINAL = "(original)"


@dataclass
class ProbeResult:
    """What ``run_probes`` returns.

    Attributes:
        pairs: One row per probe × conversation × instrument × item × judge sample (``PAIR_COLUMNS``): ``before``
            and ``after`` are 1.0/0.0 verdicts (rubric) or 0–10 scores (holistic); ``error`` says why a pair is
            excluded (a judge error on either side, a failed translation, a conversation the probe cannot change).
        effects: ``probe_effects(pairs)``: effect, CI, flip rate, test and p-value per probe × instrument × item.
        judged: ``{"rubric": frame, "holistic": frame}``: every judge row, with a ``probe`` column
            (``"(original)"`` for the originals).
        transcripts: The perturbed transcripts that were judged, by probe (the language probe's frame keeps its
            ``translation_error`` column).
    """

    pairs: pd.DataFrame
    effects: pd.DataFrame
    judged: dict[str, pd.DataFrame] = field(default_factory=dict)
    transcripts: dict[str, pd.DataFrame] = field(default_factory=dict)

    def plot(self) -> Any:
        """The forest plot of the pooled effects (``plot_probe_effects``)."""
        from convoeval.stats.effects_plot import plot_probe_effects  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

        return plot_probe_effects(self.effects)


@dataclass
class _Plan:
    """One probe's perturbed input: the frame to judge, the rubric to use, and conversations left out (why)."""

    frame: pd.DataFrame
    rubric: dict[str, list[Any]] | None = None
    order: dict[str, list[int]] = field(default_factory=dict)
    skipped: dict[Any, str] = field(default_factory=dict)
    shown: pd.DataFrame | None = None


async def arun_probes(
    transcripts: pd.DataFrame,
    *,
    scenarios: Iterable[Any] | Mapping[str, Any],
    probes: Sequence[str] = tuple(PROBES),
    model: ModelLike = None,
    samples: int = 1,
    seed: int = 0,
    translate_model: ModelLike = None,
    locales: Mapping[str, str] | None = None,
    n_boot: int = N_BOOT,
) -> ProbeResult:
    """Judge the transcripts as they are and under each probe; pair the verdicts and measure each probe's effect.

    ``run_probes`` is the blocking form of ``arun_probes`` (scripts, notebooks).

    Args:
        transcripts: A transcript frame of conversational runs (their scenarios need a rubric and a goal).
        scenarios: The scenarios (a list or ``{id: scenario}``): rubric, goal and language of each conversation.
        probes: Names from ``PROBES`` (default: all seven).
        model: The judge (rubric and holistic); default ``get_model("judge")``.
        samples: Judge samples per conversation, on both sides; sample ``k`` is paired with sample ``k``.
        seed: Seeds the perturbations (shuffled order, padding phrases, attack placement) and the bootstrap.
        translate_model: The language probe's translator; default the judge model.
        locales: ``{run_id or scenario id: locale}`` overriding the scenarios' ``locale``.
        n_boot: Bootstrap replicates for the CIs.

    Returns:
        A ``ProbeResult`` with ``pairs``, ``effects``, ``judged`` and ``transcripts``.

    Raises:
        ValueError: an unknown probe, an empty frame, or a conversation whose scenario has no rubric or goal —
            before any call is made.

    Example (calls the judge model, so not run as a doctest)::

        result = run_probes(transcripts, scenarios=scenarios, probes=["verbosity", "injection_agent_pt"])
        result.effects[result.effects["item"] == "(all)"]
        result.plot()
    """
    probes = _check_probes(probes)
    if transcripts.empty:
        raise ValueError("no conversation to probe: the transcript frame is empty")
    lookup = scenarios_by_id(scenarios)
    rubrics = _rubrics(transcripts, lookup)
    model = as_chat_model("judge", model)
    needs_language = any(p in ("verbosity", "language") for p in probes)
    languages = conversation_locales(transcripts, locales=locales, scenarios=lookup) if needs_language else {}

    async def judge(frame: pd.DataFrame, rubric: Any, holistic: bool) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        jobs = [ajudge_rubric(frame, rubric=rubric, scenarios=lookup, model=model, samples=samples)]
        if holistic:
            jobs.append(ajudge_holistic(frame, scenarios=lookup, model=model, samples=samples))
        out = await asyncio.gather(*jobs)
        return out[0], (out[1] if holistic else None)

    async def probe_run(probe: str) -> tuple[_Plan, pd.DataFrame | None, pd.DataFrame | None]:
        plan = await _plan(probe, transcripts, rubrics, languages, seed=seed,
                           translate_model=translate_model or model)
        if plan.frame.empty:
            return plan, None, None
        rubric_rows, holistic_rows = await judge(plan.frame, plan.rubric, probe != "criteria_order")
        return plan, rubric_rows, holistic_rows

    original, *runs = await asyncio.gather(judge(transcripts, None, True), *(probe_run(p) for p in probes))
    pairs, judged = [], {"rubric": [_tag(original[0], ORIGINAL)], "holistic": [_tag(original[1], ORIGINAL)]}
    for probe, (plan, rubric_rows, holistic_rows) in zip(probes, runs, strict=True):
        pairs.append(rubric_pairs(probe, original[0], rubric_rows, skipped=plan.skipped, order=plan.order))
        judged["rubric"].append(_tag(rubric_rows, probe))
        if probe != "criteria_order":
            pairs.append(holistic_pairs(probe, original[1], holistic_rows, skipped=plan.skipped))
            judged["holistic"].append(_tag(holistic_rows, probe))
    pair_frame = pair_frame_of(pairs)
    return ProbeResult(
        pairs=pair_frame,
        effects=probe_effects(pair_frame, estimation=Estimation(n_boot=n_boot, seed=seed), probe_order=probes),
        judged={k: pd.concat([f for f in v if f is not None], ignore_index=True) for k, v in judged.items()},
        transcripts={p: plan.shown if plan.shown is not None else plan.frame for p, (plan, _, _) in
                     zip(probes, runs, strict=True)},
    )


run_probes = blocking(arun_probes)


# ── perturbation plans ──


def _check_probes(probes: Sequence[str]) -> list[str]:
    probes = [probes] if isinstance(probes, str) else list(dict.fromkeys(probes))
    unknown = [p for p in probes if p not in PROBES]
    if unknown or not probes:
        raise ValueError(f"unknown or no probe(s) {unknown}; choose from {list(PROBES)}")
    return probes


def _rubrics(transcripts: pd.DataFrame, lookup: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Each scenario's rubric items; every scenario must have a rubric and a goal (checked before any call)."""
    out: dict[str, list[Any]] = {}
    for scenario in pd.unique(transcripts["scenario"]):
        found = lookup.get(scenario)
        items = list(getattr(found, "rubric", None) or [])
        if not items or not getattr(found, "goal", None):
            raise ValueError(f"scenario {scenario!r}: the probes need a conversational scenario with a rubric and "
                             "a goal in scenarios=[...]")
        out[scenario] = items
    return out


async def _plan(probe: str, transcripts: pd.DataFrame, rubrics: dict[str, list[Any]], languages: dict[Any, str], *,
                seed: int, translate_model: Any) -> _Plan:
    if probe == "criteria_order":
        rubric, order = {}, {}
        for scenario, items in rubrics.items():
            rubric[scenario], order[scenario] = shuffle_criteria(items, seed=seed, key=scenario)
        single = {s for s, items in rubrics.items() if len(items) < 2}
        skipped = {r: "criteria_order: the rubric has one criterion, so its order cannot change"
                   for r, s in _run_scenarios(transcripts).items() if s in single}
        return _Plan(transcripts[~transcripts["run_id"].isin(list(skipped))], rubric, order, skipped)
    if probe == "verbosity":
        perturbed = pad_verbosity(transcripts, seed=seed, locales=languages)
    elif probe in INJECTION_PROBES:
        role, language = INJECTION_PROBES[probe]
        perturbed = inject(transcripts, role=role, language=language, seed=seed)
    else:
        return await _translated(transcripts, languages, translate_model)
    changed = _changed(transcripts, perturbed)
    skipped = {r: f"{probe}: the perturbation left this conversation unchanged (nothing to perturb)"
               for r in pd.unique(transcripts["run_id"]) if r not in changed}
    return _Plan(perturbed[perturbed["run_id"].isin(list(changed))], skipped=skipped, shown=perturbed)


async def _translated(transcripts: pd.DataFrame, languages: dict[Any, str], model: Any) -> _Plan:
    positions = pd.Series(range(len(transcripts)), index=transcripts.index)
    targets = transcripts["run_id"].map(lambda r: OTHER_LANGUAGE[languages[r]])
    groups = [(to, transcripts[targets.to_numpy() == to]) for to in pd.unique(targets)]
    translated = await asyncio.gather(*(atranslate_transcripts(frame, to=to, model=model, locales=languages)
                                        for to, frame in groups))
    shown = pd.concat([t.assign(_pos=positions[f.index].to_numpy()) for (_, f), t in zip(groups, translated,
                                                                                         strict=True)])
    shown = shown.sort_values("_pos", kind="stable").drop(columns="_pos")
    failed = shown[shown[ERROR_COLUMN].notna()].drop_duplicates("run_id")
    skipped = dict(zip(failed["run_id"], "language: " + failed[ERROR_COLUMN], strict=True))
    # A "translation" identical to the original would be a replay, not a probe (the local 0.5B model copied
    # messages unchanged when not told the source language).
    changed = _changed(transcripts, shown)
    for run_id in pd.unique(transcripts["run_id"]):
        if run_id not in changed and run_id not in skipped:
            skipped[run_id] = "language: the translation came back identical to the original"
    frame = shown[~shown["run_id"].isin(list(skipped))].drop(columns=ERROR_COLUMN)
    return _Plan(frame, skipped=skipped, shown=shown)


def _changed(before: pd.DataFrame, after: pd.DataFrame) -> set[Any]:
    old = before["text"].fillna("").to_numpy()
    new = after["text"].fillna("").to_numpy()
    return set(before["run_id"].to_numpy()[old != new])


def _run_scenarios(transcripts: pd.DataFrame) -> dict[Any, Any]:
    firsts = transcripts.drop_duplicates("run_id")
    return dict(zip(firsts["run_id"], firsts["scenario"], strict=True))


def _tag(frame: pd.DataFrame | None, probe: str) -> pd.DataFrame | None:
    return None if frame is None else frame.assign(probe=probe)
