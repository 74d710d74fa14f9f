"""The comparison checked against known answers, with fake models (tests/compare_support.py):

* the reference billing agent against itself with one documented fault (``clinic:billing?faults=<fault>``): a
  regression on exactly the criteria and assertions the fault's documentation (``FAULTS``) says it breaks, on the
  scenarios where they occur, and nowhere else;
* replay: an identical candidate diverges nowhere and never asks the simulator; a fault that fires at turn k
  diverges at turn k.
"""

from __future__ import annotations

import pytest
from compare_support import env, fake_models, run_baseline  # noqa: F401 - env is a fixture
from test_path_faults import TABLE as PATH_TABLE

from convoeval.agents.clinic import FAULTS
from convoeval.compare import NO_CHANGE, REGRESSED, compare, run_candidate
from convoeval.scenarios import load_scenarios

#: Faults whose symptoms the test judge reads (amounts, link tool, URLs); rude_tone etc. need a real judge.
FAULTS_READ = ("wrong_amount", "invented_payment_url", "never_finishes")
N_SEEDS = 8  # 3 scenarios × 8 seeds, issue #27's size: 8 pairs all one way give p = 2/256 per scenario


@pytest.fixture
def baseline(env, monkeypatch):  # noqa: F811 - env is the fixture imported above
    with fake_models(monkeypatch) as (simulator, judge):
        result = run_baseline(env / "baseline", n_seeds=N_SEEDS)
        yield result, simulator, env


def expected(fault_name: str) -> tuple[set[str], set[str], set[str]]:
    """(criteria, assertions, scenarios) the fault's documentation says it breaks in the billing scenarios: its
    ``FAULTS`` entry, and the path assertions of its row in ``docs/agents.md`` (``tests/test_path_faults.py``)."""
    fault = FAULTS[f"billing:{fault_name}"]
    criteria, assertions, scenarios = set(), set(), set()
    for sc in load_scenarios(agent="billing", type="conversational"):
        hit_c = set(sc.criteria) & set(fault.breaks_criteria)
        hit_a = set(sc.assertions.active()) & set(fault.breaks_assertions)
        hit_a |= PATH_TABLE[f"billing/{sc.id.removeprefix('billing-')}.yaml"][fault_name] or set()
        criteria |= hit_c
        assertions |= hit_a
        if hit_c or hit_a:
            scenarios.add(sc.id)
    return criteria, assertions, scenarios


@pytest.mark.parametrize("fault", FAULTS_READ)
def test_a_known_fault_regresses_exactly_what_its_documentation_says(baseline, monkeypatch, fault):
    base, _simulator, tmp = baseline
    assert base.status_counts()["pass"] == 3 * N_SEEDS  # the healthy agent passes everything with this judge
    with fake_models(monkeypatch):
        candidate = run_candidate(base, f"clinic:billing?faults={fault}", out=tmp / fault, progress="off")
    result = compare(base, candidate, n_boot=300)
    criteria, assertions, scenarios = expected(fault)
    assert criteria or assertions
    # The headline follows its evidence (issue #27: it read "no detectable change" with p = 6e-5).
    assert result.verdict == REGRESSED and result.overall["verdict"] == REGRESSED
    assert result.overall["ci_high"] < 0 and result.overall["scenarios_as"] == "fixed set"
    headline = next(line for line in result.lines() if line.startswith("verdict:"))
    assert headline.startswith("verdict: REGRESSED — the overall score") and "regressed" in headline
    assert set(result.criteria.loc[result.criteria["verdict"] == REGRESSED, "criterion"]) == criteria
    assert set(result.assertions.loc[result.assertions["verdict"] == REGRESSED, "assertion"]) == assertions
    per_scenario = result.scores[result.scores["scenario"] != "(all)"].set_index("scenario")["verdict"]
    assert set(per_scenario[per_scenario == REGRESSED].index) == scenarios
    assert result.improvements().empty
    assert len(result.unpaired) == 0 and len(result.pairs) == 3 * N_SEEDS
    regressions = result.regressions()
    assert set(regressions.loc[regressions["kind"] == "criterion", "name"]) == criteria
    assert result.exit_code(fail_on_regression=True) == 1 and result.exit_code(fail_on_regression=False) == 0


def test_the_healthy_agent_against_itself_changes_nothing(baseline, monkeypatch):
    base, _simulator, tmp = baseline
    with fake_models(monkeypatch):
        candidate = run_candidate(base, "clinic:billing", out=tmp / "again", progress="off")
    result = compare(base, candidate, n_boot=300)
    assert result.verdict == NO_CHANGE
    assert result.regressions().empty and result.improvements().empty
    assert (result.pairs["score_a"] == result.pairs["score_b"]).all()
    assert result.exit_code(fail_on_regression=True) == 0


def test_replaying_an_identical_candidate_diverges_nowhere_and_never_asks_the_simulator(baseline, monkeypatch):
    base, _simulator, tmp = baseline
    with fake_models(monkeypatch) as (simulator, _judge):
        candidate = run_candidate(base, "clinic:billing", out=tmp / "replayed", replay=True, progress="off")
    assert simulator.calls == []
    result = compare(base, candidate, n_boot=100)
    assert result.pairs["divergence_turn"].isna().all()
    patient_turns = (base.frames.transcripts.query("role == 'patient'").groupby("run_id")["turn"].max())
    assert (result.pairs["replayed_turns"].to_numpy() == result.pairs["run_id_a"].map(patient_turns).to_numpy()).all()
    assert any(f"0 of {3 * N_SEEDS} candidate conversation(s) diverged" in line for line in result.lines())


def _first_turn(transcripts, run_id, predicate) -> int | None:
    rows = transcripts[(transcripts["run_id"] == run_id) & (transcripts["role"] == "agent")].sort_values("turn")
    return next((int(r.turn) for r in rows.itertuples() if predicate(r)), None)


@pytest.mark.parametrize(("fault", "fires"), [
    # wrong_amount fires at the first reply quoting the amount; invented_payment_url where the link is created.
    ("wrong_amount", lambda r: any(a in r.text for a in ("150,00", "180,00", "250,00"))),
    ("invented_payment_url", lambda r: "create_payment_link" in list(r.tools)),
])
def test_a_fault_that_fires_at_turn_k_diverges_at_turn_k(baseline, monkeypatch, fault, fires):
    base, _simulator, tmp = baseline
    with fake_models(monkeypatch):
        candidate = run_candidate(base, f"clinic:billing?faults={fault}", out=tmp / fault, replay=True,
                                  progress="off")
    result = compare(base, candidate, n_boot=100)
    transcripts = base.frames.transcripts
    expected_turns = [_first_turn(transcripts, run_id, fires) for run_id in result.pairs["run_id_a"]]
    assert all(k is not None for k in expected_turns)
    assert result.pairs["divergence_turn"].tolist() == expected_turns
    assert (result.pairs["replayed_turns"] == result.pairs["divergence_turn"]).all()
