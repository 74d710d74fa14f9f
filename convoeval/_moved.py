"""Old import paths of modules that moved, kept working for one release without a file at the old place.

``import convoeval.agreement.binary`` gives the module ``convoeval.stats.binary`` itself (the same object, so every
name and a test's monkeypatch reach it). The finder sits first in ``sys.meta_path`` (before an editable install's
finder, which could find a stale copy) and answers only for the names in ``MOVED``; ``convoeval/__init__.py``
installs it. With no file left at the old path, git follows each move as a rename, and a change made elsewhere to the
old file merges into the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

#: old module path -> where it lives now.
MOVED: dict[str, str] = {
    **{f"convoeval.agreement.{name}": f"convoeval.stats.{name}" for name in (
        "_nominal", "_result", "_wide", "binary", "bootstrap", "consistency", "interpret", "labels", "multi", "noise",
        "ratings", "sample_size", "scores", "truth")},
    "convoeval.agreement.probes.effects": "convoeval.stats.effects",
    "convoeval.agreement.probes.plot": "convoeval.stats.effects_plot",
    "convoeval.pinning": "convoeval.forking.pinning",
    **{f"convoeval.{name}": f"convoeval.llm.{name}" for name in ("accounting", "cache", "http_transport", "models")},
    "convoeval.local_llm": "convoeval.llm.local",
    "convoeval.report._html": "convoeval.html_blocks",
    "convoeval.pipeline.sweep": "convoeval.sweep",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was imported under its new name."""


def install() -> None:
    """Make the old paths in ``MOVED`` importable (once per process)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
