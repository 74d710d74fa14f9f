"""One name, one meaning: a public name (one listed in a module's or a package's ``__all__``) is one object.

Two modules exporting different objects under one name (three functions called ``execute``, a ``Turn`` of the
clinic agents and another of the path log) make a reader guess which one a notebook means. A package may re-export
its own modules' names, and ``convoeval`` the verbs; a plain module lists only what it defines, so every name has
one defining path.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections import defaultdict
from pathlib import Path

import pytest

import convoeval

REPO = Path(__file__).resolve().parents[1]


def _module_names() -> list[str]:
    found = [m.name for m in pkgutil.walk_packages(convoeval.__path__, "convoeval.")]
    return ["convoeval", *sorted(m for m in found if not m.endswith("__main__"))]  # __main__ runs the CLI


def exports_by_name(modules: list[str]) -> dict[str, dict[int, list[str]]]:
    """name -> id of the object -> the modules whose ``__all__`` hands it out under that name."""
    seen: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            seen[name][id(getattr(module, name))].append(module_name)
    return seen


def two_meanings(seen: dict[str, dict[int, list[str]]]) -> dict[str, list[list[str]]]:
    """The names handed out as more than one object, with the modules of each object."""
    return {name: sorted(objects.values()) for name, objects in seen.items() if len(objects) > 1}


def test_no_public_name_is_exported_by_two_modules_with_different_objects():
    clashes = two_meanings(exports_by_name(_module_names()))
    assert clashes == {}, "\n".join(f"{name}: {where}" for name, where in sorted(clashes.items()))


def test_the_check_sees_a_clash(tmp_path, monkeypatch):
    """Two throw-away modules exporting different ``execute`` functions are reported, with both modules."""
    for stem in ("clash_a", "clash_b"):
        (tmp_path / f"{stem}.py").write_text(f"__all__ = ['execute']\ndef execute():\n    return {stem!r}\n")
    (tmp_path / "clash_c.py").write_text("from clash_a import execute\n__all__ = ['execute']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    clashes = two_meanings(exports_by_name(["clash_a", "clash_b", "clash_c"]))
    assert clashes == {"execute": [["clash_a", "clash_c"], ["clash_b"]]}


def reexported(source: str) -> list[str]:
    """The names a module's ``__all__`` lists but imports from elsewhere (a second path to them)."""
    tree = ast.parse(source)
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            listed = list(ast.literal_eval(node.value))
    return [name for name in listed if name in imported]


#: Modules a notebook imports as its one namespace (``agreement_study.check_study_parameters(globals())``,
#: ``views.calibrated_view(study)``), so they gather names defined beside them, and nothing else may.
NOTEBOOK_NAMESPACES = {
    "convoeval/agreement/study.py": ["StudyConfig", "check_study_parameters"],
    "convoeval/agreement/views.py": ["calibrated_view"],
}


def test_a_plain_module_lists_only_what_it_defines():
    """Re-exporting is a package's job: a module that lists an imported name in ``__all__`` is a second path."""
    offenders = {}
    for path in sorted((REPO / "convoeval").rglob("*.py")):
        if path.name != "__init__.py" and (names := reexported(path.read_text(encoding="utf-8"))):
            offenders[path.relative_to(REPO).as_posix()] = names
    assert offenders == NOTEBOOK_NAMESPACES


def test_the_module_check_sees_a_reexport():
    assert reexported("from x import a, b as c\nd = 1\n__all__ = ['c', 'd']\n") == ["c"]


#: Names that meant two things before issue #26, each gone from where it was a second meaning.
RENAMED = [
    ("convoeval", "execute", "run_eval"),
    ("convoeval.pipeline", "configure", "notebook_config"),
    ("convoeval.pipeline.notebook", "execute", "run_notebook_config"),
    ("convoeval.redteam.notebook", "execute", "run_redteam_params"),
    ("convoeval.redteam.notebook", "configure", "redteam_params"),
    ("convoeval.compare.notebook", "configure", "compare_params"),
    ("convoeval.compare.notebook", "run", "run_compare_params"),
    ("convoeval.redteam.views", "what_ran", "redteam_overview"),
    ("convoeval.redteam.views", "errors", "redteam_errors"),
    ("convoeval.redteam.views", "render_html", "render_redteam_html"),
    ("convoeval.redteam.views", "save_html", "save_redteam_html"),
    ("convoeval.pathcheck", "Turn", "PathTurn"),
    ("convoeval.agents.clinic", "agent_names", "clinic_agent_names"),
    ("convoeval.compare.verdict", "minimum_detectable_difference", "paired_minimum_detectable_difference"),
    ("convoeval.frames", "ROLES", "MESSAGE_ROLES"),
    ("convoeval.llm.models", "ROLES", "MODEL_ROLES"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED, ids=[f"{m}.{o}" for m, o, _ in RENAMED])
def test_a_renamed_name_has_only_its_new_name(module, old, new):
    loaded = importlib.import_module(module)
    assert not hasattr(loaded, old)
    assert new in loaded.__all__
    assert getattr(loaded, new) is not None


def packages_exporting_twice(seen: dict[str, dict[int, list[str]]]) -> dict[str, list[str]]:
    """Names that more than one package re-exports (the root ``convoeval``, which gathers the verbs, aside)."""
    out: dict[str, list[str]] = {}
    for name, objects in seen.items():
        for modules in objects.values():
            packages = [m for m in modules if m != "convoeval" and _is_package(m) and not _defines(m, name)]
            if len(packages) > 1:
                out[name] = packages
    return out


def _is_package(module_name: str) -> bool:
    return hasattr(importlib.import_module(module_name), "__path__")


def _defines(module_name: str, name: str) -> bool:
    return getattr(getattr(importlib.import_module(module_name), name), "__module__", None) == module_name


def test_no_name_is_reexported_by_two_packages():
    """A name has its defining module, one package that re-exports it and, for a verb, ``convoeval``: not three
    paths (``translate_transcripts`` was in ``agreement``, ``agreement.probes`` and its own module)."""
    twice = packages_exporting_twice(exports_by_name(_module_names()))
    assert twice == {}, "\n".join(f"{name}: {where}" for name, where in sorted(twice.items()))


def test_the_reexport_check_sees_two_packages(tmp_path, monkeypatch):
    for package in ("outer", "outer/inner"):
        (tmp_path / package).mkdir()
    (tmp_path / "outer/inner/impl.py").write_text("__all__ = ['probe']\ndef probe():\n    return 1\n")
    (tmp_path / "outer/inner/__init__.py").write_text("from outer.inner.impl import probe\n__all__ = ['probe']\n")
    (tmp_path / "outer/__init__.py").write_text("from outer.inner import probe\n__all__ = ['probe']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = exports_by_name(["outer", "outer.inner", "outer.inner.impl"])
    assert packages_exporting_twice(seen) == {"probe": ["outer", "outer.inner"]}


def test_no_lazy_package_exports_a_name_its_submodule_also_has():
    """In a package whose names load on first use (PEP 562), a public name equal to a submodule's name means two
    things: once the submodule is imported directly, Python sets the package's attribute to the module and the lazy
    function is never reached (``stats.interpret`` handed out a module, depending on test order)."""
    clashes = []
    for name in _module_names():
        module = importlib.import_module(name)
        if "__getattr__" not in vars(module) or not hasattr(module, "__path__"):
            continue
        submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
        clashes += [f"{name}.{n}" for n in getattr(module, "__all__", ()) if n in submodules]
    assert clashes == []
