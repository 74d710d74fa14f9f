"""The scenario models (pydantic): persona, fixtures, assertions, rubric, and the two scenario types.

Two scenario types live side by side in ``evals/scenarios/<agent>/*.yaml``:

* **conversational** (``type: conversational``): a simulated patient with a goal talks to the agent until a
  stop signal or ``max_turns``; judged by a rubric and a holistic judge, checked by database assertions.
* **scripted** (the default when ``type`` is absent): fixed user turns with per-turn expectations.

Every model forbids unknown fields: a typo in a YAML key is an error, never a silently dropped field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    Field,
    StrictInt,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from convoeval.channel.settings import ChannelSettings
from convoeval.scenarios.agenda_models import PatientAgenda
from convoeval.scenarios.agent_registry import agent_names
from convoeval.scenarios.assertion_kinds import Assertions, assertion_keys, is_assertion_key, load_all_plugins
from convoeval.scenarios.errors import _shown
from convoeval.scenarios.path_models import PATH_PREFIXES, Checkpoint, PathRefsChecked
from convoeval.scenarios.strict import NonEmptyStr, StrictModel
from convoeval.scenarios.turn_models import ScriptedTurn

Locale = Literal["pt-BR", "en", "es"]

LOCALES: tuple[Locale, ...] = ("pt-BR", "en", "es")

PaymentMethod = Literal["pix", "boleto", "card"]
InvoiceStatus = Literal["pending", "paid", "overdue", "cancelled"]
AppointmentStatus = Literal["scheduled", "confirmed", "cancelled", "rescheduled", "completed", "no_show"]



def _registered_agent(name: str) -> str:
    # Worded as pydantic words a Literal, so a bad agent reads like every other bad choice in a scenario file.
    names = agent_names()
    if name not in names:
        expected = " or ".join([", ".join(repr(n) for n in names[:-1]), repr(names[-1])]) if len(names) > 1 else repr(names[0])
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return name


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


class AddressFixture(StrictModel):
    """A street address: a planted patient's (a red-team canary) or the clinic's own (never a leak)."""

    street: NonEmptyStr = Field(description="The street with its type word, e.g. Rua das Palmeiras")
    number: NonEmptyStr
    unit: str | None = Field(default=None, description="e.g. apto 302, casa 2, bloco B")
    neighbourhood: str | None = None
    city: str | None = None
    postal_code: Annotated[str, Field(pattern=r"^\d{5}-?\d{3}$")] | None = None


class ClinicFixture(StrictModel):
    """The clinic the agent works for."""

    name: NonEmptyStr = "Clínica Exemplo"
    timezone: NonEmptyStr = "America/Sao_Paulo"
    address: AddressFixture | None = Field(default=None, description="The clinic's own address: never a leak.")


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


class OtherPatientFixture(StrictModel):
    """Another patient of the same clinic. Every value is a *canary*: the run knows it, so a leak of it to the
    caller is found by matching, with no LLM (``convoeval.redteam``). Synthetic data only: the CPF has valid check
    digits but belongs to nobody."""

    id: NonEmptyStr
    name: NonEmptyStr
    phone: Annotated[str, Field(pattern=r"^\+?\d{8,15}$")]
    cpf: Annotated[str, Field(pattern=r"^\d{11}$")]
    birth_date: NonEmptyStr = Field(description="ISO 8601 date, e.g. 1958-03-14")
    appointments: list[AppointmentFixture] = Field(default_factory=list)
    invoices: list[InvoiceFixture] = Field(default_factory=list)
    address: AddressFixture | None = None

    @field_validator("phone", "cpf", mode="before")
    @classmethod
    def _digits_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("birth_date", mode="before")
    @classmethod
    def _date_as_text(cls, value: Any) -> Any:
        return value.isoformat() if hasattr(value, "isoformat") else value


class Fixtures(StrictModel):
    """Rows to seed for a run. Ids are the scenario's own names; the store maps them to per-run keys."""

    clinic: ClinicFixture = Field(default_factory=ClinicFixture)
    professionals: list[ProfessionalFixture] = Field(default_factory=list)
    services: list[ServiceFixture] = Field(default_factory=list)
    slots: list[SlotFixture] = Field(default_factory=list)
    appointments: list[AppointmentFixture] = Field(default_factory=list)
    invoices: list[InvoiceFixture] = Field(default_factory=list)
    other_patients: list[OtherPatientFixture] = Field(
        default_factory=list,
        description="Other patients of the same clinic, seeded beside the persona (red-team canaries).",
    )


# ── Assertions: database queries after the conversation (``Assertions``, in assertion_kinds.py: one registry) ──


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
        # sql.<name> and path:<id> / checkpoint:<id>… are checked against the scenario's own when it loads.
        if value is not None and not (value.startswith(("sql.", *PATH_PREFIXES)) or is_assertion_key(value)):
            raise ValueError(f"unknown assertion {_shown(value)}; expected one of {', '.join(assertion_keys())}, "
                             "sql.<name> or path:<id>")
        return value


def _braced(text: str) -> str:
    """``text`` as a pydantic message template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _criterion(value: Any) -> Any:
    return {"text": value} if isinstance(value, str) else value


# ── Scenario types ──


class _ScenarioHeader(StrictModel, PathRefsChecked):
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="Unique scenario id")]
    agent: Annotated[NonEmptyStr, AfterValidator(_registered_agent)]
    locale: Locale = "pt-BR"
    domain: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*(:[A-Za-z0-9_.-]+)?$")] | None = Field(
        default=None, description="The domain the agent works in (convoeval.domains): its tools, policy and data, "
        "e.g. tau2:airline. Unset: the clinic.")
    description: NonEmptyStr
    persona: Persona
    assertions: Assertions = Field(default_factory=Assertions)
    fixtures: Fixtures = Field(default_factory=Fixtures)
    channel: ChannelSettings | None = Field(
        default=None, description="The WhatsApp channel between patient and agent (docs/whatsapp.md): message ids "
        "and times, and seeded misbehaviour (redeliver, reorder, delay_s). Without it, one text each way.")


class ConversationalScenario(_ScenarioHeader):
    """A simulated patient pursues ``goal`` against the agent; see docs/scenarios.md for every field."""

    type: Literal["conversational"]
    goal: NonEmptyStr
    agenda: PatientAgenda | None = Field(
        default=None, description="The goal in parts for the agenda-based patient (docs/simulator.md): intent, "
        "asks, prefers, refuses, done_when, patience. Without it the agenda patient opens with the goal text.")
    max_turns: Annotated[StrictInt, Field(gt=0)] = 15
    seed: StrictInt | None = None
    rubric: Annotated[list[RubricCriterion], Field(min_length=1)]
    checkpoints: list[Checkpoint] = Field(
        default_factory=list, description="Checks that fire when a tool is called or a turn is reached.")

    @field_validator("rubric", mode="before")
    @classmethod
    def _expand_shorthand(cls, value: Any) -> Any:
        return [_criterion(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _sql_criteria_name_their_query(self) -> ConversationalScenario:
        # "sql.<name>" can only be checked against this file's own sql: names, which the criterion cannot see.
        names = self.assertions.checks().get("sql") or {}
        bad: list[InitErrorDetails] = [{"type": PydanticCustomError("unknown_assertion", _braced(
                    f"no sql: assertion named {c.assertion[4:]!r} in this scenario's assertions; it has "
                    f"{', '.join(names) or 'none'}")),
                "loc": ("rubric", i, "assertion"), "input": c.assertion}
               for i, c in enumerate(self.rubric) if c.assertion and c.assertion.startswith("sql.")
               and c.assertion[4:] not in names]
        if bad:
            raise ValidationError.from_exception_data(type(self).__name__, bad)
        return self

    @property
    def criteria(self) -> list[str]:
        """The rubric criteria as plain text, in order."""
        return [c.text for c in self.rubric]


class ScriptedScenario(_ScenarioHeader):
    """Fixed user turns with per-turn expectations (the original mode)."""

    type: Literal["scripted"] = "scripted"
    turns: Annotated[list[ScriptedTurn], Field(min_length=1)]

    @property
    def uses_channel(self) -> bool:
        """Whether the scenario talks through the WhatsApp channel: a ``channel:`` block or any turn that needs it."""
        return self.channel is not None or any(t.uses_channel for t in self.turns)


Scenario: TypeAlias = ConversationalScenario | ScriptedScenario
ScenarioType = Literal["scripted", "conversational"]


def is_conversational(scenario: object) -> bool:
    """Type guard: a loaded conversational scenario, or a raw mapping with ``type: conversational``."""
    if isinstance(scenario, ConversationalScenario):
        return True
    if isinstance(scenario, dict):
        return scenario.get("type") == "conversational"
    return False


def scenario_type(scenario: Scenario) -> ScenarioType:
    """``"conversational"`` or ``"scripted"``: the kind of ``scenario``."""
    return "conversational" if isinstance(scenario, ConversationalScenario) else "scripted"




def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file (either type), for editors' YAML autocompletion.

    ``assertions`` lists every registered key, including those of installed plugins (loaded here).

    Raises:
        PluginError: a ``convoeval.assertions`` entry point cannot be loaded.
    """
    load_all_plugins()
    schema = TypeAdapter(Annotated[ConversationalScenario | ScriptedScenario, Field()]).json_schema()
    # A criterion may be written as a plain string (the short form) or as {text, assertion}.
    rubric = schema["$defs"]["ConversationalScenario"]["properties"]["rubric"]
    rubric["items"] = {"anyOf": [{"type": "string", "minLength": 1}, {"$ref": "#/$defs/RubricCriterion"}]}
    # Editors complete the agent from the agents registered when the schema is written.
    header = schema["$defs"]
    for kind in ("ConversationalScenario", "ScriptedScenario"):
        header[kind]["properties"]["agent"] = {"enum": agent_names(), "title": "Agent", "type": "string"}
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["title"] = "convoeval scenario"
    return schema
