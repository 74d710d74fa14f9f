"""The formats ``convoeval import`` reads, one registry, and how a file is recognised by its name and its content.

Each format has a name, one line saying what it is (the list an unrecognised file's error prints), and a reader
``(path, settings) -> ReadResult``. A file is recognised by what it holds, not only by its extension: a ``.json``
file may be OTLP spans, a Cloud API log or a table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from convoeval.errors import ConvoevalError
from convoeval.production.cloud_api import looks_like_cloud_api, read_cloud_api
from convoeval.production.messages import ReadResult
from convoeval.production.otlp import looks_like_otlp, read_otlp
from convoeval.production.settings import ImportSettings
from convoeval.production.table import looks_like_table, read_table
from convoeval.production.whatsapp_export import looks_like_export, read_export

__all__ = ["FORMATS", "ImportFormat", "UnrecognisedFileError", "format_of", "formats_line"]


class UnrecognisedFileError(ConvoevalError, ValueError):
    """A file that is none of the formats convoeval imports (the message names them, in one line)."""


@dataclass(frozen=True)
class ImportFormat:
    """One format: its name, what it is (one phrase) and its reader."""

    name: str
    what: str
    read: Callable[[Path, ImportSettings], ReadResult]


#: Every format, in the order the error message names them.
FORMATS: dict[str, ImportFormat] = {f.name: f for f in (
    ImportFormat("whatsapp-export", "a WhatsApp chat export (.txt or .zip, Android or iOS)", read_export),
    ImportFormat("cloud-api", "WhatsApp Cloud API webhook and sent-message JSON lines", read_cloud_api),
    ImportFormat("otlp", "OpenTelemetry spans as OTLP JSON (convoeval's, Phoenix's)", read_otlp),
    ImportFormat("table", "a CSV or JSON Lines table with conversation_id, role, text", read_table),
)}


def formats_line() -> str:
    """The formats, as the one line an unrecognised file's error ends with."""
    return "; ".join(f.what for f in FORMATS.values())


def format_of(path: Path) -> ImportFormat:
    """The format of one file, from its extension and its first lines.

    Raises:
        UnrecognisedFileError: the file is none of ``FORMATS`` (or unreadable): one line naming them.
    """
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return FORMATS["whatsapp-export"]
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as fh:
            head = fh.read(65536)
    except OSError as exc:
        raise UnrecognisedFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if suffix == ".txt" and looks_like_export(head):
        return FORMATS["whatsapp-export"]
    if suffix == ".csv":
        first_line = head.splitlines()[0] if head.strip() else ""
        if looks_like_table([c for c in first_line.split(",")]):
            return FORMATS["table"]
    first = _first_object(head) or _first_line_object(path)
    if first is not None:
        if looks_like_otlp(first):
            return FORMATS["otlp"]
        if looks_like_cloud_api(first):
            return FORMATS["cloud-api"]
        if looks_like_table(list(first)):
            return FORMATS["table"]
    if looks_like_export(head):
        return FORMATS["whatsapp-export"]
    raise UnrecognisedFileError(f"{path}: not a format convoeval imports; it reads {formats_line()}")


def _first_line_object(path: Path) -> dict[str, object] | None:
    """The first line as a JSON object, read whole (a Phoenix page or an OTLP document is one line of megabytes)."""
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        line = fh.readline()
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _first_object(head: str) -> dict[str, object] | None:
    """The first JSON object of a file: the whole head, or its first non-empty line."""
    text = head.strip()
    if not text.startswith(("{", "[")):
        return None
    for candidate in (text, text.splitlines()[0]):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = value[0]
        if isinstance(value, dict):
            return value
    # A large document cut at the head's end: look at its opening keys.
    for key in ("resourceSpans", "resource_spans"):
        if f'"{key}"' in text[:200]:
            return {key: []}
    return None
