"""The base of every model read from a scenario file: unknown fields are errors, strings that must say something."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NonEmptyStr", "StrictModel"]

NonEmptyStr = Annotated[str, Field(min_length=1)]


class StrictModel(BaseModel):
    """Base for everything read from YAML: unknown fields are errors.

    Integer fields are ``StrictInt``: YAML 1.1 reads ``yes``/``on``/``true`` as a boolean, which pydantic's lax ``int``
    would silently take as 1 (``max_turns: yes``). A YAML integer is already an ``int``; anything else is refused.
    """

    model_config = ConfigDict(extra="forbid")
