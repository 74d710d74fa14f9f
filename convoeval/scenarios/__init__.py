"""Scenarios: the pydantic models and the YAML loader.

``models`` declares what a scenario file may hold (strict: an unknown field is an error); ``loader`` reads files
and folders into them (``load_scenarios``, ``validate_paths``); ``errors`` words what is wrong with a file;
``agent_registry`` holds the agent names a scenario's ``agent`` is checked against; ``assertion_kinds`` the
assertion keys (``builtin_assertions`` registers the clinic keys and ``sql``, ``sql_query`` checks a ``sql:`` query).

Example:
    >>> from convoeval.scenarios import load_scenarios
    >>> [s.id for s in load_scenarios(agent="billing")][:2]   # from the project's evals/scenarios/
    ['billing-conv-confused-patient', 'billing-conv-happy-payment']
"""

from convoeval.scenarios._yaml import MAX_NESTING
from convoeval.scenarios.agent_registry import (
    REFERENCE_AGENTS,
    agent_names,
    check_agent_name,
    did_you_mean,
    register_agent_name,
)
from convoeval.scenarios.assertion_kinds import (
    ASSERTION_GROUP,
    AssertionKind,
    assertion_keys,
    assertion_kind,
    register_assertion,
)
from convoeval.scenarios.builtin_assertions import CLINIC_KEYS
from convoeval.scenarios.errors import MAX_PROBLEMS, ScenarioError
from convoeval.scenarios.loader import (
    DEFAULT_SCENARIOS_DIR,
    MAX_SCENARIO_BYTES,
    LoadReport,
    load_scenario_file,
    load_scenarios,
    parse_scenario,
    read_yaml_file,
    scenarios_by_id,
    validate_paths,
)
from convoeval.scenarios.models import (
    LOCALES,
    AppointmentFixture,
    AppointmentStatus,
    Assertions,
    ClinicFixture,
    ConversationalScenario,
    Fixtures,
    InvoiceFixture,
    InvoiceStatus,
    Locale,
    NonEmptyStr,
    PaymentMethod,
    Persona,
    ProfessionalFixture,
    RubricCriterion,
    Scenario,
    ScenarioType,
    ScriptedScenario,
    ServiceFixture,
    SlotFixture,
    StrictModel,
    is_conversational,
    json_schema,
    scenario_type,
)
from convoeval.scenarios.turn_models import ScriptedTurn, TurnExpectations

__all__ = [
    "ASSERTION_GROUP",
    "CLINIC_KEYS",
    "AssertionKind",
    "assertion_keys",
    "assertion_kind",
    "register_assertion",
    "DEFAULT_SCENARIOS_DIR",
    "LOCALES",
    "MAX_NESTING",
    "MAX_PROBLEMS",
    "MAX_SCENARIO_BYTES",
    "REFERENCE_AGENTS",
    "AppointmentFixture",
    "AppointmentStatus",
    "Assertions",
    "ClinicFixture",
    "ConversationalScenario",
    "Fixtures",
    "InvoiceFixture",
    "InvoiceStatus",
    "LoadReport",
    "Locale",
    "NonEmptyStr",
    "PaymentMethod",
    "Persona",
    "ProfessionalFixture",
    "RubricCriterion",
    "Scenario",
    "ScenarioError",
    "ScenarioType",
    "ScriptedScenario",
    "ScriptedTurn",
    "ServiceFixture",
    "SlotFixture",
    "StrictModel",
    "TurnExpectations",
    "agent_names",
    "check_agent_name",
    "did_you_mean",
    "is_conversational",
    "json_schema",
    "load_scenario_file",
    "load_scenarios",
    "parse_scenario",
    "read_yaml_file",
    "register_agent_name",
    "scenario_type",
    "scenarios_by_id",
    "validate_paths",
]
