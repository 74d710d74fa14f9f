"""Reading scenario YAML safely: libyaml when available, bounded nesting, scalar errors as YAML errors."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import yaml

from convoeval.scenarios.errors import _shown

_BASE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):
    """The safe loader, from libyaml when PyYAML was built with it (~10x faster than the pure-Python one on 1 MB).

    Resolving a plain scalar's implicit tag (int? bool? date?) is the slowest step left, and keys and common values
    repeat (``text``, ``id``, ``pending``…): the answers are memoised, up to ``_MEMO_MAX`` distinct scalars.
    """

    _tags: ClassVar[dict[str, str]] = {}
    _MEMO_MAX = 10_000

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode or not implicit[0] or self.yaml_path_resolvers:
            resolved: str = super().resolve(kind, value, implicit)
            return resolved
        tag = self._tags.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._tags) < self._MEMO_MAX:
                self._tags[value] = tag
        return tag


def _explained(construct: Any) -> Any:
    """Wrap a scalar constructor so a value it cannot build is a ``ConstructorError`` at the value's line."""

    def construct_or_explain(loader: Any, node: Any) -> Any:
        try:
            return construct(loader, node)
        except yaml.YAMLError:
            raise
        except Exception as exc:  # noqa: BLE001 - any value that cannot be built is the file's problem
            kind = node.tag.rsplit(":", 1)[-1]
            article = "an" if kind[0] in "aeiou" else "a"
            # ValueError says why (day out of range, over 4,300 digits); the rest (KeyError, AttributeError) do not.
            why = str(exc).split(";")[0] if isinstance(exc, (ValueError, OverflowError)) else f"not a valid {kind}"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {_shown(node.value)} as {article} {kind}: {why}", node.start_mark) from None

    return construct_or_explain


# `due_date: 2026-02-30` (an implicit timestamp), a 5,000-digit int or `!!bool maybe` raised ValueError, KeyError
# or AttributeError out of PyYAML's constructors, not a YAMLError.
for _kind in ("bool", "int", "float", "timestamp"):
    _tag = f"tag:yaml.org,2002:{_kind}"
    _Loader.add_constructor(_tag, _explained(_Loader.yaml_constructors[_tag]))


#: Deepest nesting of YAML collections read. A scenario needs 5 levels; libyaml composes nodes recursively in C,
#: where ~30,000 levels overflow the stack (a crash, not an exception), so deeper files are refused first.
MAX_NESTING = 100
_BLOCK_ENTRY = re.compile(r"-(?=[\s\0]|\Z)")


def _nesting_bound(text: str) -> int:
    """An upper bound on the nesting depth of ``text``'s collections, computed without parsing.

    Every collection starts at one of ``[ { : ?`` or a ``-`` followed by a blank, so their count bounds the depth
    (loosely: most files exceed it, and then ``_nesting_depth`` measures).
    """
    return sum(text.count(c) for c in "[{:?") + len(_BLOCK_ENTRY.findall(text))


def _nesting_depth(text: str, limit: int) -> int:
    """The nesting depth of ``text``'s collections from libyaml's event stream (no nodes built), up to ``limit + 1``.

    Raises:
        yaml.YAMLError: a syntax error, exactly as loading would raise it.
    """
    try:
        return _event_depth(_Loader, text, limit)
    except yaml.YAMLError as libyaml_error:
        # libyaml may refuse deep nesting itself (PyYAML 6.0.4's bundled libyaml: "exceeded maximum nesting depth",
        # raised by its scanner before any event). Its wording is not ours to match: the pure-Python parser has no
        # such limit and builds no nodes, so it says whether the file is too deep or the error is a real one.
        try:
            too_deep = _event_depth(yaml.SafeLoader, text, limit) > limit
        except yaml.YAMLError:
            too_deep = False
        if too_deep:
            return limit + 1
        raise libyaml_error from None


def _event_depth(loader: type, text: str, limit: int) -> int:
    parser = loader(text)
    depth = deepest = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > limit:
                    break
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        parser.dispose()
    return deepest


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    # A 1 MB file makes ~500,000 objects: each few hundred of them trigger a garbage collection that walks the whole
    # heap (large in a notebook or test run) for cycles a YAML document rarely has. Collect once, afterwards.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_yaml(text: str) -> list[Any]:
    """Every document of ``text``, with libyaml when available; too deep a nesting is a ``RecursionError``."""
    # The cheap bound first: a 1 MB flat list has few indicators and skips the event pass.
    with_libyaml = _BASE_LOADER is not yaml.SafeLoader
    if with_libyaml and _nesting_bound(text) > MAX_NESTING and _nesting_depth(text, MAX_NESTING) > MAX_NESTING:
        raise RecursionError(f"over {MAX_NESTING} levels")
    with _gc_paused():
        return list(yaml.load_all(text, Loader=_Loader))


def _yaml_problem(exc: yaml.YAMLError, text: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if isinstance(exc, yaml.scanner.ScannerError) and mark and 0 <= mark.index < len(text):
        # Decided from the character the scanner stopped at, not from the loader's wording (libyaml and the
        # pure-Python loader word it differently, and libyaml does not say which character).
        if text[mark.index] == "\t":
            problem = "a tab, which YAML does not allow here: indent with spaces"
        elif not text[mark.index].isspace():
            problem = f"{problem} ({text[mark.index]!r})"
    return f"invalid YAML: {where}{problem}"


