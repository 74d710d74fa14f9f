"""The clinic tools' arguments: one strict model per tool, parsed from a model's JSON, and its function-calling schema.

A tool's arguments arrive as JSON text or a mapping from any agent (a reference agent, a chat model through the
openai-chat adapter). They are validated by the tool's model (unknown arguments are errors) before the tool runs;
``json_schema`` turns the same model into the schema a chat model is given, so the two cannot disagree.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from convoeval.errors import ConvoevalError


class ToolError(ConvoevalError, ValueError):
    """A tool was called with bad arguments, or with an id outside the session's clinic and patient."""


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class ForPatient(Args):
    # The tools act for the conversation's own patient unless told otherwise.
    patient_id: str | None = Field(
        default=None,
        description="Another patient's id from find_patient, to act for them: only after verify_identity succeeded "
        "for that patient in this conversation. Omit it for the patient in this conversation.",
    )


class GetPatient(ForPatient):
    pass


class FindPatient(Args):
    name: str | None = Field(default=None, description="Full name, or part of it (accents and case ignored).")
    cpf: str | None = Field(default=None, description="CPF, with or without punctuation.")
    phone: str | None = Field(default=None, description="Phone number, with or without punctuation.")


class ListAgenda(Args):
    limit: int = Field(default=10, ge=1, le=50, description="How many appointments, soonest first.")
    date: dt.date | None = Field(default=None, description="Only appointments from this day on (YYYY-MM-DD).")


class VerifyIdentity(Args):
    patient_id: Annotated[str, Field(min_length=1, description="The patient id from find_patient.")]
    cpf: Annotated[str, Field(min_length=1, description="The CPF the caller gave for that patient.")]
    birth_date: dt.date = Field(description="The date of birth the caller gave for that patient (YYYY-MM-DD).")


class ListInvoices(ForPatient):
    status: Literal["pending", "paid", "overdue", "cancelled", "all"] = Field(
        default="pending", description="Which invoices to list; 'all' lists every status."
    )


class CreatePaymentLink(ForPatient):
    invoice_id: Annotated[str, Field(min_length=1, description="The invoice id from list_invoices.")]
    method: Literal["pix", "boleto", "card"] = Field(description="The payment method the patient chose.")

    @field_validator("method", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        # Models write "Pix" or "PIX" as often as "pix"; the method is the same.
        return value.strip().lower() if isinstance(value, str) else value


class CheckAvailability(Args):
    service_id: str | None = Field(default=None, description="Only slots offered for this service.")
    professional_id: str | None = Field(default=None, description="Only this professional's slots.")
    date: dt.date | None = Field(default=None, description="Only slots on this day (YYYY-MM-DD).")


class ListAppointments(ForPatient):
    status: Literal["scheduled", "confirmed", "cancelled", "rescheduled", "completed", "no_show"] | None = Field(
        default=None, description="Only appointments with this status; all when omitted."
    )


class BookAppointment(ForPatient):
    slot_id: Annotated[str, Field(min_length=1, description="A free slot id from check_availability.")]
    service_id: str | None = Field(default=None, description="The service; defaults to the slot's service.")


class AppointmentId(ForPatient):
    appointment_id: Annotated[str, Field(min_length=1, description="The appointment id from list_appointments.")]


class CancelAppointment(AppointmentId):
    reason: str | None = Field(default=None, description="Why the patient cancels, in their words.")


class RescheduleAppointment(AppointmentId):
    new_slot_id: Annotated[str, Field(min_length=1, description="A free slot id from check_availability.")]


class RecordNps(Args):
    score: int = Field(ge=0, le=10, description="The patient's 0-10 answer to 'how likely are you to recommend us'.")
    comment: str | None = Field(default=None, description="The patient's comment, if any.")
    appointment_id: str | None = Field(default=None, description="The appointment the score is about, if known.")

    @field_validator("score", mode="before")
    @classmethod
    def _no_bool(cls, value: Any) -> Any:
        # pydantic's lax mode would read True as 1; a score is never a boolean.
        if isinstance(value, bool):
            raise ValueError("score must be a number from 0 to 10")
        return value


class Handoff(Args):
    reason: Annotated[str, Field(min_length=1, description="Why the patient needs a human, in one sentence.")]


def parse_arguments(name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError(f"{name}: arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    return dict(arguments)


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        message = "unknown argument" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def json_schema(args: type[Args]) -> dict[str, Any]:
    """A plain JSON schema for function calling: no titles, optional values without the ``null`` branch."""
    schema = args.model_json_schema()
    properties = {}
    for key, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k not in ("title", "default")}
        branches = [b for b in prop.pop("anyOf", []) if b.get("type") != "null"]
        if len(branches) == 1:
            prop = {**branches[0], **prop}
        properties[key] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": schema.get("required", []),
        "additionalProperties": False,
    }
