"""Path assertions and checkpoints on hand-written conversations: each kind passes and fails, claims are checked
against the tool log and the store (SQLite, Postgres when configured, and Supabase through a fake PostgREST), and bad
YAML is refused with the field named."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import respx
from store_support import PG_URL, require_postgres
from test_store_supabase import KEY, REST, FakePostgrest

from convoeval.fidelity.claims import amount_cents, stated_times
from convoeval.pathcheck import PathLog, check_checkpoints, check_path, says_yes
from convoeval.scenarios import ScenarioError, parse_scenario
from convoeval.scenarios.models import Assertions, ConversationalScenario
from convoeval.store import Store, check_assertions, cleanup_run, open_store, seed_run
from convoeval.store.fixtures import SeededRun

URL = "https://pay.clinic.example/pix/abc123"
LINK = {"name": "create_payment_link", "arguments": {"invoice_id": "inv-1", "method": "pix"},
        "result": {"id": "l1", "method": "pix", "amount_cents": 15000, "amount": "R$ 150,00", "url": URL}}
INVOICES = {"name": "list_invoices", "arguments": {},
            "result": [{"id": "inv-1", "amount_cents": 15000, "amount": "R$ 150,00"}]}


def convo(*turns: tuple[str, str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Transcript rows of (patient line, agent reply, tool calls) turns."""
    rows: list[dict[str, Any]] = []
    for n, (patient, agent, calls) in enumerate(turns, start=1):
        rows += [{"turn": n, "role": "patient", "text": patient},
                 {"turn": n, "role": "agent", "text": agent, "tools": [c["name"] for c in calls], "tool_calls": calls}]
    return rows


HEALTHY = convo(
    ("Oi, quero pagar", "Sua fatura é de R$ 150,00. Pix, boleto ou cartão?", [INVOICES]),
    ("Pix", "Posso gerar o link de R$ 150,00 via Pix? (sim/não)", []),
    ("Sim, pode", f"Prontinho! Aqui está o seu link:\n{URL}", [LINK]),
)
HASTY = convo(
    ("Oi, quero pagar", f"Aqui está o seu link de R$ 150,00 via Pix:\n{URL}", [INVOICES, LINK]),
    ("ok", "Mais alguma coisa?", []),
)


def path(*items: dict[str, Any]) -> list[Any]:
    return Assertions.model_validate({"path": list(items)}).path or []


def verdicts(rows: list[dict[str, Any]], *items: dict[str, Any], **kwargs: Any) -> dict[str, bool]:
    return {r.key: r.passed for r in check_path(rows, path(*items), locale="pt-BR", **kwargs)}


# ── Each kind, pass and fail ──


def test_order_passes_when_each_tool_follows_the_one_before_and_fails_on_a_call_before_it() -> None:
    item = {"order": ["list_invoices", "create_payment_link"]}
    assert verdicts(HEALTHY, item) == {"path:order(list_invoices < create_payment_link)": True}
    early = convo(("oi", f"link: {URL}", [LINK]), ("e a fatura?", "R$ 150,00", [INVOICES]))
    [result] = check_path(early, path(item))
    assert not result.passed and "create_payment_link was called at turn 1 before any list_invoices" in result.detail


def test_counts_bound_the_calls_of_a_tool() -> None:
    twice = HEALTHY + [{**HEALTHY[-2], "turn": 4}, {**HEALTHY[-1], "turn": 4}]  # the link sent again, newly made
    assert verdicts(HEALTHY, {"calls": "create_payment_link", "exactly": 1}) == {
        "path:calls(create_payment_link)==1": True}
    [result] = check_path(twice, path({"calls": "create_payment_link", "at_most": 1}))
    assert not result.passed and result.actual == 2 and "called 2 time(s), expected at most 1" in result.detail
    assert verdicts(HEALTHY, {"id": "n", "calls": "handoff_to_human", "at_least": 1}) == {"path:n": False}


def test_arguments_are_checked_on_every_call_or_the_last_and_a_tool_never_called_fails() -> None:
    assert verdicts(HEALTHY, {"call": "create_payment_link", "args": {"method": "pix"}}) == {
        "path:args(create_payment_link.method)": True}
    [wrong] = check_path(HEALTHY, path({"call": "create_payment_link", "args": {"method": "boleto"}}))
    assert not wrong.passed and "got method=pix at turn 3" in wrong.detail
    [never] = check_path(HEALTHY, path({"call": "book_appointment", "args": {"slot_id": "x"}}))
    assert not never.passed and "never called" in never.detail
    switched = HEALTHY + [{"turn": 4, "role": "patient", "text": "boleto"},
                          {"turn": 4, "role": "agent", "text": "ok", "tool_calls": [
                              {**LINK, "arguments": {**LINK["arguments"], "method": "boleto"}}]}]
    assert verdicts(switched, {"call": "create_payment_link", "which": "last", "args": {"method": "boleto"}}) == {
        "path:args(create_payment_link.method)": True}
    assert verdicts(switched, {"call": "create_payment_link", "args": {"method": "boleto"}}) == {
        "path:args(create_payment_link.method)": False}


def test_a_fixture_reference_needs_the_runs_ids() -> None:
    item = {"call": "create_payment_link", "args": {"invoice_id": {"fixture": "invoices.inv"}}}
    seeded = SeededRun("run", "clinic", "patient", {"invoices": {"inv": "inv-1"}})
    assert verdicts(HEALTHY, item, seeded=seeded) == {"path:args(create_payment_link.invoice_id)": True}
    other = SeededRun("run", "clinic", "patient", {"invoices": {"inv": "inv-2"}})
    assert verdicts(HEALTHY, item, seeded=other) == {"path:args(create_payment_link.invoice_id)": False}
    with pytest.raises(ValueError, match="needs the run's seeded ids"):
        check_path(HEALTHY, path(item))


def test_a_write_needs_the_agents_question_and_the_patients_yes() -> None:
    item = {"id": "confirmed", "confirmed_before": ["create_payment_link"]}
    assert verdicts(HEALTHY, item) == {"path:confirmed": True}
    [result] = check_path(HASTY, path(item))
    assert not result.passed and "turn 1: create_payment_link (the agent had asked nothing)" in result.detail
    refused = convo(("Oi", "Pix, boleto ou cartão?", [INVOICES]), ("não, prefiro pensar", "Ok! Aqui está o link", [LINK]))
    [no] = check_path(refused, path(item))
    assert not no.passed and "the patient said 'não, prefiro pensar'" in no.detail
    custom = {"confirmed_before": ["create_payment_link"], "yes_words": ["manda"]}
    assert [r.passed for r in check_path(convo(("oi", "Pix?", []), ("manda", URL, [LINK])), path(custom))] == [True]


@pytest.mark.parametrize(("text", "yes"), [
    ("Sim, pode gerar", True), ("sim", True), ("Yes please", True), ("Sí, confirmo", True), ("pode ser", True),
    ("não", False), ("No, thanks", False), ("I don't want it", False), ("no sé", False), ("Pix", False),
    ("prefiro boleto no cartão", False),
])
def test_a_yes_is_read_in_the_three_languages_and_undone_by_a_no(text: str, yes: bool) -> None:
    assert says_yes(text) is yes


# ── Claims backed by evidence ──


def test_claims_are_backed_by_the_tool_log_at_or_before_the_message() -> None:
    item = {"claims_backed": True}
    assert verdicts(HEALTHY, item) == {f"path:claims_backed({', '.join(path(item)[0].kinds)})": True}
    invented = convo(("Oi", "R$ 150,00. Pix? (sim/não)", [INVOICES]),
                     ("sim", "Aqui está o seu link: https://pagar.clinicaexemplo.com.br/pix/ff00", []))
    [result] = check_path(invented, path({"claims_backed": ["payment_link"]}))
    assert not result.passed
    assert "turn 2: payment_link 'https://pagar.clinicaexemplo.com.br/pix/ff00': no create_payment_link" in result.detail
    assert "turn 2: payment_link 'Aqui está o seu link': no successful create_payment_link" in result.detail


def test_an_amount_must_be_one_a_tool_returned() -> None:
    wrong = convo(("Oi", "Sua fatura é de R$ 165,00.", [INVOICES]))
    [result] = check_path(wrong, path({"claims_backed": ["amount"]}))
    assert not result.passed and "amount 'R$ 165,00': no tool result or fixture has this amount" in result.detail
    assert verdicts(convo(("Hi", "Your invoice is R$150.00.", [INVOICES])), {"id": "a", "claims_backed": ["amount"]}
                    ) == {"path:a": True}


BOOK = {"name": "book_appointment", "arguments": {"slot_id": "s9"},
        "result": {"id": "a1", "starts_at": "2026-03-10T09:00", "status": "scheduled"}}
MOVE = {"name": "reschedule_appointment", "arguments": {"appointment_id": "a0", "new_slot_id": "s9"},
        "result": {"id": "a2", "starts_at": "2026-03-16T15:30", "status": "scheduled", "rescheduled_from": "a0"}}


@pytest.mark.parametrize(("reply", "calls", "problem"), [
    ("Prontinho! ✅ Sua consulta está agendada para *terça-feira, 10/03 às 09:00*.", [BOOK], None),
    ("Prontinho! ✅ Sua consulta está agendada para *terça-feira, 10/03 às 10:00*.", [BOOK],
     "time '10:00': the slot written is at 09:00"),
    ("All set! ✅ Your appointment is booked for *Tuesday, Mar 10 at 9:00 AM*.", [],
     "booked 'is booked for': no successful book_appointment or reschedule_appointment"),
    ("All set! ✅ Your appointment has been moved to *Monday, Mar 16 at 3:30 PM*.", [MOVE], None),
    ("All set! ✅ Your appointment has been moved to *Monday, Mar 16 at 3:30 PM*.", [BOOK],
     "moved 'appointment has been moved': no successful reschedule_appointment call"),
    ("¡Listo! ✅ Tu cita quedó cambiada al *lunes 16/03 a las 16:30*.", [MOVE],
     "time '16:30': the slot written is at 15:30"),
    ("Sua consulta foi cancelada.", [{**BOOK, "name": "cancel_appointment"}], None),
    ("Sua consulta foi cancelada.", [{**BOOK, "name": "cancel_appointment", "result": {"error": "not yours"}}],
     "cancelled"),
])
def test_bookings_moves_and_times_need_the_write_that_backs_them(reply: str, calls: list, problem: str | None) -> None:
    rows = convo(("quero marcar", reply, calls))
    [result] = check_path(rows, path({"claims_backed": ["booked", "moved", "cancelled", "time"]}))
    assert result.passed is (problem is None), result.detail
    if problem:
        assert problem in result.detail


def test_an_appointment_the_patient_has_backs_booked_at_its_own_time_only() -> None:
    listed = {"name": "list_appointments", "arguments": {}, "result": [{"id": "a0", "starts_at": "2026-03-10T09:00"}]}
    right = convo(("oi", "Sua consulta está marcada para terça, 10/03 às 09:00. Confirma? (sim/não)", [listed]))
    wrong = convo(("oi", "Sua consulta está marcada para terça, 10/03 às 10:00. Confirma? (sim/não)", [listed]))
    item = {"id": "c", "claims_backed": ["booked"]}
    assert verdicts(right, item) == {"path:c": True} and verdicts(wrong, item) == {"path:c": False}


def test_times_and_amounts_are_read_as_the_agents_write_them() -> None:
    assert stated_times("às 10h, 15h30, Monday at 3:30 PM, 2 PM, 12 am, a las 11:30") == [
        "10:00", "15:30", "14:00", "00:00", "11:30"]
    assert stated_times("R$ 150,00 no dia 10/03, 3 vezes, https://x.example/10:00") == []
    assert [amount_cents(q) for q in ("R$ 150,00", "R$150.00", "$1,250.50", "R$ 1.250,00", "150 reais", "R$")] == [
        15000, 15000, 125050, 125000, 15000, None]


# ── Checkpoints ──


def scenario_with(checkpoints: list[dict[str, Any]], **extra: Any) -> ConversationalScenario:
    sc = parse_scenario({"type": "conversational", "id": "cp", "agent": "billing", "description": "d", "goal": "g",
                         "persona": {"name": "Ana", "phone": "11987650099"}, "rubric": ["r"],
                         "checkpoints": checkpoints, **extra})
    assert isinstance(sc, ConversationalScenario)
    return sc


def test_a_checkpoint_checks_the_conversation_up_to_the_turn_it_fires_at() -> None:
    sc = scenario_with([
        {"id": "first", "when": {"turn": 1}, "path": [{"calls": "create_payment_link", "exactly": 0}]},
        {"id": "at-link", "when": {"tool": "create_payment_link"},
         "path": [{"calls": "list_invoices", "at_least": 1}, {"id": "yes", "confirmed_before": ["create_payment_link"]}]},
    ])
    healthy = {r.key: r.passed for r in check_checkpoints(HEALTHY, sc.checkpoints)}
    assert healthy == {"checkpoint:first:calls(create_payment_link)==0": True,
                       "checkpoint:at-link:calls(list_invoices)>=1": True, "checkpoint:at-link:yes": True}
    hasty = {r.key: r for r in check_checkpoints(HASTY, sc.checkpoints)}
    assert not hasty["checkpoint:first:calls(create_payment_link)==0"].passed
    assert "(at turn 1)" in hasty["checkpoint:at-link:yes"].detail and not hasty["checkpoint:at-link:yes"].passed
    # Later turns are not seen: a checkpoint at turn 1 of the healthy path sees no link yet.
    later = check_checkpoints(PathLog.from_rows(HEALTHY).up_to(1), sc.checkpoints)
    assert {r.key: r.passed for r in later}["checkpoint:first:calls(create_payment_link)==0"] is True


def test_a_required_checkpoint_that_never_fires_fails_and_an_optional_one_gives_no_row() -> None:
    sc = scenario_with([
        {"id": "handoff", "when": {"tool": "handoff_to_human"}, "path": [{"calls": "x", "at_most": 0}]},
        {"id": "late", "when": {"turn": 9}, "path": [{"calls": "x", "at_most": 0}], "required": False},
    ])
    [row] = check_checkpoints(HEALTHY, sc.checkpoints)
    assert row.key == "checkpoint:handoff" and row.passed is False
    assert "never fired: handoff_to_human was never called" in row.detail


# ── Loading ──


@pytest.mark.parametrize(("extra", "message"), [
    ({"assertions": {"path": [{"ordr": ["a", "b"]}]}},
     "a path assertion needs exactly one of order, calls, call, confirmed_before, claims_backed"),
    ({"assertions": {"path": [{"calls": "x"}]}}, "calls needs at_most, at_least or exactly"),
    ({"assertions": {"path": [{"calls": "x", "exactly": 1, "at_most": 2}]}}, "exactly cannot be combined"),
    ({"assertions": {"path": [{"claims_backed": ["teleported"]}]}}, "claims_backed"),
    ({"assertions": {"path": [{"call": "x", "args": {"invoice_id": {"fixture": "invoices.nope"}}}]}},
     "assertions.path[0].args.invoice_id: fixture 'invoices.nope' is not seeded by this scenario"),
    ({"assertions": {"path": [{"calls": "x", "at_most": 1}, {"calls": "x", "at_most": 1}]}},
     "assertions.path[1]: path:calls(x)<=1 repeats assertions.path[0]"),
    ({"rubric": [{"text": "r", "assertion": "path:nope"}]}, "rubric[0].assertion: 'path:nope' names no path assertion"),
])
def test_bad_path_assertions_are_refused_when_the_scenario_loads(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_with([], **extra)
    assert message in str(info.value)


def test_when_fires_on_exactly_one_of_tool_or_turn() -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_with([{"id": "x", "when": {"tool": "a", "turn": 2}, "path": [{"calls": "a", "at_most": 1}]}])
    assert "a checkpoint fires on exactly one of tool or turn" in str(info.value)


def test_path_is_not_a_database_assertion(tmp_path: Any) -> None:
    # check_assertions gives no row for it: the runner checks it from the tool log (convoeval.pipeline.talk).
    a = Assertions.model_validate({"payment_link_created": False, "path": [{"calls": "x", "at_most": 1}]})
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        seeded = seed_run(store, scenario_with([]))
        try:
            assert [r.key for r in check_assertions(store, a, seeded)] == ["payment_link_created"]
        finally:
            cleanup_run(store, seeded.run_id)


# ── The store as evidence, on every backend ──


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "supabase"])
def any_store(request: pytest.FixtureRequest, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    if request.param == "sqlite":
        with open_store(f"sqlite:///{tmp_path / 'store.db'}") as s:
            yield s
    elif request.param == "postgres":
        require_postgres()
        with open_store(str(PG_URL)) as s:
            yield s
    else:
        monkeypatch.setenv("SUPABASE_URL", f"https://{REST.split('/')[2]}")
        monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", KEY)
        with respx.mock(base_url=REST) as router:
            router.route().mock(side_effect=FakePostgrest())
            yield open_store("supabase://")


def test_the_stores_invoices_and_links_back_amounts_and_urls_on_every_backend(any_store: Store) -> None:
    sc = scenario_with([], fixtures={"invoices": [{"id": "inv", "amount_cents": 18000, "due_date": "2026-02-20"}]})
    seeded = seed_run(any_store, sc)
    try:
        url = "https://pay.clinic.example/boleto/ffee"
        any_store.insert("payment_links", {"run_id": seeded.run_id, "clinic_id": seeded.clinic_id,
                                           "patient_id": seeded.patient_id, "invoice_id": seeded.refs["invoices"]["inv"],
                                           "method": "boleto", "amount_cents": 18000, "url": url,
                                           "created_at": "2026-01-01T00:00:00Z"})
        # No tool result in this log: only the store can back the amount and the URL.
        rows = convo(("oi", f"Sua fatura é de R$ 180,00. Aqui está o seu link: {url}", []))
        item = path({"id": "url", "claims_backed": ["amount"]})
        assert [r.passed for r in check_path(rows, item, store=any_store, seeded=seeded)] == [True]
        assert [r.passed for r in check_path(rows, item)] == [False]  # offline, no evidence
        url_rows = convo(("oi", f"Link: {url} (pagamento)", []))
        links = path({"claims_backed": ["payment_link"]})
        assert [r.passed for r in check_path(url_rows, links, store=any_store, seeded=seeded)] == [True]
        other = convo(("oi", "Link: https://pay.clinic.example/boleto/0000 (pagamento)", []))
        assert [r.passed for r in check_path(other, links, store=any_store, seeded=seeded)] == [False]
    finally:
        cleanup_run(any_store, seeded.run_id)


def test_backed_by_names_the_tools_of_an_agent_that_is_not_the_clinics() -> None:
    reserve = {"name": "create_reservation", "arguments": {"party": 4},
               "result": {"id": "r1", "starts_at": "2026-05-01T20:00"}}
    rows = convo(("table for 4 at 8pm", "All set! You're booked for Friday at 8:00 PM.", [reserve]))
    item = {"id": "r", "claims_backed": ["booked", "time"], "backed_by": {"booked": ["create_reservation"]}}
    assert verdicts(rows, item) == {"path:r": True}
    wrong = convo(("table for 4 at 8pm", "All set! You're booked for Friday at 9:00 PM.", [reserve]))
    [result] = check_path(wrong, path(item))
    assert not result.passed and "time '21:00': the slot written is at 20:00" in result.detail
    [clinic] = check_path(rows, path({"claims_backed": ["booked"]}))  # the clinic's tools back nothing here
    assert not clinic.passed and "no successful book_appointment or reschedule_appointment" in clinic.detail


def test_an_apostrophe_s_is_no_yes() -> None:
    assert says_yes("what's pix?") is False and says_yes("ss") is True
