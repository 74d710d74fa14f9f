"""Loading scenarios: one parsed document, one file, every file under folders (all errors), filtered lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from pydantic import TypeAdapter, ValidationError

from convoeval._util.paths import default_scenarios_dir
from convoeval.scenarios._yaml import _parse_yaml, _yaml_problem
from convoeval.scenarios.agent_registry import check_agent_name
from convoeval.scenarios.errors import ScenarioError, _problems, _shown
from convoeval.scenarios.models import ConversationalScenario, Scenario, ScenarioType, ScriptedScenario, scenario_type

MAX_SCENARIO_BYTES = 1_000_000
_SCHEMAS: dict[str, TypeAdapter[Scenario]] = {
    "conversational": TypeAdapter(ConversationalScenario),
    "scripted": TypeAdapter(ScriptedScenario),
}




def parse_scenario(raw: object, path: Path | str = "<memory>") -> Scenario:
    """Validate one parsed YAML document against the schema its ``type`` selects.

    Args:
        raw: the parsed document.
        path: where it came from, for error messages.

    Returns:
        A ``ConversationalScenario`` or a ``ScriptedScenario``.

    Raises:
        ScenarioError: naming the file, the field path and the problem.
    """
    if not isinstance(raw, dict):
        kind = "empty" if raw is None else type(raw).__name__
        raise ScenarioError(path, [("", f"expected a mapping of fields at the top level, got {kind}")])
    kind = raw.get("type", "scripted")
    # A list or mapping is unhashable: test the type first, so it is this error and not a TypeError.
    if not isinstance(kind, str) or kind not in _SCHEMAS:
        raise ScenarioError(path, [("type", f"expected 'conversational' or 'scripted', got {_shown(kind)}")])
    try:
        return _SCHEMAS[kind].validate_python(raw)
    except ValidationError as exc:
        problems, omitted = _problems(exc, _SCHEMAS[kind], raw)
        raise ScenarioError(path, problems, omitted=omitted) from None



def load_scenario_file(path: Path | str) -> Scenario:
    """Read and validate one scenario file.

    Args:
        path: a YAML file of at most ``MAX_SCENARIO_BYTES``.

    Returns:
        A ``ConversationalScenario`` or a ``ScriptedScenario``.

    Raises:
        ScenarioError: for unreadable files, bad YAML syntax, or schema violations; never a bare traceback.
    """
    return parse_scenario(read_yaml_file(path), path)


def read_yaml_file(path: Path | str) -> object:
    """The one YAML document of a file (``None`` when empty), read with the scenario loader's limits.

    The reading every YAML file of ``evals/`` shares (``convoeval validate`` reads attacks with it before it knows
    their kind): a size limit, UTF-8, no alias bomb or nesting that exhausts the parser, one document.

    Args:
        path: a YAML file of at most ``MAX_SCENARIO_BYTES``.

    Returns:
        The parsed document, not yet checked against any model.

    Raises:
        ScenarioError: an unreadable file, not UTF-8, bad YAML syntax (with its line and column), several documents.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(path, [("", f"file is larger than {MAX_SCENARIO_BYTES:,} bytes")])
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(path, [("", f"not UTF-8 text (byte {exc.start})")]) from None
    except OSError as exc:
        raise ScenarioError(path, [("", f"cannot read file: {exc.strerror or exc}")]) from None
    try:
        docs = _parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(path, [("", _yaml_problem(exc, text))]) from None
    except RecursionError:
        raise ScenarioError(path, [("", "invalid YAML: nested too deeply")]) from None
    if len(docs) > 1:
        raise ScenarioError(path, [("", f"expected one YAML document, found {len(docs)}")])
    return docs[0] if docs else None


def _scenario_files(paths: Iterable[Path | str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file()))
        elif p.exists():
            files.append(p)
        else:
            raise ScenarioError(p, [("", "no such file or folder")])
    return files



class LoadReport(list):
    """Scenarios loaded, plus the errors met along the way (see ``validate_paths``)."""

    def __init__(self, scenarios: Iterable[Scenario] = (), errors: Iterable[ScenarioError] = ()):
        super().__init__(scenarios)
        self.errors: list[ScenarioError] = list(errors)


def validate_paths(paths: Iterable[Path | str]) -> LoadReport:
    """Load every scenario under ``paths`` and collect *all* errors instead of stopping at the first.

    Duplicate scenario ids across files are errors too (naming both files). Every file is read as a scenario;
    ``convoeval validate`` (``convoeval.cli.validate_command.validate_files``) tells scenarios, attacks and label
    files apart and checks each against its own model.
    """
    report = LoadReport()
    seen: dict[str, Path] = {}
    try:
        files = _scenario_files(paths)
    except ScenarioError as exc:
        report.errors.append(exc)
        return report
    for f in files:
        try:
            scenario = load_scenario_file(f)
        except ScenarioError as exc:
            report.errors.append(exc)
            continue
        if scenario.id in seen:
            report.errors.append(ScenarioError(f, [("id", f"duplicate scenario id {scenario.id!r} (also in {seen[scenario.id]})")]))
            continue
        seen[scenario.id] = f
        report.append(scenario)
    return report


DEFAULT_SCENARIOS_DIR = Path("evals/scenarios")


def load_scenarios(
    scenarios_dir: Path | str | None = None,
    *,
    agent: str | None = None,
    scenario: str | None = None,
    type: ScenarioType | None = None,  # noqa: A002 - mirrors the CLI's --type
) -> list[Scenario]:
    """Load and filter scenarios.

    Args:
        scenarios_dir: a folder (searched recursively) or a single file; default ``$CONVOEVAL_SCENARIOS_DIR``, else
            the project's ``evals/scenarios``, found from the working directory or any folder above it (so it works
            from ``notebooks/`` too).
        agent: keep only this agent's scenarios.
        scenario: keep only the scenario with this id.
        type: keep only ``"scripted"`` or ``"conversational"`` scenarios.

    Returns:
        The matching scenarios, sorted by agent then id.

    Raises:
        ScenarioError: the first invalid file (use ``validate_paths`` to collect all of them).
    """
    if agent is not None:
        check_agent_name(agent)
    if type is not None and type not in _SCHEMAS:
        raise ValueError(f"unknown scenario type {type!r}; expected 'scripted' or 'conversational'")
    if scenarios_dir is None:
        scenarios_dir = default_scenarios_dir()
        if not scenarios_dir.exists():
            raise ScenarioError(scenarios_dir, [("", f"no scenario folder here (looked from {Path.cwd()} upwards "
                                                     "for evals/scenarios); pass scenarios_dir= or set "
                                                     "CONVOEVAL_SCENARIOS_DIR")])
    report = validate_paths([scenarios_dir])
    if report.errors:
        raise report.errors[0]
    selected = [
        s
        for s in report
        if (agent is None or s.agent == agent)
        and (scenario is None or s.id == scenario)
        and (type is None or scenario_type(s) == type)
    ]
    return sorted(selected, key=lambda s: (s.agent, s.id))


def scenarios_by_id(scenarios: Iterable[Scenario] | Mapping[str, Scenario] | None) -> dict[str, Scenario]:
    """Scenarios indexed by id, from a list of scenario objects or an id -> scenario mapping.

    ``None`` means the project's scenarios (``load_scenarios()``), so a transcript from ``run_conversation`` can be
    judged without passing its scenario again; none when there is no project folder.
    """
    if scenarios is None:
        return _project_scenarios()
    if isinstance(scenarios, Mapping):
        return dict(scenarios)
    return {s.id: s for s in scenarios}


def _project_scenarios() -> dict[str, Scenario]:
    folder = default_scenarios_dir()
    if not folder.is_dir():
        return {}
    stamp = max((p.stat().st_mtime_ns for p in folder.rglob("*.y*ml")), default=0)
    key = (str(folder), stamp)
    if key not in _LOADED:
        try:
            _LOADED[key] = {s.id: s for s in load_scenarios(folder)}
        except ScenarioError:
            _LOADED[key] = {}
    return dict(_LOADED[key])


#: The project's scenarios by (folder, newest file's mtime): reloaded when a file changes.
_LOADED: dict[tuple[str, int], dict[str, Scenario]] = {}
