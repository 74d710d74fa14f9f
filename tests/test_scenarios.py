"""Scenario models and loader: schema, loading, filters, and the error contract (file, field, problem)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError
from schema_support import fresh_schema, shipped_schema

from convoeval.cli import main as cli_main
from convoeval.scenarios import (
    LOCALES,
    MAX_NESTING,
    MAX_PROBLEMS,
    REFERENCE_AGENTS,
    ConversationalScenario,
    ScenarioError,
    ScriptedScenario,
    is_conversational,
    load_scenario_file,
    load_scenarios,
    parse_scenario,
    validate_paths,
)

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "evals" / "scenarios"

SEED_SCENARIO = {
    "type": "conversational",
    "id": "billing-conv-happy",
    "agent": "billing",
    "locale": "pt-BR",
    "description": "Patient pays via Pix",
    "persona": {"name": "Carlos", "phone": "11987650010", "cpf": "12345678901", "traits": ["impaciente", "direto"]},
    "goal": "Patient pays pending invoice via Pix",
    "max_turns": 15,
    "rubric": ["Agent identified the pending invoice", "Agent offered payment options"],
    "assertions": {"payment_link_created": True},
    "fixtures": {"invoices": [{"id": "inv-1", "amount_cents": 15000, "due_date": "2026-02-20"}]},
}

VALID_CONVERSATIONAL_YAML = """
type: conversational
id: conv-test
agent: billing
locale: pt-BR
description: "Conversational test"
persona:
  name: Carlos
  phone: "11999998888"
  traits: ["impaciente"]
goal: "Pay invoice via Pix"
max_turns: 10
rubric:
  - "Agent offered payment options"
fixtures:
  invoices:
    - id: inv-1
      amount_cents: 15000
      due_date: "2026-02-20"
"""

VALID_SCRIPTED_YAML = """
id: scripted-test
agent: billing
description: "Scripted test"
persona: {name: Maria, phone: "11999998888"}
turns:
  - user: "oi"
    expect:
      tools_called: [list_invoices]
      response_matches: "R\\\\$ ?150"
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ── the schema ──


def test_validates_a_conversational_scenario():
    scenario = parse_scenario(SEED_SCENARIO)
    assert isinstance(scenario, ConversationalScenario)
    assert scenario.type == "conversational"
    assert scenario.persona.traits == ["impaciente", "direto"]
    assert scenario.goal == "Patient pays pending invoice via Pix"
    assert len(scenario.rubric) == 2
    assert scenario.criteria == ["Agent identified the pending invoice", "Agent offered payment options"]
    assert scenario.max_turns == 15


def test_rejects_conversational_scenario_without_goal():
    raw = {k: v for k, v in SEED_SCENARIO.items() if k != "goal"}
    with pytest.raises(ScenarioError) as info:
        parse_scenario(raw, "x.yaml")
    assert "goal: required field is missing" in str(info.value)


def test_max_turns_defaults_to_15_and_must_be_positive():
    raw = {k: v for k, v in SEED_SCENARIO.items() if k != "max_turns"}
    assert parse_scenario(raw).max_turns == 15
    for bad in (0, -3):
        with pytest.raises(ScenarioError, match="max_turns"):
            parse_scenario({**SEED_SCENARIO, "max_turns": bad})


@pytest.mark.parametrize("yaml_value", ["yes", "on", "true", "no", '"5"', "5.0"])
@pytest.mark.parametrize(("field", "where"), [
    ("max_turns", "max_turns"),
    ("seed", "seed"),
    ("amount_cents", "fixtures.invoices[0].amount_cents"),
])
def test_integer_fields_refuse_booleans_strings_and_floats(tmp_path, yaml_value, field, where):
    # YAML 1.1 reads yes/on/true as True: a lax int would have run `max_turns: yes` as max_turns=1.
    text = {
        "max_turns": VALID_CONVERSATIONAL_YAML.replace("max_turns: 10", f"max_turns: {yaml_value}"),
        "seed": VALID_CONVERSATIONAL_YAML + f"seed: {yaml_value}\n",
        "amount_cents": VALID_CONVERSATIONAL_YAML.replace("amount_cents: 15000", f"amount_cents: {yaml_value}"),
    }[field]
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    line = info.value.one_line()
    # Between our field path and our ", got …" is pydantic's wording, passed through on purpose: not pinned here.
    assert line.startswith(f"{path}: {where}: ") and ", got " in line, line
    if yaml_value in ("yes", "on", "true", "no"):
        assert "(YAML reads yes/no/on/off/true/false as booleans)" in line, line


def test_integer_fields_still_take_integers(tmp_path):
    text = VALID_CONVERSATIONAL_YAML + "seed: 7\n"
    scenario = load_scenario_file(write(tmp_path, "c.yaml", text))
    assert scenario.seed == 7 and scenario.fixtures.invoices[0].amount_cents == 15000


def test_rubric_needs_at_least_one_criterion():
    with pytest.raises(ScenarioError, match="rubric"):
        parse_scenario({**SEED_SCENARIO, "rubric": []})


def test_persona_knows_and_long_form_criteria():
    raw = {
        **SEED_SCENARIO,
        "persona": {**SEED_SCENARIO["persona"], "knows": {"cpf": "12345678901", "preferred_method": "pix"}},
        "rubric": ["plain", {"text": "Agent generated a payment link", "assertion": "payment_link_created"}],
    }
    scenario = parse_scenario(raw)
    assert scenario.persona.knows == {"cpf": "12345678901", "preferred_method": "pix"}
    assert scenario.rubric[1].assertion == "payment_link_created"
    assert scenario.criteria == ["plain", "Agent generated a payment link"]


def test_criterion_pointing_at_unknown_assertion_is_an_error():
    raw = {**SEED_SCENARIO, "rubric": [{"text": "x", "assertion": "payment_link_made"}]}
    with pytest.raises(ScenarioError, match=r"rubric\[0\]\.assertion: .*unknown assertion 'payment_link_made'"):
        parse_scenario(raw)


def test_unknown_assertion_key_is_a_validation_error():
    raw = {**SEED_SCENARIO, "assertions": {"payment_link_created": True, "link_sent": True}}
    with pytest.raises(ScenarioError, match=r"assertions\.link_sent: unknown field"):
        parse_scenario(raw)


def test_unquoted_phone_and_date_are_kept_as_text(tmp_path):
    text = VALID_CONVERSATIONAL_YAML.replace('"11999998888"', "11999998888").replace('"2026-02-20"', "2026-02-20")
    scenario = load_scenario_file(write(tmp_path, "c.yaml", text))
    assert scenario.persona.phone == "11999998888"
    assert scenario.fixtures.invoices[0].due_date == "2026-02-20"


# ── the loader ──


def test_parses_valid_conversational_yaml(tmp_path):
    scenario = load_scenario_file(write(tmp_path, "conv.yaml", VALID_CONVERSATIONAL_YAML))
    assert scenario.type == "conversational"
    assert scenario.goal == "Pay invoice via Pix"


def test_type_defaults_to_scripted(tmp_path):
    scenario = load_scenario_file(write(tmp_path, "s.yaml", VALID_SCRIPTED_YAML))
    assert isinstance(scenario, ScriptedScenario)
    assert scenario.type == "scripted"
    assert scenario.turns[0].expect.tools_called == ["list_invoices"]
    assert scenario.turns[0].judge is True


def test_type_guard():
    assert is_conversational({"type": "conversational", "id": "test"})
    assert not is_conversational({"id": "test", "turns": [{"user": "oi"}]})
    assert not is_conversational({"id": "test"})
    assert is_conversational(parse_scenario(SEED_SCENARIO))


def test_filters_by_agent_id_and_type(tmp_path):
    write(tmp_path, "a.yaml", VALID_CONVERSATIONAL_YAML)
    write(tmp_path, "b.yaml", VALID_SCRIPTED_YAML)
    other = VALID_SCRIPTED_YAML.replace("scripted-test", "support-one").replace("agent: billing", "agent: support")
    (tmp_path / "sub").mkdir()
    write(tmp_path, "sub/c.yaml", other)
    assert [s.id for s in load_scenarios(tmp_path)] == ["conv-test", "scripted-test", "support-one"]
    assert [s.id for s in load_scenarios(tmp_path, agent="support")] == ["support-one"]
    assert [s.id for s in load_scenarios(tmp_path, type="conversational")] == ["conv-test"]
    assert [s.id for s in load_scenarios(tmp_path, type="scripted", agent="billing")] == ["scripted-test"]
    assert [s.id for s in load_scenarios(tmp_path, scenario="conv-test")] == ["conv-test"]
    with pytest.raises(ValueError, match="unknown agent 'bill'"):
        load_scenarios(tmp_path, agent="bill")


# ── errors name the file, the field and the problem ──


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id: [unclosed\n", r"invalid YAML: line \d+, column \d+"),
        ("- just\n- a list\n", "expected a mapping of fields at the top level, got list"),
        ("", "got empty"),
        (VALID_CONVERSATIONAL_YAML + "colour: blue\n", "colour: unknown field"),
        (VALID_CONVERSATIONAL_YAML.replace("locale: pt-BR", "locale: fr"), r"locale: .+, got 'fr'"),
        (VALID_CONVERSATIONAL_YAML.replace("type: conversational", "type: chatty"), "type: expected 'conversational' or 'scripted', got 'chatty'"),
        (VALID_CONVERSATIONAL_YAML.replace("amount_cents: 15000", "amount_cents: lots"), r"fixtures\.invoices\[0\]\.amount_cents: "),
        (VALID_SCRIPTED_YAML.replace('"R\\\\$ ?150"', '"(unclosed"'), r"turns\[0\]\.expect\.response_matches: .*invalid regular expression"),
    ],
)
def test_errors_name_file_field_and_problem(tmp_path, text, expected):
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    message = str(info.value)
    assert message.startswith(f"Invalid scenario at {path}:")
    assert re.search(expected, message), message
    assert "Traceback" not in message
    assert "\n" not in info.value.one_line()


def test_an_error_lists_the_first_problems_and_counts_the_rest():
    raw = {**SEED_SCENARIO, "persona": {**SEED_SCENARIO["persona"], "traits": list(range(MAX_PROBLEMS + 7))},
           "k" * 5000: 1}
    with pytest.raises(ScenarioError) as info:
        parse_scenario(raw, "x.yaml")
    error = info.value
    assert len(error.problems) == MAX_PROBLEMS and error.omitted == 8  # 27 bad traits + 1 unknown key
    line = error.one_line()
    assert re.match(r"x\.yaml: persona\.traits\[0\]: [^;]+; persona\.traits\[1\]: ", line), line
    assert f"persona.traits[{MAX_PROBLEMS - 1}]: " in line and f"persona.traits[{MAX_PROBLEMS}]: " not in line
    assert line.endswith("; and 8 more problems")
    assert str(error).splitlines()[-1] == "  … and 8 more problems"


def test_a_long_unknown_key_is_clipped_in_the_field_path():
    with pytest.raises(ScenarioError) as info:
        parse_scenario({**SEED_SCENARIO, "k" * 5000: 1}, "x.yaml")
    assert info.value.one_line() == f"x.yaml: {'k' * 59}…: unknown field"


def _first_error_paths(raw: dict) -> list[str]:
    """The field paths (``persona.traits[5]``) of the first MAX_PROBLEMS errors pydantic itself reports for ``raw``."""
    with pytest.raises(ValidationError) as info:
        TypeAdapter(ConversationalScenario).validate_python(raw)
    return ["".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]).lstrip(".")
            for e in info.value.errors()[:MAX_PROBLEMS]]


@pytest.mark.parametrize("case", ["bad-from-the-start", "good-then-bad", "several-lists"])
def test_with_thousands_of_problems_the_first_ones_are_listed_exactly(case):
    # Over 1,000 errors the loader validates a clipped copy (reading every error takes seconds): what it lists must
    # still be the file's first problems, in order, and the count exact.
    persona = dict(SEED_SCENARIO["persona"])
    raw = {**SEED_SCENARIO, "rubric": [1] * 3000}
    if case == "good-then-bad":
        raw["rubric"] = ["fine"] * (MAX_PROBLEMS + 10) + [1] * 3000
    elif case == "several-lists":
        persona["traits"] = ["ok"] * 5 + [2] * 1500
        raw["fixtures"] = {"invoices": [{"id": "i", "amount_cents": 1, "due_date": "d"}] * 3 + [{"id": 3}] * 1500}
    raw["persona"] = persona
    with pytest.raises(ScenarioError) as info:
        parse_scenario(raw, "x.yaml")
    error = info.value
    expected = _first_error_paths(raw)
    assert [field for field, _ in error.problems] == expected
    with pytest.raises(ValidationError) as full:
        TypeAdapter(ConversationalScenario).validate_python(raw)
    assert len(error.problems) + error.omitted == full.value.error_count()


def test_thousands_of_problems_next_to_a_recursive_alias(tmp_path):
    text = "type: conversational\nloop: &a [*a]\nrubric: [" + ",".join(["1"] * 3000) + "]\n"
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(write(tmp_path, "loop.yaml", text))
    assert "rubric[0]: " in info.value.one_line() and info.value.omitted > 2900


def test_a_tab_names_the_character_and_its_place(tmp_path):
    path = write(tmp_path, "tab.yaml", "type: conversational\npersona:\n\tname: x\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    assert info.value.one_line() == (
        f"{path}: invalid YAML: line 3, column 1: a tab, which YAML does not allow here: indent with spaces")



@pytest.mark.parametrize("loader", ["SafeLoader", "CSafeLoader"])
def test_a_yaml_scanner_error_reads_the_same_whichever_loader_words_it(loader):
    # libyaml and the pure-Python loader word "cannot start any token" differently (only the latter names the
    # character); what convoeval says is decided from the character at the error's mark, not from that wording.
    import yaml

    from convoeval.scenarios._yaml import _yaml_problem

    if not hasattr(yaml, loader):
        pytest.skip("PyYAML without libyaml")
    for text, expected in (("a:\n\tb: 1\n", "invalid YAML: line 2, column 1: a tab, which YAML does not allow here"),
                           ("a: @x\n", "invalid YAML: line 1, column 4: ")):
        with pytest.raises(yaml.scanner.ScannerError) as info:
            yaml.load(text, Loader=getattr(yaml, loader))
        problem = _yaml_problem(info.value, text)
        assert problem.startswith(expected), problem
    assert problem.endswith("('@')"), problem  # the character, which libyaml's own words leave out

def test_nesting_deeper_than_the_limit_is_refused_without_crashing(tmp_path):
    # libyaml composes nested nodes recursively in C: ~30,000 levels overflow the stack and kill the process, so the
    # loader must refuse them first. Loaded in a child process: a crash fails this test instead of the whole run.
    files = {
        "flow.yaml": "rubric: " + "[" * 200_000 + "]" * 200_000 + "\n",
        "flow_unclosed.yaml": "rubric: " + "[" * 400_000 + "\n",
        "mappings.yaml": "rubric: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
        "keys.yaml": "? " * 200_000 + "x\n",
        "brackets_in_text.yaml": "a: '" + "]" * 200_000 + "'\nb: " + "[" * 50_000 + "]" * 50_000 + "\n",
        "block.yaml": "".join(" " * i + f"k{i}:\n" for i in range(MAX_NESTING + 1)) + " " * (MAX_NESTING + 1) + "x\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "convoeval.cli", "validate", "-q", str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr[-2000:]
    errors = sorted(proc.stderr.splitlines())
    assert errors == sorted(f"error: {tmp_path / n}: invalid YAML: nested too deeply" for n in files), errors


def test_nesting_up_to_the_limit_is_read(tmp_path):
    text = VALID_CONVERSATIONAL_YAML + "persona_notes: " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1) + "\n"
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(write(tmp_path, "deep.yaml", text))
    assert info.value.one_line().endswith(": persona_notes: unknown field")


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-02-30", "line 19, column 17: cannot read '2026-02-30' as a timestamp: day is out of range for month"),
    ("9" * 5000, "line 19, column 17: cannot read '99999"),
    ("!!bool maybe", "line 19, column 17: cannot read 'maybe' as a bool: not a valid bool"),
    ("!!int ''", "line 19, column 17: cannot read '' as an int: not a valid int"),
    ("!!timestamp soon", "line 19, column 17: cannot read 'soon' as a timestamp: not a valid timestamp"),
])
def test_a_value_yaml_cannot_build_is_an_error_at_its_line(tmp_path, value, expected):
    # PyYAML's constructors raised ValueError/KeyError/AttributeError for these (a typo in a date among them).
    text = VALID_CONVERSATIONAL_YAML.replace('due_date: "2026-02-20"', f"due_date: {value}")
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    line = info.value.one_line()
    assert line.startswith(f"{path}: invalid YAML: {expected}"), line
    assert len(line) < 400, line


def test_a_wrong_integer_quotes_what_it_got():
    with pytest.raises(ScenarioError) as info:
        parse_scenario({**SEED_SCENARIO, "max_turns": "ten"}, "x.yaml")
    line = info.value.one_line()
    assert line.startswith("x.yaml: max_turns: ") and line.endswith(", got 'ten'"), line


def test_non_utf8_file_is_a_clear_error(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("description: 'Cl\xednica'\n".encode("latin-1"))
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario_file(path)


def test_duplicate_ids_across_files_name_both(tmp_path):
    first = write(tmp_path, "a.yaml", VALID_CONVERSATIONAL_YAML)
    second = write(tmp_path, "b.yaml", VALID_CONVERSATIONAL_YAML)
    report = validate_paths([tmp_path])
    assert len(report) == 1
    [error] = report.errors
    assert error.path == str(second)
    assert "duplicate scenario id 'conv-test'" in str(error) and str(first) in str(error)


def test_validate_collects_every_error(tmp_path):
    write(tmp_path, "good.yaml", VALID_CONVERSATIONAL_YAML)
    write(tmp_path, "bad1.yaml", "id: [\n")
    write(tmp_path, "bad2.yaml", VALID_SCRIPTED_YAML + "extra: 1\n")
    report = validate_paths([tmp_path])
    assert [s.id for s in report] == ["conv-test"]
    assert sorted(Path(e.path).name for e in report.errors) == ["bad1.yaml", "bad2.yaml"]


# ── the CLI ──


def test_cli_validate_exit_codes(tmp_path, capsys):
    good = write(tmp_path, "good.yaml", VALID_CONVERSATIONAL_YAML)
    assert cli_main(["validate", str(good)]) == 0
    bad = write(tmp_path, "bad.yaml", VALID_CONVERSATIONAL_YAML.replace("agent: billing", "agent: biling"))
    assert cli_main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: agent: ")
    assert cli_main(["validate", str(tmp_path / "missing")]) == 1


# ── the shipped scenarios and schema ──


def test_repository_scenarios_are_valid():
    report = validate_paths([SCENARIOS])
    assert report.errors == []
    assert {"billing-conv-happy-payment", "billing-conv-impatient-patient", "billing-conv-confused-patient"} <= {
        s.id for s in report
    }


def test_every_agent_has_a_scripted_and_two_conversational_scenarios_across_all_locales():
    scenarios = load_scenarios(SCENARIOS)
    for agent in REFERENCE_AGENTS:
        mine = [s for s in scenarios if s.agent == agent]
        assert sum(s.type == "scripted" for s in mine) >= 1, agent
        assert sum(s.type == "conversational" for s in mine) >= 2, agent
    assert {s.locale for s in scenarios} == set(LOCALES)
    for s in scenarios:
        if s.type == "conversational":
            assert s.assertions.active(), f"{s.id} has no database assertion"


def test_shipped_json_schema_matches_the_models():
    assert shipped_schema("scenario") == fresh_schema("scenario"), "regenerate with: convoeval schema --out convoeval/schemas/scenario.schema.json"


# ── The agent names a scenario may use: one registry ──


def test_the_reference_agent_names_are_the_registered_clinic_agents():
    from convoeval.agents.clinic import clinic_agent_names as clinic_agents
    from convoeval.scenarios import REFERENCE_AGENTS

    assert sorted(REFERENCE_AGENTS) == clinic_agents()


def test_a_registered_agent_name_is_accepted_by_scenarios_and_filters(tmp_path):
    from convoeval.scenarios import agent_names, agent_registry, register_agent_name

    raw = {**SEED_SCENARIO, "agent": "dental-test"}
    with pytest.raises(ScenarioError, match="agent: .+, got 'dental-test'"):
        parse_scenario(raw)
    register_agent_name("dental-test")
    try:
        assert parse_scenario(raw).agent == "dental-test"
        assert "dental-test" in agent_names()
        assert load_scenarios(tmp_path, agent="dental-test") == []
    finally:
        agent_registry._NAMES.pop("dental-test")  # leave the registry as other tests expect it


def test_an_invalid_agent_name_cannot_be_registered():
    from convoeval.scenarios import register_agent_name

    with pytest.raises(ValueError, match="invalid agent name"):
        register_agent_name("clinic:billing")


@pytest.mark.parametrize("libyaml_wording", ["exceeded maximum nesting depth", "some future wording", ""])
def test_nesting_refused_by_libyaml_itself_still_gets_our_message(tmp_path, monkeypatch, libyaml_wording):
    # A PyYAML release (6.0.4) made libyaml refuse deep nesting before our own check; whatever libyaml says, and at
    # whatever depth, the loader's message is convoeval's.
    import yaml

    from convoeval.scenarios import _yaml

    def refuse(loader, text, limit):
        if loader is not yaml.SafeLoader:
            raise yaml.scanner.ScannerError(problem=libyaml_wording)
        return real(loader, text, limit)

    real = _yaml._event_depth
    monkeypatch.setattr(_yaml, "_event_depth", refuse)
    path = write(tmp_path, "deep.yaml", "type: conversational\nrubric: " + "[" * 150 + "]" * 150 + "\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    assert info.value.one_line() == f"{path}: invalid YAML: nested too deeply"


def test_a_real_syntax_error_is_not_mistaken_for_deep_nesting(tmp_path):
    # Enough indicators that the depth pass runs (a comment full of colons), an error three levels deep.
    path = write(tmp_path, "bad.yaml", "type: conversational\nrubric: [[[1, 2}\n# " + ":" * 200 + "\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario_file(path)
    assert "nested too deeply" not in info.value.one_line() and "invalid YAML: line 2" in info.value.one_line()
