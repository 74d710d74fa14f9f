"""Notebook parameters, one way for every notebook: a pydantic model, one checker, one table, one error base.

Each notebook's parameters are the fields of one ``NotebookParams`` model (the run notebook's ``EvalConfig``, the
comparison's ``CompareParams``, the red team's ``RedTeamParams``, the agreement study's ``StudyConfig``, the debug
notebook's ``DebugParams``): the names and defaults of its parameters cell (tests/test_notebooks_pair.py holds them
equal), what each means (the field's ``description``) and what a valid value is (``expects``).

Papermill only *warns* about a parameter the notebook does not declare, and pydantic's messages span several lines;
a notebook must refuse a mistyped name before anything runs, and say what is wrong in one line. So
``Model.from_notebook(globals())`` picks the parameters out of the notebook's globals (``notebook_values``),
and the first mistake is one line of the model's ``error`` class: the unknown name with the one meant
(``unknown setting(s) agnet (did you mean 'agent'?); known: …``) or ``name must be <what>, got <value>``. A checked
model shows itself as ``parameter_table``. ``OneLineError`` is the base of every error a notebook cell shows as one
line instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Annotated, Any, ClassVar, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from convoeval.errors import ConvoevalError
from convoeval.scenarios import did_you_mean

__all__ = ["PAPERMILL_PATHS", "NotebookParams", "OneLineError", "Text", "executed_folder", "is_parameter_like",
           "notebook_values", "parameter_table"]


class OneLineError(ConvoevalError):
    """An error a notebook cell shows as one line, ``ClassName: message``, not a traceback (each keeps the built-in
    parent callers catch: ``class ConfigError(OneLineError, ValueError)``)."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of printing a traceback: a notebook user needs the reason, not our stack.
        return [f"{type(self).__name__}: {self}"]


# Names IPython puts in a kernel's namespace; they are not parameters.
_KERNEL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
#: What papermill injects with --inject-output-path / --inject-paths: the executed notebook's location.
PAPERMILL_PATHS = ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")


def is_parameter_like(name: str, value: object) -> bool:
    """True for a notebook global that can be a parameter: not private, not the kernel's, not a module or function."""
    if name.startswith("_") or name in _KERNEL_NAMES:
        return False
    if isinstance(value, (ModuleType, FunctionType, type)) or callable(value):
        return False
    return value is None or isinstance(value, (str, int, float, bool, list, dict, tuple))


def notebook_values(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A notebook's parameters out of its globals: plain values, without papermill's paths, modules, functions and
    ``_``-names (so the check can run again interactively, after imports and results)."""
    return {k: v for k, v in namespace.items() if is_parameter_like(k, v) and k not in PAPERMILL_PATHS}


def executed_folder(namespace: Mapping[str, Any]) -> Path | None:
    """The folder beside the executed notebook (``reports/x.ipynb`` -> ``reports/x/``) when papermill ran with
    ``--inject-output-path``; ``None`` otherwise (or for a remote output)."""
    executed = namespace.get("PAPERMILL_OUTPUT_PATH")
    if not isinstance(executed, str) or "://" in executed:
        return None
    path = Path(executed).expanduser()
    return (Path.cwd() / path.parent / path.stem).resolve()


def _nonblank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be blank")  # not a value_error: the field's ``expects`` words it
    return value


#: A non-blank string (a folder, a name, an address).
Text = Annotated[str, AfterValidator(_nonblank)]

_BOUNDS = ("greater_than_equal", "less_than_equal", "greater_than", "less_than")


class NotebookParams(BaseModel):
    """A notebook's parameters: one field per name of its parameters cell, with the cell's default.

    Subclasses set ``error`` (the one-line error a mistake raises), ``noun`` (how the refusal of an unknown name
    calls them) and ``expects`` (``name -> "must be …"``: what a valid value is, for a value of the wrong type or out
    of range; a validator's own ``ValueError`` is worded by its message).
    """

    model_config = ConfigDict(extra="forbid")

    error: ClassVar[type[Exception]] = ValueError
    noun: ClassVar[str] = "parameter"
    expects: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def checked(cls, values: Mapping[str, Any] | None = None, **more: object) -> Self:
        """Build and check the parameters; the first mistake is one line of ``cls.error``.

        Args:
            values: parameters by name (e.g. a notebook's); unknown names are errors.
            **more: more parameters, overriding ``values``.
        """
        given = {**(values or {}), **more}
        try:
            return cls(**given)
        except ValidationError as exc:
            raise cls.error(cls.one_line(exc, given)) from None

    @classmethod
    def from_notebook(cls, namespace: Mapping[str, Any]) -> Self:
        """The parameters a notebook's parameters cell made (pass ``globals()``), checked."""
        return cls.checked(notebook_values(namespace))

    @classmethod
    def parameter_names(cls) -> list[str]:
        """The parameters' names, in the notebook's order."""
        return list(cls.model_fields)

    @classmethod
    def defaults(cls) -> dict[str, object]:
        """Each parameter's default: what the notebook's parameters cell declares."""
        return {name: field.get_default(call_default_factory=True) for name, field in cls.model_fields.items()}

    @classmethod
    def one_line(cls, exc: ValidationError, given: Mapping[str, Any]) -> str:
        """pydantic's first error as one line: unknown names with the name meant, else ``name must …, got value``."""
        errors = exc.errors()
        known = cls.parameter_names()
        unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden" and len(e["loc"]) == 1)
        if unknown:
            named = ", ".join(name + did_you_mean(name, known) for name in unknown)
            return f"unknown {cls.noun}(s) {named}; known: {', '.join(known)}"
        first = errors[0]
        name = str(first["loc"][0]) if first["loc"] else "configuration"
        # A validator's own ValueError is convoeval's wording: take it from pydantic's context, not by trimming the
        # "Value error, " that pydantic puts before it.
        raised = (first.get("ctx") or {}).get("error") if first["type"] == "value_error" else None
        if raised is not None:
            message = str(raised)
        elif name in cls.expects:
            message = cls.expects[name]
        elif first["type"] in _BOUNDS and name in cls.model_fields:
            low, high = cls._bounds(name)
            message = f"must be from {low:,} to {high:,}"
        else:
            message = str(first["msg"])
        return f"{name} {message}, got {given[name]!r}" if name in given else message

    @classmethod
    def _bounds(cls, name: str) -> tuple[Any, Any]:
        metadata = cls.model_fields[name].metadata
        low = next((m.ge for m in metadata if hasattr(m, "ge")), None)
        high = next((m.le for m in metadata if hasattr(m, "le")), None)
        return low, high

    def parameter_table(self, *, before: str = "", after: str = "") -> str:
        """The checked parameters as the notebook shows them: name, value and meaning (HTML around it as given)."""
        meanings = {name: field.description or "" for name, field in type(self).model_fields.items()}
        return parameter_table(self.model_dump(), meanings, before=before, after=after)

    def _repr_html_(self) -> str:
        return self.parameter_table()


def parameter_table(values: Mapping[str, object], meanings: Mapping[str, str] | None = None, *, name: str = "parameter",
                    before: str = "", after: str = "") -> str:
    """The one table of a notebook's parameters: ``name``, value and, given ``meanings``, what each means."""
    from convoeval._util.html_blocks import esc, table, wrap  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

    rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>",
             *([esc(meanings.get(k, ""))] if meanings is not None else [])] for k, v in values.items()]
    header = [name, "value", *(["meaning"] if meanings is not None else [])]
    return wrap(before + table(rows, header) + after)
