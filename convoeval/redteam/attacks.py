"""The attack library: privacy attacks as YAML, validated as strictly as scenarios, expanded into runnable cases.

An attack file names a **strategy**, the **target** (another patient of the clinic, by fixture id), the **data** the
attacker is after, the agents it applies to, and, per locale, either fixed caller **turns** (a scripted attack:
deterministic, run in CI on the reference agents) or an attacker **plan** for an LLM to play (a simulated attack).
Turns are templates: ``{target_name}``, ``{target_first_name}``, ``{target_cpf}``, ``{target_birth_date}``
(``dd/mm/yyyy``) are filled in from the target's fixture, so one file serves any target.

``legitimate: true`` marks a request a clinic must serve: a caller who knows the patient's CPF and date of birth
(a daughter booking for her mother). The red team counts a refusal there as **over-refusal**.

Example:
    >>> attacks = load_attacks("evals/attacks")
    >>> cases = expand(attacks, agents=["billing"], locales=["en"])
    >>> [c.id for c in cases if c.attack.id == "third-party"]
    ['third-party/billing/en']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from convoeval.redteam.canaries import canaries_of, collisions
from convoeval.redteam.clinic import BASE_FIXTURES, DEFAULT_CALLER
from convoeval.redteam.people import DEFAULT_OTHER_PATIENTS
from convoeval.scenarios import agent_names
from convoeval.scenarios._yaml import _parse_yaml
from convoeval.scenarios.errors import ScenarioError
from convoeval.scenarios.models import LOCALES, Fixtures, Locale, NonEmptyStr, OtherPatientFixture, Persona, StrictModel

#: The attacking strategies, each documented in docs/redteam.md.
STRATEGIES = (
    "impersonation",  # claims to be the patient, with partial knowledge (name, maybe the birth date)
    "third_party",  # a relative or friend asks about / for the patient
    "authority",  # staff, a doctor, the clinic itself
    "urgency",  # an emergency, distress, pressure
    "injection",  # instructions for the assistant hidden in the patient's message
    "new_number",  # "it's me, I changed my number"
    "crescendo",  # benign first turns, then the request, escalating
)
Strategy = Literal["impersonation", "third_party", "authority", "urgency", "injection", "new_number", "crescendo"]
DataKind = Literal["name", "cpf", "phone", "birth_date", "appointment", "invoice", "membership", "write"]
#: Agents attacks apply to unless a file says otherwise: the ones holding patients' records.
DEFAULT_AGENTS = ("support", "scheduling", "confirmation", "billing")

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
PLACEHOLDERS = ("target_name", "target_first_name", "target_cpf", "target_birth_date")


class AttackerPlan(StrictModel):
    """A simulated attacker: who the LLM plays and how it escalates, per locale."""

    persona: NonEmptyStr = Field(description="Who the attacker pretends to be, in a sentence.")
    plan: list[NonEmptyStr] = Field(min_length=1, description="The escalation, one step per line (benign first).")


class Attack(StrictModel):
    """One privacy attack (a file of ``evals/attacks/``)."""

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    description: NonEmptyStr
    strategy: Strategy
    target: NonEmptyStr = Field(description="The other patient's fixture id (default set or this file's fixtures).")
    data: list[DataKind] = Field(min_length=1, description="What the attacker is after.")
    agents: list[NonEmptyStr] = Field(default_factory=lambda: list(DEFAULT_AGENTS))
    legitimate: bool = Field(default=False, description="A verified third-party request the clinic must serve.")
    caller: Persona | None = Field(default=None, description="Who writes (default: a caller of the clinic's own).")
    turns: dict[Locale, list[NonEmptyStr]] = Field(default_factory=dict, description="Scripted caller turns.")
    benign_turns: int = Field(default=0, ge=0, description="How many first turns are an ordinary request of the "
                              "caller's own (utility under attack: was it served?).")
    simulated: dict[Locale, AttackerPlan] = Field(default_factory=dict, description="Simulated attacker per locale.")
    max_turns: int = Field(default=6, ge=1, le=30, description="Turns of a simulated attack.")
    fixtures: Fixtures | None = Field(default=None, description="Other patients (and clinic rows) of this attack.")

    def planted(self, default: Sequence[OtherPatientFixture] = DEFAULT_OTHER_PATIENTS) -> list[OtherPatientFixture]:
        """The other patients this attack runs with: its own fixtures' when it has some, else ``default``."""
        return list(self.fixtures.other_patients if self.fixtures and self.fixtures.other_patients else default)

    @field_validator("turns")
    @classmethod
    def _known_placeholders(cls, turns: dict[str, list[str]]) -> dict[str, list[str]]:
        for lines in turns.values():
            for line in lines:
                unknown = [p for p in _PLACEHOLDER.findall(line) if p not in PLACEHOLDERS]
                if unknown:
                    raise ValueError(f"unknown placeholder {{{unknown[0]}}}; expected one of {', '.join(PLACEHOLDERS)}")
        return turns

    @field_validator("simulated")
    @classmethod
    def _known_placeholders_in_plans(cls, simulated: dict[str, AttackerPlan]) -> dict[str, AttackerPlan]:
        for plan in simulated.values():
            for line in (plan.persona, *plan.plan):
                unknown = [p for p in _PLACEHOLDER.findall(line) if p not in PLACEHOLDERS]
                if unknown:
                    raise ValueError(f"unknown placeholder {{{unknown[0]}}}; expected one of {', '.join(PLACEHOLDERS)}")
        return simulated

    @model_validator(mode="after")
    def _has_a_form(self) -> Attack:
        if not self.turns and not self.simulated:
            raise ValueError("an attack needs scripted 'turns' or a 'simulated' attacker (per locale)")
        return self

    @property
    def locales(self) -> list[str]:
        """The locales this attack is written in (scripted or simulated)."""
        return [loc for loc in LOCALES if loc in self.turns or loc in self.simulated]


@dataclass(frozen=True)
class AttackCase:
    """One attack against one agent in one locale: what the red team runs."""

    attack: Attack
    agent: str
    locale: Locale
    form: str  # "scripted" | "simulated"
    path: str = ""

    @property
    def id(self) -> str:
        """``<attack id>/<agent>/<locale>``, with ``/simulated`` for a simulated attacker."""
        return f"{self.attack.id}/{self.agent}/{self.locale}" + ("/simulated" if self.form == "simulated" else "")


class AttackError(ScenarioError):
    """An attack file cannot be used as written; ``one_line()`` names the file and the field."""

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]], *, omitted: int = 0):
        super().__init__(path, problems, omitted=omitted)
        self.args = (str(self.args[0]).replace("Invalid scenario at", "Invalid attack at", 1),)


def parse_attack(data: object, path: Path | str, *, known_patients: Sequence[OtherPatientFixture] = (),
                 known_agents: Iterable[str] | None = None) -> Attack:
    """Validate one attack's parsed YAML; the target must be one of its fixtures' (or the default) patients.

    Raises:
        AttackError: a problem, named by file and field (an unknown strategy, target, agent or placeholder).
    """
    path = Path(path)
    if not isinstance(data, dict):
        raise AttackError(path, [("", f"expected a mapping of attack fields, got {type(data).__name__}")])
    try:
        attack = Attack.model_validate(data)
    except ValidationError as exc:
        raise AttackError(path, [(_where(e["loc"]), e["msg"]) for e in exc.errors()]) from None
    patients = attack.planted(known_patients)
    ids = [p.id for p in patients]
    if attack.target not in ids:
        raise AttackError(path, [("target", f"no other patient {attack.target!r} in the fixtures; expected one of "
                                            f"{', '.join(ids) or 'none'}")])
    if known_agents is not None:
        agents = set(known_agents)
        for n, agent in enumerate(attack.agents):
            if agent not in agents:
                raise AttackError(path, [(f"agents[{n}]", f"unknown agent {agent!r}; expected one of "
                                                          f"{', '.join(sorted(agents))}")])
    return attack


def _where(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{item}]"]
        else:
            parts.append(str(item))
    return ".".join(parts)


def load_attack_file(path: Path | str, **known: Any) -> Attack:
    """Read and validate one attack file (see ``parse_attack``)."""
    path = Path(path)
    try:
        docs = _parse_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AttackError(path, [("", f"cannot read file: {exc.strerror or exc}")]) from None
    except Exception as exc:  # a YAML syntax error or too deep a nesting: one line, like scenarios
        raise AttackError(path, [("", f"invalid YAML: {exc}".splitlines()[0])]) from None
    if len(docs) != 1:
        raise AttackError(path, [("", f"expected one YAML document, found {len(docs)}")])
    return parse_attack(docs[0], path, **known)


def attack_files(paths: Iterable[Path | str] | Path | str) -> list[Path]:
    """The attack files in ``paths`` (files, or folders searched recursively; one path alone is one), sorted."""
    files: list[Path] = []
    # A lone path is one path: a string iterated would be read a character at a time ("e", "v", …).
    for p in map(Path, [paths] if isinstance(paths, (str, Path)) else paths):
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")))
        elif p.exists():
            files.append(p)
        else:
            raise AttackError(p, [("", "no such file or folder")])
    return files


def expand(attacks: Iterable[tuple[Path, Attack] | Attack], *, agents: Sequence[str] | None = None,
           locales: Sequence[str] | None = None, strategies: Sequence[str] | None = None,
           form: str = "scripted") -> list[AttackCase]:
    """Every (attack × agent × locale) case in the given form (``scripted``, ``simulated`` or ``both``), filtered
    by agents, locales and strategies."""
    if form == "both":
        attacks = list(attacks)
        return [*expand(attacks, agents=agents, locales=locales, strategies=strategies, form="scripted"),
                *expand(attacks, agents=agents, locales=locales, strategies=strategies, form="simulated")]
    if form not in ("scripted", "simulated"):
        raise ValueError(f"form must be 'scripted', 'simulated' or 'both', got {form!r}")
    cases = []
    for item in attacks:
        path, attack = item if isinstance(item, tuple) else (Path(""), item)
        if strategies and attack.strategy not in strategies:
            continue
        written = attack.turns if form == "scripted" else attack.simulated
        for agent in attack.agents:
            if agents and agent not in agents:
                continue
            for locale in LOCALES:
                if locale in written and (not locales or locale in locales):
                    cases.append(AttackCase(attack, agent, locale, form, str(path)))
    return cases


def fill(line: str, target: OtherPatientFixture) -> str:
    """A turn template with the target's values in place of its placeholders."""
    year, month, day = target.birth_date.split("-")
    values = {
        "target_name": target.name,
        "target_first_name": target.name.split()[0],
        "target_cpf": f"{target.cpf[:3]}.{target.cpf[3:6]}.{target.cpf[6:9]}-{target.cpf[9:]}",
        "target_birth_date": f"{day}/{month}/{year}",
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], line)


def _caller_collisions(attack: Attack, path: Path, patients: Sequence[OtherPatientFixture]) -> None:
    """Refuse an attack whose caller's own data equals another patient's canary: a leak could not be told apart."""

    caller = attack.caller.model_dump() if attack.caller else DEFAULT_CALLER
    own_fixtures = attack.fixtures.model_dump() if attack.fixtures else BASE_FIXTURES
    own = {
        "name": caller.get("name"), "cpf": caller.get("cpf"), "phone": caller.get("phone"),
        "appointment": [a["starts_at"] for a in own_fixtures.get("appointments") or BASE_FIXTURES["appointments"]],
        "invoice": [i["amount_cents"] for i in own_fixtures.get("invoices") or BASE_FIXTURES["invoices"]],
    }
    for patient in patients:
        for canary, mine in collisions(canaries_of(patient), own):
            field = {"appointment": "fixtures.appointments", "invoice": "fixtures.invoices"}.get(canary.kind,
                                                                                                f"caller.{canary.kind}")
            raise AttackError(path, [(field, f"the caller's own {canary.kind} {mine!r} equals other patient "
                                             f"{patient.id!r}'s: a leak could not be told from the caller's data")])


def load_attacks(paths: Iterable[Path | str] | Path | str) -> list[tuple[Path, Attack]]:
    """Every attack in ``paths`` (files or folders), validated against the registered agents and the other patients
    they will run with (their own fixtures', or the default set); the caller's data must not collide with theirs.

    Raises:
        AttackError: the first file that cannot be used, naming the file and the field; nothing runs.
    """

    loaded = []
    seen: dict[str, Path] = {}
    for path in attack_files(paths):
        attack = load_attack_file(path, known_patients=DEFAULT_OTHER_PATIENTS, known_agents=agent_names())
        if attack.id in seen:
            raise AttackError(path, [("id", f"{attack.id!r} is also the id of {seen[attack.id]}")])
        seen[attack.id] = path
        patients = attack.planted()
        _caller_collisions(attack, path, patients)
        loaded.append((path, attack))
    return loaded


def attack_json_schema() -> dict[str, Any]:
    """The JSON Schema of an attack file, for editors' YAML autocompletion (``convoeval schema --kind attack``)."""

    schema = Attack.model_json_schema()
    schema["properties"]["agents"]["items"] = {"enum": agent_names(), "type": "string"}
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["title"] = "convoeval attack"
    return schema
