"""Bad input refused: malformed scenario files (a corpus in ``tests/data/bad_scenarios`` plus property-based
fuzzing), bad CLI arguments and run parameters, and agent replies that break the protocol.

Each malformed file must give a ``ScenarioError`` whose one-line text names the file and the field; nothing may
crash, hang or eat memory. Every load runs in a forked child with a deadline and a memory cap, so a loader that
hangs on an alias bomb fails its test instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import resource
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_reliability_support import (
    SCENARIOS,
    FaultyAgent,
    assert_no_traceback,
    clean_env,
    cli,
    fake_responder,
    run_args,
)

from convoeval.pipeline import ConfigError, EvalConfig
from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.execute import select_scenarios
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import MAX_SCENARIO_BYTES, ScenarioError, load_scenario_file, parse_scenario, validate_paths
from convoeval.store import TABLES, open_store
from convoeval.testing import FakeChatModel

#: Integration tests (subprocesses, local servers): select or skip them with -m reliability.
pytestmark = pytest.mark.reliability

CORPUS = Path(__file__).parent / "data" / "bad_scenarios"
#: CPU seconds a load may take. CPU, not wall clock: a loaded 2-core CI machine took 8.6 s of wall clock for a load of
#: 1.5 CPU s (the file just under the size limit).
LOAD_DEADLINE_S = 6.0
#: Wall-clock seconds before a load counts as hung (it only has to end a loader that never returns).
LOAD_LEASH_S = 60.0
LOAD_MEMORY_CAP = 1 << 30  # 1 GiB of address space on top of what the test process already maps

# ── The loader in a leash ──


def _load_in_child(path: str, conn: Any) -> None:
    with open("/proc/self/status") as fh:
        mapped = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (mapped + LOAD_MEMORY_CAP, resource.RLIM_INFINITY))
    started = time.process_time()
    try:
        scenario = load_scenario_file(path)
        outcome = ("ok", scenario.id)
    except ScenarioError as exc:
        outcome = ("error", exc.one_line())
    except BaseException as exc:  # noqa: BLE001 - anything else is the bug this reports
        outcome = ("crash", f"{type(exc).__name__}: {str(exc)[:300]}")
    conn.send((*outcome, time.process_time() - started))


def load_leashed(path: Path, deadline_s: float = LOAD_DEADLINE_S) -> tuple[str, str]:
    """``("ok", id)``, ``("error", one_line)``, ``("crash", what)`` or ``("timeout", what)`` for loading ``path``:
    a load over ``deadline_s`` CPU seconds, or not over within ``LOAD_LEASH_S`` seconds, is a timeout."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_load_in_child, args=(str(path), send), daemon=True)
    child.start()
    try:
        if not receive.poll(LOAD_LEASH_S):
            return "timeout", f"no answer within {LOAD_LEASH_S:g} s"
        outcome, text, cpu_s = receive.recv()
        if cpu_s > deadline_s:
            return "timeout", f"took {cpu_s:.1f} CPU s (over {deadline_s:g}); {outcome}: {text[:200]}"
        return outcome, text
    finally:
        child.kill()
        child.join()


# ── The corpus ──

#: Where the message after the field path is pydantic's own wording, passed through on purpose
#: (convoeval/scenarios/errors.py): only the file and the field path are convoeval's to assert.
PYDANTIC = ""

#: file -> (field path the message names, fragment of the message). "" as field: a whole-file problem.
CORPUS_EXPECTATIONS: dict[str, tuple[str, str]] = {
    "syntax_error.yaml": ("", "invalid YAML: line 5, column 9"),
    "syntax_unclosed_flow.yaml": ("", "invalid YAML: line 4"),
    "tab_indentation.yaml": ("", "invalid YAML: line 3, column 1: a tab"),
    "wrong_type_max_turns.yaml": ("max_turns", "got 'many'"),
    "wrong_type_persona.yaml": ("persona", PYDANTIC),
    "wrong_type_rubric.yaml": ("rubric", PYDANTIC),
    "wrong_type_knows.yaml": ("persona.knows", PYDANTIC),
    "unknown_key_top.yaml": ("rubrik", "unknown field"),
    "unknown_key_nested.yaml": ("persona.phon", "unknown field"),
    "unknown_key_assertion.yaml": ("assertions.payment_link_create", "unknown field"),
    "bad_enum_agent.yaml": ("agent", "got 'dentist'"),
    "bad_enum_locale.yaml": ("locale", "got 'fr'"),
    "bad_enum_type.yaml": ("type", "got 'chatty'"),
    "bad_enum_invoice_status.yaml": ("fixtures.invoices[0].status", "got 'unpaid'"),
    "bad_enum_payment_method.yaml": ("assertions.payment_method", "got 'bitcoin'"),
    "empty_rubric.yaml": ("rubric", PYDANTIC),
    "empty_criterion.yaml": ("rubric[0].text", PYDANTIC),
    "unknown_criterion_assertion.yaml": ("rubric[0].assertion", "unknown assertion 'link_sent'"),
    "zero_max_turns.yaml": ("max_turns", PYDANTIC),
    "negative_max_turns.yaml": ("max_turns", PYDANTIC),
    "missing_goal.yaml": ("goal", "required field is missing"),
    "bad_id_pattern.yaml": ("id", PYDANTIC),
    "bad_phone.yaml": ("persona.phone", PYDANTIC),
    "nps_out_of_range.yaml": ("assertions.nps_score", PYDANTIC),
    "negative_amount.yaml": ("fixtures.invoices[0].amount_cents", PYDANTIC),
    "scripted_no_turns.yaml": ("turns", PYDANTIC),
    "scripted_bad_regex.yaml": ("turns[0].expect.response_matches", "invalid regular expression"),
    "scripted_negative_max_tool_calls.yaml": ("turns[0].expect.max_tool_calls", PYDANTIC),
    "non_mapping_list.yaml": ("", "expected a mapping of fields at the top level, got list"),
    "non_mapping_scalar.yaml": ("", "expected a mapping of fields at the top level, got str"),
    "empty.yaml": ("", "got empty"),
    "only_comment.yaml": ("", "got empty"),
    "multi_document.yaml": ("", "expected one YAML document, found 2"),
    "non_utf8.yaml": ("", "not UTF-8 text"),
    "deep_nesting.yaml": ("", "nested too deeply"),
    "billion_laughs.yaml": ("a", "unknown field"),
    "billion_laughs_enum.yaml": ("agent", PYDANTIC),
    "billion_laughs_type.yaml": ("type", "expected 'conversational' or 'scripted'"),
    "wrong_type_type_list.yaml": ("type", "expected 'conversational' or 'scripted'"),
    "wrong_type_max_turns_bool.yaml": ("max_turns", "got True (YAML reads yes/no/on/off/true/false as booleans)"),
}

#: file -> the strict-xfail reason of a corpus file the loader does not handle yet (none today).
KNOWN_BUGS: dict[str, str] = {}


def _corpus_params() -> list[Any]:
    params = []
    for name in sorted(CORPUS_EXPECTATIONS):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[name])] if name in KNOWN_BUGS else []
        params.append(pytest.param(name, marks=marks, id=name.removesuffix(".yaml")))
    return params


def test_the_corpus_and_its_expectations_match():
    files = {p.name for p in CORPUS.glob("*.yaml")}
    assert files == set(CORPUS_EXPECTATIONS), files ^ set(CORPUS_EXPECTATIONS)


@pytest.mark.parametrize("name", _corpus_params())
def test_a_malformed_scenario_gives_a_clear_error_naming_file_and_field(name):
    path = CORPUS / name
    started = time.perf_counter()
    outcome, text = load_leashed(path)  # within LOAD_DEADLINE_S CPU seconds, or a "timeout"
    assert outcome == "error", (outcome, text)
    field, fragment = CORPUS_EXPECTATIONS[name]
    assert text.startswith(f"{path}: "), text  # names the file
    if field:
        assert f"{field}: " in text, text  # names the field path
    assert fragment in text, text
    assert "\n" not in text and len(text) < 2000, text  # one readable line
    assert time.perf_counter() - started < LOAD_LEASH_S


def test_duplicate_ids_across_files_name_both_files():
    report = validate_paths([CORPUS / "duplicate_ids"])
    assert len(report) == 1 and len(report.errors) == 1
    text = report.errors[0].one_line()
    assert "id: duplicate scenario id 'dup-id'" in text
    assert "first.yaml" in text and "second.yaml" in text


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("description: " + "x" * (MAX_SCENARIO_BYTES + 10) + "\n")
    started = time.perf_counter()
    outcome, text = load_leashed(path, deadline_s=2)  # CPU seconds, as the just-under file below has 5
    assert (outcome, text) == ("error", f"{path}: file is larger than {MAX_SCENARIO_BYTES:,} bytes")
    assert time.perf_counter() - started < LOAD_LEASH_S


def test_a_file_just_under_the_size_limit_is_handled_within_seconds(tmp_path):
    path = tmp_path / "big.yaml"
    items = ",".join(["1"] * ((MAX_SCENARIO_BYTES - 200) // 2))
    path.write_text("type: conversational\nid: big\nrubric: [" + items + "]\n")
    assert path.stat().st_size < MAX_SCENARIO_BYTES
    outcome, text = load_leashed(path, deadline_s=5)
    assert outcome == "error", (outcome, text[:200])


def test_an_error_message_stays_readable_however_many_problems_the_file_has(tmp_path):
    path = tmp_path / "many.yaml"
    path.write_text("type: conversational\nid: many\npersona: {name: x, phone: '11987650020', traits: ["
                    + ",".join(["1"] * 20000) + "]}\n")
    outcome, text = load_leashed(path)
    assert outcome == "error" and "persona.traits[0]" in text, (outcome, text[:200])
    assert len(text) < 10_000, len(text)


# ── Property-based fuzzing of the loader ──

FIELD_NAMES = ["type", "id", "agent", "locale", "description", "persona", "goal", "max_turns", "seed", "rubric",
               "assertions", "fixtures", "turns", "name", "phone", "cpf", "traits", "knows", "text", "assertion",
               "invoices", "status", "user", "expect", "judge", "response_matches", "max_tool_calls"]
GOOD_VALUES = ["conversational", "scripted", "billing", "pt-BR", "en", "11987650020", "pending", "x", "", "(",
               "2026-02-20", "fixtures"]
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True) | st.sampled_from(GOOD_VALUES) | st.text(max_size=20))
keys = st.sampled_from(FIELD_NAMES) | st.text(max_size=10)
yamlish = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
                       max_leaves=30)
documents = st.dictionaries(st.sampled_from(FIELD_NAMES), yamlish, max_size=10)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_parse(document: Any) -> None:
    try:
        parse_scenario(document, "fuzz.yaml")
    except ScenarioError as exc:
        assert exc.one_line().startswith("fuzz.yaml: ")


@FUZZ
@given(document=documents.filter(lambda d: not isinstance(d.get("type"), (list, dict))))
def test_fuzz_random_mappings_give_a_scenario_or_a_scenario_error(document):
    _check_parse(document)


@FUZZ
@given(document=documents)
@example(document={"type": ["conversational"]})
def test_fuzz_random_mappings_with_any_type_value_give_a_scenario_or_a_scenario_error(document):
    _check_parse(document)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(document=documents.filter(lambda d: not isinstance(d.get("type"), (list, dict))))
def test_fuzz_random_yaml_files_give_a_scenario_or_a_scenario_error(fuzz_dir, document):
    path = fuzz_dir / "doc.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    try:
        load_scenario_file(path)
    except ScenarioError as exc:
        assert exc.one_line().startswith(f"{path}: ")


@FUZZ
@given(data=st.binary(max_size=3000)
       | st.builds(lambda a, b: a + b, st.sampled_from([b"type: conversational\n", b"id: x\n", b"\xef\xbb\xbf",
                                                        b"%YAML 1.1\n---\n", b"a: &a [1]\nb: *a\n"]),
                   st.binary(max_size=500)))
def test_fuzz_random_bytes_give_a_scenario_or_a_scenario_error(fuzz_dir, data):
    path = fuzz_dir / "bytes.yaml"
    path.write_bytes(data)
    try:
        load_scenario_file(path)
    except ScenarioError as exc:
        assert exc.one_line().startswith(f"{path}: ")


# ── Bad CLI arguments and run parameters ──

CLI_MISTAKES = {
    # name: (arguments after `convoeval run <defaults>`, text the error line must contain)
    "trials-zero": (["--trials", "0"], "trials must be from 1 to 1,000, got 0"),
    "trials-not-int": (["--trials", "abc"], "argument --trials: expected a whole number, got 'abc'"),
    "seed-not-int": (["--seed", "1,x"], "--seed takes integers"),
    "threshold-range": (["--fail-threshold", "11"], "fail_threshold must be a number from 0 to 10"),
    "threshold-not-number": (["--fail-threshold", "high"], "argument --fail-threshold: invalid float value"),
    "concurrency-zero": (["--concurrency", "0"], "concurrency must be from 1 to 10,000, got 0"),
    "judge-samples-zero": (["--judge-samples", "0"], "judge_samples must be from 1 to 50, got 0"),
    "unknown-type": (["--type", "chatty"], "argument --type: invalid choice"),
    "unknown-scenario": (["--scenario", "no-such-scenario"], "no scenario in"),
    "unknown-flag": (["--bogus"], "unrecognized arguments: --bogus"),
    "missing-scenarios-dir": (["--scenarios-dir", "/nonexistent/scenarios"], "does not exist"),
    "bad-scenario-file": (["--scenarios-dir", str(CORPUS / "duplicate_ids")], "duplicate scenario id 'dup-id'"),
}


def _error_lines(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize("case", list(CLI_MISTAKES))
def test_a_bad_cli_argument_is_one_error_line_and_exit_2(case, tmp_path):
    extra, shown = CLI_MISTAKES[case]
    proc = cli(*run_args(tmp_path / "out", *extra), env=clean_env(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1"),
               timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    errors = _error_lines(proc)
    # One line, the last one: no usage block above it (convoeval.cli._base.OneLineParser).
    assert len(errors) == 1 and proc.stderr.rstrip().splitlines()[-1] == errors[0], proc.stderr
    assert shown in errors[0], errors
    assert not (tmp_path / "out" / "runs").exists()  # nothing ran


def test_an_unknown_agent_and_a_missing_command_are_one_error_line(tmp_path):
    env = clean_env(tmp_path)
    for args, shown in ((["run", "--agent", "dentist"], "argument --agent: invalid choice"),
                        ([], "the following arguments are required: COMMAND")):
        proc = cli(*args, env=env, timeout=60)
        assert_no_traceback(proc)
        assert proc.returncode == 2 and _error_lines(proc) and shown in _error_lines(proc)[-1], proc.stderr


@pytest.mark.parametrize("store", ["bogus://somewhere", "postgresql://user:pw@127.0.0.1:9/nodb",
                                   "postgresql://user:pw@127.0.0.1:port/nodb"])
def test_a_bad_store_url_is_one_error_line_and_exit_2(store, tmp_path):
    proc = cli(*run_args(tmp_path / "out", "--store", store),
               env=clean_env(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1"), timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.returncode
    assert len(_error_lines(proc)) == 1, proc.stderr


@pytest.mark.parametrize("store", ["bogus://somewhere", "postgresql://user:pw@127.0.0.1:port/nodb"])
def test_cleanup_with_a_bad_store_url_is_one_error_line(store, tmp_path):
    proc = cli("cleanup", "--store", store, env=clean_env(tmp_path), timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 2 and len(_error_lines(proc)) == 1, proc.stderr


def test_a_target_that_cannot_work_is_one_error_line_before_any_conversation(tmp_path):
    out = tmp_path / "out"
    proc = cli(*run_args(out, "--target", "no_such_module_xyz:respond"),
               env=clean_env(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1"), timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.returncode
    assert "no_such_module_xyz" in _error_lines(proc)[-1]
    assert not (out / "runs").exists()


def test_validate_reports_every_bad_file_of_the_corpus_one_line_each(tmp_path):
    # 60 s: 0.8 CPU s of work took 6.6 s of wall clock on a loaded machine; the timeout only has to catch a hang.
    proc = cli("validate", "-q", str(CORPUS), env=clean_env(tmp_path), timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(CORPUS_EXPECTATIONS) + 1  # every file, plus the duplicate id


def test_validate_reports_the_corpus_files_the_loader_handles_one_line_each(tmp_path):
    handled = tmp_path / "handled"
    handled.mkdir()
    for name in set(CORPUS_EXPECTATIONS) - set(KNOWN_BUGS):
        (handled / name).write_bytes((CORPUS / name).read_bytes())
    proc = cli("validate", "-q", str(handled), env=clean_env(tmp_path), timeout=60)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert sorted(Path(e.split(": ")[1]).name for e in errors) == sorted(set(CORPUS_EXPECTATIONS) - set(KNOWN_BUGS))


RUN_CONFIG_MISTAKES = {
    "agent": ({"agent": "dentist"}, "agent must be one of"),
    "type": ({"type": "chatty"}, "type must be"),
    "trials": ({"trials": 0}, "trials must be from 1 to 1,000"),
    "trials-float": ({"trials": 1.5}, "trials must be a whole number"),
    "judge_samples": ({"judge_samples": -1}, "judge_samples must be from 1 to 50"),
    "concurrency": ({"concurrency": "4"}, "concurrency must be a whole number"),
    "seeds": ({"seed": ["42"]}, "seed must be integers"),
    "seeds-empty": ({"seed": []}, "seed must list at least one seed"),
    "fail_threshold": ({"fail_threshold": -1}, "fail_threshold must be a number from 0 to 10"),
    "scenarios_dir": ({"scenarios_dir": "/nonexistent"}, "does not exist"),
    "scenario": ({"scenario": "no-such-scenario"}, "no scenario in"),
    "bad-file": ({"scenarios_dir": str(CORPUS / "duplicate_ids"), "agent": None}, "duplicate scenario id"),
}


@pytest.mark.parametrize("case", list(RUN_CONFIG_MISTAKES))
def test_a_bad_run_parameter_is_a_one_line_error_naming_it(case):
    """What a notebook's parameters cell feeds: EvalConfig refuses each mistake before anything runs."""
    overrides, shown = RUN_CONFIG_MISTAKES[case]
    with pytest.raises(ConfigError) as info:
        select_scenarios(EvalConfig.checked({"scenarios_dir": str(SCENARIOS), **overrides}))
    assert shown in str(info.value) and "\n" not in str(info.value), str(info.value)


# ── Agent replies that break the protocol ──

PROTOCOL_BREAKS = {
    "malformed": "invalid JSON",
    "empty": "invalid JSON",
    "html": "invalid JSON",
    "not_utf8": "not UTF-8",
    "missing_fields": "field 'bubbles' (array of strings), 'text' (string) or 'parts' (array of messages) is missing",
    "wrong_types": "bubbles must be an array of strings, got string",
    "huge": "over the limit",
    "huge_chunked": "over the limit",
    "drip": "did not answer within",
    "truncated": "HTTP failure",
}
#: Long enough for a healthy reply on a loaded CI machine, well under the 20 s a drip or a hang is held.
AGENT_TIMEOUT_S = 3.0


@pytest.mark.parametrize("fault", list(PROTOCOL_BREAKS))
async def test_a_reply_breaking_the_protocol_ends_that_conversation_as_error_bounded(fault, tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_AGENT_TIMEOUT", str(AGENT_TIMEOUT_S))
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    scenario = parse_scenario({
        "type": "conversational", "id": f"protocol-{fault.replace('_', '-')}", "agent": "billing",
        "description": "d", "persona": {"name": "Lucia", "phone": "11987650020"}, "goal": "g", "rubric": ["r"]})
    with FaultyAgent(always=fault, hang_s=20) as agent, open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        options = RunOptions(target=agent.url, simulator_model=FakeChatModel(responder=fake_responder),
                             judge_model=FakeChatModel(responder=fake_responder), store=store)
        # A first conversation imports what runs need and opens the adapter's HTTP client (its TLS context alone
        # is ~4 MB): the measured one then shows what handling the bad reply itself costs.
        await asyncio.wait_for(arun_any(Job(scenario), options), timeout=15)
        tracemalloc.start()
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(arun_any(Job(scenario), options), timeout=15)
            elapsed = time.perf_counter() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        leftover = sum(len(store.select(t)) for t in TABLES)
    assert result.status == "error"
    assert "agent error" in result.error and PROTOCOL_BREAKS[fault] in result.error, result.error
    assert len(result.error) < 1000
    assert elapsed < AGENT_TIMEOUT_S + 8, elapsed  # bounded in time: one deadline for the whole exchange (not 20 s)
    assert peak < 3 * 1024 * 1024, peak  # bounded in memory: at most the 1 MB body limit is ever held
    assert leftover == 0

