"""Pin a conversation as a regression test: a scripted scenario that replays its patient's messages verbatim.

Each turn of the scripted scenario sends the patient's message of that turn and expects what the agent should do
there, read from the tools an agent called at that turn: by default the agent of the conversation itself (pin a
passing run to keep it passing), or, with ``expected_from``, a passing run of the same scenario (pin a failing run so
it fails where it went wrong until the agent is fixed). The expectations are tool-level, because reply texts carry
identifiers made afresh in every conversation: ``tools_called`` the tools called at that turn, ``tools_not_called``
every other tool either conversation called (a link created a turn early, or twice, fails). The scenario keeps the
original's persona, fixtures and database assertions; scripted scenarios have no rubric, so the original's rubric is
kept as a comment. Turns ask no per-turn judge unless ``judge=True``: a regression test that makes no LLM call gives
the same answer every time.

The module is ``forking.pinning`` and the verb ``pin`` (``convoeval.pin``): a module named like the verb it exports would
replace the verb on the package once imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from convoeval._util.paths import project_root
from convoeval.errors import ConvoevalError
from convoeval.forking._source import ConversationSource, load_conversation, scenario_of
from convoeval.pipeline.conversation import ConversationResult
from convoeval.pipeline.replay import normalize_reply_text
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario, load_scenario_file

__all__ = ["Pinned", "PinError", "default_pin_path", "pin"]

SCHEMA = Path(__file__).resolve().parent / "schemas" / "scenario.schema.json"


class PinError(ConvoevalError, ValueError):
    """A conversation that cannot be pinned, or a file that would be overwritten; one line."""


@dataclass
class Pinned:
    """A pinned scenario: the validated object, its YAML text and where it was written (if it was).

    Attributes:
        scenario: the scripted scenario, as ``load_scenario_file`` reads it back.
        text: the YAML (with its comment header).
        path: the file written, or ``None``.
        notes: what the expectations could not cover (e.g. turns after the passing run's patient said otherwise).
    """

    scenario: ScriptedScenario
    text: str
    path: Path | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Turn:
    turn: int
    patient: str
    tools: tuple[str, ...]


def _turns(result: ConversationResult) -> list[_Turn]:
    """The turns the agent answered, in order: a last patient message that only ended the conversation has no
    reply to expect anything of, so it is left out."""
    rows = result.rows.get("transcripts") or []
    patients = {int(r["turn"]): str(r["text"]) for r in rows if r.get("role") == "patient"}
    agents = {int(r["turn"]): tuple(dict.fromkeys(str(t) for t in r.get("tools") or [])) for r in rows
              if r.get("role") == "agent"}
    return [_Turn(t, patients[t], agents[t]) for t in sorted(patients) if t in agents]


def _expectations(turns: Sequence[_Turn], reference: Sequence[_Turn]) -> tuple[list[dict[str, Any] | None], int]:
    """Per pinned turn, the reference's tools as expectations, while both conversations' patients said the same.

    Returns:
        One expectation mapping per turn (``None`` past the shared prefix) and the length of that prefix.
    """
    shared = 0
    for mine, theirs in zip(turns, reference, strict=False):  # the shared prefix: the shorter one bounds it
        if normalize_reply_text(mine.patient) != normalize_reply_text(theirs.patient):
            break
        shared += 1
    every_tool = {t for turn in (*turns, *reference) for t in turn.tools}
    out: list[dict[str, Any] | None] = []
    for i in range(len(turns)):
        if i >= shared:
            out.append(None)
            continue
        called = list(reference[i].tools)
        expect: dict[str, Any] = {}
        if called:
            expect["tools_called"] = called
        others = sorted(every_tool - set(called))
        if others:
            expect["tools_not_called"] = others
        out.append(expect)
    return out, shared


class _Dumper(yaml.SafeDumper):
    """Lists of plain values on one line (``tools_called: [list_invoices]``), as the hand-written scenarios."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flat = all(isinstance(x, (str, int, float, bool)) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)


def default_pin_path(scenario: Scenario, run_id: str) -> Path:
    """``evals/scenarios/<agent>/pinned-<scenario id>-<run id prefix>.yaml`` in the project."""
    return project_root() / "evals" / "scenarios" / scenario.agent / f"{_pinned_id(scenario, run_id)}.yaml"


def _pinned_id(scenario: Scenario, run_id: str) -> str:
    base = scenario.id[len("pinned-"):] if scenario.id.startswith("pinned-") else scenario.id
    return f"pinned-{base}-{run_id[:8]}"


def _document(scenario: Scenario, result: ConversationResult, turns: Sequence[_Turn],
              expectations: Sequence[Mapping[str, Any] | None], judge: bool, scenario_id: str | None
              ) -> dict[str, Any]:
    run = result.rows["runs"][0]
    steps = []
    for turn, expect in zip(turns, expectations, strict=True):
        step: dict[str, Any] = {"user": turn.patient}
        if expect:
            step["expect"] = dict(expect)
        if not judge:
            step["judge"] = False
        steps.append(step)
    described = " ".join(scenario.description.split())
    doc: dict[str, Any] = {
        "type": "scripted",
        "id": scenario_id or _pinned_id(scenario, str(run["run_id"])),
        "agent": scenario.agent,
        "locale": scenario.locale,
        "description": f"Pinned from conversation {str(run['run_id'])[:8]} of {scenario.id}: {described}",
        "persona": scenario.persona.model_dump(mode="json", exclude_none=True),
        "turns": steps,
    }
    assertions = scenario.assertions.active()
    if assertions:
        doc["assertions"] = assertions
    fixtures = scenario.fixtures.model_dump(mode="json", exclude_defaults=True)
    if fixtures:
        doc["fixtures"] = fixtures
    return doc


def _header(scenario: Scenario, result: ConversationResult, reference: ConversationResult | None,
            notes: Sequence[str], path: Path | None) -> str:
    run = result.rows["runs"][0]
    status = result.rows["scores"][0].get("status") if result.rows.get("scores") else None
    lines = []
    if path is not None:
        lines.append(f"# yaml-language-server: $schema={os.path.relpath(SCHEMA, path.resolve().parent)}")
    source = f"passing conversation {reference.run_id}" if reference is not None else "that conversation"
    lines += [
        f"# Pinned by `convoeval pin` from conversation {run['run_id']} (scenario {scenario.id}, seed {run.get('seed')},"
        f" target {run.get('target')}, status {status}).",
        "# Each turn sends the patient's message verbatim and expects the tools the agent called at that turn in",
        f"# {source} (tools_called), and none of the other tools either conversation called (tools_not_called).",
    ]
    if isinstance(scenario, ConversationalScenario):
        lines.append("# The original's rubric (scripted scenarios are checked turn by turn; kept here for the reader):")
        lines += [f"#   - {c}" for c in scenario.criteria]
    lines += [f"# Note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def pin(conversation: ConversationSource, *, out: Path | str | None = None,
        expected_from: ConversationSource | None = None, conversation_id: str | None = None,
        scenario: Scenario | None = None, scenarios_dir: Path | str | None = None, judge: bool = False,
        scenario_id: str | None = None, overwrite: bool = False) -> Pinned:
    """Write a scripted scenario that replays a conversation and checks, turn by turn, what the agent should do.

    Args:
        conversation: the conversation: a ``ConversationResult``, a ``runs/<key>.json`` file or a results folder.
        out: the YAML file to write (``None``: return the text only). ``default_pin_path`` is the CLI's default.
        expected_from: a passing conversation of the same scenario whose tools are the expectations (default: the
            conversation's own). Only turns where both patients said the same carry expectations.
        conversation_id: with a results folder, which conversation (file name or run_id).
        scenario: the original scenario (default: found by the conversation's scenario id).
        scenarios_dir: where to find it (default: the project's ``evals/scenarios``).
        judge: ask the per-turn judge too (LLM calls; default off: the checks alone are deterministic).
        scenario_id: the new scenario's id (default ``pinned-<scenario id>-<run id prefix>``).
        overwrite: replace an existing ``out`` file (refused by default).

    Returns:
        A ``Pinned`` (the scenario read back from the YAML, the text, the path, notes).

    Raises:
        PinError: no turn the agent answered, a reference of another scenario, or ``out`` exists.

    Example:
        >>> import tempfile
        >>> pinned = pin("reports/example/runs/billing-scripted-pix-en__s42__t1.json",
        ...              out=Path(tempfile.mkdtemp()) / "pinned-pix.yaml")   # e.g. evals/scenarios/billing/...
        >>> [t.expect.tools_called for t in pinned.scenario.turns]
        [['list_invoices'], [], ['create_payment_link'], []]
    """
    result = load_conversation(conversation, conversation_id)
    original = scenario_of(result, scenario=scenario, scenarios_dir=scenarios_dir)
    turns = _turns(result)
    if not turns:
        raise PinError(f"conversation {result.run_id} has no turn the agent answered: nothing to pin")
    reference = load_conversation(expected_from) if expected_from is not None else None
    if reference is not None and reference.rows["runs"][0].get("scenario") != original.id:
        raise PinError(f"expected_from is a conversation of {reference.rows['runs'][0].get('scenario')!r}, "
                       f"not of {original.id!r}")
    expectations, shared = _expectations(turns, _turns(reference) if reference is not None else turns)
    notes = []
    if shared < len(turns):
        notes.append(f"from turn {turns[shared].turn} on the passing conversation's patient said something else: "
                     "those turns expect nothing")
    path = Path(out).expanduser() if out is not None else None
    doc = _document(original, result, turns, expectations, judge, scenario_id)
    text = _header(original, result, reference, notes, path) + yaml.dump(
        doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096)
    pinned = ScriptedScenario.model_validate(yaml.safe_load(text))  # never write a file `convoeval validate` refuses
    if path is not None:
        if path.exists() and not overwrite:
            raise PinError(f"{path} exists; choose another --out or pass overwrite=True (CLI: --force)")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        pinned = load_scenario_file(path)  # type: ignore[assignment]
    return Pinned(scenario=pinned, text=text, path=path, notes=notes)
