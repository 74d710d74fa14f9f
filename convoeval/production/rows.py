"""An imported conversation as the rows of an ordinary run: ``runs`` and ``transcripts``, ``source = production``.

The rows follow the frames' contracts (``convoeval.frames``) so ``load_results``, the report, the DataFrame verbs,
``label``, ``compare`` and the studies read an imported folder as they read a run. What is not known of a real
conversation is missing, never made up: no seed, no latency, no tokens, no score (``convoeval judge`` adds the
rubric, holistic and score rows). A turn is a patient's burst and the agent's messages after it (turn 0: what the
agent sent before the patient's first message, a reminder or a template).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from convoeval.fidelity.text import detect_language
from convoeval.frames.schemas import PRODUCTION
from convoeval.production.messages import ImportedConversation, ImportedMessage, stable_id
from convoeval.production.settings import ImportSettings

__all__ = ["IMPORTED_STOP", "conversation_locale", "conversation_payload"]

#: The ``stop_reason`` of an imported conversation: the log ended (how it ended for the patient is Sim2Real's).
IMPORTED_STOP = "imported"
_LOCALES = {"pt": "pt-BR", "en": "en", "es": "es"}


def conversation_locale(conversation: ImportedConversation) -> str | None:
    """The conversation's locale: what its source said, else the language its patient wrote in (pt, en, es)."""
    if conversation.locale:
        return conversation.locale
    said = " ".join(m.text for m in conversation.messages if m.role == "patient" and not m.text.startswith("["))
    language, _ = detect_language(said)
    return _LOCALES.get(language or "")


def _turns(messages: Iterable[ImportedMessage]) -> list[int]:
    turn, numbers, previous = 0, [], None
    for message in messages:
        if message.role == "patient" and previous != "patient":
            turn += 1
        numbers.append(turn)
        previous = message.role
    return numbers


def conversation_payload(conversation: ImportedConversation, settings: ImportSettings, *, index: int,
                         keep_original: bool = False) -> dict[str, Any]:
    """The payload saved as ``runs/<key>.json``: the ``runs`` and ``transcripts`` rows and what the import knows.

    Args:
        conversation: one imported (and perhaps scrubbed) conversation.
        settings: the import's settings (its ``agent`` and ``target``).
        index: the number of the source file in the import (the original file name is personal data).
        keep_original: also record the source file and the conversation's id in the source.
    """
    attributes = conversation.attributes
    run_id = str(attributes.get("run_id") or stable_id(conversation.format, conversation.source_file,
                                                       conversation.source_id))
    keys = {"run_id": run_id, "scenario": str(attributes.get("scenario") or conversation.key),
            "agent": str(attributes.get("agent") or settings.agent),
            "target": str(attributes.get("target") or settings.target),
            "seed": attributes.get("seed"), "trial": int(attributes.get("trial") or 1)}
    messages = conversation.messages
    times = [m.sent_at for m in messages if m.sent_at is not None]
    duration = (max(times) - min(times)).total_seconds() if len(times) > 1 and _comparable(times) else None
    transcripts = []
    for message, turn in zip(messages, _turns(messages), strict=True):
        transcripts.append({
            **keys, "turn": turn, "role": message.role, "text": message.text,
            "bubbles": [message.text], "parts": [dict(p) for p in message.parts],
            "tools": [c["name"] for c in message.tool_calls], "tool_calls": [dict(c) for c in message.tool_calls],
            "message_id": message.message_id,
            "sent_at": message.sent_at.isoformat() if message.sent_at is not None else None,
            "delivery": message.delivery})
    run = {**keys, "type": "conversational", "status": "completed", "stop_reason": IMPORTED_STOP,
           "goal_completed": None, "n_messages": len(messages), "duration_s": duration, "replayed_turns": 0,
           "attempt": 1, "superseded": False, "source": PRODUCTION}
    about: dict[str, Any] = {"format": conversation.format, "key": conversation.key, "file_index": index,
                             "locale": conversation_locale(conversation)}
    if conversation.statuses:
        about["statuses"] = dict(conversation.statuses)
    if keep_original:
        about.update(source_file=conversation.source_file, source_id=conversation.source_id)
        if "original_texts" in attributes:  # scrubbed: the words before, message by message (personal data)
            about["original_texts"] = list(attributes["original_texts"])
    return {"runs": [run], "transcripts": transcripts, "calls": [], PRODUCTION: about}


def _comparable(times: list[Any]) -> bool:
    return len({t.tzinfo is None for t in times}) == 1
