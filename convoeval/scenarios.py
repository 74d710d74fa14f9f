"""Scenario models (pydantic) and the YAML loader.

Two scenario types live side by side in ``evals/scenarios/<agent>/*.yaml``:

* **conversational** (``type: conversational``): a simulated patient with a goal talks to the agent until a
  stop signal or ``max_turns``; judged by a rubric and a holistic judge, checked by database assertions.
* **scripted** (the default when ``type`` is absent): fixed user turns with per-turn expectations.

Every model forbids unknown fields: a typo in a YAML key is an error, never a silently dropped field.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import re
import reprlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError, field_validator

AGENTS = ("support", "scheduling", "confirmation", "nps", "billing", "recall")
LOCALES = ("pt-BR", "en", "es")

AgentName = Literal["support", "scheduling", "confirmation", "nps", "billing", "recall"]
Locale = Literal["pt-BR", "en", "es"]
PaymentMethod = Literal["pix", "boleto", "card"]
InvoiceStatus = Literal["pending", "paid", "overdue", "cancelled"]
AppointmentStatus = Literal["scheduled", "confirmed", "cancelled", "rescheduled", "completed", "no_show"]

NonEmptyStr = Annotated[str, Field(min_length=1)]


class StrictModel(BaseModel):
    """Base for everything read from YAML: unknown fields are errors.

    Integer fields are ``StrictInt``: YAML 1.1 reads ``yes``/``on``/``true`` as a boolean, which pydantic's lax ``int``
    would silently take as 1 (``max_turns: yes``). A YAML integer is already an ``int``; anything else is refused.
    """

    model_config = ConfigDict(extra="forbid")


# ── Persona ──


class Persona(StrictModel):
    """The patient: who they are and what they may reveal."""

    name: NonEmptyStr
    phone: Annotated[str, Field(pattern=r"^\+?\d{8,15}$")]
    cpf: Annotated[str, Field(pattern=r"^\d{11}$")] | None = None
    traits: list[NonEmptyStr] | None = None
    knows: dict[str, str] | None = Field(
        default=None,
        description="Facts the simulated user may reveal when asked (e.g. cpf, preferred payment method). "
        "The simulator is told not to invent any other fact.",
    )

    @field_validator("phone", "cpf", mode="before")
    @classmethod
    def _digits_as_text(cls, value: Any) -> Any:
        # YAML reads an unquoted 11987650020 as an int; a phone number is text, keep it so.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# ── Fixtures: rows seeded into the store for one run ──


class ClinicFixture(StrictModel):
    """The clinic the agent works for."""

    name: NonEmptyStr = "Clínica Exemplo"
    timezone: NonEmptyStr = "America/Sao_Paulo"


class ProfessionalFixture(StrictModel):
    """A professional whose agenda the agent may book."""

    id: NonEmptyStr
    name: NonEmptyStr
    specialty: NonEmptyStr | None = None


class ServiceFixture(StrictModel):
    """A service the clinic offers (duration and price)."""

    id: NonEmptyStr
    name: NonEmptyStr
    duration_min: Annotated[StrictInt, Field(gt=0)] = 30
    price_cents: Annotated[StrictInt, Field(ge=0)] = 0


class SlotFixture(StrictModel):
    """An agenda slot of one professional."""

    id: NonEmptyStr
    professional_id: NonEmptyStr
    service_id: NonEmptyStr | None = None
    starts_at: NonEmptyStr = Field(description="ISO 8601 local date-time, e.g. 2026-03-10T09:00")
    available: bool = True


class AppointmentFixture(StrictModel):
    """An appointment the patient already has."""

    id: NonEmptyStr
    professional_id: NonEmptyStr
    service_id: NonEmptyStr | None = None
    starts_at: NonEmptyStr
    status: AppointmentStatus = "scheduled"


class InvoiceFixture(StrictModel):
    """An invoice of the patient (amount in cents, due date)."""

    id: NonEmptyStr
    amount_cents: Annotated[StrictInt, Field(gt=0)]
    due_date: NonEmptyStr
    status: InvoiceStatus = "pending"
    description: str | None = None

    @field_validator("due_date", mode="before")
    @classmethod
    def _date_as_text(cls, value: Any) -> Any:
        # YAML parses an unquoted 2026-02-20 as a date; the store keeps ISO text.
        return value.isoformat() if hasattr(value, "isoformat") else value


class Fixtures(StrictModel):
    """Rows to seed for a run. Ids are the scenario's own names; the store maps them to per-run keys."""

    clinic: ClinicFixture = Field(default_factory=ClinicFixture)
    professionals: list[ProfessionalFixture] = Field(default_factory=list)
    services: list[ServiceFixture] = Field(default_factory=list)
    slots: list[SlotFixture] = Field(default_factory=list)
    appointments: list[AppointmentFixture] = Field(default_factory=list)
    invoices: list[InvoiceFixture] = Field(default_factory=list)


# ── Assertions: database queries after the conversation ──


class Assertions(StrictModel):
    """What the database must show after the run. Each key is checked by ``convoeval.store.assertions``.

    Unset keys are not checked. An unknown key is a validation error.
    """

    payment_link_created: bool | None = None
    payment_method: PaymentMethod | None = None
    invoice_status: InvoiceStatus | None = None
    appointment_created: bool | None = None
    appointment_confirmed: bool | None = None
    appointment_cancelled: bool | None = None
    appointment_rescheduled: bool | None = None
    nps_score_recorded: bool | None = None
    nps_score: Annotated[StrictInt, Field(ge=0, le=10)] | None = None
    escalated_to_human: bool | None = None
    tools_called: list[NonEmptyStr] | None = None
    tools_not_called: list[NonEmptyStr] | None = None

    def active(self) -> dict[str, Any]:
        """The assertions this scenario actually sets, in declaration order."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


# ── Rubric ──


class RubricCriterion(StrictModel):
    """A rubric criterion in its long form; a plain string in YAML is shorthand for ``{text: ...}``."""

    text: NonEmptyStr
    assertion: str | None = Field(
        default=None,
        description="The assertion key this criterion corresponds to (database truth for judge agreement).",
    )

    @field_validator("assertion")
    @classmethod
    def _known_assertion(cls, value: str | None) -> str | None:
        if value is not None and value not in Assertions.model_fields:
            raise ValueError(f"unknown assertion {_shown(value)}; expected one of {', '.join(Assertions.model_fields)}")
        return value


def _criterion(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


# ── Scenario types ──


class _ScenarioHeader(StrictModel):
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="Unique scenario id")]
    agent: AgentName
    locale: Locale = "pt-BR"
    description: NonEmptyStr
    persona: Persona
    assertions: Assertions = Field(default_factory=Assertions)
    fixtures: Fixtures = Field(default_factory=Fixtures)


class ConversationalScenario(_ScenarioHeader):
    """A simulated patient pursues ``goal`` against the agent; see the README for every field."""

    type: Literal["conversational"]
    goal: NonEmptyStr
    max_turns: Annotated[StrictInt, Field(gt=0)] = 15
    seed: StrictInt | None = None
    rubric: Annotated[list[RubricCriterion], Field(min_length=1)]

    @field_validator("rubric", mode="before")
    @classmethod
    def _expand_shorthand(cls, value: Any) -> Any:
        return [_criterion(v) for v in value] if isinstance(value, list) else value

    @property
    def criteria(self) -> list[str]:
        """The rubric criteria as plain text, in order."""
        return [c.text for c in self.rubric]


class TurnExpectations(StrictModel):
    """Per-turn checks of a scripted scenario."""

    tools_called: list[NonEmptyStr] = Field(default_factory=list)
    tools_not_called: list[NonEmptyStr] = Field(default_factory=list)
    response_contains: list[NonEmptyStr] = Field(default_factory=list)
    response_not_contains: list[NonEmptyStr] = Field(default_factory=list)
    response_matches: str | None = Field(default=None, description="A regular expression (Python syntax).")
    max_tool_calls: Annotated[StrictInt, Field(ge=0)] | None = None

    @field_validator("response_matches")
    @classmethod
    def _valid_regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class ScriptedTurn(StrictModel):
    """One user turn of a scripted scenario and what the agent's reply must show."""

    user: NonEmptyStr
    expect: TurnExpectations = Field(default_factory=TurnExpectations)
    judge: bool = True


class ScriptedScenario(_ScenarioHeader):
    """Fixed user turns with per-turn expectations (the original mode)."""

    type: Literal["scripted"] = "scripted"
    turns: Annotated[list[ScriptedTurn], Field(min_length=1)]


Scenario: TypeAlias = ConversationalScenario | ScriptedScenario
ScenarioType = Literal["scripted", "conversational"]


def is_conversational(scenario: object) -> bool:
    """Type guard: a loaded conversational scenario, or a raw mapping with ``type: conversational``."""
    if isinstance(scenario, ConversationalScenario):
        return True
    if isinstance(scenario, dict):
        return scenario.get("type") == "conversational"
    return False


# ── Errors ──


#: Problems one ``ScenarioError`` lists; the rest are counted ("… and N more problems"), so a file with 20,000 bad
#: items still gives a readable message.
MAX_PROBLEMS = 20
_MESSAGE_MAX = 500  # characters of one problem's message
_KEY_MAX = 60  # characters of one mapping key in a field path


class ScenarioError(ValueError):
    """A scenario file that cannot be used. ``str()`` names the file, the field path and the problem.

    Attributes:
        path: the file, as given.
        problems: ``(field path, message)`` pairs, at most ``MAX_PROBLEMS`` of them ("" as field: the whole file).
        omitted: how many further problems the file has beyond those listed.
    """

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]], *, omitted: int = 0):
        self.path = str(path)
        problems = list(problems)
        self.problems = [(field, _clip(message, _MESSAGE_MAX)) for field, message in problems[:MAX_PROBLEMS]]
        self.omitted = omitted + len(problems) - len(self.problems)
        lines = [f"  {field}: {message}" if field else f"  {message}" for field, message in self.problems]
        if self.omitted:
            lines.append(f"  … and {self._more()}")
        super().__init__(f"Invalid scenario at {self.path}:\n" + "\n".join(lines))

    def _more(self) -> str:
        return f"{self.omitted:,} more problem{'s' if self.omitted > 1 else ''}"

    def one_line(self) -> str:
        """The error on one line, for command-line output."""
        parts = [f"{f}: {m}" if f else m for f, m in self.problems]
        if self.omitted:
            parts.append(f"and {self._more()}")
        return f"{self.path}: " + "; ".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


MAX_SCENARIO_BYTES = 1_000_000
_SCHEMAS: dict[str, TypeAdapter[Any]] = {
    "conversational": TypeAdapter(ConversationalScenario),
    "scripted": TypeAdapter(ScriptedScenario),
}


class _ShortRepr(reprlib.Repr):
    """``reprlib.Repr`` that also survives integers too long for ``repr`` (over 4,300 digits raise ValueError)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 1000:
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1:,} digits>"
        return super().repr_int(x, level)


#: How ``_shown`` quotes a value in a message: a few items per level, two levels, short strings. An alias bomb
#: (9 nested aliases of 9 items) expands to 9**9 items when fully repr'd; these bounds keep every message short.
_REPR = _ShortRepr()
_REPR.maxlevel = 2
_REPR.maxtuple = _REPR.maxlist = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 4
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlong = 40
_SHOWN_MAX = 100


def _shown(value: Any) -> str:
    """A short ``repr`` of a value read from YAML, bounded in size and time whatever the value.

    Args:
        value: anything a YAML document or a caller may hold (nested aliases included).

    Returns:
        At most 100 characters.

    Example:
        >>> _shown("dentist")
        "'dentist'"
        >>> _shown(list(range(100)))
        '[0, 1, 2, 3, ...]'
    """
    text = _REPR.repr(value)
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 3] + "..."


def _field_path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # A mapping key is whatever the file says (an unknown 500 kB key included): clip it.
            out += ("." if out else "") + _clip(str(part), _KEY_MAX)
    return out


def _problem(err: Any) -> tuple[str, str]:
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = "unknown field"
    elif err["type"] == "missing":
        message = "required field is missing"
    elif err["type"] in ("literal_error", "enum"):
        # Quote the input bounded: `agent: *bomb` would otherwise repr 9**9 items (hang, unbounded memory).
        message = f"{message}, got {_shown(err['input'])}"
    elif err["type"] == "int_type" and isinstance(err["input"], bool):
        message = f"{message}, got {err['input']} (YAML reads yes/no/on/off/true/false as booleans)"
    elif err["type"] == "int_type":
        message = f"{message}, got {_shown(err['input'])}"
    return _field_path(err["loc"]), message


#: Stands for the items a clipped list leaves out (see ``_problems``): no item type of the schema accepts it.
_CLIPPED = object()
_FEW_ERRORS = 1000


def _clipped(value: Any, keep: int, memo: dict[int, Any]) -> Any:
    """A copy of ``value`` whose lists longer than ``keep`` keep their first ``keep`` items, then ``_CLIPPED``.

    ``memo`` maps ``id()`` of what was copied to its copy, so YAML aliases (shared subtrees) are copied once.
    """
    if not isinstance(value, (list, dict)) or id(value) in memo:
        return memo.get(id(value), value)
    # Registered before its items are copied: a recursive alias (`a: &a [*a]`) then copies to a cycle, not forever.
    if isinstance(value, list):
        copy: Any = memo.setdefault(id(value), [])
        copy.extend(_clipped(v, keep, memo) for v in value[:keep])
        if len(value) > keep:
            copy.append(_CLIPPED)
    else:
        copy = memo.setdefault(id(value), {})
        copy.update((k, _clipped(v, keep, memo)) for k, v in value.items())
    return copy


def _problems(exc: ValidationError, schema: TypeAdapter[Any], raw: Any) -> tuple[list[tuple[str, str]], int]:
    """The first ``MAX_PROBLEMS`` problems of ``exc`` (raised validating ``raw``), and how many more there are.

    ``exc.errors()`` takes seconds for the 500,000 errors of a 1 MB list of bad items. So with many errors ``raw`` is
    validated again with every list clipped after ``MAX_PROBLEMS + 1`` items and ``_CLIPPED``: errors keep their
    order, and the clipped tail of a list gives one error where its own errors would start. The errors before the
    first such one are exactly the first errors of the whole file; when there are too few, all errors are read.
    """
    errors = None
    if exc.error_count() > _FEW_ERRORS:
        try:
            schema.validate_python(_clipped(raw, MAX_PROBLEMS + 1, {}))
        except ValidationError as clipped:
            first = list(itertools.takewhile(lambda e: e["input"] is not _CLIPPED, clipped.errors(include_url=False)))
            errors = first if len(first) >= MAX_PROBLEMS else None
    if errors is None:
        errors = exc.errors(include_url=False)
    shown = [_problem(err) for err in errors[:MAX_PROBLEMS]]
    return shown, exc.error_count() - len(shown)


def parse_scenario(raw: Any, path: Path | str = "<memory>") -> Scenario:
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


_BASE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, from libyaml when PyYAML was built with it (~10x faster than the pure-Python one on 1 MB).

    Resolving a plain scalar's implicit tag (int? bool? date?) is the slowest step left, and keys and common values
    repeat (``text``, ``id``, ``pending``…): the answers are memoised, up to ``_MEMO_MAX`` distinct scalars.
    """

    _tags: ClassVar[dict[str, str]] = {}
    _MEMO_MAX = 10_000

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode or not implicit[0] or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        tag = self._tags.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._tags) < self._MEMO_MAX:
                self._tags[value] = tag
        return tag


def _explained(construct: Any) -> Any:
    """Wrap a scalar constructor so a value it cannot build is a ``ConstructorError`` at the value's line."""

    def construct_or_explain(loader: Any, node: Any) -> Any:
        try:
            return construct(loader, node)
        except yaml.YAMLError:
            raise
        except Exception as exc:  # noqa: BLE001 - any value that cannot be built is the file's problem
            kind = node.tag.rsplit(":", 1)[-1]
            article = "an" if kind[0] in "aeiou" else "a"
            # ValueError says why (day out of range, over 4,300 digits); the rest (KeyError, AttributeError) do not.
            why = str(exc).split(";")[0] if isinstance(exc, (ValueError, OverflowError)) else f"not a valid {kind}"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {_shown(node.value)} as {article} {kind}: {why}", node.start_mark) from None

    return construct_or_explain


# `due_date: 2026-02-30` (an implicit timestamp), a 5,000-digit int or `!!bool maybe` raised ValueError, KeyError
# or AttributeError out of PyYAML's constructors, not a YAMLError.
for _kind in ("bool", "int", "float", "timestamp"):
    _tag = f"tag:yaml.org,2002:{_kind}"
    _Loader.add_constructor(_tag, _explained(_Loader.yaml_constructors[_tag]))


#: Deepest nesting of YAML collections read. A scenario needs 5 levels; libyaml composes nodes recursively in C,
#: where ~30,000 levels overflow the stack (a crash, not an exception), so deeper files are refused first.
MAX_NESTING = 100
_BLOCK_ENTRY = re.compile(r"-(?=[\s\0]|\Z)")


def _nesting_bound(text: str) -> int:
    """An upper bound on the nesting depth of ``text``'s collections, computed without parsing.

    Every collection starts at one of ``[ { : ?`` or a ``-`` followed by a blank, so their count bounds the depth
    (loosely: most files exceed it, and then ``_nesting_depth`` measures).
    """
    return sum(text.count(c) for c in "[{:?") + len(_BLOCK_ENTRY.findall(text))


def _nesting_depth(text: str, limit: int) -> int:
    """The nesting depth of ``text``'s collections from libyaml's event stream (no nodes built), up to ``limit + 1``.

    Raises:
        yaml.YAMLError: a syntax error, exactly as loading would raise it.
    """
    parser = _Loader(text)
    depth = deepest = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > limit:
                    break
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        parser.dispose()
    return deepest


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    # A 1 MB file makes ~500,000 objects: each few hundred of them trigger a garbage collection that walks the whole
    # heap (large in a notebook or test run) for cycles a YAML document rarely has. Collect once, afterwards.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_yaml(text: str) -> list[Any]:
    """Every document of ``text``, with libyaml when available; too deep a nesting is a ``RecursionError``."""
    # The cheap bound first: a 1 MB flat list has few indicators and skips the event pass.
    with_libyaml = _BASE_LOADER is not yaml.SafeLoader
    if with_libyaml and _nesting_bound(text) > MAX_NESTING and _nesting_depth(text, MAX_NESTING) > MAX_NESTING:
        raise RecursionError(f"over {MAX_NESTING} levels")
    with _gc_paused():
        return list(yaml.load_all(text, Loader=_Loader))


def _yaml_problem(exc: yaml.YAMLError, text: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if problem == "found character that cannot start any token" and mark and 0 <= mark.index < len(text):
        # libyaml does not say which character (the pure-Python loader does): a tab, most of the time.
        problem = f"found character {text[mark.index]!r} that cannot start any token"
    return f"invalid YAML: {where}{problem}"


def load_scenario_file(path: Path | str) -> Scenario:
    """Read and validate one scenario file.

    Args:
        path: a YAML file of at most ``MAX_SCENARIO_BYTES``.

    Returns:
        A ``ConversationalScenario`` or a ``ScriptedScenario``.

    Raises:
        ScenarioError: for unreadable files, bad YAML syntax, or schema violations; never a bare traceback.
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
    return parse_scenario(docs[0] if docs else None, path)


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


def scenario_type(scenario: Scenario) -> ScenarioType:
    """``"conversational"`` or ``"scripted"``: the kind of ``scenario``."""
    return "conversational" if isinstance(scenario, ConversationalScenario) else "scripted"


class LoadReport(list):
    """Scenarios loaded, plus the errors met along the way (see ``validate_paths``)."""

    def __init__(self, scenarios: Iterable[Scenario] = (), errors: Iterable[ScenarioError] = ()):
        super().__init__(scenarios)
        self.errors: list[ScenarioError] = list(errors)


def validate_paths(paths: Iterable[Path | str]) -> LoadReport:
    """Load every scenario under ``paths`` and collect *all* errors instead of stopping at the first.

    Duplicate scenario ids across files are errors too (naming both files).
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
    if agent is not None and agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}; expected one of {', '.join(AGENTS)}")
    if type is not None and type not in _SCHEMAS:
        raise ValueError(f"unknown scenario type {type!r}; expected 'scripted' or 'conversational'")
    if scenarios_dir is None:
        from convoeval.paths import default_scenarios_dir

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


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (either type), for editors' YAML autocompletion."""
    schema = TypeAdapter(Annotated[ConversationalScenario | ScriptedScenario, Field()]).json_schema()
    # A criterion may be written as a plain string (the seed's form) or as {text, assertion}.
    rubric = schema["$defs"]["ConversationalScenario"]["properties"]["rubric"]
    rubric["items"] = {"anyOf": [{"type": "string", "minLength": 1}, {"$ref": "#/$defs/RubricCriterion"}]}
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["title"] = "convoeval scenario"
    return schema
