"""`convoeval pin` and `convoeval fork` on an imported conversation: a scenario drafted from it for review (persona,
agenda, fixtures), the patient's real turns pinned as a scripted regression test, and a fork that replays the real
turns up to k against the agent under test before the simulated patient carries on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_reliability_support import llm_responder

from convoeval import load_results
from convoeval.cli import main
from convoeval.scenarios import load_scenario_file

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "production"


@pytest.fixture
def conversation(tmp_path, fake_llm) -> Path:
    fake_llm.responder = llm_responder
    out = tmp_path / "imported"
    assert main(["import", str(SAMPLES / "whatsapp" / "android-pt-BR.txt"), "--agent-name", "Clínica Sorriso",
                 "--agent", "billing", "--no-scrub", "--out", str(out)]) == 0
    first = next(p for p in sorted((out / "runs").glob("*.json")) if "123.456.789-09" in p.read_text())
    return first


def test_pin_an_imported_conversation_drafts_its_scenario_and_pins_its_real_turns(conversation, tmp_path, capsys):
    pinned, drafted = tmp_path / "pinned.yaml", tmp_path / "drafted.yaml"
    assert main(["pin", str(conversation), "--out", str(pinned), "--draft-out", str(drafted)]) == 0
    assert f"drafted scenario (review it): {drafted}" in capsys.readouterr().err
    draft = yaml.safe_load(drafted.read_text())
    assert drafted.read_text().startswith("# Drafted by convoeval from a real conversation")
    assert draft["persona"]["name"] == "Mariana" and draft["persona"]["cpf"] == "12345678909"
    assert draft["persona"]["knows"]["cpf"] == "123.456.789-09" and "sends voice notes" in draft["persona"]["traits"]
    assert draft["agenda"]["intent"].startswith("Bom dia queria saber da minha fatura")
    assert "pix" in draft["agenda"]["prefers"]
    assert draft["fixtures"]["invoices"] == [{"id": "inv-1", "amount_cents": 18000, "due_date": "2026-11-22",
                                              "status": "pending"}]
    assert load_scenario_file(drafted).id == draft["id"]  # a valid scenario
    scripted = load_scenario_file(pinned)
    assert [t.user for t in scripted.turns][0] == "Bom dia\nqueria saber da minha fatura\nmeu cpf é 123.456.789-09"
    assert [t.user for t in scripted.turns][-1] == "pix pfv"  # the real patient's words, its burst one turn


def test_fork_an_imported_conversation_at_a_turn_against_the_agent_under_test(conversation, tmp_path, capsys):
    out = tmp_path / "forks"
    assert main(["fork", str(conversation), "--turn", "1", "-n", "2", "--out", str(out), "--yes",
                 "--draft-out", str(tmp_path / "drafted.yaml")]) == 0
    said = capsys.readouterr()
    assert "not judged" in said.out and "drafted scenario (review it)" in said.err
    forks = load_results(out).frames
    assert len(forks.runs) == 2 and set(forks.runs["replayed_turns"]) == {1}
    assert set(forks.runs["target"]) == {"clinic:billing"}  # the agent under test, not the bot that spoke
    first_patient = forks.transcripts[(forks.transcripts["role"] == "patient") & (forks.transcripts["turn"] == 1)]
    assert set(first_patient["text"]) == {"Bom dia\nqueria saber da minha fatura\nmeu cpf é 123.456.789-09"}
    assert (forks.transcripts.groupby("run_id")["turn"].max() > 1).all()  # the simulated patient carried on
