"""The one way a package hands out public names that load on first use (PEP 562 module ``__getattr__``).

``import convoeval`` must stay cheap (a CLI ``--help`` and a notebook's first cell pay for it), and the statistics'
SciPy or the simulator's model client must not load because a light sibling module was imported. A package lists
its public names by the module that defines them; the first access imports that module and caches the value in the
package, so later accesses are plain attribute look-ups.

Example (a package's ``__init__.py``, so not run as a doctest)::

    __all__, __getattr__, __dir__ = lazy_exports(__name__, {"convoeval.stats.binary": ("cohen_kappa",)})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, whose public names live in ``exports``' modules.

    Args:
        package: the package's ``__name__``.
        exports: module path -> the public names it defines.

    Returns:
        ``(__all__, __getattr__, __dir__)`` to assign at the package's top level.

    Raises:
        ValueError: a name listed under two modules (one path per name).
    """
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported from both {where[name]} and {module}")
            where[name] = module

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(sys.modules[package])))

    return sorted(where), __getattr__, __dir__
