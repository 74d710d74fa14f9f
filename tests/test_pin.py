"""``convoeval.pin``: a conversation becomes a scripted regression test that passes against an agent behaving like
the passing run and fails, at the turn where it went wrong, against one that does not."""

from __future__ import annotations

import pytest
from fork_support import FAULTED, HEALTHY, converse, models, scenario, scripted_patient

from convoeval.cli import main
from convoeval.forking.pinning import PinError, pin
from convoeval.pipeline.conversation import RunOptions, run_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.results import write_conversation
from convoeval.scenarios import load_scenario_file, load_scenarios
from convoeval.testing import FakeChatModel

EARLY_LINK = "clinic:billing?faults=link_before_method_confirmed"


def replay(pinned, store, target):
    """Run the pinned scenario against ``target``: its status and the first turn whose checks failed."""
    result = run_any(Job(pinned), RunOptions(target=target, store=store))
    failed = sorted({r["turn"] for r in result.rows["turns"] if r["check_failures"]})
    return result.status, (failed[0] if failed else None)


def test_a_pinned_healthy_run_passes_against_it_and_fails_where_each_fault_fires(store, tmp_path):
    healthy = converse(store, HEALTHY)
    pinned = pin(healthy, out=tmp_path / "pinned.yaml", scenario=scenario())
    sc = load_scenario_file(tmp_path / "pinned.yaml")
    assert sc.type == "scripted" and sc.id == f"pinned-billing-conv-fork-known-{healthy.run_id[:8]}"
    # Patient messages verbatim; the last one only ended the conversation (no reply to check): left out.
    assert [t.user for t in sc.turns] == ["Oi, quero pagar minha fatura", "Pix", "Sim"]
    assert [t.expect.tools_called for t in sc.turns] == [["list_invoices"], [], ["create_payment_link"]]
    assert [t.expect.tools_not_called for t in sc.turns] == [["create_payment_link"],
                                                             ["create_payment_link", "list_invoices"],
                                                             ["list_invoices"]]
    assert all(t.judge is False for t in sc.turns) and sc.persona == scenario().persona
    assert sc.fixtures == scenario().fixtures
    assert "#   - Agent did not fabricate any URLs" in pinned.text  # the rubric, for the reader
    assert replay(sc, store, HEALTHY) == ("pass", None)
    assert replay(sc, store, FAULTED) == ("warn", 3)  # the invented link replaces create_payment_link at turn 3
    assert replay(sc, store, EARLY_LINK)[1] == 1  # the link comes with the first answer


def test_a_failing_run_pinned_with_a_passing_run_s_expectations_fails_where_it_went_wrong(store):
    healthy, failing = converse(store, HEALTHY), converse(store, FAULTED)
    assert failing.status == "fail"
    as_it_was = pin(failing, scenario=scenario()).scenario
    assert replay(as_it_was, store, FAULTED) == ("pass", None)  # its own tools: a characterization of the fault
    fixed = pin(failing, expected_from=healthy, scenario=scenario())
    assert f"passing conversation {healthy.run_id}" in fixed.text and fixed.notes == []
    assert replay(fixed.scenario, store, FAULTED) == ("warn", 3)
    assert replay(fixed.scenario, store, HEALTHY) == ("pass", None)


def test_turns_after_the_passing_run_s_patient_said_otherwise_expect_nothing(store):
    healthy = converse(store, HEALTHY)
    patient = FakeChatModel(replies=["Oi, quero pagar minha fatura", "Boleto", "Sim", "Tchau [GOAL_COMPLETE]"])
    other = run_any(Job(scenario(), 42), RunOptions(target=HEALTHY, simulator_model=patient,
                                                    judge_model=models()["judge_model"], store=store))
    pinned = pin(other, expected_from=healthy, scenario=scenario())
    assert [bool(t.expect.tools_called or t.expect.tools_not_called) for t in pinned.scenario.turns] == [True, False,
                                                                                                         False]
    assert pinned.notes and "from turn 2 on" in pinned.notes[0] and "# Note: from turn 2 on" in pinned.text


def test_pin_refuses_to_overwrite_and_a_reference_of_another_scenario(store, tmp_path):
    healthy = converse(store, HEALTHY)
    target = tmp_path / "p.yaml"
    target.write_text("keep me")
    with pytest.raises(PinError, match="exists"):
        pin(healthy, out=target, scenario=scenario())
    assert target.read_text() == "keep me"
    other = healthy.payload()
    other["runs"][0]["scenario"] = "billing-conv-happy-payment"
    with pytest.raises(PinError, match="not of 'billing-conv-fork-known'"):
        pin(healthy, expected_from=other, scenario=scenario())


def test_the_cli_pins_a_saved_conversation_into_a_file_convoeval_validate_accepts(store, tmp_path, capsys):
    opts = RunOptions(target=HEALTHY, simulator_model=scripted_patient(), judge_model=models()["judge_model"],
                      store=store)
    happy = load_scenarios(scenario="billing-conv-happy-payment")[0]
    saved = write_conversation(tmp_path / "results", "happy", run_any(Job(happy, 42), opts).payload())
    out = tmp_path / "billing" / "pinned.yaml"
    assert main(["pin", str(saved), "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    with pytest.raises(SystemExit) as exc:
        main(["pin", str(saved), "--out", str(out)])
    assert exc.value.code == 2 and "exists" in capsys.readouterr().err
