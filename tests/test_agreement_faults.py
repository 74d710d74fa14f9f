"""The known-faults study: which targets run, the truth it yields, the judge's sensitivity/specificity against it,
and one real study of the support agent (healthy + every relevant fault) with scripted fake models."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from convoeval.agents import get_agent
from convoeval.agents.clinic import FAULTS, faults_for
from convoeval.agreement.faults import (
    DETECTION_STATISTICS,
    KNOWN_FAULTS,
    TRUTH_COLUMNS,
    fault_confusion,
    fault_detection,
    fault_study_plan,
    fault_targets,
    fault_truth,
    run_fault_study,
    target_folder,
)
from convoeval.frames import ASSERTION_SCHEMA, RUBRIC_SCHEMA, RUN_SCHEMA, RunFrames, typed_frame
from convoeval.scenarios import load_scenarios
from convoeval.store import open_store
from convoeval.testing import FakeChatModel

HAPPY = "billing-conv-happy-payment"
AMOUNT = "Agent identified the pending invoice and mentioned the amount"
OPTIONS = "Agent offered Pix and boleto as payment options"
LINK = "Agent generated a payment link"
NO_URLS = "Agent did not fabricate any URLs"
PATIENT = "Agent was patient with repeated questions"
POLITE = "Agent remained polite despite patient impatience"


# ── fault_targets on the shipped scenarios ──


def _faults_on(scenarios, agent):
    """fault name -> ids of the scenarios whose fault_targets include it."""
    landed: dict[str, set[str]] = {}
    for sc in scenarios:
        for _target, names in fault_targets(agent, sc)[1:]:
            landed.setdefault(names[0], set()).add(sc.id)
    return landed


def test_each_billing_fault_lands_on_the_scenarios_whose_rubric_it_breaks():
    conv = load_scenarios(agent="billing", type="conversational")
    landed = _faults_on(conv, "billing")
    # docs/agents.md: which criteria each billing fault breaks, and so which scenario rubrics it reaches.
    assert landed == {
        "invented_payment_url": {HAPPY, "billing-conv-confused-patient", "billing-conv-impatient-patient"},
        "never_finishes": {HAPPY, "billing-conv-confused-patient", "billing-conv-impatient-patient"},
        "wrong_amount": {HAPPY},
        "link_before_method_confirmed": {"billing-conv-impatient-patient"},
        "rude_tone": {"billing-conv-confused-patient", "billing-conv-impatient-patient"},
    }
    for sc in conv:
        for fault in (f for f in faults_for("billing") if not f.leaks):  # privacy faults break no rubric
            breaks_here = bool(set(fault.breaks_criteria) & set(sc.criteria))
            # button_overflow breaks no rubric and no assertion of a conversational scenario: it lands nowhere
            assert breaks_here == (sc.id in landed.get(fault.name, set())), (fault.name, sc.id)


def test_targets_start_with_the_healthy_agent_and_every_target_builds_an_agent():
    sc = load_scenarios(scenario=HAPPY)[0]
    targets = fault_targets("clinic:billing", sc)
    assert targets[0] == ("clinic:billing", ())
    assert [names for _t, names in targets[1:]] == [("invented_payment_url",), ("wrong_amount",), ("never_finishes",)]
    for target, names in targets:
        assert get_agent(target).name == target
        assert all(f"billing:{n}" in FAULTS for n in names)


def test_an_assertion_the_scenario_sets_makes_a_fault_relevant_too():
    # never_escalates breaks no criterion of this rubric, but it breaks escalated_to_human, which the scenario sets.
    sc = load_scenarios(scenario="support-conv-prices-insurance-en")[0]
    assert not set(FAULTS["support:never_escalates"].breaks_criteria) & set(sc.criteria)
    assert ("clinic:support?faults=never_escalates", ("never_escalates",)) in fault_targets("support", sc)
    # A scripted scenario has no rubric: only its assertions can make a fault relevant.
    pix = load_scenarios(scenario="billing-scripted-pix-en")[0]
    assert [n for _t, n in fault_targets("billing", pix)[1:]] == [("invented_payment_url",), ("button_overflow",),
                                                                  ("never_finishes",)]


def test_unknown_agents_and_fault_keys_are_clear_errors():
    sc = load_scenarios(scenario=HAPPY)[0]
    with pytest.raises(ValueError, match="unknown clinic agent"):
        fault_targets("dentist", sc)
    with pytest.raises(ValueError, match=r"unknown fault key\(s\) \['billing:rude'\]"):
        fault_study_plan([sc], faults=["billing:rude"])
    with pytest.raises(ValueError, match=r"unknown agent\(s\) \['dentist'\]"):
        fault_study_plan([sc], agents=["dentist"])


def test_the_plan_keeps_conversational_scenarios_and_runs_the_healthy_agent_beside_the_chosen_faults():
    billing = load_scenarios(agent="billing")
    plan = fault_study_plan(billing, faults=["billing:rude_tone"], seeds=(1, 2))
    # rude_tone reaches two rubrics; the healthy agent runs only where a chosen fault runs beside it.
    assert sorted(set(zip(plan["target"], plan["scenario"], strict=True))) == [
        ("clinic:billing", "billing-conv-confused-patient"), ("clinic:billing", "billing-conv-impatient-patient"),
        ("clinic:billing?faults=rude_tone", "billing-conv-confused-patient"),
        ("clinic:billing?faults=rude_tone", "billing-conv-impatient-patient"),
    ]
    assert len(plan) == 8 and set(plan["seed"]) == {1, 2}
    assert set(plan["folder"]) == {"clinic-billing", "clinic-billing-faults-rude_tone"}
    full = fault_study_plan(billing)
    assert len(full) == 3 + 3 + 3 + 1 + 1 + 2  # healthy + invented_url, never_finishes, wrong_amount, link, rude
    assert fault_study_plan(billing, agents=["support"]).empty


# ── hand-built study frames ──


def study(runs: list[tuple], verdicts: dict[str, dict[str, bool | None]], *, assertions=(), assertion_of=None):
    """Frames of a study: ``runs`` as (run_id, scenario, target, seed[, status]); ``verdicts[run_id][criterion]``
    the judge's verdict; ``assertions`` as (run_id, key, passed); ``assertion_of`` criterion -> declared key."""
    run_rows = [{"run_id": r[0], "scenario": r[1], "type": "conversational", "agent": "billing", "target": r[2], "seed": r[3], "trial": 1, "status": r[4] if len(r) > 4 else "completed"}
                for r in runs]
    keys = {r[0]: r for r in runs}
    rubric_rows = []
    for run_id, per in verdicts.items():
        _id, scenario, _target, seed, *_ = keys[run_id]
        for index, (criterion, passed) in enumerate(per.items()):
            rubric_rows.append({"run_id": run_id, "scenario": scenario, "agent": "billing", "seed": seed, "trial": 1,
                                "criterion_index": index, "criterion": criterion, "passed": passed,
                                "assertion": (assertion_of or {}).get(criterion), "judge_model": "judge-x",
                                "sample": 0})
    assertion_rows = [{"run_id": r, "scenario": keys[r][1], "assertion": k, "passed": p} for r, k, p in assertions]
    return RunFrames.from_frames({"runs": typed_frame(run_rows, RUN_SCHEMA),
                                  "rubric": typed_frame(rubric_rows, RUBRIC_SCHEMA),
                                  "assertions": typed_frame(assertion_rows, ASSERTION_SCHEMA)})


def _all(value: bool) -> dict[str, bool]:
    return {AMOUNT: value, OPTIONS: value, LINK: value, NO_URLS: value}


def paired_happy_study(**kwargs):
    runs = [
        ("h1", HAPPY, "clinic:billing", 1),
        ("w1", HAPPY, "clinic:billing?faults=wrong_amount", 1),
        ("i1", HAPPY, "clinic:billing?faults=invented_payment_url", 1),
        ("h2", HAPPY, "clinic:billing", 2),                     # no fault run beside it: nothing is known
        ("e2", HAPPY, "clinic:billing?faults=wrong_amount", 2, "error"),  # errored: never judged, no truth
        ("x1", HAPPY, "openai-chat", 1),                        # not a reference agent
    ]
    verdicts = {"h1": _all(True), "w1": _all(True), "i1": _all(True), "h2": _all(True), "x1": _all(True)}
    return study(runs, verdicts, **kwargs)


def test_fault_truth_fails_what_a_fault_breaks_and_passes_it_in_the_healthy_counterpart():
    truth = fault_truth(paired_happy_study())
    assert list(truth.columns) == list(TRUTH_COLUMNS)
    assert set(truth["rater"]) == {KNOWN_FAULTS}
    got = {(r, c): p for r, c, p in zip(truth["run_id"], truth["criterion"], truth["passed"], strict=True)}
    assert got == {
        ("w1", AMOUNT): False,                          # wrong_amount breaks the amount criterion only
        ("i1", LINK): False, ("i1", NO_URLS): False,    # invented_payment_url: the two of its criteria in this rubric
        ("h1", AMOUNT): True, ("h1", LINK): True, ("h1", NO_URLS): True,  # the healthy counterpart of both
    }
    healthy = truth[truth["run_id"] == "h1"].set_index("criterion")
    assert set(healthy["arm"]) == {"healthy"} and set(healthy["faults"]) == {""}
    assert "invented_payment_url" in healthy.loc[LINK, "reason"]
    faulted = truth[truth["arm"] == "faulted"]
    assert set(faulted["faults"]) == {"wrong_amount", "invented_payment_url"}
    assert truth.loc[truth["run_id"] == "w1", "criterion_index"].tolist() == [0]   # the rubric's index, kept


def test_fault_truth_makes_a_truth_the_database_contradicts_unknown():
    link = {LINK: "payment_link_created"}
    checks = [("h1", "payment_link_created", False),  # the healthy run never made the link: step not reached
              ("i1", "payment_link_created", True)]   # a link exists in the faulted run: the fault did not fire
    frames = paired_happy_study(assertions=checks, assertion_of=link)
    truth = fault_truth(frames).set_index(["run_id", "criterion"])
    assert pd.isna(truth.loc[("h1", LINK), "passed"]) and pd.isna(truth.loc[("i1", LINK), "passed"])
    assert "payment_link_created failed" in truth.loc[("h1", LINK), "reason"]
    assert "payment_link_created passed" in truth.loc[("i1", LINK), "reason"]
    stands = truth.loc[("i1", NO_URLS), "passed"]  # no assertion declared: the fault's truth stands
    assert pd.notna(stands) and not stands
    kept = fault_truth(frames, database_check=False).set_index(["run_id", "criterion"])
    assert [kept.loc[("h1", LINK), "passed"], kept.loc[("i1", LINK), "passed"]] == [True, False]
    # Agreeing databases, or a check that errored (NA), change nothing.
    agreeing = paired_happy_study(assertions=[("h1", "payment_link_created", True),
                                              ("i1", "payment_link_created", None)], assertion_of=link)
    assert fault_truth(agreeing)["passed"].notna().all()
    # The unknown rows leave the statistics.
    table = fault_detection(frames, n_boot=50)
    pooled = table[(table["criterion"] == "(all)") & (table["statistic"] == "sensitivity")].iloc[0]
    assert pooled["n_items"] == 6 - 2


def detection_study():
    """Criterion PATIENT (rude_tone, confused patient): judge passes 3 of 4 healthy, fails 1 of 4 faulted.
    Criterion POLITE (rude_tone, impatient patient): judge right on all 8. A second judge passes everything."""
    runs, verdicts = [], {}
    plan = [("billing-conv-confused-patient", PATIENT, [True, True, True, False], [True, True, True, False]),
            ("billing-conv-impatient-patient", POLITE, [True] * 4, [False] * 4)]
    for k, (scenario, criterion, healthy, faulted) in enumerate(plan):
        for seed in range(4):
            h, f = f"s{k}-h{seed}", f"s{k}-f{seed}"
            runs += [(h, scenario, "clinic:billing", seed), (f, scenario, "clinic:billing?faults=rude_tone", seed)]
            verdicts[h] = {criterion: healthy[seed], "Agent generated a payment link": True}
            verdicts[f] = {criterion: faulted[seed], "Agent generated a payment link": True}
    frames = study(runs, verdicts)
    lenient = frames.rubric.assign(judge_model="judge-lenient", passed=True)
    return frames.replace(rubric=pd.concat([frames.rubric, lenient], ignore_index=True))


def _value(table, criterion, statistic, judge="judge-x"):
    row = table[(table["criterion"] == criterion) & (table["statistic"] == statistic) & (table["rater_a"] == judge)]
    assert len(row) == 1, (criterion, statistic, judge)
    return row.iloc[0]


def test_fault_detection_gives_exact_sensitivity_and_specificity_per_criterion_and_pooled():
    table = fault_detection(detection_study(), n_boot=200)
    assert set(table["statistic"]) == set(DETECTION_STATISTICS)
    assert set(table["rater_b"]) == {KNOWN_FAULTS} and set(table["rater_a"]) == {"judge-x", "judge-lenient"}
    # "Agent generated a payment link" is broken by no fault run here: never rated, so no row.
    assert set(table["criterion"]) == {PATIENT, POLITE, "(all)"}
    assert _value(table, PATIENT, "sensitivity")["value"] == pytest.approx(3 / 4)
    assert _value(table, PATIENT, "specificity")["value"] == pytest.approx(1 / 4)
    assert _value(table, PATIENT, "pass_rate_a")["value"] == pytest.approx(6 / 8)
    assert _value(table, PATIENT, "pass_rate_b")["value"] == pytest.approx(4 / 8)
    judge = [True, True, True, False] + [True, True, True, False]
    truth = [True] * 4 + [False] * 4
    assert _value(table, PATIENT, "cohen_kappa")["value"] == pytest.approx(cohen_kappa_score(judge, truth))
    assert _value(table, POLITE, "sensitivity")["value"] == 1 and _value(table, POLITE, "specificity")["value"] == 1
    assert _value(table, POLITE, "cohen_kappa")["value"] == pytest.approx(1.0)
    assert _value(table, "(all)", "sensitivity")["value"] == pytest.approx(7 / 8)
    assert _value(table, "(all)", "specificity")["value"] == pytest.approx(5 / 8)
    pooled = _value(table, "(all)", "specificity")
    assert (pooled["n"], pooled["n_items"]) == (16, 16)
    assert pooled["ci_low"] <= pooled["value"] <= pooled["ci_high"]
    assert bool(_value(table, PATIENT, "sensitivity")["ci_too_wide"])  # 8 conversations: too few to conclude
    # A judge that passes everything: sensitivity 1, specificity 0, whatever the criterion.
    assert _value(table, "(all)", "sensitivity", "judge-lenient")["value"] == 1
    assert _value(table, "(all)", "specificity", "judge-lenient")["value"] == 0


def test_fault_confusion_counts_each_cell_with_pass_as_the_positive_class():
    cm = fault_confusion(detection_study())
    assert list(cm.columns) == ["criterion", "rater_a", "rater_b", "a_passed", "b_passed", "count", "cell"]
    mine = cm[(cm["rater_a"] == "judge-x")].set_index(["criterion", "cell"])["count"]
    assert mine[PATIENT].to_dict() == {"TN": 1, "FP": 3, "FN": 1, "TP": 3}
    assert mine[POLITE].to_dict() == {"TN": 4, "FP": 0, "FN": 0, "TP": 4}
    assert mine["(all)"].to_dict() == {"TN": 5, "FP": 3, "FN": 1, "TP": 7}
    fp = cm[(cm["cell"] == "FP") & (cm["rater_a"] == "judge-x")]
    assert fp["a_passed"].all() and not fp["b_passed"].any()  # FP: the judge passed a known fault


def test_a_judge_named_like_the_truth_is_refused():
    frames = detection_study()
    frames = frames.replace(rubric=frames.rubric.assign(judge_model=KNOWN_FAULTS))
    with pytest.raises(ValueError, match="rename it"):
        fault_detection(frames)


# ── a real study: the support agent, healthy and faulted, with scripted fake models ──

SEED = 100
#: The simulated patient's lines per scenario, by turn (the simulator's seed is SEED + turn index).
LINES = {
    "Emily Carter": ["Hi! How much is a teeth cleaning?", "Do you accept SulAmérica insurance?",
                     "What is the clinic's address?", "Thank you! [GOAL_COMPLETE]"],
    "Lucía Fernández": ["Me cobraron dos veces la consulta. Quiero hablar con una persona.", "Gracias. [GOAL_COMPLETE]"],
    "Antônio Pereira": ["Vocês abrem no sábado?", "Estou com dor e inchaço depois de extrair o siso, é normal?",
                        "Obrigado. [GOAL_COMPLETE]"],
}
HOLISTIC = {"issues": [], "suggestion": "ok", "scores": {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10,
                                                          "conciseness": 8, "goal_completion": 9}}


#: The patients who want a person end only once the agent has said it hands them over (its hand-off messages name
#: the team); otherwise they give up. A [GOAL_COMPLETE] the agent never earned would be a premature patient, which
#: the simulator-failure gate stops (premature_goal), and never_escalates would have no verdict to score.
HANDED_OFF = {"Lucía Fernández": ("nuestro equipo", "No me sirve un bot. [STUCK]"),
              "Antônio Pereira": ("nossa equipe", "Preciso falar com alguém. [STUCK]")}


def patient(messages, kwargs):
    text = "\n".join(str(m.content) for m in messages)
    name, lines = next((name, lines) for name, lines in LINES.items() if name in text)
    line = lines[min(kwargs["seed"] - SEED, len(lines) - 1)]
    if line.endswith("[GOAL_COMPLETE]") and name in HANDED_OFF and HANDED_OFF[name][0] not in text:
        return HANDED_OFF[name][1]
    return line


def lenient_judge(messages, kwargs):
    """Passes every criterion it is asked about (the rubric tool has one required key per criterion)."""
    keys = kwargs["tools"][0]["function"]["parameters"]["properties"]
    if "criterion_1" in keys:
        return {k: {"evidence": "Turn 1", "reasoning": "seen", "passed": True} for k in keys}
    return HOLISTIC


@pytest.fixture
def support_study(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    simulator, judge = FakeChatModel(responder=patient), FakeChatModel(responder=lenient_judge)
    scenarios = load_scenarios(agent="support", type="conversational")
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        def run(seeds=(SEED,), progress=False):
            return run_fault_study(load_scenarios(agent="support"), tmp_path / "study", seeds=seeds,
                                   simulator_model=simulator, judge_model=judge, store=store, progress=progress)
        yield run, scenarios, simulator, judge, tmp_path / "study"


def test_a_real_support_study_runs_every_target_in_its_folder_resumes_and_yields_the_truth(support_study):
    run, scenarios, simulator, judge, out = support_study
    frames = run()
    plan = fault_study_plan(scenarios, seeds=(SEED,))
    # Folders: one per target, each holding its scenarios' conversations.
    assert sorted(p.name for p in out.iterdir()) == sorted(set(plan["folder"]))
    for folder, rows in plan.groupby("folder"):
        assert sorted(p.stem for p in (out / folder / "runs").glob("*.json")) == sorted(
            f"{s}__s{SEED}__t1" for s in rows["scenario"])
    runs = frames.runs
    assert sorted(zip(runs["target"], runs["scenario"], strict=True)) == sorted(
        zip(plan["target"], plan["scenario"], strict=True))
    assert (runs["status"] == "completed").all() and len(runs) == 13
    assert set(frames.rubric["run_id"]) == set(runs["run_id"])
    assert set(frames.calls["target"]) == set(plan["target"])

    # Resume: a second call makes no new conversation and no LLM call, and returns the same runs.
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*/runs/*.json")}
    calls = (len(simulator.calls), len(judge.calls))
    again = run()
    assert (len(simulator.calls), len(judge.calls)) == calls
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/runs/*.json")} == stamps
    assert set(again.runs["run_id"]) == set(runs["run_id"])

    # Truth: each faulted run fails exactly the criteria its fault breaks in that rubric; the healthy run passes them.
    truth = fault_truth(frames)
    target_of = dict(zip(runs["run_id"], runs["target"], strict=True))
    rubric_of = {sc.id: set(sc.criteria) for sc in scenarios}
    for (run_id, scenario), rows in truth.groupby(["run_id", "scenario"]):
        target = target_of[run_id]
        if "?faults=" in target:
            fault = FAULTS[f"support:{target.split('=')[1]}"]
            assert set(rows["criterion"]) == set(fault.breaks_criteria) & rubric_of[scenario]
            assert rows["passed"].eq(False).all()
        else:
            beside = plan[(plan["scenario"] == scenario) & (plan["faults"] != "")]["faults"]
            broken = set().union(*(FAULTS[f"support:{f}"].breaks_criteria for f in beside)) & rubric_of[scenario]
            assert set(rows["criterion"]) == broken
            assert rows["passed"].eq(True).all()  # this scripted patient reaches every step
    wants = truth[(truth["scenario"] == "support-conv-wants-human-es") & (truth["faults"] == "never_escalates")]
    assert set(wants["criterion"]) == {"Agent transferred the patient to a human attendant",
                                       "Agent did not ignore the patient's request to talk to a person",
                                       "Agent told the patient that a person would continue the conversation"}
    # never_escalates is relevant to the prices scenario only through its assertion: a run, but no truth rows.
    prices = runs[(runs["scenario"] == "support-conv-prices-insurance-en")
                  & (runs["target"] == "clinic:support?faults=never_escalates")]
    assert len(prices) == 1 and not truth["run_id"].isin(prices["run_id"]).any()

    # The lenient judge passes everything: it finds every healthy step and catches no fault.
    table = fault_detection(frames, n_boot=100)
    pooled = table[table["criterion"] == "(all)"].set_index("statistic")
    assert pooled.loc["sensitivity", "value"] == 1 and pooled.loc["specificity", "value"] == 0
    assert pooled.loc["pass_rate_b", "value"] == pytest.approx(truth["passed"].mean())
    assert pooled.loc["sensitivity", "n_items"] == len(truth)
    cm = fault_confusion(frames)
    totals = cm[cm["criterion"] == "(all)"].set_index("cell")["count"]
    assert totals["TP"] == truth["passed"].sum() and totals["FP"] == (~truth["passed"]).sum()
    assert totals["TN"] == totals["FN"] == 0


def test_a_narrower_study_over_a_wider_folder_returns_only_what_it_planned(support_study):
    run, _scenarios, simulator, _judge, _out = support_study
    wide = run(seeds=(SEED, SEED + 1))
    assert set(wide.runs["seed"]) == {SEED, SEED + 1}
    calls = len(simulator.calls)
    narrow = run(seeds=(SEED,))
    assert len(simulator.calls) == calls  # everything it needs is on disk
    assert set(narrow.runs["seed"]) == {SEED} and len(narrow.runs) == 13
    assert set(narrow.rubric["run_id"]) == set(narrow.runs["run_id"])
    assert set(narrow.calls["seed"]) == {SEED}
    assert target_folder("clinic:support?faults=rude_tone") == "clinic-support-faults-rude_tone"


def test_the_study_counts_its_conversations_once_across_targets_each_named_with_its_fault(support_study, capsys):
    run, _scenarios, _simulator, _judge, out = support_study
    run(progress="lines")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "running 13 conversation(s)"
    finished = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in finished] == [f"[{k}/13" + "]" for k in range(1, 14)]
    assert sum("s100 t1 [healthy]: pass" in line for line in finished) == 3
    assert any("support-conv-wants-human-es s100 t1 [rude_tone]: " in line for line in finished)
    assert lines[-1].startswith("13 conversation(s) in ")
    # Resumed: nothing left to run, and the line says what was kept.
    (out / "clinic-support-faults-rude_tone" / "runs" / "support-conv-wants-human-es__s100__t1.json").unlink()
    run(progress="lines")
    again = capsys.readouterr().out.splitlines()
    assert again[0] == "running 1 conversation(s) (12 already saved, kept)"
    assert again[1].startswith("[1/1] support-conv-wants-human-es s100 t1 [rude_tone]: ")


def test_frames_that_are_not_a_fault_study_say_so_instead_of_a_missing_reference_rater():
    # Saved runs of the healthy agent (a sweep): no fault run beside them, so nothing is known.
    frames = study([("h1", HAPPY, "clinic:billing", 1), ("h2", HAPPY, "clinic:billing", 2)],
                   {"h1": _all(True), "h2": _all(False)})
    assert fault_truth(frames).empty
    for measure in (fault_detection, fault_confusion):
        with pytest.raises(ValueError, match="no known-fault truth in these frames: no completed run of a reference"):
            measure(frames)


def test_the_targets_run_side_by_side_within_the_concurrency(fake_llm, tmp_path):
    # One conversation per target: run one target after another, only one call would ever be in flight.
    from convoeval.llm.models import get_model

    fake_llm.latency = 0.05
    scenarios = load_scenarios(scenario="support-conv-wants-human-es")
    frames = run_fault_study(scenarios, tmp_path / "study", simulator_model=get_model("simulator"),
                             judge_model=get_model("judge"), concurrency=3, progress=False, simulator_gate=False)
    assert len(frames.runs) == 4  # the healthy agent and its three faults
    # A conversation has at most 2 calls in flight (its rubric and holistic judges): more means targets overlapped,
    # and 3 conversations bound it at 6 (4 unbounded targets could reach 8).
    assert 2 < fake_llm.stats["max_in_flight"] <= 6
