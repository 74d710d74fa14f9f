"""Claims backed by evidence: what the agent says it did, the tool log (or the store) must show.

Each agent message is read with ``convoeval.fidelity.claims.agent_claims`` (no LLM); every claim of a kind the
assertion lists must be backed by a successful tool call at or before that message:

* ``payment_link``: a URL must be one a ``create_payment_link`` call returned (or a link row of the run in the
  store); "here is your link" needs a ``create_payment_link`` call;
* ``booked``: ``book_appointment`` or ``reschedule_appointment``, or an appointment ``list_appointments`` returned
  at a time the message states (the patient's own, already booked); ``moved``: ``reschedule_appointment``;
  ``cancelled``: ``cancel_appointment``; ``confirmed``: ``confirm_appointment``; ``recorded``: ``record_nps``;
  ``handoff``: ``handoff_to_human``;
* ``amount``: the amount is one a tool returned (any ``*_cents`` value, or an amount written in a result) or one of
  the run's invoices and services in the store;
* ``time``: a message that claims a booking or a move and states clock times states the time of the slot the
  latest ``book_appointment`` / ``reschedule_appointment`` wrote.

``backed_by`` in the assertion names other tools per kind, for agents whose tools are not the clinic's (a
restaurant's ``create_reservation`` backing "booked"; its result's ``starts_at`` gives the time).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from convoeval.fidelity.claims import agent_claims, amount_cents, stated_times
from convoeval.pathcheck.context import PathContext, result
from convoeval.pathcheck.log import Call
from convoeval.scenarios.path_models import ClaimsCheck, path_key
from convoeval.store.assertions import AssertionResult

__all__ = ["BACKED_BY", "check_claims"]

#: Claim kind -> the tools whose successful call backs it.
BACKED_BY: dict[str, tuple[str, ...]] = {
    "payment_link": ("create_payment_link",),
    "booked": ("book_appointment", "reschedule_appointment"),
    "moved": ("reschedule_appointment",),
    "cancelled": ("cancel_appointment",),
    "confirmed": ("confirm_appointment",),
    "recorded": ("record_nps",),
    "handoff": ("handoff_to_human",),
}
_CLOCK = re.compile(r"[T ](\d{2}):(\d{2})")
_MONEY = re.compile(r"\d[.,]\d{2}\b|R\$|\$|€|£|reais|d[oó]lares|dollars|pesos|euros", re.IGNORECASE)


def _values(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, scalar) pair inside a tool result, nested mappings and lists included."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(v, (Mapping, list, tuple)):
                yield from _values(v)
            else:
                yield str(k), v
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _values(v)


def _result_amounts(call: Call) -> set[int]:
    """The amounts in cents one tool result holds: ``*_cents`` values, and amounts written in its strings."""
    amounts: set[int] = set()
    for key, value in _values(call.result):
        if key.endswith("_cents") and isinstance(value, int) and not isinstance(value, bool):
            amounts.add(value)
        elif isinstance(value, str) and _MONEY.search(value):
            amounts.update(a for a in (amount_cents(c.quote) for c in agent_claims(value) if c.kind == "amount")
                           if a is not None)
    return amounts


def _known_amounts(calls: list[Call], ctx: PathContext, cache: dict[str, Any]) -> set[int]:
    # Per check: each call's amounts are read once, the store's once (two queries).
    per_call: dict[int, set[int]] = cache.setdefault("amounts", {})
    amounts: set[int] = set()
    for call in calls:
        if call.index not in per_call:
            per_call[call.index] = _result_amounts(call)
        amounts |= per_call[call.index]
    if "stored" not in cache:
        stored: set[int] = set()
        if ctx.store is not None and ctx.seeded is not None:
            seeded = ctx.seeded
            stored.update(r["amount_cents"] for r in ctx.store.select(
                "invoices", {"clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}))
            stored.update(r["price_cents"] for r in ctx.store.select("services", {"clinic_id": seeded.clinic_id}))
        cache["stored"] = stored
    known: set[int] = amounts | cache["stored"]
    return known


def _stored_urls(ctx: PathContext) -> set[str]:
    if ctx.store is None or ctx.seeded is None:
        return set()
    seeded = ctx.seeded
    return {r["url"] for r in ctx.store.select("payment_links", {"clinic_id": seeded.clinic_id,
                                                                  "patient_id": seeded.patient_id})}


def _clock(starts_at: Any) -> str | None:
    match = _CLOCK.search(str(starts_at or ""))
    return f"{match.group(1)}:{match.group(2)}" if match else None


def _unbacked(kind: str, quote: str, text: str, calls: list[Call], ctx: PathContext,
              cache: dict[str, Any], backed_by: dict[str, tuple[str, ...]]) -> str | None:
    """Why this claim is not backed by the calls made so far, or None when it is."""
    done = [c for c in calls if c.ok]
    if kind == "payment_link" and quote.lower().startswith(("http", "www.")):
        tools = backed_by["payment_link"]
        urls = {v for c in done if c.name in tools for k, v in _values(c.result) if k == "url"}
        if quote not in urls and quote not in cache.setdefault("urls", _stored_urls(ctx)):
            return f"no {' or '.join(tools)} call returned this URL"
        return None
    if kind == "amount":
        cents = amount_cents(quote)
        if cents is None or cents not in _known_amounts(done, ctx, cache):
            return "no tool result or fixture has this amount"
        return None
    needed = backed_by.get(kind)
    if needed and not any(c.name in needed for c in done):
        if kind == "booked" and _existing(text, done):
            return None  # "your appointment is booked for <time>": one a tool listed, at the time the message says
        return f"no successful {' or '.join(needed)} call before it"
    return None


def _existing(text: str, calls: list[Call]) -> bool:
    """Whether the message states the time of an appointment a tool returned (one the patient already has)."""
    said = set(stated_times(text))
    listed = {_clock(v) for c in calls if c.name == "list_appointments" for k, v in _values(c.result)
              if k == "starts_at"}
    return bool(said & listed)


def _time_problem(text: str, calls: list[Call], writing: set[str]) -> tuple[str, str] | None:
    """(said, written) when a booking/moving message states times and none is the written slot's time."""
    writes = [c for c in calls if c.ok and c.name in writing]
    said = stated_times(text)
    if not writes or not said:
        return None
    written = next((_clock(v) for k, v in _values(writes[-1].result) if k == "starts_at"), None)
    if written is None or written in said:
        return None
    return ", ".join(said), written


def check_claims(check: ClaimsCheck, ctx: PathContext) -> AssertionResult:
    """Every claim of the listed kinds in the agent's messages is backed by the tool log (or the store)."""
    key, kinds = path_key(check), set(check.kinds)
    backed_by: dict[str, tuple[str, ...]] = {**BACKED_BY,
                                             **{k: tuple(v) for k, v in (check.backed_by or {}).items()}}
    writing = set(backed_by["booked"]) | set(backed_by["moved"])
    problems: list[str] = []
    calls: list[Call] = []
    cache: dict[str, Any] = {}
    for turn in ctx.log.turns:
        calls += turn.calls  # a reply's tools run before its text is sent: they back it
        if not turn.agent:
            continue
        claims = agent_claims(turn.agent, ctx.locale)
        for claim in claims:
            if claim.kind in kinds:
                why = _unbacked(claim.kind, claim.quote, turn.agent, calls, ctx, cache, backed_by)
                if why:
                    problems.append(f"turn {turn.turn}: {claim.kind} {claim.quote!r}: {why}")
        if "time" in kinds and any(c.kind in ("booked", "moved") for c in claims):
            wrong = _time_problem(turn.agent, calls, writing)
            if wrong:
                problems.append(f"turn {turn.turn}: time {wrong[0]!r}: the slot written is at {wrong[1]}")
    expected = f"every {', '.join(check.kinds)} claim backed"
    if problems:
        return result(key, expected, problems, False, "; ".join(problems))
    return result(key, expected, [], True, "every claim backed by the tool log")
