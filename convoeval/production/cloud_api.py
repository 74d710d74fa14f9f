"""WhatsApp Cloud API logs: JSON lines of the webhooks the platform delivered and of the messages the bot sent.

A line is one of:

* a webhook body as Meta documents it (``{"object": "whatsapp_business_account", "entry": [{"changes": [{"value":
  {"metadata", "contacts", "messages" | "statuses"}}]}]}``): the patient's messages (text, interactive
  ``button_reply``/``list_reply``, a template's quick-reply ``button``, image, audio, voice, video, document,
  sticker, location, contacts, reaction) and the statuses of the bot's messages (sent, delivered, read, failed);
* a message the bot sent: the Send Message API's request body (``{"messaging_product": "whatsapp", "to", "type",
  …}``), with the ``id`` the API returned (``id``, or ``response.messages[0].id``) and its ``timestamp`` (Unix
  seconds or ISO) as the bot's log adds them, or wrapped as ``{"request": {…}, "response": {…}, "timestamp"}``.

Messages are grouped by the patient's ``wa_id`` and split at a silence longer than ``split_after``. A message id
seen again is a redelivery (the platform delivers at least once): it is kept, ``delivery = redelivered``, as the
channel's columns record one. The shapes follow ``convoeval.channel.parts`` (which follow pywa's models).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from convoeval.production.grouping import split_by_silence
from convoeval.production.messages import ImportedConversation, ImportedMessage, ReadResult, SkippedLine, stable_id
from convoeval.production.settings import ImportSettings

__all__ = ["looks_like_cloud_api", "read_cloud_api"]

FORMAT = "cloud-api"
_MEDIA = {"image": "image", "sticker": "image", "audio": "audio", "voice": "audio", "video": "document",
          "document": "document"}


def looks_like_cloud_api(first: Mapping[str, Any]) -> bool:
    """Whether a file's first JSON object is a webhook body or a sent message."""
    body = first.get("request") if isinstance(first.get("request"), Mapping) else first
    return first.get("object") == "whatsapp_business_account" or (
        isinstance(body, Mapping) and body.get("messaging_product") == "whatsapp")


def read_cloud_api(path: Path, settings: ImportSettings) -> ReadResult:
    """Read one JSON-lines log of webhooks and sent messages into conversations, one per patient and silence."""
    result = ReadResult()
    by_patient: dict[str, list[ImportedMessage]] = {}
    statuses: dict[str, str] = {}
    seen: set[str] = set()
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
                found = list(_read_record(record, number, statuses))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                result.skipped.append(SkippedLine(str(path), number, f"unreadable Cloud API record: {_why(exc)}"))
                continue
            for patient, message in found:
                wamid = message.message_id
                if wamid is not None and message.role == "patient":
                    if wamid in seen:
                        message = _redelivered(message)
                    seen.add(wamid)
                by_patient.setdefault(patient, []).append(message)
    for patient, messages in by_patient.items():
        messages.sort(key=lambda m: (m.sent_at or datetime.min.replace(tzinfo=timezone.utc), m.line or 0))
        for index, run in enumerate(split_by_silence(messages, settings.split_after)):
            ids = {m.message_id for m in run if m.role == "agent" and m.message_id}
            result.conversations.append(ImportedConversation(
                key=f"wa-{stable_id(FORMAT, path.name, patient, index)[:12]}", format=FORMAT, source_file=str(path),
                source_id=f"{patient}#{index + 1}", messages=tuple(run),
                statuses={i: s for i, s in statuses.items() if i in ids}))
    return result


def _why(exc: Exception) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__


def _read_record(record: Mapping[str, Any], line: int, statuses: dict[str, str]
                 ) -> Iterator[tuple[str, ImportedMessage]]:
    if record.get("object") == "whatsapp_business_account":
        for entry in record["entry"]:
            for change in entry["changes"]:
                value = change["value"]
                names = {c.get("wa_id"): (c.get("profile") or {}).get("name") for c in value.get("contacts") or []}
                for status in value.get("statuses") or []:
                    statuses[str(status["id"])] = str(status["status"])
                for message in value.get("messages") or []:
                    patient = str(message["from"])
                    yield patient, _inbound(message, names.get(patient) or patient, line)
        return
    body = record["request"] if isinstance(record.get("request"), Mapping) else record
    if body.get("messaging_product") != "whatsapp" or "to" not in body:
        raise ValueError("neither a webhook body (object: whatsapp_business_account) nor a sent message (to:)")
    response = record.get("response") if isinstance(record.get("response"), Mapping) else {}
    sent = (response.get("messages") or [{}])[0] if response else {}
    message_id = record.get("id") or body.get("id") or sent.get("id")
    yield str(body["to"]), _outbound(body, message_id, record.get("timestamp") or body.get("timestamp"), line)


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isdigit()):
        return datetime.fromtimestamp(int(value), tz=timezone.utc)
    when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _inbound(message: Mapping[str, Any], sender: str, line: int) -> ImportedMessage:
    kind = message["type"]
    when = _time(message.get("timestamp"))
    part: dict[str, Any]
    if kind == "text":
        text = str(message["text"]["body"])
        part = {"type": "text", "text": text}
    elif kind == "interactive":
        chosen = message["interactive"].get("button_reply") or message["interactive"].get("list_reply")
        if not chosen:
            raise ValueError(f"interactive message without button_reply or list_reply: {message['interactive']}")
        part = {"type": "reply", "id": str(chosen["id"]), "title": str(chosen.get("title") or chosen["id"])}
        text = part["title"]
    elif kind == "button":  # a template's quick-reply button
        part = {"type": "reply", "id": str(message["button"].get("payload") or message["button"]["text"]),
                "title": str(message["button"]["text"])}
        text = part["title"]
    elif kind in _MEDIA:
        media = message[kind]
        media_kind = "audio" if media.get("voice") else _MEDIA[kind]
        name = str(media.get("filename") or f"{media.get('id', kind)}.{_extension(media.get('mime_type'), kind)}")
        part = {"type": "media", "kind": media_kind, "path": f"media/{Path(name).name}"}
        if media.get("caption") and media_kind != "audio":
            part["caption"] = str(media["caption"])
        text = f"[{media_kind}: {Path(name).name}]" + (f" {media['caption']}" if media.get("caption") else "")
    elif kind == "location":
        where = message["location"]
        text = "[location] " + ", ".join(str(where[k]) for k in ("name", "address") if where.get(k))
        part = {"type": "text", "text": text}
    elif kind == "contacts":
        text = "[contact] " + ", ".join(str((c.get("name") or {}).get("formatted_name", "")) for c in message["contacts"])
        part = {"type": "text", "text": text}
    elif kind == "reaction":
        text = f"[reaction {message['reaction'].get('emoji', '')}]"
        part = {"type": "text", "text": text}
    else:
        raise ValueError(f"message type {kind!r} is not one convoeval reads")
    return ImportedMessage("patient", text, when, (part,), str(message["id"]), "delivered", (), sender, line)


def _outbound(body: Mapping[str, Any], message_id: Any, when: Any, line: int) -> ImportedMessage:
    kind = body["type"]
    part: dict[str, Any]
    if kind == "text":
        part = {"type": "text", "text": str(body["text"]["body"])}
        text = part["text"]
    elif kind == "interactive":
        inner = body["interactive"]
        words = str((inner.get("body") or {}).get("text", ""))
        if inner["type"] == "button":
            buttons = [{"id": str(b["reply"]["id"]), "title": str(b["reply"]["title"])}
                       for b in inner["action"]["buttons"]]
            part = {"type": "buttons", "body": words, "buttons": buttons}
            text = words + "\n" + " ".join(f"[{b['title']}]" for b in buttons)
        elif inner["type"] == "list":
            sections: list[dict[str, Any]] = [{**({"title": str(s["title"])} if s.get("title") else {}),
                         "rows": [{"id": str(r["id"]), "title": str(r["title"]),
                                   **({"description": str(r["description"])} if r.get("description") else {})}
                                  for r in s["rows"]]} for s in inner["action"]["sections"]]
            part = {"type": "list", "body": words, "button": str(inner["action"]["button"]), "sections": sections}
            rows = "; ".join(r["title"] for s in sections for r in s["rows"])
            text = f"{words}\n[{inner['action']['button']}: {rows}]"
        else:
            raise ValueError(f"interactive type {inner['type']!r} is not one convoeval reads")
    elif kind == "template":
        template = body["template"]
        parameters = [str(p.get("text", "")) for c in template.get("components") or [] for p in c.get("parameters") or []
                      if p.get("type") == "text"]
        language = str((template.get("language") or {}).get("code", ""))
        part = {"type": "template", "name": str(template["name"]), **({"language": language} if language else {}),
                "parameters": parameters}
        text = f"[template {template['name']}" + (f": {', '.join(parameters)}]" if parameters else "]")
    elif kind in _MEDIA:
        media = body[kind]
        name = str(media.get("filename") or Path(str(media.get("link") or media.get("id") or kind)).name)
        part = {"type": "media", "kind": _MEDIA[kind], "path": f"media/{name}"}
        if media.get("caption") and _MEDIA[kind] != "audio":
            part["caption"] = str(media["caption"])
        text = f"[{_MEDIA[kind]}: {name}]" + (f" {media['caption']}" if media.get("caption") else "")
    else:
        raise ValueError(f"sent message type {kind!r} is not one convoeval reads")
    return ImportedMessage("agent", text, _time(when), (part,), str(message_id) if message_id else None, "reply",
                           (), None, line)


def _extension(mime: Any, kind: str) -> str:
    if isinstance(mime, str) and "/" in mime:
        return mime.split("/", 1)[1].split(";", 1)[0].strip() or kind
    return kind


def _redelivered(message: ImportedMessage) -> ImportedMessage:
    return ImportedMessage(message.role, message.text, message.sent_at, message.parts, message.message_id,
                           "redelivered", message.tool_calls, message.sender, message.line)
