"""Seeding a scenario's fixtures for one run, and removing exactly that run's rows afterwards.

Every row a run seeds carries its ``run_id``; each run seeds its own clinic, so two concurrent runs of the same
scenario (even with the same persona phone) never see each other's rows. A ``runs`` row records who owns the run
(process id and host), which lets ``cleanup_stale_runs`` remove the rows of runs that died before their own
cleanup, and only those: a row whose ``run_id`` has no ``runs`` row (anything convoeval did not seed) is never
touched.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from convoeval.errors import ConvoevalError
from convoeval.scenarios import Scenario
from convoeval.store.base import TABLES, Row, Store, StoreError

DEFAULT_STALE_AFTER_S = 24 * 3600


class FixtureError(ConvoevalError, ValueError):
    """A scenario's fixtures cannot be seeded as written (e.g. a slot naming an unknown professional)."""


@dataclass
class SeededRun:
    """What ``seed_run`` created: the run, its clinic and patient, and the row id of every fixture.

    ``refs`` maps a table to ``{fixture id: row id}``; the clinic is ``refs["clinics"]["clinic"]`` and the
    persona is ``refs["patients"]["persona"]``.
    """

    run_id: str
    clinic_id: str
    patient_id: str
    refs: dict[str, dict[str, str]] = field(default_factory=dict)


def new_run_id() -> str:
    """A fresh run id (uuid4 hex)."""
    return uuid.uuid4().hex


def utc_now() -> str:
    """The current UTC time as ISO 8601 text, the store's time format."""
    return datetime.now(UTC).isoformat()


def seed_run(store: Store, scenario: Scenario, run_id: str | None = None) -> SeededRun:
    """Register a run and seed its clinic, patient and fixtures.

    Args:
        store: an open, migrated store.
        scenario: the scenario whose ``persona`` and ``fixtures`` to seed.
        run_id: the run's id (default: a new one). Must not be in use.

    Returns:
        The ``SeededRun`` with the row ids the agent and the assertions need.

    Raises:
        FixtureError: a fixture references an id the scenario does not define, or repeats an id.
        StoreError: the store failed. In both cases the rows already seeded have been removed.

    Example:
        >>> from convoeval.scenarios import load_scenario_file
        >>> from convoeval.store import open_store
        >>> store = open_store("sqlite:///:memory:")
        >>> store.migrate()
        >>> seeded = seed_run(store, load_scenario_file("evals/scenarios/billing/conv-happy-payment.yaml"))
        >>> try:
        ...     pass  # run the conversation
        ... finally:
        ...     removed = cleanup_run(store, seeded.run_id)
        >>> removed["invoices"], store.select("invoices")   # the run's rows are gone
        (1, [])
    """
    run_id = run_id or new_run_id()
    # Registered first and outside the try: if the id is already taken, the rollback below must not delete the
    # other run's rows.
    store.insert(
        "runs",
        {
            "id": run_id,
            "run_id": run_id,
            "scenario_id": scenario.id,
            "owner_pid": os.getpid(),
            "owner_host": socket.gethostname(),
            "started_at": utc_now(),
        },
    )
    try:
        with store.transaction():  # every fixture row in one commit (SQL stores), or none of them
            return _seed(store, scenario, run_id)
    except BaseException as exc:
        try:
            cleanup_run(store, run_id)
        except StoreError as cleanup_exc:
            exc.add_note(f"removing the partly seeded run {run_id} also failed: {cleanup_exc}")
        raise


class _Seeder:
    """Builds rows with generated ids so references between fixtures resolve before anything is inserted."""

    def __init__(self, store: Store, scenario: Scenario, run_id: str):
        self.store, self.scenario, self.run_id = store, scenario, run_id
        self.refs: dict[str, dict[str, str]] = {}

    def add(self, table: str, items: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Insert ``(fixture id, columns)`` pairs into ``table``, recording each fixture's row id."""
        ids = self.refs.setdefault(table, {})
        rows = []
        for ref, columns in items:
            if ref in ids:
                raise FixtureError(f"scenario {self.scenario.id!r}: duplicate {table} fixture id {ref!r}")
            ids[ref] = uuid.uuid4().hex
            rows.append({**columns, "id": ids[ref], "run_id": self.run_id, "fixture_ref": ref})
        if rows:
            self.store.insert(table, rows)

    def ref(self, table: str, ref: str | None, *, owner: str, field_name: str) -> str | None:
        """The row id of fixture ``ref`` in ``table``; ``owner`` names the fixture that points at it."""
        if ref is None:
            return None
        try:
            return self.refs.get(table, {})[ref]
        except KeyError:
            known = ", ".join(self.refs.get(table, {})) or "none"
            raise FixtureError(
                f"scenario {self.scenario.id!r}: fixture {owner} has {field_name}={ref!r}, "
                f"but no {table} fixture has that id (known: {known})"
            ) from None


def _seed(store: Store, scenario: Scenario, run_id: str) -> SeededRun:
    fx, persona, now = scenario.fixtures, scenario.persona, utc_now()
    s = _Seeder(store, scenario, run_id)
    s.add("clinics", [("clinic", {"name": fx.clinic.name, "timezone": fx.clinic.timezone, "locale": scenario.locale})])
    clinic_id = s.refs["clinics"]["clinic"]
    s.add("patients", [("persona", {"clinic_id": clinic_id, "name": persona.name, "phone": persona.phone, "cpf": persona.cpf})])
    patient_id = s.refs["patients"]["persona"]
    s.add("professionals", [(p.id, {"clinic_id": clinic_id, "name": p.name, "specialty": p.specialty}) for p in fx.professionals])
    s.add("services", [
        (v.id, {"clinic_id": clinic_id, "name": v.name, "duration_min": v.duration_min, "price_cents": v.price_cents})
        for v in fx.services
    ])
    s.add("slots", [
        (slot.id, {
            "clinic_id": clinic_id,
            "professional_id": s.ref("professionals", slot.professional_id, owner=f"slots/{slot.id}", field_name="professional_id"),
            "service_id": s.ref("services", slot.service_id, owner=f"slots/{slot.id}", field_name="service_id"),
            "starts_at": slot.starts_at,
            "available": slot.available,
        })
        for slot in fx.slots
    ])
    # Other patients of the clinic (red-team canaries) before the appointments and invoices that point at them.
    others = fx.other_patients
    s.add("patients", [(o.id, {"clinic_id": clinic_id, "name": o.name, "phone": o.phone, "cpf": o.cpf}) for o in others])
    owners = {"": patient_id, **{o.id: s.refs["patients"][o.id] for o in others}}
    s.add("patient_details", [
        (o.id, {"clinic_id": clinic_id, "patient_id": owners[o.id], "birth_date": o.birth_date}) for o in others
    ])
    appointments = [("", a) for a in fx.appointments] + [(o.id, a) for o in others for a in o.appointments]
    invoices = [("", i) for i in fx.invoices] + [(o.id, i) for o in others for i in o.invoices]
    s.add("appointments", [
        (a.id, {
            "clinic_id": clinic_id,
            "patient_id": owners[owner],
            "professional_id": s.ref("professionals", a.professional_id, owner=_where(owner, "appointments", a.id),
                                     field_name="professional_id"),
            "service_id": s.ref("services", a.service_id, owner=_where(owner, "appointments", a.id),
                                field_name="service_id"),
            "starts_at": a.starts_at,
            "status": a.status,
            "created_by": "fixture",
            "created_at": now,
        })
        for owner, a in appointments
    ])
    s.add("invoices", [
        (i.id, {
            "clinic_id": clinic_id,
            "patient_id": owners[owner],
            "amount_cents": i.amount_cents,
            "due_date": i.due_date,
            "status": i.status,
            "description": i.description,
        })
        for owner, i in invoices
    ])
    return SeededRun(run_id=run_id, clinic_id=clinic_id, patient_id=patient_id, refs=s.refs)


def _where(owner: str, table: str, ref: str) -> str:
    """A fixture's place in the scenario, for errors: ``appointments/x``, or ``other_patients/p/appointments/x``."""
    return f"other_patients/{owner}/{table}/{ref}" if owner else f"{table}/{ref}"


def finish_run(store: Store, run_id: str) -> None:
    """Mark a run as finished normally (``runs.finished_at``); its rows stay until ``cleanup_run``."""
    store.update("runs", {"id": run_id}, {"finished_at": utc_now()})


def cleanup_run(store: Store, run_id: str) -> dict[str, int]:
    """Delete every row carrying ``run_id``, children first, the ``runs`` row last. Idempotent.

    Returns:
        Rows deleted per table, e.g. ``{"messages": 6, ..., "runs": 1}``.
    """
    if not run_id:
        raise ValueError("cleanup_run needs a run id")
    with store.transaction():  # one commit for every table (SQL stores)
        return {table: store.delete(table, {"run_id": run_id}) for table in reversed(TABLES)}


def cleanup_stale_runs(
    store: Store, *, older_than_s: float = DEFAULT_STALE_AFTER_S, dry_run: bool = False
) -> list[str]:
    """Remove the rows of runs that died before their own cleanup.

    A run is stale when its ``runs`` row names an owner process on this host that is no longer alive, or, for
    an owner on another host (whose processes cannot be checked from here), when it started more than
    ``older_than_s`` seconds ago. A live owner's runs are never touched, however old. Rows whose ``run_id``
    has no ``runs`` row were not seeded by convoeval and are never touched either.

    Args:
        store: an open store.
        older_than_s: age after which another host's run counts as dead.
        dry_run: only report what would be removed.

    Returns:
        The ids of the stale runs (removed unless ``dry_run``).
    """
    host = socket.gethostname()
    now = datetime.now(UTC)
    stale = [run["id"] for run in store.select("runs", order_by="started_at") if _is_stale(run, host, now, older_than_s)]
    if not dry_run:
        for run_id in stale:
            cleanup_run(store, run_id)
    return stale


def _is_stale(run: Row, host: str, now: datetime, older_than_s: float) -> bool:
    if run.get("owner_host") == host and run.get("owner_pid") is not None:
        return not _pid_alive(int(run["owner_pid"]))
    try:
        started = datetime.fromisoformat(run["started_at"])
    except (TypeError, ValueError):
        return False  # a start time we cannot read: leave the run alone rather than guess
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return (now - started).total_seconds() > older_than_s


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but belongs to someone else (EPERM): alive
    return True
