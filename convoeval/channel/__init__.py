"""The WhatsApp channel: a message as typed parts (``parts.py``), the platform's limits on them (``limits.py``), a
scenario's channel settings (``settings.py``) and the deliveries of a patient turn (``delivery.py``).

It sits at the bottom of the layers (pydantic only), so the agent protocol, the frames, the checks and the report
all read one definition of a message.
"""

from typing import TYPE_CHECKING

from convoeval._util.lazy import lazy_exports
from convoeval.channel.parts import (
    IMPORTED_MEDIA_DIR,
    MEDIA_DIR,
    ButtonsPart,
    ListPart,
    ListRow,
    ListSection,
    MediaPart,
    Part,
    PartError,
    ReplyButton,
    ReplyPart,
    TemplatePart,
    TextPart,
    is_text_only,
    parse_parts,
    part_text,
    parts_as_dicts,
    recorded_parts,
    text_parts,
)

if TYPE_CHECKING:
    from convoeval.channel.limits import WHATSAPP_LIMITS, part_violations, reply_violations

# The limits load on first use: a scenario's models need the parts, not the limits (`convoeval --help`'s start-up).
_LAZY_ALL, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.channel.limits": ("WHATSAPP_LIMITS", "part_violations", "reply_violations"),
})

__all__ = [
    "IMPORTED_MEDIA_DIR",
    "MEDIA_DIR",
    "WHATSAPP_LIMITS",
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
    "part_violations",
    "parts_as_dicts",
    "recorded_parts",
    "reply_violations",
    "text_parts",
]
