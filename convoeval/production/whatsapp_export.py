"""WhatsApp chat exports (``.txt``, or the ``.zip`` with its media), Android's and iOS's, in pt-BR, en and es.

An export is one chat as the phone renders it: a header per message (``03/11/2026 14:05 - Ana: Oi`` on Android,
``[03/11/2026, 14:05:12] Ana: Oi`` on iOS), continuation lines for a message over several lines, lines the app writes
itself, media left out or attached. The date order is read from the file (a day over 12 tells; else a 12-hour clock
without dots says month first, as en-US phones write it) unless ``--date-order`` says it. Which sender is the clinic
is the import's ``--agent-name`` or ``--agent-phone``; every other sender is the patient side. A chat is split into
conversations at a silence longer than ``split_after``.

Why not ``whatstk``: ``docs/decisions.md`` ("WhatsApp exports: our own reader").
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from convoeval.production.grouping import folded_name, same_phone, split_by_silence
from convoeval.production.messages import ImportedConversation, ImportedMessage, ReadResult, SkippedLine, stable_id
from convoeval.production.settings import ImportSettingError, ImportSettings
from convoeval.production.whatsapp_words import ATTACHED, DELETED, EDITED, OMITTED, SYSTEM, match_header, media_kind

__all__ = ["looks_like_export", "read_export"]

FORMAT = "whatsapp-export"
_MARKS = "\u200e\u200f\u202a\u202c\ufeff"
_LOCALE_WORDS = (("pt-BR", re.compile(r"ponta a ponta|M[íi]dia oculta|arquivo anexado|anexado:|ocultad|mudou de",
                                      re.I)),
                 ("es", re.compile(r"extremo a extremo|Multimedia omitido|archivo adjunto|adjunto:|omitid|cambi[óo]",
                                   re.I)),
                 ("en", re.compile(r"end-to-end|Media omitted|file attached|attached:|omitted|changed their", re.I)))


@dataclass
class _Raw:
    line: int
    date: str
    time: str
    ampm: str | None
    rest: str
    more: list[str] = field(default_factory=list)


def looks_like_export(head: str) -> bool:
    """Whether text (a file's first lines) holds a chat export's message header."""
    return any(match_header(line) for line in head.splitlines()[:50])


def read_export(path: Path, settings: ImportSettings) -> ReadResult:
    """Read one chat export (``.txt``, or a ``.zip`` holding one) into conversations.

    Raises:
        ImportSettingError: neither ``agent_name`` nor ``agent_phone`` is set, or neither matches a sender (the
            message lists the senders).
    """
    media: set[str] = set()
    if path.suffix.lower() == ".zip":
        with zipfile.ZipFile(path) as archive:
            chats = [n for n in archive.namelist() if n.lower().endswith(".txt")]
            if not chats:
                raise ImportSettingError(f"{path}: a .zip without the chat's .txt (a WhatsApp export holds one)")
            text = archive.read(chats[0]).decode("utf-8-sig", errors="replace")
            media = {Path(n).name for n in archive.namelist() if n not in chats}
    else:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    result = ReadResult()
    raws = _headers(io.StringIO(text), str(path), result.skipped)
    order = settings.date_order or _date_order(raws)
    messages: list[ImportedMessage] = []
    senders: list[str] = []
    for raw in raws:
        when = _when(raw, order)
        if when is None:
            result.skipped.append(SkippedLine(str(path), raw.line, f"no such date or time: {raw.date} {raw.time}"))
            continue
        sender, said = _split_sender(raw.rest)
        body = "\n".join([said, *raw.more]) if sender is not None else raw.rest
        if sender is None or SYSTEM.search(body):
            continue  # a line the app wrote: not a message of either side
        if sender not in senders:
            senders.append(sender)
        message = _message(sender, body, when, raw.line, media)
        if message is not None:
            messages.append(message)
    agents = _agent_senders(senders, settings, path)
    messages = [_with_role(m, "agent" if m.sender in agents else "patient") for m in messages]
    locale = _locale(text)
    for index, run in enumerate(split_by_silence(messages, settings.split_after)):
        source_id = f"{path.name}#{index + 1}"
        result.conversations.append(ImportedConversation(
            key=f"wa-{stable_id(FORMAT, path.name, index)[:12]}", format=FORMAT, source_file=str(path),
            source_id=source_id, messages=tuple(run), locale=locale,
            attributes={"media_files": sorted(media)} if media else {}))
    return result


def _headers(lines: Iterable[str], where: str, skipped: list[SkippedLine]) -> list[_Raw]:
    raws: list[_Raw] = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        found = match_header(line)
        if found:
            raws.append(_Raw(number, found.group("date"), found.group("time"), found.group("ampm"), found.group("rest")))
        elif raws:
            raws[-1].more.append(line)
        elif line.strip(_MARKS + " \t"):
            skipped.append(SkippedLine(where, number, "text before the first message header"))
    return raws


def _numbers(date: str) -> list[int]:
    return [int(x) for x in re.split(r"[./-]", date)]


def _date_order(raws: list[_Raw]) -> str:
    """``ymd``, ``dmy`` or ``mdy``: what the file's dates say, else what its clock says."""
    dates = [_numbers(r.date) for r in raws]
    if dates and all(d[0] > 31 for d in dates):
        return "ymd"
    if any(d[0] > 12 for d in dates):
        return "dmy"
    if any(d[1] > 12 for d in dates):
        return "mdy"
    # Every day ≤ 12: a bare AM/PM (no dots) is en-US, which writes the month first; pt-BR, es and en-GB do not.
    plain_ampm = any(r.ampm and "." not in r.ampm for r in raws)
    return "mdy" if plain_ampm else "dmy"


def _when(raw: _Raw, order: str) -> datetime | None:
    a, b, c = _numbers(raw.date)
    year, month, day = {"ymd": (a, b, c), "dmy": (c, b, a), "mdy": (c, a, b)}[order]
    if year < 100:
        year += 2000
    clock = [int(x) for x in re.split(r"[:.]", raw.time)]
    hour, minute, second = clock[0], clock[1], clock[2] if len(clock) > 2 else 0
    if raw.ampm:
        pm = raw.ampm.strip().lower().startswith("p")
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if pm else 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


def _split_sender(rest: str) -> tuple[str | None, str]:
    if ": " not in rest:
        return None, rest
    sender, said = rest.split(": ", 1)
    return sender.strip(_MARKS + " "), said


def _message(sender: str, body: str, when: datetime, line: int, media: set[str]) -> ImportedMessage | None:
    body = EDITED.sub("", body.strip(_MARKS)).strip(_MARKS + " ")
    if DELETED.match(body) or not body:
        return None
    omitted = OMITTED.match(body)
    if omitted:
        # Android does not say which kind it left out: a document, the kind that claims nothing about its content.
        word = omitted.group("kind") or "media"
        kind = media_kind(word) if omitted.group("kind") else "document"
        omitted_part = {"type": "media", "kind": kind, "path": f"media/omitted-{folded_name(word).replace(' ', '-')}"}
        shown = f"[{kind if omitted.group('kind') else 'media'} omitted]"
        return ImportedMessage("patient", shown, when, (omitted_part,), sender=sender, line=line)
    attached = ATTACHED.match(body)
    if attached:
        name = (attached.group("ios") or attached.group("android")).strip()
        kind = media_kind(name)
        caption = (attached.group("caption") or "").strip() or None
        part: dict[str, object] = {"type": "media", "kind": kind, "path": f"media/{Path(name).name}"}
        if caption and kind != "audio":
            part["caption"] = caption
        shown = f"[{kind}: {Path(name).name}]" + (f" {caption}" if caption else "")
        return ImportedMessage("patient", shown, when, (part,), sender=sender, line=line)
    return ImportedMessage("patient", body, when, ({"type": "text", "text": body},), sender=sender, line=line)


def _agent_senders(senders: list[str], settings: ImportSettings, path: Path) -> set[str]:
    if not settings.agent_name and not settings.agent_phone:
        raise ImportSettingError(
            f"{path}: which sender is the clinic? give --agent-name or --agent-phone (its senders: "
            + ", ".join(repr(s) for s in senders[:6]) + ")")
    chosen = {s for s in senders
              if (settings.agent_name and folded_name(s) == folded_name(settings.agent_name))
              or (settings.agent_phone and same_phone(s, settings.agent_phone))}
    if not chosen and senders:
        named = settings.agent_name or settings.agent_phone
        raise ImportSettingError(f"{path}: no sender is {named!r} (its senders: "
                                 + ", ".join(repr(s) for s in senders[:6]) + ")")
    return chosen


def _with_role(message: ImportedMessage, role: str) -> ImportedMessage:
    delivery = "delivered" if role == "patient" else "reply"
    return ImportedMessage(role, message.text, message.sent_at, message.parts, None, delivery, (), message.sender,
                           message.line)


def _locale(text: str) -> str | None:
    head = text[:20000]
    for locale, words in _LOCALE_WORDS:
        if words.search(head):
            return locale
    return None
