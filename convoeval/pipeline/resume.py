"""What a saved conversation was made with, and the check that a resumed run keeps none that was made otherwise.

A run started again on its results folder keeps the conversations already saved there (a killed run resumes). Kept
whatever they were made with, a conversation judged by another model, played by another simulated patient or
against another target, or from an older version of its scenario, would be reported under the new settings as if
they had made it: a new judge judged nothing, yet ``report.json`` named it (issue #39). So every conversation is
saved with its ``conversation_settings``, and a resumed run compares those of the conversations it would keep with
its own: any difference refuses the run, in one line naming the difference and the ways out, before anything is
written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from convoeval.agents import safe_target
from convoeval.llm.models import resolve_model
from convoeval.pipeline.config import ConfigError, EvalConfig
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.options import default_target
from convoeval.scenarios import Scenario, ScriptedScenario

__all__ = ["RESUME_SETTINGS", "check_resumable", "conversation_settings", "scenario_version"]

#: What a saved conversation records and a resumed run compares, in the order a refusal names them. A new entry is
#: one line here and one in ``_run_values`` (or ``conversation_settings`` for a per-conversation one); conversations
#: saved before it was added then lack it, so a resume on them is refused rather than trusted.
RESUME_SETTINGS = ("simulator_model", "simulator", "judge_model", "judge_samples", "target", "scenario_version")

#: Settings a scripted conversation does not depend on: its patient's lines are written in the scenario.
_PATIENT_SETTINGS = frozenset({"simulator_model", "simulator"})

#: The ways out of a refusal, as the CLI and the notebook's parameters spell them.
_WAYS_OUT = ("run them again with --no-resume (resume=False), or write to a new --out (output_dir); nothing was "
             "changed")


def _run_values(config: EvalConfig) -> dict[str, Any]:
    """The settings every conversation of the run shares, resolved as the run will use them (no model is built)."""
    return {
        # The model that answers, not the setting as typed: None means "the environment decides", and an API key
        # set since the last run changes the answer (issue #39). The endpoint is left out: the same model served
        # elsewhere (another port of a local server) is the same model.
        "simulator_model": _model("simulator", config.simulator_model),
        # Resolved as the run resolves it (``convoeval.simulator.choice.resolve_simulator``): None is the agenda
        # patient on the embedded model and the LLM patient on any other, so None and its resolved value are one.
        "simulator": config.simulator or ("agenda" if resolve_model("simulator", config.simulator_model).info.provider
                                          == "local" else "llm"),
        "judge_model": _model("judge", config.judge_model),
        "judge_samples": config.judge_samples,
    }


def _model(role: str, spec: Any) -> str:
    info = resolve_model(role, spec).info
    return f"{info.provider}/{info.model}"


def scenario_version(scenario: Scenario) -> str:
    """A short hash of the scenario's content as loaded (its fields, not its file's comments or layout).

    Fields left at their defaults are left out, so a field added to the scenario format later does not make every
    saved conversation look older than it is.
    """
    content = scenario.model_dump_json(exclude_defaults=True)
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


def conversation_settings(config: EvalConfig, jobs: Sequence[Job]) -> dict[str, dict[str, Any]]:
    """What each job's conversation is made with, by job key: the ``RESUME_SETTINGS``, JSON-ready.

    A scripted conversation records no simulator (``None``): it has none, so changing it is no reason to refuse it.

    Raises:
        LLMError: a model setting that cannot be resolved (``resolve_model``'s one-line reason).
    """
    shared = _run_values(config)
    versions: dict[int, str] = {}
    settings = {}
    for job in jobs:
        scenario = job.scenario
        if id(scenario) not in versions:
            versions[id(scenario)] = scenario_version(scenario)
        values = {**shared, "target": safe_target(job.target or config.target or default_target(scenario)),
                  "scenario_version": versions[id(scenario)]}
        if isinstance(scenario, ScriptedScenario):
            values.update(dict.fromkeys(_PATIENT_SETTINGS))
        settings[job.key] = {name: values[name] for name in RESUME_SETTINGS}
    return settings


def check_resumable(out: Path, kept: Mapping[str, Mapping[str, Any] | None],
                    wanted: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse a resumed run that would keep a conversation saved with other settings than ``wanted``.

    Args:
        out: the results folder (for the message).
        kept: the conversations the run would keep, ``key -> saved settings`` (``results.kept_conversations``;
            ``None``: saved without settings, by a convoeval that did not record them).
        wanted: this run's ``conversation_settings``, by key.

    Raises:
        ConfigError: one line naming each setting that differs (saved value, then this run's), the conversations
            saved without settings, and the ways out (``--no-resume``, a new ``--out``).
    """
    unrecorded = [key for key, saved in kept.items() if saved is None]
    differ: dict[str, tuple[set[str], set[str], set[str]]] = {}  # setting -> saved values, wanted values, scenarios
    keys = set(unrecorded)
    for key, saved in kept.items():
        if saved is None:
            continue
        now = wanted[key]
        for name in RESUME_SETTINGS:
            if saved.get(name) != now.get(name):
                was, will, scenarios = differ.setdefault(name, (set(), set(), set()))
                was.add(_shown(saved.get(name)))
                will.add(_shown(now.get(name)))
                scenarios.add(key.split("__", 1)[0])
                keys.add(key)
    if not keys:
        return
    reasons = [_difference(name, *differ[name]) for name in RESUME_SETTINGS if name in differ]
    if unrecorded:
        reasons.append(f"{len(unrecorded)} {'was' if len(unrecorded) == 1 else 'were'} saved without its settings "
                       "(by an older convoeval), so nothing shows it matches")
    raise ConfigError(f"results folder {out} holds {len(keys)} saved conversation(s) that resuming would keep and "
                      f"report as made with this run's settings, but {'; '.join(reasons)}: {_WAYS_OUT}")


def _difference(name: str, was: set[str], will: set[str], scenarios: set[str]) -> str:
    if name == "scenario_version":  # its hashes mean nothing to a reader: the scenarios do
        return f"scenario_version: {_few(scenarios)} changed since saved"
    return f"{name}: {_few(was)} when saved, {_few(will)} now"


def _few(values: set[str], most: int = 3) -> str:
    shown = sorted(values)
    return " or ".join(shown[:most]) + (f" (+{len(shown) - most} more)" if len(shown) > most else "")


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)
