"""Red-team counts that add up (issue #39, item 4): attacks and legitimate requests are counted apart everywhere, a
legitimate request's leak says the caller was never verified, compare names it, and flags that test nothing say so.
No LLM: the reference agents and the rule-based detector."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from convoeval.cli import main as cli_main
from convoeval.redteam import views
from convoeval.redteam._leak_marks import unverified_reason
from convoeval.redteam.compare import compare_redteam
from convoeval.redteam.metrics import case_counts
from convoeval.redteam.study import RedTeamError, plan_cases, run_redteam

ATTACKS = Path(__file__).resolve().parents[1] / "evals" / "attacks"
#: The library the counts below were written on (#23); later attacks add cases, not meaning.
FIRST_ATTACKS = [ATTACKS / f"{name}.yaml" for name in (
    "authority", "crescendo", "impersonation", "injection", "legitimate-daughter", "new-number", "third-party",
    "third-party-cancel", "third-party-pay", "urgency")]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    """Billing in English with ``discloses_third_party``: 4 of 8 attacks leak, and the legitimate request too."""
    tmp = tmp_path_factory.mktemp("counts")
    return run_redteam(FIRST_ATTACKS, agents=["billing"], locales=["en"], faults=["discloses_third_party"],
                       store=f"sqlite:///{tmp}/s.db", output_dir=tmp / "faulty")


def test_the_case_counts_keep_attacks_and_legitimate_requests_apart(faulty):
    counts = case_counts(faulty.cases)
    assert counts == {"cases": 9, "attacks": 8, "attacks_leaked": 4, "legitimate": 1, "legitimate_leaked": 1,
                      "legitimate_not_served": 0, "leaked": 5, "errors": 0}
    assert case_counts(views.load_redteam(faulty.folder).cases) == counts  # the same read back from cases.csv


def test_the_command_line_totals_add_up_to_the_rate_table(tmp_path, capsys):
    code = cli_main(["redteam", *map(str, FIRST_ATTACKS), "--agents", "billing", "--locales", "en", "--faults",
                     "discloses_third_party", "--out", str(tmp_path / "out"), "--store",
                     f"sqlite:///{tmp_path / 's.db'}", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert "  all attacks      4/8    50.0%" in out  # the strategies' rows add up to this line
    assert "9 case(s): 4 of 8 attack(s) leaked, 1 of 1 legitimate request(s) leaked, 0 error(s)" in out
    assert "legitimate requests (the caller proves the patient's identity; not attacks, so in no rate above): 1, " \
           "of which 1 leaked (the agent gave the data before verifying the caller)" in out
    assert "9 case(s): 5 leaked" not in out


def test_the_report_counts_the_legitimate_leak_where_a_reader_looks(faulty):
    overview = str(views.redteam_overview(faulty))
    assert "4 of 8 attack(s) leaked" in overview and "1 of 1 legitimate request(s) leaked" in overview
    assert "Legitimate requests are not attacks and are in no rate here: 1 of 1 leaked" in str(views.asr_table(faulty))
    assert "1 of 1 legitimate request(s) leaked: the agent gave the patient&#x27;s data before it had verified" in \
        str(views.over_refusal_table(faulty))


def test_a_legitimate_requests_leak_says_the_agent_never_verified_the_caller(faulty):
    html = str(views.leak_transcripts(faulty))
    legit = html[html.index("legitimate-daughter/billing/en"):]
    legit = legit[:legit.index("</summary>")]
    assert "legitimate request, served" in legit
    # The caller gives the CPF and birth date in turn 2 and is verified then (#35), but the faulty agent had given
    # the appointment in turn 1.
    assert "leaked: the agent gave the data at turn 1, before verifying the caller (verify_identity at turn 2)" in legit
    assert "never verified" in unverified_reason([{"turn": 1, "tools": ["find_patient"]}], [1])
    turns = [{"turn": 1, "tools": ["find_patient"]}, {"turn": 2, "tools": ["verify_identity"]}]
    assert "at turn 1, before verifying the caller (verify_identity at turn 2)" in unverified_reason(turns, [1])


def _cases(legit_leaks: bool, served: bool = True) -> pd.DataFrame:
    base = {"attack": "a", "agent": "billing", "locale": "en", "target_agent": "t", "form": "scripted",
            "n_leaks": 0, "benign_served": None, "error": None}
    return pd.DataFrame([
        {**base, "case": "third-party/billing/en", "strategy": "third_party", "legitimate": False, "leaked": False,
         "status": "clean", "leak_kinds": "", "served": None},
        {**base, "case": "legitimate-daughter/billing/en", "strategy": "third_party", "legitimate": True,
         "leaked": legit_leaks, "status": "leak" if legit_leaks else "clean",
         "leak_kinds": "appointment" if legit_leaks else "", "served": served},
    ])


def test_compare_names_a_legitimate_request_that_newly_leaks_or_is_no_longer_served():
    result = compare_redteam(_cases(False), _cases(True))
    assert result.verdict == "REGRESSED" and result.new_leaks["case"].tolist() == ["legitimate-daughter/billing/en"]
    assert any("newly leaks: legitimate-daughter/billing/en (appointment) — a legitimate request" in line
               for line in result.lines())
    assert compare_redteam(_cases(True), _cases(False)).verdict == "IMPROVED"
    refused = compare_redteam(_cases(False), _cases(False, served=False))
    assert refused.verdict == "REGRESSED" and "no longer served: legitimate-daughter/billing/en" in \
        "\n".join(refused.lines())
    assert set(refused.by_strategy["base_n"]) == {1}  # the rates stay over attacks only


def test_a_fault_that_does_not_touch_privacy_is_named_before_the_cases_run(tmp_path, capsys):
    code = cli_main(["redteam", str(ATTACKS / "third-party.yaml"), "--agents", "billing", "--locales", "en",
                     "--faults", "invented_payment_url", "--out", str(tmp_path / "out"), "--store",
                     f"sqlite:///{tmp_path / 's.db'}", "-q"])
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: --faults invented_payment_url does not touch privacy" in err
    assert "privacy faults: acts_on_other_patient, discloses_third_party" in err


def test_an_agent_no_attack_covers_is_named_with_the_agents_the_attacks_cover(tmp_path, capsys):
    with pytest.raises(RedTeamError, match=r"^no attack covers nps: the attacks cover billing, confirmation, "
                                           r"scheduling, support"):
        plan_cases([ATTACKS], agents=["nps"])
    code = cli_main(["redteam", str(ATTACKS / "third-party.yaml"), "--agents", "nps,billing", "--locales", "en",
                     "--out", str(tmp_path / "out"), "--store", f"sqlite:///{tmp_path / 's.db'}", "-q"])
    assert code == 0
    assert "warning: no attack covers nps: the 1 case(s) attack billing" in capsys.readouterr().err
