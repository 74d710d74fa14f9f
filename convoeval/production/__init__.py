"""Real conversations in: ``convoeval import`` reads production WhatsApp conversations into an ordinary results folder.

The formats (``formats.py``, one registry): WhatsApp chat exports (``whatsapp_export.py``, its words per locale in
``whatsapp_words.py``), Cloud API webhook logs (``cloud_api.py``), OpenTelemetry spans as OTLP JSON (``otlp.py``) and
a plain CSV or JSON Lines table (``table.py``). Each reads a file into ``ImportedConversation`` objects
(``messages.py``) and the lines it skipped; ``rows.py`` turns a conversation into a run's rows (``source =
production``); ``writing.py`` writes the folder all or nothing. docs/production.md says how to use it.
"""

from convoeval.production.formats import FORMATS, ImportFormat, UnrecognisedFileError, format_of, formats_line
from convoeval.production.messages import ImportedConversation, ImportedMessage, ReadResult, SkippedLine
from convoeval.production.settings import ImportSettingError, ImportSettings, parse_split_after
from convoeval.production.writing import IMPORT_FILE, ImportSummary, OutputExistsError, import_conversations

__all__ = [
    "FORMATS",
    "IMPORT_FILE",
    "ImportFormat",
    "ImportSettingError",
    "ImportSettings",
    "ImportSummary",
    "ImportedConversation",
    "ImportedMessage",
    "OutputExistsError",
    "ReadResult",
    "SkippedLine",
    "UnrecognisedFileError",
    "format_of",
    "formats_line",
    "import_conversations",
    "parse_split_after",
]
