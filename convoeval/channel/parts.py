"""A WhatsApp message as typed parts: text, reply buttons, a list, the patient's tap, media, a template.

The shapes follow the WhatsApp Business Cloud API's messages (and ``pywa``'s typed models of them: ``Button``,
``SectionList`` / ``Section`` / ``SectionRow``, ``CallbackButton`` / ``CallbackSelection``, media with a caption,
templates with parameters), flattened to one JSON object per message with a ``type``::

    {"type": "text", "text": "..."}
    {"type": "buttons", "body": "...", "buttons": [{"id": "pix", "title": "Pix"}], "header"?: "...", "footer"?: "..."}
    {"type": "list", "body": "...", "button": "Ver horários",
     "sections": [{"title"?: "...", "rows": [{"id": "...", "title": "...", "description"?: "..."}]}]}
    {"type": "reply", "id": "pix", "title"?: "Pix"}                      # the patient tapped a button or a row
    {"type": "media", "kind": "image" | "audio" | "document", "path": "evals/media/...",
     "caption"?: "...", "transcript"?: "..."}                             # audio: a transcript, never a caption
    {"type": "template", "name": "payment_reminder", "language"?: "pt_BR", "parameters"?: ["Ana", "R$ 150,00"]}

A part's *shape* is checked here (types, required fields, no unknown field): a wrong shape is a broken protocol.
The platform's *limits* (three buttons, 20 characters, …) are not: a message over them is still a message the agent
sent, and ``convoeval.channel.limits`` reports it as an assertion failure naming the limit.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from convoeval.errors import ConvoevalError

__all__ = [
    "IMPORTED_MEDIA_DIR",
    "MEDIA_DIR",
    "ButtonsPart",
    "ListPart",
    "ListRow",
    "ListSection",
    "MediaPart",
    "Part",
    "PartError",
    "ReplyButton",
    "ReplyPart",
    "TemplatePart",
    "TextPart",
    "is_text_only",
    "parse_parts",
    "part_text",
    "parts_as_dicts",
    "recorded_parts",
    "text_parts",
]

#: Where a media part's file lives, relative to the project's root.
MEDIA_DIR = "evals/media/"
#: Where an imported conversation's media live, relative to its results folder (``convoeval import``).
IMPORTED_MEDIA_DIR = "media/"


class _Part(BaseModel):
    # Strict: a misspelt field ("buttns") is an error naming it, not a silently dropped key.
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextPart(_Part):
    """A plain text message (a bubble)."""

    type: Literal["text"] = "text"
    text: str


class ReplyButton(_Part):
    """One reply button: the ``id`` the agent gets back when it is tapped, and the ``title`` the patient sees."""

    id: str
    title: str


class ButtonsPart(_Part):
    """An interactive message with reply buttons under its body (WhatsApp: at most 3)."""

    type: Literal["buttons"] = "buttons"
    body: str
    buttons: list[ReplyButton]
    header: str | None = None
    footer: str | None = None


class ListRow(_Part):
    """One choice of a list message."""

    id: str
    title: str
    description: str | None = None


class ListSection(_Part):
    """A group of rows of a list message (its title is needed only when there are several sections)."""

    title: str | None = None
    rows: list[ListRow]


class ListPart(_Part):
    """An interactive list message: a body, the label of the button that opens the list, and its sections."""

    type: Literal["list"] = "list"
    body: str
    button: str
    sections: list[ListSection]
    header: str | None = None
    footer: str | None = None


class ReplyPart(_Part):
    """The patient tapped a reply button or a list row: its ``id`` (and the ``title`` they saw)."""

    type: Literal["reply"] = "reply"
    id: str
    title: str | None = None


class MediaPart(_Part):
    """An image, an audio note or a document, from a file under ``evals/media/``.

    An image or a document may have a ``caption``; an audio note has none on WhatsApp, its words are given as a
    ``transcript`` (what a reader of the transcript, a judge or the patient, is told it says).
    """

    type: Literal["media"] = "media"
    kind: Literal["image", "audio", "document"]
    path: str
    caption: str | None = None
    transcript: str | None = None

    @field_validator("path")
    @classmethod
    def _under_media_dir(cls, path: str) -> str:
        # An imported conversation's media (convoeval import) are under its results folder's media/.
        normal = posixpath.normpath(path.replace("\\", "/"))
        if not normal.startswith((MEDIA_DIR, IMPORTED_MEDIA_DIR)) or normal != path or path.endswith("/"):
            raise ValueError(f"must be a file under {MEDIA_DIR} (a relative path without '..'), got {path!r}")
        return path

    @model_validator(mode="after")
    def _words_fit_the_kind(self) -> MediaPart:
        if self.kind == "audio" and self.caption is not None:
            raise ValueError("an audio note has no caption on WhatsApp: give its words as 'transcript'")
        if self.kind != "audio" and self.transcript is not None:
            raise ValueError(f"a transcript belongs to an audio note, not to a {self.kind}: use 'caption'")
        return self

    @property
    def filename(self) -> str:
        """The file's name, without its folders."""
        return posixpath.basename(self.path)


class TemplatePart(_Part):
    """An approved template message: its name and the values of its placeholders, in order."""

    type: Literal["template"] = "template"
    name: str
    language: str | None = None
    parameters: list[str] = Field(default_factory=list)


#: One message of either side, told apart by its ``type``.
Part: TypeAlias = Annotated[
    TextPart | ButtonsPart | ListPart | ReplyPart | MediaPart | TemplatePart, Field(discriminator="type")
]
_PARTS: TypeAdapter[list[Part]] = TypeAdapter(list[Part])
_TYPES = "text, buttons, list, reply, media, template"


class PartError(ConvoevalError, ValueError):
    """A part with a wrong shape; the message names the part and the field (``parts[1].buttons[0].title: …``)."""


def _where(loc: tuple[int | str, ...], name: str) -> str:
    # pydantic's location of a tagged union member starts with the tag ("buttons"): the user wrote parts[i].<field>.
    out = name
    items = list(loc)
    if items and isinstance(items[0], int):
        out += f"[{items.pop(0)}]"
        if items and isinstance(items[0], str) and items[0] in _TYPES.split(", "):
            items.pop(0)
    for item in items:
        out += f"[{item}]" if isinstance(item, int) else f".{item}"
    return out


def _message(error: Mapping[str, object]) -> str:
    kind, msg = error.get("type"), str(error.get("msg", ""))
    if kind == "union_tag_not_found":
        return f"'type' is missing (one of {_TYPES})"
    if kind == "union_tag_invalid":
        ctx = error.get("ctx")
        tag = ctx.get("tag") if isinstance(ctx, dict) else None
        return f"unknown type {tag!r} (one of {_TYPES})"
    if kind == "extra_forbidden":
        return "unknown field"
    return msg.removeprefix("Value error, ")


def parse_parts(raw: object, *, name: str = "parts") -> list[Part]:
    """Check a list of parts (mappings or part models) and return them as part models.

    Args:
        raw: the decoded JSON array (or a list of parts already built).
        name: how the list is called in errors (``parts``, ``AgentReply.parts``).

    Raises:
        PartError: naming the first wrong part and field, e.g. ``parts[1].buttons[0].title: Input should be a
            valid string``.

    Example:
        >>> [p.type for p in parse_parts([{"type": "text", "text": "Oi"}, {"type": "template", "name": "hello"}])]
        ['text', 'template']
        >>> parse_parts([{"type": "buttons", "body": "Pix?", "buttons": [{"id": "pix"}]}])
        Traceback (most recent call last):
        ...
        convoeval.channel.parts.PartError: parts[0].buttons[0].title: Field required
    """
    if not isinstance(raw, list):
        raise PartError(f"{name} must be an array of parts, got {type(raw).__name__}")
    plain = [p.model_dump() if isinstance(p, BaseModel) else p for p in raw]
    try:
        return _PARTS.validate_python(plain)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PartError(f"{_where(tuple(first['loc']), name)}: {_message(first)}") from None


def text_parts(bubbles: Iterable[str]) -> list[Part]:
    """One text part per bubble: what a reply of plain bubbles is as parts."""
    return [TextPart(text=b) for b in bubbles]


def part_text(part: Part) -> str:
    """What a reader of the transcript (a judge, the simulated patient) is told a part shows, as one text.

    Example:
        >>> part_text(ButtonsPart(body="Como prefere pagar?", buttons=[ReplyButton(id="pix", title="Pix"),
        ...                                                            ReplyButton(id="boleto", title="Boleto")]))
        'Como prefere pagar?\\n[Pix] [Boleto]'
        >>> part_text(MediaPart(kind="document", path="evals/media/boleto.pdf", caption="Seu boleto"))
        '[document: boleto.pdf] Seu boleto'
    """
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ButtonsPart):
        return "\n".join([part.body, " ".join(f"[{b.title}]" for b in part.buttons)])
    if isinstance(part, ListPart):
        rows = "; ".join(r.title for s in part.sections for r in s.rows)
        return "\n".join([part.body, f"[{part.button}: {rows}]"])
    if isinstance(part, ReplyPart):
        return part.title or part.id
    if isinstance(part, MediaPart):
        words = part.caption or part.transcript
        return f"[{part.kind}: {part.filename}]" + (f" {words}" if words else "")
    return f"[template {part.name}" + (f": {', '.join(part.parameters)}]" if part.parameters else "]")


def recorded_parts(parts: object, bubbles: object = None, text: object = None) -> list[Part]:
    """A transcript row's messages as parts: its ``parts`` cell, else (results saved before parts existed, a row
    built by hand) one text part per bubble, else its text.

    Raises:
        PartError: a ``parts`` cell that is not a list of valid parts.
    """
    if isinstance(parts, (list, tuple)) and parts:
        return parse_parts(list(parts))
    if isinstance(bubbles, (list, tuple)) and bubbles:
        return text_parts(str(b) for b in bubbles)
    return text_parts([text]) if isinstance(text, str) else []


def parts_as_dicts(parts: Iterable[Part]) -> list[dict[str, object]]:
    """The parts as JSON-ready dicts, unset optional fields left out (the transcript's ``parts`` cells)."""
    return [p.model_dump(exclude_none=True) for p in parts]


def is_text_only(parts: object) -> bool:
    """Whether recorded ``parts`` (dicts, part models, or missing) hold nothing but text: drawn as plain bubbles."""
    if not isinstance(parts, (list, tuple)):
        return True
    return all((p.get("type") if isinstance(p, Mapping) else getattr(p, "type", None)) == "text" for p in parts)
