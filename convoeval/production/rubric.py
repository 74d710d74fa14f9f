"""What ``convoeval judge`` checks on an imported folder: the criteria and the holistic judge's goal.

A file (``--criteria``: a YAML list, or ``{criteria: [...], goal: "..."}``, or a scenario file whose ``rubric`` and
``goal`` are used), one scenario's rubric (``--scenario``), or by default every criterion of the agent family's
conversational scenarios (the folder's ``agent`` column), each once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from convoeval.errors import ConvoevalError
from convoeval.judges.rubric_answer import MAX_CRITERIA
from convoeval.scenarios import ConversationalScenario, load_scenarios

__all__ = ["DEFAULT_GOAL", "JudgeFolderError", "Rubric", "production_rubric"]

#: The holistic judge's goal for a real conversation: no scenario says what the patient wanted.
DEFAULT_GOAL = ("Help the patient with what they asked for in this real conversation: understand the request, "
                "resolve it correctly and safely, or hand it to a person, in the patient's language.")


class JudgeFolderError(ConvoevalError, ValueError):
    """A judge that cannot start on this folder (no criteria, a hosted judge on unscrubbed text); one line."""


@dataclass(frozen=True)
class Rubric:
    """What the judges check: the rubric's criteria and the holistic judge's goal."""

    criteria: tuple[str, ...]
    goal: str = DEFAULT_GOAL
    source: str = ""


def production_rubric(agent: str | None, *, criteria_file: Path | str | None = None, scenario: str | None = None,
                      scenarios_dir: Path | str | None = None) -> Rubric:
    """The criteria for an imported folder: a file, one scenario's rubric, or the agent family's.

    Raises:
        JudgeFolderError: the file holds no criteria, the scenario is unknown, or the family has no scenario.
    """
    if criteria_file is not None:
        return _from_file(Path(criteria_file))
    found = [s for s in load_scenarios(scenarios_dir) if isinstance(s, ConversationalScenario)]
    if scenario is not None:
        chosen = [s for s in found if s.id == scenario]
        if not chosen:
            raise JudgeFolderError(f"no conversational scenario {scenario!r} (convoeval validate lists them)")
        return Rubric(tuple(c.text for c in chosen[0].rubric), chosen[0].goal, f"scenario {scenario}")
    family = [s for s in found if s.agent == agent]
    if not family:
        raise JudgeFolderError(f"the folder's agent family {agent!r} has no conversational scenario: give --criteria "
                               "FILE or --scenario ID (or import with --agent billing, scheduling, …)")
    criteria = tuple(dict.fromkeys(c.text for s in family for c in s.rubric))[:MAX_CRITERIA]
    return Rubric(criteria, DEFAULT_GOAL, f"the {agent} scenarios' rubric ({len(family)} scenarios)")


def _from_file(path: Path) -> Rubric:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise JudgeFolderError(f"{path}: not a readable YAML file of criteria ({exc})") from None
    if isinstance(data, dict) and "rubric" in data:  # a scenario file
        items = [c if isinstance(c, str) else c.get("text") for c in data.get("rubric") or []]
        return Rubric(tuple(str(c) for c in items if c), str(data.get("goal") or DEFAULT_GOAL), str(path))
    if isinstance(data, dict):
        items, goal = data.get("criteria") or [], str(data.get("goal") or DEFAULT_GOAL)
    else:
        items, goal = data or [], DEFAULT_GOAL
    criteria = tuple(str(c).strip() for c in items if str(c).strip()) if isinstance(items, list) else ()
    if not criteria:
        raise JudgeFolderError(f"{path}: no criteria (a YAML list, or criteria: [...] with an optional goal:)")
    if len(criteria) > MAX_CRITERIA:
        raise JudgeFolderError(f"{path}: {len(criteria)} criteria; at most {MAX_CRITERIA} per judge call")
    return Rubric(criteria, goal, str(path))
