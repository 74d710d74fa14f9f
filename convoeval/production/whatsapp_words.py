"""The words a WhatsApp chat export writes in each locale (pt-BR, en, es): its headers, system lines and media.

An export is the phone's own rendering of the chat, in the phone's language: the date and time of each message's
header (Android ``03/11/2026 14:05 - Ana: …``, iOS ``[03/11/2026, 14:05:12] Ana: …``; day/month or month/day,
24 hours or 12 with ``AM``/``p. m.``), lines the app writes itself (the encryption notice, "changed their phone
number", "this business uses a secure service from Meta"), media it left out (``<Mídia oculta>``, ``image omitted``)
and media it attached (``IMG-….jpg (arquivo anexado)``, ``<attached: 00000012-AUDIO-….opus>``).
"""

from __future__ import annotations

import re

__all__ = ["ANDROID_HEADER", "ATTACHED", "DELETED", "EDITED", "IOS_HEADER", "OMITTED", "SYSTEM", "match_header",
           "media_kind"]

_DATE = r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4})"
_TIME = r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)"
# 12-hour clocks: "PM", "pm", "p. m.", "p.m.", with an ordinary, a no-break or a narrow no-break space before.
_AMPM = r"(?:[\s\u00a0\u202f]*(?P<ampm>[AaPp]\.?[\s\u00a0\u202f]?[Mm]\.?))?"
_MARKS = "\u200e\u200f\u202a\u202c\ufeff"

#: A message's header on iOS (``[date, time] rest``) and on Android (``date, time - rest``); ``rest`` is
#: ``Name: text`` or a system line.
IOS_HEADER = re.compile(rf"^[{_MARKS}]*\[{_DATE},?[\s\u00a0]+{_TIME}{_AMPM}\][\s\u00a0]*(?P<rest>.*)$")
ANDROID_HEADER = re.compile(rf"^[{_MARKS}]*{_DATE},?[\s\u00a0]+{_TIME}{_AMPM}[\s\u00a0]+[-–][\s\u00a0]+(?P<rest>.*)$")


def match_header(line: str) -> re.Match[str] | None:
    """The line's header (groups ``date``, ``time``, ``ampm``, ``rest``), iOS's or Android's; ``None``: a
    continuation line.

    Example:
        >>> match_header("[03/11/2026, 14:05:12] Ana: Oi").group("date", "rest")
        ('03/11/2026', 'Ana: Oi')
        >>> match_header("11/3/26, 2:05\u202fPM - Ana: Hi").group("time", "ampm")
        ('2:05', 'PM')
        >>> match_header("e mais uma linha") is None
        True
    """
    return IOS_HEADER.match(line) or ANDROID_HEADER.match(line)


#: Lines the app writes itself (whoever the export says sent them): not a message of either side.
SYSTEM = re.compile("|".join([
    r"end-to-end encrypted", r"criptografia de ponta a ponta", r"cifrados de extremo a extremo",
    r"changed (?:their|his|her) phone number", r"mudou de n[úu]mero", r"mudou seu n[úu]mero",
    r"cambi[óo] (?:su|de) n[úu]mero",
    r"uses a secure service from Meta", r"usa um servi[çc]o seguro d[ae] Meta", r"usa un servicio seguro de Meta",
    r"is a business account", r"[ée] uma conta comercial", r"es una cuenta de empresa",
    r"Disappearing messages", r"mensagens tempor[áa]rias", r"mensajes temporales",
    r"Missed (?:voice|video) call", r"Chamada de (?:voz|v[íi]deo) perdida", r"Llamada (?:de voz|de video|perdida)",
    r"security code (?:with|changed)", r"c[óo]digo de seguran[çc]a", r"c[óo]digo de seguridad",
]), re.IGNORECASE)

#: Media the export left out; ``kind`` names it when the app said which (iOS), else it is unknown (Android).
OMITTED = re.compile(
    r"^[\u200e]*(?:<(?:M[íi]dia oculta|Media omitted|Multimedia omitido|Archivo omitido)>"
    r"|(?P<kind>imagem|image|imagen|[áa]udio|v[íi]deo|video|figurinha|sticker|documento|document|GIF|"
    r"Contact card|cart[ãa]o de contato|tarjeta de contacto)\s+(?:omitted|omitid[oa]|ocultad[oa]|ocultid[oa]))$",
    re.IGNORECASE)

#: A file the export attached: Android ``NAME (arquivo anexado)``, iOS ``<attached: NAME>``.
ATTACHED = re.compile(
    r"^[\u200e]*(?:<(?:attached|anexado|adjunto):\s*(?P<ios>[^>]+)>"
    r"|(?P<android>\S.*?\.\w{2,5})\s+\((?:file attached|arquivo anexado|archivo adjunto)\))\s*(?P<caption>.*)$",
    re.IGNORECASE | re.DOTALL)

#: A message its sender deleted.
DELETED = re.compile(r"^[\u200e]*(?:This message was deleted|You deleted this message|Esta mensagem foi apagada|"
                     r"Voc[êe] apagou esta mensagem|Se elimin[óo] este mensaje|Eliminaste este mensaje)\.?$",
                     re.IGNORECASE)

#: The mark an edited message ends with.
EDITED = re.compile(r"\s*<(?:This message was edited|Mensagem editada|Se edit[óo] este mensaje\.?)>\s*$",
                    re.IGNORECASE)

_AUDIO = {"opus", "ogg", "m4a", "mp3", "aac", "amr", "wav"}
_IMAGE = {"jpg", "jpeg", "png", "webp", "gif", "heic"}


def media_kind(name: str) -> str:
    """A channel media part's kind for a file name or a placeholder's word: ``image``, ``audio`` or ``document``.

    Example:
        >>> media_kind("PTT-20261103-WA0002.opus"), media_kind("00000012-PHOTO-2026-11-03.jpg"), media_kind("x.pdf")
        ('audio', 'image', 'document')
        >>> media_kind("áudio"), media_kind("figurinha")
        ('audio', 'image')
    """
    word = name.lower()
    extension = word.rsplit(".", 1)[-1] if "." in word else ""
    if extension in _AUDIO or word.startswith(("ptt-", "aud-")) or word in {"áudio", "audio"}:
        return "audio"
    if extension in _IMAGE or word in {"imagem", "image", "imagen", "figurinha", "sticker", "gif"}:
        return "image"
    return "document"
