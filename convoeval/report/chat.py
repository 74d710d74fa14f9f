"""A conversation drawn as a WhatsApp chat: the one renderer of messages for every page convoeval writes.

The run report's transcripts (``transcripts.py``) and the red team's leaking cases (``convoeval.redteam``) both draw
their messages here: patient (or caller) on the left in white, the agent on the right in WhatsApp green, a small
label above each message, tool calls as chips, and whatever a page adds below a bubble (a stop signal, a failed
check, a leak). A page may frame a message (a leak: red) and highlight quoted text in it. Every text is escaped.

A message recorded as WhatsApp parts (``convoeval.channel``) is drawn as WhatsApp draws it: reply buttons under
their bubble, a list's button and rows, the patient's tap, media as a file chip with its caption or transcript, a
template as a labelled bubble; an agent message over one of WhatsApp's limits gets a chip naming the limit. A
message of text parts only is drawn exactly as before parts existed. What the channel's columns add (times, a
burst's fragments as consecutive bubbles, a redelivered or reordered message marked, an agent's follow-up after a
silence, WhatsApp's *bold*, _italic_ and ~strikethrough~ drawn) is read by ``chat_channel.py``; a conversation
without them is drawn exactly as before the channel existed.
"""

from __future__ import annotations

import base64
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from convoeval._util.html_blocks import MUTED, STATUS_COLORS, css, esc, icon
from convoeval._util.paths import project_root
from convoeval.channel import (
    ButtonsPart,
    ListPart,
    MediaPart,
    Part,
    PartError,
    ReplyPart,
    TemplatePart,
    TextPart,
    is_text_only,
    parse_parts,
    part_violations,
)
from convoeval.report.chat_channel import (
    ChannelLook,
    day_html,
    mark_html,
    note_html,
    tap_html,
    time_html,
    whatsapp_styles,
)

__all__ = ["AGENT_BG", "CHAT_BG", "PATIENT_BG", "chip", "highlight", "message_html"]

#: The chat's colours: the patient's bubble, the agent's, and the chat's background (WhatsApp's).
PATIENT_BG, AGENT_BG, CHAT_BG = "#ffffff", "#d9fdd3", "#efeae2"


def chip(text: str, fg: str, bg: str, *, title: str | None = None, mark: str | None = None) -> str:
    """A rounded label; ``mark`` names an ``icon`` drawn before the text (SVG: no font needed).

    Example:
        >>> chip("find_patient", "#0550ae", "#ddf4ff").startswith("<span style=")
        True
    """
    tip = f' title="{esc(title)}"' if title else ""
    style = css(display="inline-block", color=fg, background=bg, border=f"1px solid {fg}", border_radius="10px",
                padding="0 8px", margin="2px 2px", font_size="11px", font_family="monospace")
    return f"<span{tip}{style}>{icon(mark) + ' ' if mark else ''}{esc(text)}</span>"


_MARK = css(background="#ffd33d", color="#1f2328", border_radius="3px", padding="0 2px", font_weight="600")


def highlight(text: str, quotes: Sequence[str]) -> str:
    """``text`` escaped, every occurrence of a quote wrapped in ``<mark>`` (overlapping quotes merged).

    Example:
        >>> highlight("a <b> 11/03", ["11/03"]).replace(_MARK, "")
        'a &lt;b&gt; <mark>11/03</mark>'
    """
    spans = []
    for quote in {q for q in quotes if q}:
        start = text.find(quote)
        while start >= 0:
            spans.append((start, start + len(quote)))
            start = text.find(quote, start + 1)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        out.append(esc(text[at:start]) + f"<mark{_MARK}>{esc(text[start:end])}</mark>")
        at = end
    return "".join(out) + esc(text[at:])


def message_html(label_html: str, texts: Sequence[str], *, patient: bool, tools_html: str = "",
                 quotes: Sequence[str] = (), frame: str | None = None, below: Sequence[str] = (),
                 below_align: str | None = None, parts: Sequence[Mapping[str, Any]] | None = None,
                 channel: ChannelLook | None = None) -> str:
    """One message: its label, its tool chips, a bubble per text, and what a page adds below.

    Args:
        label_html: the label above the bubbles (HTML: the caller escapes it), e.g. ``Agent · turn 2 · 1.3 s``.
        texts: the bubbles' texts (an agent may answer with several).
        patient: the patient's (caller's) side, on the left; else the agent's, on the right.
        tools_html: the tool-call chips, drawn above the bubbles.
        quotes: text to highlight in the bubbles.
        frame: a colour to frame the bubbles with (a leak), and to write the label in, bold.
        below: pieces of HTML under the bubbles, each on its own line (``below_align`` puts them in one block).
        below_align: with a value, ``below`` is one block aligned so (``right``: the red team's leak chips).
        parts: the message as recorded WhatsApp parts (the transcript's ``parts`` cell); drawn instead of ``texts``
            when one is more than text (buttons, a list, a tap, media, a template). Missing, text only or
            unreadable: ``texts`` are drawn.
        channel: what the WhatsApp channel's columns add (``chat_channel.channel_looks``): the time in each bubble's
            corner, a date divider, no label on a burst's next fragment, a redelivered or reordered message's mark,
            an agent message's note, WhatsApp's text styles. None (a conversation without the channel): drawn as
            before the channel existed.
    """
    color, weight = (frame, "700") if frame else (MUTED, None)
    items = [] if channel is not None and channel.continued else [
        f"<div{css(font_size='11px', color=color, font_weight=weight, margin='6px 4px 1px')}>{label_html}</div>"]
    if channel is not None and channel.note:
        items.append(note_html(channel.note))
    if tools_html:
        items.append(f"<div{css(max_width='80%')}>{tools_html}</div>")
    look = dict(background=PATIENT_BG if patient else AGENT_BG, padding='6px 10px', margin='2px 0',
                border_radius='8px', max_width='75%', white_space='pre-wrap', overflow_wrap='anywhere',
                box_shadow='0 1px 0.5px rgba(11,20,26,.13)', border=f"2px solid {frame}" if frame else None)
    if channel is not None and channel.dim:
        look["opacity"] = "0.6"
    bubble = css(**look)
    # The channel's additions inside each bubble: a mark on the first (redelivered, out of order), the time on each.
    tail = time_html(channel) if channel is not None else ""
    head = mark_html(channel) if channel is not None else ""
    styled = channel is not None  # WhatsApp's *bold* and _italic_ drawn; a conversation without it keeps its look
    typed = _typed(parts)
    if typed is None:
        for i, text in enumerate(texts):
            body = _text(text, quotes, styled=styled)
            items.append(f"<div{bubble}>{head if i == 0 else ''}{body}{tail}</div>")
    else:
        for i, part in enumerate(typed):
            # The bubble and what WhatsApp draws under it (buttons, a list) share one column, 75% wide at most.
            items.append(_part_html(part, css(**{**look, "max_width": None}), quotes, patient=patient,
                                    head=head if i == 0 else "", tail=tail, styled=styled))
    if below and below_align:
        items.append(f"<div{css(max_width='80%', text_align=below_align)}>{''.join(below)}</div>")
    else:
        items += [f"<div>{piece}</div>" for piece in below]
    side = "flex-start" if patient else "flex-end"
    day = day_html(channel.day) if channel is not None and channel.day else ""
    return f"{day}<div{css(display='flex', flex_direction='column', align_items=side)}>{''.join(items)}</div>"


def _typed(parts: Sequence[Mapping[str, Any]] | None) -> list[Part] | None:
    """The parts to draw, or None when the texts are drawn (no parts, text only, or parts that cannot be read)."""
    if parts is None or is_text_only(parts):
        return None
    try:
        return parse_parts(list(parts))
    except PartError:
        return None  # a hand-edited results folder: its texts are still shown


_BUTTON = css(background="#ffffff", color="#027eb5", border_radius="8px", padding="5px 10px", margin="2px 0",
              text_align="center", font_size="13px", box_shadow="0 1px 0.5px rgba(11,20,26,.13)")
_SMALL = css(font_size="11px", color=MUTED)


def _text(text: str, quotes: Sequence[str], *, styled: bool = False) -> str:
    """``text`` escaped, its quotes highlighted, or (``styled``, no quotes) its WhatsApp styles drawn."""
    if quotes:
        return highlight(text, quotes)
    return whatsapp_styles(esc(text)) if styled else esc(text)


def _part_html(part: Part, bubble: str, quotes: Sequence[str], *, patient: bool, head: str = "",
               tail: str = "", styled: bool = False) -> str:
    """One WhatsApp message: its bubble, what WhatsApp draws with it, and (agent side) the limits it breaks.

    ``head`` and ``tail`` go inside the bubble, before and after what it says (the channel's mark and time);
    ``styled`` draws WhatsApp's text styles in what it says.
    """
    if isinstance(part, TextPart):
        inner, under = _text(part.text, quotes, styled=styled), []
    elif isinstance(part, ButtonsPart):
        inner = _framed(part.header, _text(part.body, quotes, styled=styled), part.footer)
        under = [f"<div{_BUTTON}>{esc(b.title)}</div>" for b in part.buttons]
    elif isinstance(part, ListPart):
        inner = _framed(part.header, _text(part.body, quotes, styled=styled), part.footer)
        under = [f"<div{_BUTTON}>{esc(part.button)}</div>", _list_rows(part)]
    elif isinstance(part, ReplyPart):
        inner, under = tap_html(part, _text(part.title or part.id, quotes)), []
    elif isinstance(part, MediaPart):
        words = part.caption or part.transcript
        file_chip = chip(f"{part.kind} · {part.filename}", "#57606a", "#f6f8fa", title=part.path)
        said = ((f"<div{_SMALL}>transcript</div>" if part.transcript else "")
                + (_text(words, quotes, styled=styled) if words else ""))
        inner, under = f"{_thumbnail(part)}<div>{file_chip}</div>{said}", []
    else:
        assert isinstance(part, TemplatePart)
        values = "".join(f"<div>{esc(v)}</div>" for v in part.parameters)
        inner, under = f"<div{_SMALL}>template · {esc(part.name)}</div>{values}", []
    problems = [] if patient else part_violations(part)
    marks = [f"<div>{chip(p, *STATUS_COLORS['fail'], mark='cross')}</div>" for p in problems]
    width = css(display="flex", flex_direction="column", max_width="75%", min_width="30%")
    return f"<div{width}><div{bubble}>{head}{inner}{tail}</div>{''.join(under + marks)}</div>"


#: Images embedded as thumbnails up to this size (the page stays one file; a larger one is its chip only).
_THUMBNAIL_MAX_BYTES = 300_000
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def _thumbnail(part: MediaPart) -> str:
    """An image the project holds (``evals/media/…``), drawn small inside its bubble as WhatsApp does; else nothing."""
    mime = _IMAGE_TYPES.get(posixpath.splitext(part.path)[1].lower())
    path = project_root() / part.path
    if part.kind != "image" or mime is None or not path.is_file() or path.stat().st_size > _THUMBNAIL_MAX_BYTES:
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    look = css(display="block", max_width="180px", max_height="240px", border_radius="6px", margin_bottom="4px")
    return f'<img src="data:{mime};base64,{data}" alt="{esc(part.filename)}"{look}>'


def _framed(header: str | None, body_html: str, footer: str | None) -> str:
    head = f"<div{css(font_weight='600')}>{esc(header)}</div>" if header else ""
    foot = f"<div{_SMALL}>{esc(footer)}</div>" if footer else ""
    return head + body_html + foot


def _list_rows(part: ListPart) -> str:
    rows = []
    for section in part.sections:
        if section.title:
            rows.append(f"<div{css(font_size='11px', color='#008069', margin='4px 0 0')}>{esc(section.title)}</div>")
        for row in section.rows:
            description = f"<div{_SMALL}>{esc(row.description)}</div>" if row.description else ""
            rows.append(f"<div{css(padding='2px 0')}>{esc(row.title)}{description}</div>")
    box = css(background="#ffffff", border_radius="8px", padding="4px 10px", margin="2px 0", font_size="13px")
    return f"<div{box}>{''.join(rows)}</div>"
