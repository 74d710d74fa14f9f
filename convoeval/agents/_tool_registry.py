"""The clinic tools' registry (a method becomes a tool with ``@_tool(ArgsModel)``) and the small helpers they share."""

from __future__ import annotations

import datetime as dt
import inspect
import re
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from convoeval.agents import _tool_args as tool_args


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    args: type[tool_args.Args]
    fn: Callable[..., Any]


_TOOLS: dict[str, _Tool] = {}


def _tool(args: type[tool_args.Args]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a ``ClinicTools`` method as a tool; its docstring's first paragraph is the model-facing description."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        doc = inspect.getdoc(fn) or fn.__name__
        _TOOLS[fn.__name__] = _Tool(fn.__name__, doc.split("\n\n")[0].replace("\n", " "), args, fn)
        return fn

    return register


def _now() -> str:
    # Microseconds: "the latest link" must be well defined even for two links created in the same second.
    return dt.datetime.now(dt.timezone.utc).isoformat()


def _new_id() -> str:
    return uuid.uuid4().hex


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _folded(text: str) -> str:
    """Lower case without accents: "Conceição" and "conceicao" are the same name to a lookup."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"
