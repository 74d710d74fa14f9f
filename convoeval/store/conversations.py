"""Conversations and messages in the store: the runner logs every message; assertions read the agent's tools.

The ``messages`` table is the database's record of what the agent did (``tools_called`` /
``tools_not_called`` are checked against it), so the runner records every agent reply here, tools included.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from convoeval.frames.schemas import MESSAGE_ROLES
from convoeval.store.base import Row, Store, StoreError
from convoeval.store.fixtures import SeededRun, utc_now


def ensure_conversation(store: Store, seeded: SeededRun, agent: str, conversation_id: str | None = None) -> str:
    """The id of the run's conversation ``conversation_id``, creating its row when it does not exist yet.

    Args:
        store: the run's store.
        seeded: the run (its clinic and patient own the conversation).
        agent: the agent name (billing, scheduling, ...).
        conversation_id: an id chosen by the agent (e.g. a webhook's own); a new one when None.

    Returns:
        The conversation id.

    Raises:
        StoreError: the id already belongs to another run's conversation.
    """
    if conversation_id is not None:
        existing = store.select("conversations", {"id": conversation_id})
        if existing:
            if existing[0]["run_id"] != seeded.run_id:
                raise StoreError(f"conversation {conversation_id!r} belongs to another run")
            return conversation_id
    row = {
        "run_id": seeded.run_id,
        "clinic_id": seeded.clinic_id,
        "patient_id": seeded.patient_id,
        "agent": agent,
        "started_at": utc_now(),
    }
    if conversation_id is not None:
        row["id"] = conversation_id
    created: str = store.insert("conversations", row)[0]["id"]
    return created


def record_message(
    store: Store,
    seeded: SeededRun,
    conversation_id: str,
    role: str,
    text: str,
    tools: Iterable[str] = (),
    turn: int = 0,
) -> Row:
    """Log one message of the run's conversation.

    Args:
        role: "patient" or "agent".
        text: the message (an agent reply's bubbles joined by newlines).
        tools: names of the tools the agent called for this reply (empty for patient messages).
        turn: the turn number, from 0.

    Returns:
        The stored ``messages`` row (``tools`` as JSON text).
    """
    if role not in MESSAGE_ROLES:
        raise ValueError(f"message role must be one of {', '.join(MESSAGE_ROLES)}, got {role!r}")
    return store.insert(
        "messages",
        {
            "run_id": seeded.run_id,
            "conversation_id": conversation_id,
            "role": role,
            "text": text,
            "tools": json.dumps(list(tools)),
            "turn": turn,
            "created_at": utc_now(),
        },
    )[0]


def agent_tools(store: Store, seeded: SeededRun) -> set[str]:
    """Every tool the agent called in the run's conversations (the union of its messages' ``tools``)."""
    called: set[str] = set()
    for conversation in store.select("conversations", {"clinic_id": seeded.clinic_id, "patient_id": seeded.patient_id}):
        for message in store.select("messages", {"conversation_id": conversation["id"], "role": "agent"}):
            called.update(json.loads(message["tools"] or "[]"))
    return called
