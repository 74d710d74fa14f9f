"""The pytest plugin (convoeval.pytest_plugin), driven through pytest's own ``pytester``: scenario files become items,
a faulty agent fails exactly the items it breaks with the failed assertion named, a broken patient is a skip, a
broken agent an error, and none of it happens without ``--convoeval``.

The simulated patient and the judges are a ``FakeOpenAIServer`` on 127.0.0.1 (``llm_responder``: the patient pays
by Pix in three messages, the judges pass everything), so the verdicts come from the reference agents and the
database assertions, which is what the plugin reports.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from test_reliability_support import llm_responder

from convoeval.testing import FakeOpenAIServer

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "evals" / "scenarios"
BILLING = SCENARIOS / "billing"
FAULTY = "--convoeval-target=clinic:billing?faults=invented_payment_url"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with FakeOpenAIServer(responder=llm_responder) as srv:
        _import_what_a_run_imports(srv, tmp_path_factory.mktemp("warm"))
        yield srv


def _import_what_a_run_imports(server: FakeOpenAIServer, tmp: Path) -> None:
    """One conversation of each type in this process first: ``pytester``'s in-process runs drop the modules they
    imported when they end, and a second import of some (py3langid's model, numpy's) fails; imported here, they
    are kept."""
    import os

    from convoeval.llm.models import as_chat_model, clear_model_cache
    from convoeval.pipeline.conversation import RunOptions, run_any
    from convoeval.pipeline.jobs import Job
    from convoeval.scenarios import load_scenario_file
    from convoeval.store import open_store

    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CONVOEVAL_HOME", "CONVOEVAL_CACHE")}
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test-key", CONVOEVAL_HOME=str(tmp),
                      CONVOEVAL_CACHE="off")
    try:
        with open_store(f"sqlite:///{tmp / 'store.db'}") as store:
            options = RunOptions(simulator_model=as_chat_model("simulator"), judge_model=as_chat_model("judge"),
                                 store=store)
            for name in ("scripted-pix-en.yaml", "conv-happy-payment.yaml"):
                assert run_any(Job(load_scenario_file(BILLING / name)), options).status == "pass"
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
        clear_model_cache()


@pytest.fixture
def env(server, tmp_path, monkeypatch):
    """The fake models for every role, convoeval's state, store and cache in tmp_path."""
    from convoeval.llm.models import clear_model_cache

    for name in ("CONVOEVAL_JUDGE_MODEL", "CONVOEVAL_SIMULATOR_MODEL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    clear_model_cache()
    yield tmp_path
    clear_model_cache()


def copy_scenarios(pytester: pytest.Pytester, *names: str) -> Path:
    folder = pytester.path / "scenarios"
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(BILLING / name, folder / name)
    return folder


def test_the_plugin_is_registered_through_the_pytest11_entry_point():
    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("convoeval") == "convoeval.pytest_plugin"


def test_without_the_flag_no_yaml_is_collected_and_the_pipeline_is_not_imported(pytester):
    copy_scenarios(pytester, "scripted-pix-en.yaml")
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.makeconftest(
        "import sys\n"
        "def pytest_sessionfinish(session):\n"
        "    loaded = [m for m in ('convoeval.pipeline', 'convoeval.scenarios', 'pandas', 'langchain_core')"
        " if m in sys.modules]\n"
        "    print('LOADED:', loaded)\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*LOADED: []*"])
    result.stdout.fnmatch_lines(["plugins: *convoeval-*"])  # installed, and loaded by the entry point
    assert "convoeval: target" not in result.stdout.str()  # but no header line, no item


def test_healthy_reference_agents_pass_and_a_fault_fails_exactly_the_items_it_breaks(pytester, env):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml", "scripted-human-pt.yaml", "conv-happy-payment.yaml")
    healthy = pytester.runpytest("--convoeval", str(folder), "-p", "no:cacheprovider", "-v")
    healthy.assert_outcomes(passed=3)
    healthy.stdout.fnmatch_lines(["convoeval: target each scenario's reference agent (clinic:<agent>), seeds each scenario's*",
                                  "*billing-conv-happy-payment*PASSED*"])

    xml = pytester.path / "junit.xml"
    faulty = pytester.runpytest("--convoeval", str(folder), FAULTY, "-p", "no:cacheprovider", f"--junitxml={xml}")
    # The human-handoff scenario never asks for a payment link: the fault cannot touch it.
    faulty.assert_outcomes(passed=1, failed=2)
    out = faulty.stdout.str()
    assert "FAILED scenarios/scripted-pix-en.yaml::billing-scripted-pix-en[t1]" in out
    assert "FAILED scenarios/conv-happy-payment.yaml::billing-conv-happy-payment[t1]" in out
    assert "  - payment_link_created: expected true, got false" in out
    assert "failed turn checks:" in out and "turn 3: tools_called: expected create_payment_link, got []" in out
    assert "Traceback" not in out and "items.py" not in out  # the conversation's report, not convoeval's stack
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    assert set(cases) == {"billing-scripted-pix-en[t1]", "billing-scripted-human-pt[t1]",
                          "billing-conv-happy-payment[t1]"}
    failure = cases["billing-conv-happy-payment[t1]"].find("failure")
    assert failure is not None and "payment_link_created: expected true, got false" in failure.get("message", "") + (
        failure.text or "")
    assert cases["billing-scripted-human-pt[t1]"].find("failure") is None
    properties = {p.get("name"): p.get("value") for p in cases["billing-scripted-pix-en[t1]"].iter("property")}
    assert properties["status"] == "fail" and properties["score"] == "0.0"


def test_k_x_and_lf_select_items_as_for_any_test(pytester, env):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml", "scripted-human-pt.yaml", "scripted-boleto-es.yaml")
    only = pytester.runpytest("--convoeval", str(folder), FAULTY, "-k", "pix", "-p", "no:cacheprovider")
    only.assert_outcomes(failed=1)  # one item run: the others deselected by name
    by_type = pytester.runpytest("--convoeval", str(folder), "-k", "billing and not scripted", "--co", "-q",
                                 "-p", "no:cacheprovider")
    by_type.stdout.fnmatch_lines(["no tests collected (3 deselected)*"])
    first = pytester.runpytest("--convoeval", str(folder), FAULTY, "-x")
    first.assert_outcomes(failed=1)  # stopped at the first failure (boleto, in file order)
    again = pytester.runpytest("--convoeval", str(folder), FAULTY)  # records the failures for --lf
    again.assert_outcomes(passed=1, failed=2)
    last_failed = pytester.runpytest("--convoeval", str(folder), FAULTY, "--lf", "-v")
    last_failed.assert_outcomes(failed=2)
    assert "human-pt" not in last_failed.stdout.str().split("short test summary")[0].split("collected")[1]


def test_seeds_and_trials_make_an_item_each(pytester, env):
    folder = copy_scenarios(pytester, "conv-happy-payment.yaml", "scripted-pix-en.yaml")
    result = pytester.runpytest("--convoeval", str(folder), "--convoeval-seeds=3,4", "--convoeval-trials=2", "--co",
                                "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*billing-conv-happy-payment[[]s3-t1[]]", "*billing-conv-happy-payment[[]s3-t2[]]",
                                 "*billing-conv-happy-payment[[]s4-t1[]]", "*billing-conv-happy-payment[[]s4-t2[]]",
                                 "*billing-scripted-pix-en[[]s3-t1[]]", "*8 tests collected*"])


def test_a_threshold_fails_a_passing_item_scored_under_it(pytester, env):
    folder = copy_scenarios(pytester, "scripted-human-pt.yaml")
    result = pytester.runpytest("--convoeval", str(folder), "--convoeval-threshold=9.5", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*: score 9.0 is under the threshold 9.5"])  # the turn judge's 9s


def test_a_broken_simulated_patient_is_skipped_with_the_gates_reason(pytester, env, server, monkeypatch):
    folder = copy_scenarios(pytester, "conv-happy-payment.yaml")
    monkeypatch.setattr(server, "responder", lambda request: "Obrigada! [GOAL_COMPLETE]" if not request.get(
        "tools") else llm_responder(request))
    result = pytester.runpytest("--convoeval", str(folder), "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] scenarios/conv-happy-payment.yaml:1: simulator_failure (the simulated "
                                 "patient broke, not the agent*premature_goal*"])  # at the scenario, not the plugin


def test_an_agent_that_fails_is_an_error_not_a_failure(pytester, env):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml")
    pytester.makepyfile(down_agent="def respond(message, session):\n    raise RuntimeError('agent is down')\n")
    pytester.syspathinsert()
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest("--convoeval", str(folder), "--convoeval-target=down_agent:respond",
                                f"--junitxml={xml}", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*billing-scripted-pix-en (trial 1) against down_agent:respond: error, not "
                                 "evaluated: *agent is down*"])
    [case] = ET.parse(xml).getroot().iter("testcase")
    assert case.find("error") is not None


@pytest.mark.parametrize(("option", "said"), [
    ("--convoeval-seeds=1,x", "--convoeval-seeds takes whole numbers separated by commas, got '1,x'"),
    ("--convoeval-threshold=12", "--convoeval-threshold must be a score from 0 to 10, got 12"),
    ("--convoeval-trials=0", "--convoeval-trials must be at least 1, got 0"),
    ("--convoeval-target=nowhere", "--convoeval-target: "),
])
def test_a_bad_option_is_one_line_and_nothing_runs(pytester, env, option, said):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml")
    result = pytester.runpytest("--convoeval", str(folder), option, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_a_broken_scenario_is_its_files_collection_error_and_other_yaml_is_ignored(pytester, env):
    folder = copy_scenarios(pytester)
    (folder / "broken.yaml").write_text("id: x\nagent: billing\npersona: {name: A}\nturns: 3\n", encoding="utf-8")
    (folder / "workflow.yml").write_text("on: push\njobs: {test: {runs-on: ubuntu-latest}}\n", encoding="utf-8")
    result = pytester.runpytest("--convoeval", str(folder), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*broken.yaml: *turns*", "*1 error*"])
    assert "workflow.yml" not in result.stdout.str()


def test_without_a_path_the_scenarios_folder_is_collected_not_testpaths(pytester, env, monkeypatch):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml")
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text("def test_unit():\n    pass\n", encoding="utf-8")
    monkeypatch.setenv("CONVOEVAL_SCENARIOS_DIR", str(folder))
    result = pytester.runpytest("--convoeval", "--co", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*scripted-pix-en.yaml::billing-scripted-pix-en[[]t1[]]", "*1 test collected*"])
    assert "test_unit" not in result.stdout.str()


def test_the_convoeval_run_fixture_runs_a_scenario_in_a_users_own_test(pytester, env):
    folder = copy_scenarios(pytester, "scripted-pix-en.yaml")
    pytester.makepyfile(test_mine=f"""
        def test_pix_link(convoeval_run):
            result = convoeval_run({str(folder / 'scripted-pix-en.yaml')!r})
            assert result.status == "pass"
            assert result.rows["assertions"][0]["passed"]

        def test_the_fault_is_seen(convoeval_run):
            result = convoeval_run({str(folder / 'scripted-pix-en.yaml')!r},
                                   target="clinic:billing?faults=invented_payment_url")
            assert result.status == "fail"
    """)
    result = pytester.runpytest("test_mine.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_every_shipped_scenario_passes_with_the_reference_agents_and_the_fault_fails_exactly_its_items(pytester, env):
    """The issue's "done when", on the fake models: the agenda patient (rules decide what the patient does; the fake
    model's voice fails its checks, so the templates speak) against every reference agent; the judges pass all."""
    every = pytester.runpytest("--convoeval", str(SCENARIOS), "--convoeval-simulator=agenda", "-p", "no:cacheprovider")
    every.assert_outcomes(passed=len(list(SCENARIOS.rglob("*.yaml"))))
    xml = pytester.path / "fault.xml"
    faulty = pytester.runpytest("--convoeval", str(BILLING), "--convoeval-simulator=agenda", FAULTY,
                                f"--junitxml={xml}", "-p", "no:cacheprovider")
    faulty.assert_outcomes(passed=1, failed=5)
    failed = {c.get("name"): (c.find("failure").get("message", "") + (c.find("failure").text or ""))
              for c in ET.parse(xml).getroot().iter("testcase") if c.find("failure") is not None}
    assert "billing-scripted-human-pt[t1]" not in failed  # no payment link asked for: the fault cannot show
    assert len(failed) == 5
    assert all("payment_link_created: expected true, got false" in message for message in failed.values())
