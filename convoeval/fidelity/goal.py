"""An unearned goal: the patient's ``[GOAL_COMPLETE]`` under failed assertions the agent never claimed to reach.

The database says an outcome was not reached; it does not say who is wrong. The agent's own messages do: an agent
that wrote a link, "booked" or "I'm passing you to our team" claimed the outcome (``convoeval.fidelity.claims``), so
the failure is the agent's, whatever the patient said after. An agent that claimed nothing left a patient who
declared the goal done on its own: a premature simulated patient. ``unearned`` decides that from the failed
assertion rows and the claim kinds the agent's messages hold; the gate's ``premature_goal`` check uses it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from convoeval.fidelity.claims import CLAIM_KINDS

__all__ = ["EARNED_BY", "claimed_kinds_phrase", "not_done", "unearned"]

#: The claims by which an agent says it reached each outcome assertion. Any URL counts for the payment
#: assertions: an agent that writes a link has claimed one. An assertion not listed (a plugin's) decides nothing:
#: the conversation stays the agent's.
EARNED_BY: dict[str, frozenset[str]] = {
    "payment_link_created": frozenset({"payment_link", "url", "paid"}),
    "payment_method": frozenset({"payment_link", "url", "paid"}),
    "invoice_status": frozenset({"payment_link", "url", "paid"}),
    "appointment_created": frozenset({"booked", "moved"}),
    "appointment_rescheduled": frozenset({"moved", "booked"}),
    "appointment_cancelled": frozenset({"cancelled"}),
    "appointment_confirmed": frozenset({"confirmed"}),
    "escalated_to_human": frozenset({"handoff"}),
    "nps_score_recorded": frozenset({"recorded"}),
    "nps_score": frozenset({"recorded"}),
}

_CLAIM_WORDS = {"payment_link": "payment link", "url": "URL", "paid": "payment confirmation", "amount": "amount",
                "booked": "booking", "moved": "rescheduling", "cancelled": "cancellation",
                "confirmed": "confirmation", "recorded": "recorded score", "handoff": "hand-off"}


def not_done(row: Mapping[str, Any]) -> bool:
    """Whether a failed assertion row asked for something the database shows not done (rather than done wrongly).

    ``escalated_to_human: false`` failing means a hand-off happened, ``payment_method: boleto`` failing with
    ``pix`` that a link was made: the agent acted. ``payment_link_created: true`` failing, or a method or score
    that is missing, means nothing was done.

    Example:
        >>> not_done({"assertion": "payment_link_created", "expected": True, "actual": False})
        True
        >>> not_done({"assertion": "escalated_to_human", "expected": False, "actual": True})
        False
    """
    expected, actual = row.get("expected"), row.get("actual")
    if expected is False:
        return False
    if row.get("assertion") == "invoice_status":
        return actual in ("pending", "overdue")
    return actual is None or actual is False or (isinstance(actual, (list, tuple)) and not actual)


def unearned(failed: Sequence[Mapping[str, Any]], claimed: Collection[str]) -> bool:
    """Whether a ``[GOAL_COMPLETE]`` under these failed outcome assertions is the patient's alone.

    Args:
        failed: the failed outcome assertion rows (``assertion``, ``expected``, ``actual``).
        claimed: the claim kinds found in the agent's messages (``agent_claims``).

    Returns:
        True when there is a failed assertion and every one of them is an outcome not done (``not_done``), known to
        ``EARNED_BY``, and never claimed by the agent. One the agent claimed, one it got wrong by acting, or one
        whose claims are unknown makes it False: the conversation stays the agent's.

    Example:
        >>> unearned([{"assertion": "payment_link_created", "expected": True, "actual": False}], {"amount"})
        True
        >>> unearned([{"assertion": "payment_link_created", "expected": True, "actual": False}], {"payment_link"})
        False
    """
    if not failed:
        return False
    for row in failed:
        kinds = EARNED_BY.get(str(row.get("assertion")))
        if kinds is None or not not_done(row) or kinds & set(claimed):
            return False
    return True


def claimed_kinds_phrase(failed: Sequence[Mapping[str, Any]]) -> str:
    """The claims that would have earned these failed assertions, in words ("payment link, URL or …")."""
    wanted = set().union(*(EARNED_BY.get(str(a.get("assertion")), frozenset()) for a in failed))
    words = [_CLAIM_WORDS[k] for k in CLAIM_KINDS if k in wanted]
    if not words:
        return "claim"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
