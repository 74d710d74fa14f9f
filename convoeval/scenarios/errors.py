"""The scenario error: names the file, the field path and the problem, bounded however bad the file is."""

from __future__ import annotations

import itertools
import reprlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from convoeval.errors import ConvoevalError

#: Problems one ``ScenarioError`` lists; the rest are counted ("… and N more problems"), so a file with 20,000 bad
#: items still gives a readable message.
MAX_PROBLEMS = 20
_MESSAGE_MAX = 500  # characters of one problem's message
_KEY_MAX = 60  # characters of one mapping key in a field path


class ScenarioError(ConvoevalError, ValueError):
    """A scenario file that cannot be used. ``str()`` names the file, the field path and the problem.

    Attributes:
        path: the file, as given.
        problems: ``(field path, message)`` pairs, at most ``MAX_PROBLEMS`` of them ("" as field: the whole file).
        omitted: how many further problems the file has beyond those listed.
    """

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]], *, omitted: int = 0):
        self.path = str(path)
        problems = list(problems)
        self.problems = [(field, _clip(message, _MESSAGE_MAX)) for field, message in problems[:MAX_PROBLEMS]]
        self.omitted = omitted + len(problems) - len(self.problems)
        lines = [f"  {field}: {message}" if field else f"  {message}" for field, message in self.problems]
        if self.omitted:
            lines.append(f"  … and {self._more()}")
        super().__init__(f"Invalid scenario at {self.path}:\n" + "\n".join(lines))

    def _more(self) -> str:
        return f"{self.omitted:,} more problem{'s' if self.omitted > 1 else ''}"

    def one_line(self) -> str:
        """The error on one line, for command-line output."""
        parts = [f"{f}: {m}" if f else m for f, m in self.problems]
        if self.omitted:
            parts.append(f"and {self._more()}")
        return f"{self.path}: " + "; ".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"



class _ShortRepr(reprlib.Repr):
    """``reprlib.Repr`` that also survives integers too long for ``repr`` (over 4,300 digits raise ValueError)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 1000:
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1:,} digits>"
        return super().repr_int(x, level)


#: How ``_shown`` quotes a value in a message: a few items per level, two levels, short strings. An alias bomb
#: (9 nested aliases of 9 items) expands to 9**9 items when fully repr'd; these bounds keep every message short.
_REPR = _ShortRepr()
_REPR.maxlevel = 2
_REPR.maxtuple = _REPR.maxlist = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 4
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlong = 40
_SHOWN_MAX = 100


def _shown(value: Any) -> str:
    """A short ``repr`` of a value read from YAML, bounded in size and time whatever the value.

    Args:
        value: anything a YAML document or a caller may hold (nested aliases included).

    Returns:
        At most 100 characters.

    Example:
        >>> _shown("dentist")
        "'dentist'"
        >>> _shown(list(range(100)))
        '[0, 1, 2, 3, ...]'
    """
    text = _REPR.repr(value)
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 3] + "..."


def _field_path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # A mapping key is whatever the file says (an unknown 500 kB key included): clip it.
            out += ("." if out else "") + _clip(str(part), _KEY_MAX)
    return out


def _problem(err: Any) -> tuple[str, str]:
    message = err["msg"]
    raised = (err.get("ctx") or {}).get("error") if err["type"] == "value_error" else None
    if raised is not None:
        message = str(raised)  # our validator's own words, without the "Value error, " pydantic puts before them
    elif err["type"] == "extra_forbidden":
        message = "unknown field"
    elif err["type"] == "missing":
        message = "required field is missing"
    elif err["type"] in ("literal_error", "enum"):
        # Quote the input bounded: `agent: *bomb` would otherwise repr 9**9 items (hang, unbounded memory).
        message = f"{message}, got {_shown(err['input'])}"
    elif err["type"] == "int_type" and isinstance(err["input"], bool):
        message = f"{message}, got {err['input']} (YAML reads yes/no/on/off/true/false as booleans)"
    elif err["type"] == "int_type":
        message = f"{message}, got {_shown(err['input'])}"
    return _field_path(err["loc"]), message


#: Stands for the items a clipped list leaves out (see ``_problems``): no item type of the schema accepts it.
_CLIPPED = object()
_FEW_ERRORS = 1000


def _clipped(value: Any, keep: int, memo: dict[int, Any]) -> Any:
    """A copy of ``value`` whose lists longer than ``keep`` keep their first ``keep`` items, then ``_CLIPPED``.

    ``memo`` maps ``id()`` of what was copied to its copy, so YAML aliases (shared subtrees) are copied once.
    """
    if not isinstance(value, (list, dict)) or id(value) in memo:
        return memo.get(id(value), value)
    # Registered before its items are copied: a recursive alias (`a: &a [*a]`) then copies to a cycle, not forever.
    if isinstance(value, list):
        copy: Any = memo.setdefault(id(value), [])
        copy.extend(_clipped(v, keep, memo) for v in value[:keep])
        if len(value) > keep:
            copy.append(_CLIPPED)
    else:
        copy = memo.setdefault(id(value), {})
        copy.update((k, _clipped(v, keep, memo)) for k, v in value.items())
    return copy


def _problems(exc: ValidationError, schema: TypeAdapter[Any], raw: Any) -> tuple[list[tuple[str, str]], int]:
    """The first ``MAX_PROBLEMS`` problems of ``exc`` (raised validating ``raw``), and how many more there are.

    ``exc.errors()`` takes seconds for the 500,000 errors of a 1 MB list of bad items. So with many errors ``raw`` is
    validated again with every list clipped after ``MAX_PROBLEMS + 1`` items and ``_CLIPPED``: errors keep their
    order, and the clipped tail of a list gives one error where its own errors would start. The errors before the
    first such one are exactly the first errors of the whole file; when there are too few, all errors are read.
    """
    errors = None
    if exc.error_count() > _FEW_ERRORS:
        try:
            schema.validate_python(_clipped(raw, MAX_PROBLEMS + 1, {}))
        except ValidationError as clipped:
            first = list(itertools.takewhile(lambda e: e["input"] is not _CLIPPED, clipped.errors(include_url=False)))
            errors = first if len(first) >= MAX_PROBLEMS else None
    if errors is None:
        errors = exc.errors(include_url=False)
    shown = [_problem(err) for err in errors[:MAX_PROBLEMS]]
    return shown, exc.error_count() - len(shown)


