"""Which conversation to fork or pin: a ``ConversationResult``, a saved ``runs/<key>.json``, or a results folder and
a conversation id; and the scenario it was run from."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convoeval.pipeline.conversation import ConversationResult
from convoeval.scenarios import Scenario, load_scenarios

__all__ = ["ConversationSource", "load_conversation", "patient_turns", "scenario_of"]

#: What the verbs accept as "the conversation": a result, a payload, a ``runs/<key>.json`` or a results folder.
ConversationSource = ConversationResult | Mapping[str, Any] | Path | str


def load_conversation(run: ConversationSource, conversation: str | None = None) -> ConversationResult:
    """One saved conversation.

    Args:
        run: a ``ConversationResult``, a payload mapping, a ``runs/<key>.json`` file, or a results folder.
        conversation: with a folder, which conversation: its key (the file name without ``.json``), its ``run_id``
            or a unique prefix of either. A folder holding one conversation needs none.

    Raises:
        ValueError: the file or folder does not exist, holds no conversation, or the id matches none or several.
    """
    if isinstance(run, ConversationResult):
        return run
    if isinstance(run, Mapping):
        return ConversationResult.from_payload(run)
    path = Path(run).expanduser()
    if path.is_file():
        return ConversationResult.from_payload(_read(path))
    if not path.is_dir():
        raise ValueError(f"{path} is neither a conversation file (runs/<key>.json) nor a results folder")
    return _from_folder(path, conversation)


def _read(path: Path) -> dict[str, Any]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable conversation file: {exc}") from None
    if not isinstance(payload, dict) or not payload.get("runs"):
        raise ValueError(f"{path} is not a conversation file (no 'runs' row)")
    return payload


def _from_folder(folder: Path, conversation: str | None) -> ConversationResult:
    runs = folder / "runs" if (folder / "runs").is_dir() else folder
    files = sorted(runs.glob("*.json"))
    if not files:
        raise ValueError(f"{folder} holds no saved conversation (no runs/*.json)")
    if conversation is None:
        if len(files) > 1:
            raise ValueError(f"{folder} holds {len(files)} conversations: name one (its file name or run_id)")
        return ConversationResult.from_payload(_read(files[0]))
    matches = [f for f in files if f.stem == conversation] or [f for f in files if f.stem.startswith(conversation)]
    if not matches:  # not a key: a run id (read every file, only when needed)
        matches = [f for f in files if str(_read(f)["runs"][0].get("run_id", "")).startswith(conversation)]
    if len(matches) != 1:
        raise ValueError(f"conversation {conversation!r} matches {len(matches)} of the {len(files)} conversations in "
                         f"{folder}; give its file name (without .json) or its run_id")
    return ConversationResult.from_payload(_read(matches[0]))


def scenario_of(result: ConversationResult, *, scenario: Scenario | None = None,
                scenarios_dir: Path | str | None = None) -> Scenario:
    """The scenario a conversation was run from (``scenario`` itself when given, else found by id).

    Raises:
        ValueError: no scenario with the conversation's id in ``scenarios_dir`` (default: the project's).
    """
    if scenario is not None:
        return scenario
    scenario_id = str(result.rows["runs"][0]["scenario"])
    found = load_scenarios(scenarios_dir, scenario=scenario_id)
    if not found:
        where = scenarios_dir or "the project's evals/scenarios"
        raise ValueError(f"scenario {scenario_id!r} of this conversation is not in {where}: pass scenarios_dir=")
    return found[0]


def patient_turns(result: ConversationResult) -> int:
    """How many patient messages the conversation holds (the turns a fork can start after)."""
    return sum(1 for r in result.rows.get("transcripts") or [] if r.get("role") == "patient")
