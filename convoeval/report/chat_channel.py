"""What the WhatsApp channel's columns add to the chat (``chat.py``): times, bursts, redeliveries, silences.

A transcript row of a conversation that ran through the channel (``convoeval.channel``) carries ``message_id``,
``sent_at`` and ``delivery``. ``channel_looks`` reads them, row by row in the transcript's order, into a
``ChannelLook``: the time WhatsApp prints in the bubble's corner, a date divider when the day changes, whether the row
is the next fragment of the patient's burst (drawn right under the previous bubble, without a label), a mark on a
message the channel delivered again or out of order, and a note on an agent message that answered a quiet moment or a
silence. Such a conversation's texts also get WhatsApp's styles (``whatsapp_styles``: *bold*, _italic_,
~strikethrough~). A row without those columns has no look and is drawn exactly as before the channel existed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from convoeval._util.html_blocks import MUTED, css, esc, missing
from convoeval.channel import ReplyPart

__all__ = ["ChannelLook", "channel_looks", "day_html", "mark_html", "note_html", "tap_html", "time_html",
           "whatsapp_styles"]

#: WhatsApp's grey for the time in a bubble's corner and for the date chips.
TIME_COLOR = "#667781"

#: Inline SVG icons (no font needed), in the surrounding text's colour: WhatsApp's reply arrow (a tap), a repeat (a
#: redelivery), two arrows swapping places (a message that overtook an earlier one).
_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16" width="1em" height="1em" aria-hidden="true" '
        'style="vertical-align:-0.125em;flex:none"><path d="{}" fill="none" stroke="currentColor" stroke-width="1.8" '
        'stroke-linecap="round" stroke-linejoin="round"/></svg>')
_ARROW = _SVG.format("M6.5 3.5 2 8l4.5 4.5M2.5 8H10a4 4 0 0 1 4 4v1")
_REPEAT = _SVG.format("M2.5 7.5a5 5 0 0 1 9-3M12 1.5v3H9M13.5 8.5a5 5 0 0 1-9 3M4 14.5v-3h3")
_SWAP = _SVG.format("M5 13.5v-11M2.5 5 5 2.5 7.5 5M11 2.5v11M8.5 11l2.5 2.5 2.5-2.5")

_MARKS = {"redelivered": ("redelivered · same id", MUTED, _REPEAT),
          "reordered": ("arrived out of order", "#9a6700", _SWAP)}


@dataclass(frozen=True)
class ChannelLook:
    """How the channel's columns draw one transcript row.

    Attributes:
        time: ``HH:MM`` of ``sent_at``, printed in the bubble's corner (None when the time cannot be read).
        sent: the whole time, to the second (the printed time's tooltip: a reordered burst's order shows in it).
        day: a date divider drawn before the message (the first message, and whenever the day changes).
        continued: the next fragment of the patient's burst: no label, right under the previous bubble.
        mark: a patient message the channel delivered again (``redelivered``) or out of order (``reordered``): a
            mark in its bubble; a redelivered one is drawn faded (the agent should not answer it again).
        note: an agent message's note (``after the patient stopped typing``, ``follow-up after 26 h``).
        message_id: the WhatsApp message id (the mark's tooltip).
    """

    time: str | None = None
    sent: str | None = None
    day: str | None = None
    continued: bool = False
    mark: str | None = None
    note: str | None = None
    message_id: str | None = None

    @property
    def dim(self) -> bool:
        """Whether the bubble is drawn faded: a redelivery."""
        return self.mark == "redelivered"


def channel_looks(rows: Sequence[Mapping[str, Any]]) -> list[ChannelLook | None]:
    """One look per transcript row, in order; None for a row without the channel's columns (drawn as before).

    Args:
        rows: one conversation's transcript rows in the transcript's order (``frame.to_dict("records")``).

    Example:
        >>> looks = channel_looks([{"role": "patient", "turn": 1, "sent_at": "2026-03-02T09:00:20+00:00",
        ...                         "delivery": "delivered"}, {"role": "agent", "turn": 1}])
        >>> looks[0].time, looks[0].day, looks[1]
        ('09:00', 'Mon 2 Mar 2026', None)
    """
    looks: list[ChannelLook | None] = []
    last_day: str | None = None
    latest: datetime | None = None  # the latest time seen so far: a follow-up's silence is measured from it
    previous: Mapping[str, Any] | None = None
    for row in rows:
        sent = row.get("sent_at")
        if missing(sent):
            looks.append(None)
            previous = None
            continue
        when = _parse(sent)
        day = _day(when) if when is not None else None
        patient = row.get("role") == "patient"
        continued = (patient and previous is not None and previous.get("role") == "patient"
                     and previous.get("turn") == row.get("turn"))
        delivery = None if missing(row.get("delivery")) else str(row["delivery"])
        looks.append(ChannelLook(
            time=f"{when:%H:%M}" if when is not None else None,
            sent=f"{when:%Y-%m-%d %H:%M:%S}" if when is not None else None,
            day=day if day is not None and day != last_day else None, continued=continued,
            mark=delivery if patient and delivery in _MARKS else None,
            note=None if patient else _note(delivery, when, latest),
            message_id=None if missing(row.get("message_id")) else str(row["message_id"])))
        last_day = day if day is not None else last_day
        if when is not None and (latest is None or when > latest):
            latest = when
        previous = row
    return looks


def _parse(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None  # a hand-edited results folder: the message is drawn without its time


def _day(when: datetime) -> str:
    return f"{when:%a} {when.day} {when:%b %Y}"


def _note(delivery: str | None, when: datetime | None, latest: datetime | None) -> str | None:
    if delivery == "quiet":
        return "after the patient stopped typing"
    if delivery == "wait":
        if when is None or latest is None or when <= latest:
            return "follow-up after a silence"
        return f"follow-up after {duration_text((when - latest).total_seconds())}"
    return None


def duration_text(seconds: float) -> str:
    """A silence as people say it: ``45 s``, ``12 min``, ``1.5 h``, ``26 h``, ``3 d``.

    Example:
        >>> duration_text(93615), duration_text(5400), duration_text(40)
        ('26 h', '1.5 h', '40 s')
    """
    if seconds < 90:
        return f"{round(seconds)} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    hours = seconds / 3600
    if hours < 10:
        return f"{hours:.1f}".rstrip("0").rstrip(".") + " h"
    if hours < 72:
        return f"{round(hours)} h"
    return f"{round(hours / 24)} d"


def time_html(look: ChannelLook) -> str:
    """The time in a bubble's bottom-right corner, floated as WhatsApp does so a short text keeps it on its line."""
    if not look.time:
        return ""
    style = css(float="right", font_size="11px", color=TIME_COLOR, margin="6px -2px -4px 10px", line_height="15px",
                white_space="nowrap")
    tip = f' title="sent {esc(look.sent)}"' if look.sent else ""
    return f"<span{tip}{style}>{esc(look.time)}</span>"


def mark_html(look: ChannelLook) -> str:
    """The mark at the top of a bubble the channel delivered again or out of order (like WhatsApp's "Forwarded")."""
    if look.mark not in _MARKS:
        return ""
    text, color, mark_icon = _MARKS[look.mark]
    tip = f' title="{esc("message id " + look.message_id)}"' if look.message_id else ""
    style = css(font_size="11px", font_style="italic", color=color, margin_bottom="2px")
    return f"<div{tip}{style}>{mark_icon}&#8201;{esc(text)}</div>"


def note_html(note: str) -> str:
    """An agent message's note, under its label: what it answered (a quiet moment, a silence)."""
    return f"<div{css(font_size='11px', font_style='italic', color=TIME_COLOR, margin='0 4px 1px')}>{esc(note)}</div>"


def day_html(day: str) -> str:
    """The date chip WhatsApp centres above the first message of a day."""
    chip = css(display="inline-block", background="#ffffff", color="#54656f", font_size="11.5px", padding="3px 10px",
               border_radius="7px", box_shadow="0 1px 0.5px rgba(11,20,26,.13)")
    return f"<div{css(text_align='center', margin='8px 0 4px')}><span{chip}>{esc(day)}</span></div>"


def tap_html(part: ReplyPart, title_html: str) -> str:
    """The patient's tap on a reply button or list row: the button they tapped (its title, a reply arrow).

    Args:
        part: the tap.
        title_html: its title (or id, when the title is unknown), escaped and highlighted by the caller.
    """
    button = css(display="inline-block", color="#027eb5", font_weight="600", border="1px solid #b8dcee",
                 background="#f0f8fc", border_radius="14px", padding="1px 10px 1px 8px", margin="2px 0")
    tapped = f"<div{css(font_size='11px', color=MUTED)}>tapped {esc(part.id)}</div>"
    return f"{tapped}<span{button}>{_ARROW}&#8201;{title_html}</span>"


#: WhatsApp's text styles: *bold*, _italic_, ~strikethrough~ (the marker next to a letter inside, not outside). A
#: style never spans a tag an earlier style drew (escaped text has no other ``<``), so the tags always nest.
_STYLES = [(re.compile(rf"(?<![\w{m}]){m}(?=[^\s<])([^{m}\n<]*?[^\s<]){m}(?![\w{m}])"), tag)
           for m, tag in (("\\*", "b"), ("_", "i"), ("~", "s"))]


def whatsapp_styles(escaped: str) -> str:
    """Escaped text with WhatsApp's styles drawn as WhatsApp draws them (the markers dropped).

    Example:
        >>> whatsapp_styles("Total *R$ 150,00*, _vence_ ~hoje~ em a_b_c")
        'Total <b>R$ 150,00</b>, <i>vence</i> <s>hoje</s> em a_b_c'
    """
    for pattern, tag in _STYLES:
        escaped = pattern.sub(rf"<{tag}>\1</{tag}>", escaped)
    return escaped
