"""The WhatsApp channel: a message as typed parts (``parts.py``) and the platform's limits on them (``limits.py``).

It sits at the bottom of the layers (pydantic only), so the agent protocol, the frames, the checks and the report
all read one definition of a message.
"""

from convoeval.channel.limits import WHATSAPP_LIMITS, part_violations, reply_violations
from convoeval.channel.parts import (
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

__all__ = [
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
