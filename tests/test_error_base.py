"""One exception base: every public exception class in convoeval descends from ``convoeval.ConvoevalError``.

So a caller catches everything convoeval raises on purpose with one ``except``, while the built-in parents callers
relied on stay (``ScenarioError`` is still a ``ValueError``, ``StoreError`` a ``RuntimeError``).
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import convoeval
from convoeval.errors import ConvoevalError

#: Public exception classes that do not descend from ``ConvoevalError`` yet, because their files are being rewritten
#: by others in issues #35 and #36; whoever owns the file rebases the class (keeping its built-in parent) and removes
#: it here (a listed class that descends, or no longer exists, fails below). Empty it.
NOT_YET = {
    # The pytest plugin (convoeval/pytest_plugin/, being written).
    "convoeval.pytest_plugin.items.ConversationFailed",
}


def _module_names() -> list[str]:
    found = [m.name for m in pkgutil.walk_packages(convoeval.__path__, "convoeval.")]
    return sorted(m for m in found if not m.endswith("__main__"))  # __main__ runs the CLI


def public_exceptions() -> dict[str, type[Exception]]:
    """Every exception class convoeval defines whose name has no leading underscore (warnings are not errors)."""
    found: dict[str, type[Exception]] = {}
    for module_name in _module_names():
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if (isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, Warning)
                    and obj.__module__ == module_name and not name.startswith("_")):
                found[f"{module_name}.{name}"] = obj
    return found


@pytest.fixture(scope="module")
def exceptions() -> dict[str, type[Exception]]:
    return public_exceptions()


def test_every_public_exception_descends_from_the_base(exceptions: dict[str, type[Exception]]) -> None:
    outside = {name for name, cls in exceptions.items() if not issubclass(cls, ConvoevalError)}
    assert outside - NOT_YET == set(), "make them ConvoevalError subclasses (keep their built-in parent)"


def test_the_list_of_classes_not_rebased_yet_only_shrinks(exceptions: dict[str, type[Exception]]) -> None:
    assert NOT_YET - set(exceptions) == set(), "no longer defined there: remove from NOT_YET"
    rebased = {name for name in NOT_YET if name in exceptions and issubclass(exceptions[name], ConvoevalError)}
    assert rebased == set(), "already a ConvoevalError: remove from NOT_YET"


def test_the_search_finds_the_errors_and_their_built_in_parents_stay(exceptions: dict[str, type[Exception]]) -> None:
    """The walk is not empty-handed, and rebasing kept what callers catch today."""
    from convoeval.llm import CacheMissError
    from convoeval.store import StoreError

    assert len(exceptions) >= 30
    assert exceptions["convoeval.store.base.StoreError"] is StoreError
    assert issubclass(StoreError, RuntimeError) and issubclass(CacheMissError, RuntimeError)
    assert issubclass(exceptions["convoeval.frames.run_frames.UnknownFrameError"], KeyError)
    assert issubclass(exceptions["convoeval.testing.fake_model.ScriptExhaustedError"], AssertionError)
    assert issubclass(exceptions["convoeval.sweep.run.SweepError"], ValueError)


def test_the_base_is_a_public_verb_of_the_package() -> None:
    assert convoeval.ConvoevalError is ConvoevalError
    assert "ConvoevalError" in convoeval.__all__
