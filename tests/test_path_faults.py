"""The known answers of the path assertions: every shipped billing, scheduling, confirmation and recall scenario,
played by rule-following patients (no LLM) against the healthy reference agent and each of its faults.

``TABLE`` is the fault × scenario table: the path and checkpoint keys each fault makes fail (``None``: the fault never
shows on that scenario's lines, the conversation is the healthy one). The healthy agent fails none. ``docs/agents.md``
quotes it in its "Assertions it breaks" column.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from path_faults_support import PATH_FAULTS, play, shipped

from convoeval.agents.clinic import faults_for
from convoeval.agents.clinic._channel import CHANNEL_FAULT_NAMES
from convoeval.pipeline.conversation import RunOptions, arun_any
from convoeval.pipeline.jobs import Job
from convoeval.scenarios import load_scenario_file, parse_scenario
from convoeval.stats.truth import truth_ratings
from convoeval.store import Store, open_store
from convoeval.testing import FakeChatModel

ROOT = Path(__file__).resolve().parents[1]

#: scenario -> fault -> the path/checkpoint keys it breaks (None: not reached on these lines).
TABLE: dict[str, dict[str, set[str] | None]] = {
    "billing/conv-confused-patient.yaml": {
        "invented_payment_url": {"path:boleto-link", "path:claims-backed"},
        "link_before_method_confirmed": {"path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:boleto-link"},
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "billing/conv-happy-payment.yaml": {
        "invented_payment_url": {"path:claims-backed", "path:link-for-the-invoice"},
        "link_before_method_confirmed": {"path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:link-for-the-invoice"},
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "billing/conv-impatient-patient.yaml": {
        "invented_payment_url": {"path:claims-backed", "path:link-for-the-invoice"},
        "link_before_method_confirmed": {"checkpoint:first-answer:calls(create_payment_link)==0", "path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:link-for-the-invoice"},
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "billing/scripted-boleto-es.yaml": {
        "invented_payment_url": {"path:boleto-link", "path:calls(create_payment_link)==1", "path:claims-backed"},
        "link_before_method_confirmed": {"path:boleto-link", "path:calls(create_payment_link)==1", "path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:boleto-link", "path:calls(create_payment_link)==1"},
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "billing/scripted-human-pt.yaml": {
        "invented_payment_url": None,
        "link_before_method_confirmed": {"path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": None,
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "billing/scripted-pix-en.yaml": {
        "invented_payment_url": {"path:calls(create_payment_link)==1", "path:claims-backed", "path:pix-link"},
        "link_before_method_confirmed": {"path:method-confirmed"},
        "wrong_amount": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:calls(create_payment_link)==1", "path:pix-link"},
        "button_overflow": set(),  # breaks whatsapp_limits only, no path assertion
    },
    "scheduling/conv-book-cleaning-pt.yaml": {
        "books_without_confirmation": {"path:slot-confirmed"},
        "books_unavailable_slot": {"path:claims-backed"},
        "double_books": None,
        "wrong_time_reported": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": set(),
    },
    "scheduling/conv-reschedule-en.yaml": {
        "books_without_confirmation": {"checkpoint:at-the-move:new-time-confirmed", "path:time-confirmed"},
        "books_unavailable_slot": {"checkpoint:at-the-move", "path:claims-backed", "path:moved-the-appointment"},
        "double_books": {"checkpoint:at-the-move", "path:claims-backed", "path:moved-the-appointment"},
        "wrong_time_reported": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"checkpoint:at-the-move", "path:moved-the-appointment"},
    },
    "scheduling/scripted-book-es.yaml": {
        "books_without_confirmation": {"path:chosen-slot", "path:slot-confirmed"},
        "books_unavailable_slot": None,
        "double_books": None,
        "wrong_time_reported": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:calls(book_appointment)==1", "path:chosen-slot"},
    },
    "scheduling/scripted-cancel-pt.yaml": {
        "books_without_confirmation": None,
        "books_unavailable_slot": None,
        "double_books": None,
        "wrong_time_reported": None,
        "rude_tone": set(),
        "never_finishes": None,
    },
    "recall/conv-accepts-checkup-es.yaml": {
        "pushy_after_refusal": None,
        "books_without_consent": {"path:slot-confirmed"},
        "wrong_patient_data": set(),
        "rude_tone": set(),
    },
    "recall/conv-declines-pt.yaml": {
        "pushy_after_refusal": set(),
        "books_without_consent": {"path:slot-confirmed"},
        "wrong_patient_data": set(),
        "rude_tone": set(),
    },
    "recall/scripted-accept-en.yaml": {
        "pushy_after_refusal": None,
        "books_without_consent": {"path:slot-confirmed"},
        "wrong_patient_data": set(),
        "rude_tone": set(),
    },
    "confirmation/conv-confirms-pt.yaml": {
        "confirms_without_asking": {"path:asked-before-confirming"},
        "cancels_instead_of_rescheduling": None,
        "wrong_appointment_time": {"path:claims-backed"},
        "rude_tone": set(),
        "never_finishes": {"path:confirmed-her-appointment"},
    },
    "confirmation/conv-reschedule-es.yaml": {
        "confirms_without_asking": {"path:asked-before-confirming"},
        "cancels_instead_of_rescheduling": {"path:asked-before-confirming"},
        "wrong_appointment_time": set(),
        "rude_tone": set(),
        "never_finishes": set(),
    },
    "confirmation/scripted-cancel-en.yaml": {
        "confirms_without_asking": {"path:asked-before-acting"},
        "cancels_instead_of_rescheduling": None,
        "wrong_appointment_time": set(),
        "rude_tone": set(),
        "never_finishes": {"path:calls(cancel_appointment)==1"},
    },
}
LOCALES = {path: load_scenario_file(ROOT / "evals" / "scenarios" / path).locale for path in TABLE}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return open_store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}")


def test_the_table_covers_every_shipped_scenario_with_path_assertions_and_every_fault() -> None:
    for agent in PATH_FAULTS:
        paths = shipped(agent)
        assert paths and set(paths) <= set(TABLE)
        for path in paths:
            # The WhatsApp channel's faults act only through the channel (tests/test_channel_faults.py).
            assert set(TABLE[path]) == {f.name for f in faults_for(agent) if not f.leaks and
                                        f.name not in CHANNEL_FAULT_NAMES}, path


@pytest.mark.parametrize("path", sorted(TABLE))
async def test_every_fault_breaks_exactly_its_path_assertions_and_the_healthy_agent_none(path: str, store: Store):
    healthy = await play(store, path)
    assert healthy.failed == {}, healthy.failed
    for fault, expected in TABLE[path].items():
        played = await play(store, path, (fault,))
        reached = played.said != healthy.said
        assert reached is (expected is not None), f"{fault}: reached={reached}"
        assert set(played.failed) == (expected or set()), f"{fault}: {played.failed}"


def test_each_fault_of_the_issue_is_caught_in_every_locale_its_scenarios_reach_it() -> None:
    for agent, faults in PATH_FAULTS.items():
        for fault in faults:
            reached = {LOCALES[p] for p in TABLE if p.startswith(f"{agent}/") and TABLE[p][fault] is not None}
            caught = {LOCALES[p] for p in TABLE if p.startswith(f"{agent}/") and TABLE[p][fault]}
            assert reached and caught == reached, (fault, reached, caught)
    # The billing and scheduling faults show in pt-BR, en and es; confirms_without_asking in all three too.
    assert {LOCALES[p] for p in TABLE if TABLE[p].get("link_before_method_confirmed")} == {"pt-BR", "en", "es"}
    assert {LOCALES[p] for p in TABLE if TABLE[p].get("books_without_confirmation")} == {"pt-BR", "en", "es"}
    assert {LOCALES[p] for p in TABLE if TABLE[p].get("confirms_without_asking")} == {"pt-BR", "en", "es"}
    assert {LOCALES[p] for p in TABLE if TABLE[p].get("books_without_consent")} == {"pt-BR", "en", "es"}


def test_docs_agents_quotes_the_keys_each_fault_breaks() -> None:
    docs = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    for agent in PATH_FAULTS:
        section = docs.split(f"## {agent} (`clinic:{agent}`)", 1)[1].split("\n## ", 1)[0]
        for fault in (f.name for f in faults_for(agent) if not f.leaks and f.name not in CHANNEL_FAULT_NAMES):
            [row] = [line for line in section.splitlines() if line.startswith(f"| `{fault}` |")]
            cell = row.split(" | ")[-1]
            broken = set().union(*(TABLE[p][fault] or set() for p in TABLE if p.startswith(f"{agent}/")))
            missing = [k for k in broken if f"`{k}`" not in cell]
            assert not missing, f"docs/agents.md, {agent} {fault}: add {missing}"


# ── Through the runner: the path rows are assertion rows like the database's ──


def judge_for(n_criteria: int) -> FakeChatModel:
    verdicts = {"verdicts": [{"index": i + 1, "evidence": "Turn 1", "reasoning": "seen", "passed": True}
                             for i in range(n_criteria)]}
    holistic = {"issues": [], "scores": dict.fromkeys(
        ("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion"), 8), "suggestion": "ok"}
    return FakeChatModel(replies=[verdicts, holistic])


@pytest.mark.parametrize(("target", "failed"), [
    ("clinic:billing", set()),
    ("clinic:billing?faults=link_before_method_confirmed",
     {"path:method-confirmed", "checkpoint:first-answer:calls(create_payment_link)==0"}),
])
async def test_a_run_records_path_and_checkpoint_rows_beside_the_database_assertions(target: str, failed: set[str],
                                                                                       tmp_path: Path) -> None:
    sc = load_scenario_file(ROOT / "evals" / "scenarios" / "billing" / "conv-impatient-patient.yaml")
    simulator = FakeChatModel(replies=["quero pagar logo", "manda o link", "pix", "sim", "ok [GOAL_COMPLETE]"])
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        result = await arun_any(Job(sc, 1), RunOptions(target=target, simulator_model=simulator,
                                                       judge_model=judge_for(len(sc.criteria)), store=store))
    rows = result.rows["assertions"]
    keys = [r["assertion"] for r in rows]
    assert keys[0] == "payment_link_created" and "path:method-confirmed" in keys
    assert "checkpoint:first-answer:calls(create_payment_link)==0" in keys
    assert {r["assertion"] for r in rows if not r["passed"]} == failed
    assert all(re.match(r"(path|checkpoint):", r["message"]) for r in rows if r["assertion"].startswith("path"))
    # The criterion linked to path:method-confirmed takes the path row as its database truth (the agreement
    # notebook's "Judges against the database" section): the fault's skipped confirmation is a fail there.
    truth = truth_ratings(result.rubric, result.assertions)
    [verdict] = truth.loc[truth["criterion"] == "Agent confirmed the payment method before generating", "passed"]
    assert bool(verdict) is ("path:method-confirmed" not in failed)
    assert result.score["assertion_failures"].iloc[0] == len(failed)


async def test_a_checkpoints_criteria_are_judged_on_the_conversation_up_to_its_turn(tmp_path: Path) -> None:
    from test_reliability_support import fake_responder  # the cooperative judge of the reliability tests

    raw = load_scenario_file(ROOT / "evals" / "scenarios" / "billing" / "conv-impatient-patient.yaml").model_dump(
        exclude_none=True)
    raw["checkpoints"].append({"id": "at-the-link", "when": {"tool": "create_payment_link"},
                               "rubric": ["Agent asked the patient to confirm the method before creating the link"]})
    sc = parse_scenario(raw)
    simulator = FakeChatModel(replies=["quero pagar logo", "manda o link", "pix", "sim", "obrigado!",
                                       "ok [GOAL_COMPLETE]"])
    judge = FakeChatModel(responder=fake_responder)
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        result = await arun_any(Job(sc, 1), RunOptions(simulator_model=simulator, judge_model=judge,
                                                       store=store))
    rubric = result.rows["rubric"]
    [row] = [r for r in rubric if r["criterion"].startswith("[checkpoint at-the-link] ")]
    assert row["criterion_index"] == len(sc.rubric) and row["passed"] in (True, False), row
    assert len(rubric) == len(sc.rubric) + 1
    # The link came at turn 4 (after "sim"); the judge of the checkpoint saw nothing said after it.
    [link_turn] = [r["turn"] for r in result.rows["transcripts"] if "create_payment_link" in (r.get("tools") or [])]
    after = [r["text"] for r in result.rows["transcripts"] if r["turn"] > link_turn and r["role"] == "agent"]
    [seen] = [c.text for c in judge.calls if "confirm the method before creating the link" in c.text]
    assert after and not any(text in seen for text in after)
    [url] = [c["result"]["url"] for r in result.rows["transcripts"] for c in r.get("tool_calls") or []
             if c["name"] == "create_payment_link"]
    assert url in seen  # the link's own turn is part of what it judges
