"""Locale resolution and the way a Brazilian clinic writes money, dates and times in each language."""

from __future__ import annotations

import datetime as dt

LOCALES = ("pt-BR", "en", "es")
DEFAULT_LOCALE = "pt-BR"

_MONTHS_EN = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WEEKDAYS = {
    "pt-BR": ("segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
}


def resolve_locale(locale: str | None) -> str:
    """Map a session locale (``pt-BR``, ``pt``, ``en-US``, ``es-AR``…) to one of ``LOCALES``; the clinic's
    own language, pt-BR, when it is missing or unknown."""
    if not locale:
        return DEFAULT_LOCALE
    language = locale.replace("_", "-").split("-")[0].lower()
    return {"pt": "pt-BR", "en": "en", "es": "es"}.get(language, DEFAULT_LOCALE)


def money(cents: int, locale: str) -> str:
    """Reais as a patient reads them: ``R$ 150,00`` (pt-BR, es) or ``R$150.00`` (en)."""
    reais, cents_part = divmod(int(cents), 100)
    if resolve_locale(locale) == "en":
        return f"R${reais:,}.{cents_part:02d}"
    return f"R$ {reais:,}".replace(",", ".") + f",{cents_part:02d}"


def _parse(value: str | dt.date | dt.datetime) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return dt.datetime.fromisoformat(str(value))


def date(value: str | dt.date, locale: str) -> str:
    """A due date or appointment day: ``20/02/2026`` (pt-BR, es) or ``Feb 20, 2026`` (en)."""
    d = _parse(value)
    if resolve_locale(locale) == "en":
        return f"{_MONTHS_EN[d.month - 1]} {d.day}, {d.year}"
    return f"{d.day:02d}/{d.month:02d}/{d.year}"


def time(value: str | dt.datetime, locale: str) -> str:
    """A time of day: ``09:00`` (pt-BR, es) or ``9:00 AM`` (en)."""
    d = _parse(value)
    if resolve_locale(locale) == "en":
        hour = d.hour % 12 or 12
        return f"{hour}:{d.minute:02d} {'AM' if d.hour < 12 else 'PM'}"
    return f"{d.hour:02d}:{d.minute:02d}"


def datetime(value: str | dt.datetime, locale: str) -> str:
    """An appointment: ``terça-feira, 10/03 às 09:00`` / ``Tuesday, Mar 10 at 9:00 AM`` / ``martes 10/03 a las 09:00``."""
    loc = resolve_locale(locale)
    d = _parse(value)
    weekday = _WEEKDAYS[loc][d.weekday()]
    if loc == "en":
        return f"{weekday}, {_MONTHS_EN[d.month - 1]} {d.day} at {time(d, loc)}"
    if loc == "es":
        return f"{weekday} {d.day:02d}/{d.month:02d} a las {time(d, loc)}"
    return f"{weekday}, {d.day:02d}/{d.month:02d} às {time(d, loc)}"
