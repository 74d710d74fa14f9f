"""The ``whatsapp_limits`` assertion: every message the agent sent is one WhatsApp would deliver.

Read from the conversation's recorded messages (their ``parts``), with no LLM and no database, like the path
assertions: a message over a platform limit (``convoeval.channel.limits``) is never seen by the patient, so it is a
failed assertion naming the limit, turn and message, not an error of the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from convoeval.channel import PartError, recorded_parts, reply_violations
from convoeval.store.assertions import AssertionResult

__all__ = ["LIMITS_KEY", "check_whatsapp_limits", "limit_violations"]

LIMITS_KEY = "whatsapp_limits"


def limit_violations(rows: Iterable[Mapping[str, Any]]) -> tuple[int, list[str]]:
    """How many agent messages a conversation's rows hold, and every WhatsApp limit they break (``turn N, …``)."""
    count, found = 0, []
    for row in rows:
        if row.get("role") != "agent":
            continue
        where = f"turn {row.get('turn')}"
        try:
            parts = recorded_parts(row.get("parts"), row.get("bubbles"), row.get("text"))
        except PartError as exc:  # a hand-edited results folder: said, never read as a pass
            found.append(f"{where}: its parts cannot be read ({exc})")
            continue
        count += len(parts)
        found += [f"{where}, {problem}" for problem in reply_violations(parts)]
    return count, found


def check_whatsapp_limits(rows: Iterable[Mapping[str, Any]], expected: bool | None) -> list[AssertionResult]:
    """The ``whatsapp_limits`` result of one conversation (none when the scenario does not set the key).

    Args:
        rows: the conversation's transcript rows (``role``, ``turn``, ``parts`` or ``bubbles``).
        expected: the scenario's value: ``true`` (every message within the limits, the usual) or ``false`` (a
            message over a limit is expected: a test of the check itself); ``None``: not checked.

    Returns:
        One ``AssertionResult``; ``actual`` is whether every agent message was within the limits, and the detail
        names each limit broken.

    Example:
        >>> rows = [{"turn": 1, "role": "agent", "parts": [{"type": "buttons", "body": "Pagar como?", "buttons": [
        ...     {"id": "pix", "title": "Pix"}, {"id": "card", "title": "Cartão de crédito em 12x"}]}]}]
        >>> check_whatsapp_limits(rows, True)[0].detail
        "whatsapp_limits: turn 1, message 1 (buttons): button title 'Cartão de crédito em 12x' is 24 characters (at most 20)"
    """
    if expected is None:
        return []
    count, found = limit_violations(rows)
    within = not found
    if found:
        detail = f"{LIMITS_KEY}: " + "; ".join(found)
        if not expected:
            detail += " (a message over a limit was expected)"
    elif expected:
        detail = f"{LIMITS_KEY}: all {count} agent messages within WhatsApp's limits"
    else:
        detail = f"{LIMITS_KEY}: expected a message over a WhatsApp limit, all {count} were within"
    return [AssertionResult(key=LIMITS_KEY, expected=expected, actual=within, passed=within == expected,
                            detail=detail)]
