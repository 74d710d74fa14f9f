"""The assertion keys a scenario's ``assertions:`` may set: one registry, read when a scenario file loads.

Every key is an ``AssertionKind``: its name, the pydantic type of its YAML value and, for kinds that bring their own
check, the functions that read the actual value and judge it. The clinic keys (``payment_link_created`` …) and
``sql`` are registered here so a scenario validates without importing the store (the scenario layer sits below
it); their checks are registered by ``convoeval.store.assertions``. Another package adds a key without touching
convoeval through the ``convoeval.assertions`` entry point, whose value is an ``AssertionKind``::

    [project.entry-points."convoeval.assertions"]
    order_total = "my_package.checks:ORDER_TOTAL"     # AssertionKind("order_total", int, read=..., judge=...)

A key no one registered is looked up among the entry points when a scenario names it, so an unknown key (or a
plugin that cannot be loaded) is an error naming the file and the field, before anything runs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from pydantic_core import PydanticCustomError

from convoeval._util.plugins import PluginError, plugin_for, plugin_names
from convoeval.scenarios.errors import _shown

__all__ = ["ASSERTION_GROUP", "AssertionKind", "Assertions", "assertion_keys", "assertion_kind", "is_assertion_key", "register_assertion",
           "values_model"]

ASSERTION_GROUP = "convoeval.assertions"
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")

#: ``read(store, seeded, expected) -> actual``: what the database (or anything the checker reaches) shows.
Read = Callable[[Any, Any, Any], Any]
#: ``judge(expected, actual) -> (passed, detail)``; the detail is one sentence for the report.
Judge = Callable[[Any, Any], "tuple[bool, str]"]


@dataclass(frozen=True)
class AssertionKind:
    """One assertion key: what its YAML value must be, and (for plugins) how it is checked.

    Attributes:
        key: The name in ``assertions:`` (lower case, digits and ``_``).
        value: The type of the YAML value, as a pydantic annotation (``bool``, ``int``, ``Literal[...]``, a
            ``BaseModel`` …). It is validated when the scenario loads and appears in the JSON Schema.
        description: One sentence for the JSON Schema and the docs.
        read: ``read(store, seeded, expected) -> actual`` after the run (``store`` is the run's ``Store``,
            ``seeded`` its ``SeededRun``). ``None`` for the built-in keys, whose readers live in the store layer.
        judge: ``judge(expected, actual) -> (passed, detail)``. ``None``: passed when ``actual == expected``,
            with the same wording as the clinic keys.

    Example:
        >>> ORDER_PLACED = AssertionKind("order_placed", bool, "An order row exists for the run.",
        ...                              read=lambda store, seeded, expected: my_db.has_order(seeded.run_id))
    """

    key: str
    value: Any
    description: str = ""
    read: Read | None = None
    judge: Judge | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise ValueError(f"invalid assertion key {self.key!r}: lower case letters, digits and '_', "
                             "starting with a letter")
        if self.read is not None and not callable(self.read):
            raise ValueError(f"assertion {self.key!r}: read must be callable, got {type(self.read).__name__}")
        if self.judge is not None and not callable(self.judge):
            raise ValueError(f"assertion {self.key!r}: judge must be callable, got {type(self.judge).__name__}")


_KINDS: dict[str, AssertionKind] = {}


def register_assertion(kind: AssertionKind) -> AssertionKind:
    """Let scenarios set ``kind.key``; a later registration of the same key replaces the earlier one.

    Returns:
        ``kind``, so a module can write ``ORDER = register_assertion(AssertionKind(...))``.
    """
    if not isinstance(kind, AssertionKind):
        raise TypeError(f"register_assertion takes an AssertionKind, got {type(kind).__name__}")
    _KINDS[kind.key] = kind
    values_model.cache_clear()
    return kind


def assertion_kind(key: str) -> AssertionKind | None:
    """The kind registered for ``key``, else the one an installed package declares for it; ``None``: unknown.

    Raises:
        PluginError: an entry point names ``key`` but cannot be loaded, or names something other than an
            ``AssertionKind`` of that key.
    """
    kind = _KINDS.get(key)
    if kind is not None or not isinstance(key, str) or not _KEY.match(key):
        return kind
    return plugin_for(ASSERTION_GROUP, key, accepts=lambda found: isinstance(found, AssertionKind) and found.key == key,
                      expected=f"an AssertionKind with key {key!r}", register=lambda _name, found: register_assertion(found))


def assertion_keys(*, plugins: bool = True) -> list[str]:
    """The registered keys in registration order, then (``plugins``) the keys installed packages declare.

    Plugins are named, not loaded: a broken plugin shows here and fails only when a scenario uses it.
    """
    keys = list(_KINDS)
    return keys + [k for k in plugin_names(ASSERTION_GROUP) if k not in _KINDS] if plugins else keys


def load_all_plugins() -> None:
    """Import every ``convoeval.assertions`` entry point (for the JSON Schema, which lists every key).

    Raises:
        PluginError: naming the first entry point that cannot be loaded.
    """
    for key in plugin_names(ASSERTION_GROUP):
        if assertion_kind(key) is None:  # pragma: no cover - plugin_names lists only declared names
            raise PluginError(f"the {ASSERTION_GROUP} entry point {key!r} vanished while loading")


@functools.cache
def values_model(owner: type[BaseModel] | None = None) -> type[BaseModel]:
    """A strict pydantic model with one optional field per registered key (rebuilt when the registry changes), and
    the fields ``owner`` (default ``Assertions``) declares itself.

    Scenario files are validated with it, and the JSON Schema of ``assertions:`` is its schema.
    """
    # Fields declared on Assertions itself (none today) validate like registered keys, so either way of adding a
    # key works.
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in (owner or Assertions).model_fields.items()}
    fields.update({
        kind.key: (kind.value | None, Field(default=None, description=kind.description or None))
        for kind in _KINDS.values()
    })
    return create_model("Assertions", __config__=ConfigDict(extra="forbid"), __doc__=_DOC, **fields)


_DOC = ("What the database must show after the run. Unset keys are not checked; an unknown key is an error. "
        "Packages add keys through the convoeval.assertions entry point.")


class Assertions(BaseModel):
    """What the database must show after the run: one value per registered assertion key.

    The keys are those of ``convoeval.scenarios.assertion_kinds`` (the clinic keys, ``sql``, and any key a plugin
    registers through the ``convoeval.assertions`` entry point), each value validated against its kind's type when
    the scenario loads. Unset keys are not checked. An unknown key is a validation error naming the field.
    """

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="wrap")
    @classmethod
    def _registered_keys(cls, data: Any, handler: Any) -> Any:
        if isinstance(data, Assertions) or not isinstance(data, dict):
            return handler(data)
        unknown = [_unknown_key(key, value) for key, value in data.items()
                   if key not in cls.model_fields and not is_assertion_key(key)]
        if unknown:
            raise ValidationError.from_exception_data("Assertions", unknown)
        values = values_model(cls).model_validate(data)
        # Kept in registration order (the clinic keys first), the order results are reported in.
        return handler({k: getattr(values, k) for k in type(values).model_fields if getattr(values, k) is not None})

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        # The schema editors see lists every registered key with its type (extra="allow" alone would say "anything").
        return handler(values_model(cls).__pydantic_core_schema__)

    def checks(self) -> dict[str, Any]:
        """The assertions this scenario sets as validated values (``sql`` as ``SqlCheck`` models), in key order."""
        declared = {k: v for k in type(self).model_fields if (v := getattr(self, k)) is not None}
        return {**declared, **(self.__pydantic_extra__ or {})}

    def active(self) -> dict[str, Any]:
        """The assertions this scenario actually sets as plain YAML values, in registration order."""
        return {k: v for k, v in self.model_dump(exclude_unset=True).items() if v is not None}


def is_assertion_key(key: object) -> bool:
    """Whether ``key`` is registered or declared by a loadable plugin (a broken plugin's key is not)."""
    try:
        return isinstance(key, str) and assertion_kind(key) is not None
    except PluginError:
        return False


def _unknown_key(key: Any, value: Any) -> Any:
    """The pydantic error line for an assertion key no one registered, or whose plugin cannot be loaded."""
    try:
        assertion_kind(key) if isinstance(key, str) else None
    except PluginError as exc:
        message = f"the plugin for this assertion cannot be used: {exc}"
    else:
        message = (f"unknown field: no assertion {_shown(key)} is registered; known: {', '.join(assertion_keys())} "
                   f"(a package adds keys through the {ASSERTION_GROUP} entry point)")
    return {"type": PydanticCustomError("unknown_assertion", message.replace("{", "{{").replace("}", "}}")),
            "loc": (str(key),), "input": value}
