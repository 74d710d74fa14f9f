"""The assertion keys convoeval ships: the clinic facts and ``sql``, registered like any plugin's key.

Their values' types live here (the scenario layer); the functions that check them are registered by
``convoeval.store.assertions`` (clinic keys) and ``convoeval.store.sql_assertions`` (``sql``), above the store.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from convoeval.scenarios.assertion_kinds import AssertionKind, register_assertion
from convoeval.scenarios.models import InvoiceStatus, NonEmptyStr, PaymentMethod
from convoeval.scenarios.path_models import PathAssertion
from convoeval.scenarios.sql_query import SqlChecks

__all__ = ["CLINIC_KEYS"]

_CLINIC = (
    AssertionKind("payment_link_created", bool, "A payment link exists for the patient."),
    AssertionKind("payment_method", PaymentMethod, "The method of the latest payment link."),
    AssertionKind("invoice_status", InvoiceStatus,
                  "The status of the patient's seeded invoice due first (invoices the agent created do not count)."),
    AssertionKind("appointment_created", bool, "The agent created an appointment (created_by = 'agent')."),
    AssertionKind("appointment_confirmed", bool, "One of the patient's appointments is confirmed."),
    AssertionKind("appointment_cancelled", bool, "One of the patient's appointments is cancelled."),
    AssertionKind("appointment_rescheduled", bool,
                  "One of the patient's appointments is rescheduled, with rescheduled_to set."),
    AssertionKind("nps_score_recorded", bool, "An NPS response was recorded."),
    AssertionKind("nps_score", Annotated[StrictInt, Field(ge=0, le=10)], "The latest NPS score recorded (0 to 10)."),
    AssertionKind("escalated_to_human", bool, "The conversation was handed off to a human."),
    AssertionKind("tools_called", list[NonEmptyStr], "Every listed tool appears among the agent's tool calls."),
    AssertionKind("tools_not_called", list[NonEmptyStr], "None of the listed tools appears among the agent's calls."),
)

#: The clinic keys, in the order a scenario's results list them.
CLINIC_KEYS = tuple(register_assertion(kind).key for kind in _CLINIC)

register_assertion(AssertionKind(
    "sql", SqlChecks,
    "Named read-only queries over the reference schema with :run_id, :clinic_id, :patient_id bound, each with "
    "expect (the value returned) or rows (how many rows), compared with op (==, !=, <, <=, >, >=).",
))

# Checked from the run's tool log by convoeval.pathcheck (after the database assertions), not by a store reader.
register_assertion(AssertionKind(
    "path", list[PathAssertion],
    "Path assertions on the recorded tool calls and messages: order, calls, call/args, confirmed_before, "
    "claims_backed (docs/path-assertions.md).",
))

# Checked from the recorded messages by convoeval.pathcheck.limits (like path), not by a store reader.
register_assertion(AssertionKind(
    "whatsapp_limits", bool,
    "Every agent message is within WhatsApp's limits (text <= 4,096 characters, <= 3 reply buttons of <= 20 "
    "characters with unique ids, lists of <= 10 rows of <= 24 characters, captions, templates by name): true; "
    "false expects a message over a limit (docs/assertions.md).",
))

# The WhatsApp channel's keys: read from the recorded messages and their channel columns by
# convoeval.pathcheck.channel (docs/whatsapp.md). true: the agent handled the channel; false expects the failure.
for _key, _text in (
    ("one_reply_per_burst", "A burst of patient messages gets one reply, not one per fragment (debouncing)."),
    ("fragments_covered", "The reply to a burst does not ask again for a fact (CPF, date, time, payment method) one "
                          "of its fragments gave."),
    ("no_duplicate_effects", "A message delivered twice (same id) is answered and acted on once (idempotency)."),
    ("whatsapp_window", "Only templates are sent more than 24 hours after the patient's last message."),
):
    register_assertion(AssertionKind(_key, bool, _text))
# τ²-bench's checks (docs/tau2.md): declared here so the schema always lists them; convoeval.tau2.checks registers
# them again with their readers (a τ² conversation's own session), which a scenario of a tau2: domain loads.
for _key, _text in (
    ("tau2_actions", "τ²: every gold action of the task was called (τ²'s ACTION check)."),
    ("tau2_state", "τ²: the database after the conversation equals the one after the gold actions (τ²'s DB check)."),
    ("tau2_communicate", "τ²: the agent said each communicate_info string (τ²'s COMMUNICATE check)."),
):
    register_assertion(AssertionKind(_key, bool, _text))
