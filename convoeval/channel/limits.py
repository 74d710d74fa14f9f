"""WhatsApp's limits on the messages a business sends: a message over one is rejected, the patient never sees it.

Sources: the WhatsApp Business Cloud API's message reference (interactive reply buttons and list messages, media,
templates), as ``pywa`` documents them on its ``Button``, ``SectionList``, ``Section`` and ``SectionRow``, and
``/work/shared/notes/whatsapp-channel.md``. Each violation is one sentence naming the limit, so the failed
``whatsapp_limits`` assertion says which rule the agent broke (docs/assertions.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from convoeval.channel.parts import (
    ButtonsPart,
    ListPart,
    MediaPart,
    Part,
    ReplyPart,
    TemplatePart,
    TextPart,
)

__all__ = ["WHATSAPP_LIMITS", "part_violations", "reply_violations"]

#: Limit name -> the number WhatsApp allows (characters for texts, items for counts).
WHATSAPP_LIMITS: dict[str, int] = {
    "text": 4096,  # a text message's body
    "buttons": 3,  # reply buttons in one message
    "button_title": 20,
    "button_id": 256,
    "buttons_body": 1024,
    "header": 60,  # an interactive message's text header
    "footer": 60,
    "list_button": 20,  # the label of the button that opens a list
    "list_body": 4096,
    "list_sections": 10,
    "list_rows": 10,  # rows of all sections together
    "section_title": 24,
    "row_title": 24,
    "row_description": 72,
    "row_id": 200,
    "caption": 1024,  # an image's or a document's caption
    "template_name": 512,
}
_L = WHATSAPP_LIMITS
_TEMPLATE_NAME = re.compile(r"^[a-z0-9_]+$")


def _long(what: str, text: str | None, limit: str) -> list[str]:
    if text is None or len(text) <= _L[limit]:
        return []
    return [f"{what} is {len(text):,} characters (at most {_L[limit]:,})"]


def _titled(what: str, text: str, limit: str) -> list[str]:
    """A required short text: present and within its limit."""
    if not text.strip():
        return [f"{what} is empty"]
    return _long(what, text, limit)


def _duplicates(what: str, values: Iterable[str]) -> list[str]:
    repeated = [v for v, n in Counter(values).items() if n > 1]
    return [f"{what} {v!r} is used more than once (must be unique)" for v in repeated]


def _buttons(part: ButtonsPart) -> list[str]:
    out = _titled("the body", part.body, "buttons_body")
    count = len(part.buttons)
    if count > _L["buttons"]:
        out.append(f"{count} reply buttons (at most {_L['buttons']})")
    elif count == 0:
        out.append("no reply buttons (at least 1)")
    for b in part.buttons:
        out += _titled(f"button title {b.title!r}", b.title, "button_title")
        out += _titled(f"button id {b.id!r}", b.id, "button_id")
    out += _duplicates("button title", (b.title for b in part.buttons))
    out += _duplicates("button id", (b.id for b in part.buttons))
    return out + _long("the header", part.header, "header") + _long("the footer", part.footer, "footer")


def _list(part: ListPart) -> list[str]:
    out = _titled("the body", part.body, "list_body") + _titled(f"the list button {part.button!r}", part.button,
                                                                "list_button")
    sections, rows = part.sections, [r for s in part.sections for r in s.rows]
    if len(sections) > _L["list_sections"]:
        out.append(f"{len(sections)} sections (at most {_L['list_sections']})")
    if len(rows) > _L["list_rows"]:
        out.append(f"{len(rows)} rows (at most {_L['list_rows']} in all sections together)")
    if not rows:
        out.append("no rows (at least 1)")
    for n, section in enumerate(sections, start=1):
        if not section.rows and rows:
            out.append(f"section {n} has no rows (at least 1)")
        if section.title is None or not section.title.strip():
            if len(sections) > 1:
                out.append(f"section {n} has no title (needed when there are several sections)")
        else:
            out += _long(f"section title {section.title!r}", section.title, "section_title")
    for r in rows:
        out += _titled(f"row title {r.title!r}", r.title, "row_title")
        out += _titled(f"row id {r.id!r}", r.id, "row_id")
        out += _long(f"the description of row {r.title!r}", r.description, "row_description")
    out += _duplicates("row id", (r.id for r in rows))
    return out + _long("the header", part.header, "header") + _long("the footer", part.footer, "footer")


def part_violations(part: Part) -> list[str]:
    """The WhatsApp limits one message an agent sends breaks (empty: the platform accepts it).

    Example:
        >>> from convoeval.channel.parts import ButtonsPart, ReplyButton
        >>> part_violations(ButtonsPart(body="Forma de pagamento?", buttons=[
        ...     ReplyButton(id=m, title=m) for m in ("pix", "boleto", "cartão", "débito")]))
        ['4 reply buttons (at most 3)']
    """
    if isinstance(part, TextPart):
        return _long("the text", part.text, "text")
    if isinstance(part, ButtonsPart):
        return _buttons(part)
    if isinstance(part, ListPart):
        return _list(part)
    if isinstance(part, MediaPart):
        return _long(f"the caption of {part.filename!r}", part.caption, "caption")
    if isinstance(part, TemplatePart):
        if not part.name.strip():
            return ["a template message has no name (only an approved template, by name, can be sent)"]
        if not _TEMPLATE_NAME.match(part.name):
            return [f"template name {part.name!r} is not an approved template's name (lower case, digits and _)"]
        return _long(f"template name {part.name!r}", part.name, "template_name")
    assert isinstance(part, ReplyPart)
    return ["a reply (the patient's tap) cannot be sent by the agent"]


def reply_violations(parts: Sequence[Part]) -> list[str]:
    """Every limit the messages of one agent reply break, each prefixed with its message's place and type.

    Example:
        >>> from convoeval.channel.parts import TextPart
        >>> reply_violations([TextPart(text="ok"), TextPart(text="x" * 5000)])
        ['message 2 (text): the text is 5,000 characters (at most 4,096)']
    """
    return [f"message {n} ({part.type}): {problem}"
            for n, part in enumerate(parts, start=1) for problem in part_violations(part)]
