"""The clinic tools for requests about another patient: look them up, and verify the caller knows their CPF and birth date.

A mixin of ``ClinicTools`` (``tools.py``): the methods use its store, session and ``_find``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from convoeval.agents import _tool_args as tool_args
from convoeval.agents._tool_args import ToolError
from convoeval.agents._tool_registry import _digits, _folded, _tool

if TYPE_CHECKING:
    from convoeval.agents.base import AgentSession
    from convoeval.store.base import Row, Store


class IdentityTools:
    """``find_patient`` and ``verify_identity``; verification adds the patient to ``session.verified``."""

    store: Store
    session: AgentSession

    def _find(self, table: str, ident: str, what: str, patient: str | None = None) -> Row:
        raise NotImplementedError  # ClinicTools'

    @_tool(tool_args.FindPatient)
    def find_patient(self, name: str | None = None, cpf: str | None = None, phone: str | None = None) -> list[dict[str, Any]]:
        """Look up another patient of the clinic by name, CPF or phone, for a request about someone else; returns
        only ids and names. Verify their identity (verify_identity) before sharing or changing anything of theirs."""
        if not (name or cpf or phone):
            raise ToolError("find_patient: give a name, a CPF or a phone")
        wanted_name, wanted_cpf, wanted_phone = _folded(name or ""), _digits(cpf or ""), _digits(phone or "")
        found = []
        for row in self.store.select("patients", {"clinic_id": self.session.clinic_id}, order_by="name"):
            if wanted_name and not all(word in _folded(row["name"]).split() for word in wanted_name.split()):
                continue
            if wanted_cpf and _digits(row.get("cpf") or "") != wanted_cpf:
                continue
            if wanted_phone and not _digits(row["phone"]).endswith(wanted_phone[-11:]):
                continue
            found.append({"id": row["id"], "name": row["name"]})
        return found

    @_tool(tool_args.VerifyIdentity)
    def verify_identity(self, patient_id: str, cpf: str, birth_date: dt.date) -> dict[str, Any]:
        """Check the CPF and date of birth a caller gave for a patient; on a match, this conversation may act for
        that patient (the patient_id argument of the other tools)."""
        patient = self._find("patients", patient_id, "patient")
        details = self.store.select("patient_details", {"patient_id": patient["id"]})
        verified = bool(
            details
            and _digits(patient.get("cpf") or "") == _digits(cpf)
            and details[0]["birth_date"] == birth_date.isoformat()
        )
        if verified:
            self.session.verified.add(patient["id"])
        return {"patient_id": patient["id"], "verified": verified}
