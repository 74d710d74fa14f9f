"""The clinic tools: scoped to the session, rows stamped with the run id, clear errors, OpenAI specs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_clinic_support import scenario, session_for, store  # noqa: F401 - pytest fixture

from convoeval.agents.tools import PAYMENT_URL_BASE, TOOL_NAMES, TOOL_SPECS, ClinicTools, ToolError
from convoeval.store import Store, check_assertions, cleanup_run, seed_run

FIXTURES: dict[str, Any] = {
    "professionals": [{"id": "dr-a", "name": "Dra. Ana"}, {"id": "dr-b", "name": "Dr. Bruno"}],
    "services": [
        {"id": "consult", "name": "Consulta", "price_cents": 20000},
        {"id": "clean", "name": "Limpeza", "duration_min": 45, "price_cents": 18000},
    ],
    "slots": [
        {"id": "s1", "professional_id": "dr-a", "service_id": "consult", "starts_at": "2026-03-10T09:00"},
        {"id": "s2", "professional_id": "dr-b", "starts_at": "2026-03-11T10:00"},
        {"id": "s3", "professional_id": "dr-a", "service_id": "clean", "starts_at": "2026-03-10T11:00"},
        {"id": "s4", "professional_id": "dr-a", "starts_at": "2026-03-12T08:00", "available": False},
    ],
    "appointments": [{"id": "ap1", "professional_id": "dr-a", "service_id": "consult", "starts_at": "2026-03-09T14:00"}],
    "invoices": [
        {"id": "inv-open", "amount_cents": 15000, "due_date": "2026-02-20", "description": "Consulta"},
        {"id": "inv-paid", "amount_cents": 9000, "due_date": "2026-01-20", "status": "paid"},
    ],
}


@pytest.fixture
def run(store: Store):  # noqa: F811
    """Two seeded runs of the same scenario: tools of the first must never see the second."""
    sc = scenario("scheduling", **FIXTURES)
    seeded, other = seed_run(store, sc), seed_run(store, sc)
    try:
        yield ClinicTools(store, session_for(store, seeded, sc)), seeded, other
    finally:
        cleanup_run(store, seeded.run_id)
        cleanup_run(store, other.run_id)


def test_specs_cover_every_tool_with_plain_json_schemas() -> None:
    assert [s["function"]["name"] for s in TOOL_SPECS] == list(TOOL_NAMES)
    assert set(TOOL_NAMES) == {
        "get_patient", "find_patient", "verify_identity", "list_agenda", "list_invoices", "create_payment_link", "list_services", "check_availability",
        "list_appointments", "book_appointment", "confirm_appointment", "cancel_appointment",
        "reschedule_appointment", "record_nps", "handoff_to_human",
    }  # fmt: skip
    for spec in TOOL_SPECS:
        params = spec["function"]["parameters"]
        assert spec["type"] == "function" and spec["function"]["description"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        text = json.dumps(params)
        assert '"title"' not in text and '"null"' not in text  # what strict function-calling servers reject
    link = next(s for s in TOOL_SPECS if s["function"]["name"] == "create_payment_link")["function"]["parameters"]
    assert link["properties"]["method"]["enum"] == ["pix", "boleto", "card"]
    assert link["required"] == ["invoice_id", "method"]


def test_payment_link_uses_the_invoice_amount_and_the_run_id(run, store: Store) -> None:  # noqa: F811
    tools, seeded, other = run
    invoices = tools.run("list_invoices")
    assert [(i["amount_cents"], i["amount"], i["status"]) for i in invoices] == [(15000, "150.00", "pending")]
    assert {i["status"] for i in tools.run("list_invoices", status="all")} == {"pending", "paid"}
    link = tools.run("create_payment_link", invoice_id=invoices[0]["id"], method="PIX")
    assert link["url"] == f"{PAYMENT_URL_BASE}/pix/{link['id']}"
    assert link["amount_cents"] == 15000 and link["method"] == "pix"
    [row] = store.select("payment_links", {"id": link["id"]})
    assert row["run_id"] == seeded.run_id and row["invoice_id"] == invoices[0]["id"] and row["fixture_ref"] is None
    results = {r.key: r.passed for r in check_assertions(store, {"payment_link_created": True, "payment_method": "pix"}, seeded)}
    assert results == {"payment_link_created": True, "payment_method": True}
    assert not check_assertions(store, {"payment_link_created": True}, other)[0].passed
    assert [c.name for c in tools.calls] == ["list_invoices", "list_invoices", "create_payment_link"]
    assert tools.calls[-1].result == link


def test_ids_of_another_run_are_unknown(run, store: Store) -> None:  # noqa: F811
    tools, _, other = run
    foreign_invoice = other.refs["invoices"]["inv-open"]
    with pytest.raises(ToolError, match="no invoice with id"):
        tools.call("create_payment_link", {"invoice_id": foreign_invoice, "method": "pix"})
    assert tools.calls[-1].result == {"error": tools.calls[-1].result["error"]} and "no invoice" in tools.calls[-1].result["error"]
    assert store.select("payment_links", {"invoice_id": foreign_invoice}) == []
    with pytest.raises(ToolError, match="no slot"):
        tools.run("book_appointment", slot_id=other.refs["slots"]["s1"])


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("create_payment_link", {"invoice_id": "inv-open", "method": "bitcoin"}, "method"),
        ("create_payment_link", {"invoice_id": "inv-paid", "method": "pix"}, "is paid"),
        ("create_payment_link", {"invoice_id": "inv-open"}, r"^create_payment_link: method: [^;]+$"),  # pydantic's words after the path
        ("list_invoices", {"colour": "red"}, "colour: unknown argument"),
        ("record_nps", {"score": 11}, "score"),
        ("record_nps", {"score": True}, "score must be a number"),
        ("check_availability", {"date": "next tuesday"}, "date"),
        ("teleport", {}, "unknown tool 'teleport'"),
        ("list_services", "{not json", "not valid JSON"),
        ("list_services", "[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_calls_raise_a_clear_tool_error(run, name: str, arguments: Any, message: str) -> None:
    tools, _, _ = run
    with pytest.raises(ToolError, match=message):
        tools.call(name, arguments)


def test_arguments_may_be_the_json_text_a_model_sends(run) -> None:
    tools, _, _ = run
    call = tools.call("record_nps", '{"score": "9", "comment": "ótimo"}')
    assert call.result["score"] == 9 and call.arguments == {"score": "9", "comment": "ótimo"}


def test_availability_filters_and_booking_takes_the_slot(run, store: Store) -> None:  # noqa: F811
    tools, seeded, _ = run
    refs = seeded.refs
    free = tools.run("check_availability")
    assert [s["starts_at"] for s in free] == ["2026-03-10T09:00", "2026-03-10T11:00", "2026-03-11T10:00"]
    # A slot without a service hosts any service.
    assert [s["slot_id"] for s in tools.run("check_availability", service_id=refs["services"]["consult"])] == [
        refs["slots"]["s1"], refs["slots"]["s2"]
    ]
    assert [s["professional"] for s in tools.run("check_availability", professional_id="dr-b")] == ["Dr. Bruno"]
    assert len(tools.run("check_availability", date="2026-03-10")) == 2
    booked = tools.run("book_appointment", slot_id=refs["slots"]["s1"])
    assert booked["status"] == "scheduled" and booked["service"] == "Consulta" and booked["starts_at"] == "2026-03-10T09:00"
    [row] = store.select("appointments", {"id": booked["id"]})
    assert row["created_by"] == "agent" and row["run_id"] == seeded.run_id
    assert refs["slots"]["s1"] not in [s["slot_id"] for s in tools.run("check_availability")]
    with pytest.raises(ToolError, match="no longer available"):
        tools.run("book_appointment", slot_id=refs["slots"]["s1"])
    assert check_assertions(store, {"appointment_created": True}, seeded)[0].passed


def test_confirm_cancel_and_reschedule(run, store: Store) -> None:  # noqa: F811
    tools, seeded, _ = run
    refs = seeded.refs
    ap1 = refs["appointments"]["ap1"]
    assert tools.run("confirm_appointment", appointment_id=ap1)["status"] == "confirmed"
    moved = tools.run("reschedule_appointment", appointment_id=ap1, new_slot_id=refs["slots"]["s3"])
    assert moved["rescheduled_from"] == ap1 and moved["starts_at"] == "2026-03-10T11:00"
    [old] = store.select("appointments", {"id": ap1})
    assert old["status"] == "rescheduled" and old["rescheduled_to"] == moved["id"]
    [new] = store.select("appointments", {"id": moved["id"]})
    assert new["created_by"] == "agent" and new["service_id"] == refs["services"]["consult"]
    with pytest.raises(ToolError, match="is rescheduled"):
        tools.run("cancel_appointment", appointment_id=ap1)
    cancelled = tools.run("cancel_appointment", appointment_id=moved["id"], reason="viagem")
    assert cancelled["status"] == "cancelled" and cancelled["reason"] == "viagem"
    # The cancelled appointment's slot is free again.
    assert refs["slots"]["s3"] in [s["slot_id"] for s in tools.run("check_availability")]
    listed = {a["id"]: a["status"] for a in tools.run("list_appointments")}
    assert listed == {ap1: "rescheduled", moved["id"]: "cancelled"}
    assert [a["id"] for a in tools.run("list_appointments", status="cancelled")] == [moved["id"]]
    results = check_assertions(
        store, {"appointment_rescheduled": True, "appointment_cancelled": True, "appointment_confirmed": False}, seeded
    )
    assert all(r.passed for r in results), [r.detail for r in results]


def test_patient_services_nps_and_handoff(run, store: Store) -> None:  # noqa: F811
    tools, seeded, _ = run
    tools.session.conversation_id = "conv-1"
    assert tools.run("get_patient")["name"] == "Ana Souza"
    assert [(s["name"], s["price"]) for s in tools.run("list_services")] == [("Consulta", "200.00"), ("Limpeza", "180.00")]
    nps = tools.run("record_nps", score=9, comment="ótimo", appointment_id="ap1")
    assert nps["appointment_id"] == seeded.refs["appointments"]["ap1"]
    handoff = tools.run("handoff_to_human", reason="quer falar com a recepção")
    [row] = store.select("handoffs", {"id": handoff["id"]})
    assert row["conversation_id"] == "conv-1" and row["run_id"] == seeded.run_id
    results = check_assertions(store, {"nps_score": 9, "escalated_to_human": True}, seeded)
    assert all(r.passed for r in results), [r.detail for r in results]
