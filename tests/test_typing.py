"""The typed backbone: no new bare ``Any`` in public signatures (mypy itself runs in scripts/test.sh)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Bare ``Any`` in the parameters and return types of public functions and methods (``**kwargs: Any`` included): 124
#: when mypy was switched on (issue #26), 104 once the verbs' models became ``ModelLike``, 99 once the verbs that run
#: conversations took ``SharedOptions`` and compare's sides a ``SideSource``, 86 once llm, agents, stats and the
#: other cleaned packages were typed, 63 once the agreement and comparison views moved beside what they show and
#: took a ``Study`` and a ``Comparison``, 50 once the notebooks' parameters were models and more was typed (issue
#: #36). Lower it as you type them (a ``pd.DataFrame``, a ``Store``); it must never grow.
BARE_ANY_BUDGET = 50  # in public functions and methods, **kwargs included, on 2026-11-27 (issue #36)


#: Underscore folders counted all the same: ``_util`` is private to convoeval, not to one package, and every package
#: calls its functions (moving ``html_blocks`` and ``urls`` into it must not hide their ``Any``).
COUNTED_PRIVATE = {"_util"}


def _public_modules() -> list[Path]:
    return [p for p in sorted((REPO / "convoeval").rglob("*.py"))
            if not any(part.startswith("_") and part not in ("__init__.py", *COUNTED_PRIVATE)
                       for part in p.relative_to(REPO).parts)]


def _is_bare_any(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a quoted annotation
        return annotation.value.strip() == "Any"
    return (isinstance(annotation, ast.Name) and annotation.id == "Any") or (
        isinstance(annotation, ast.Attribute) and annotation.attr == "Any")


def bare_any_in_public_signatures() -> list[str]:
    """``module:function(parameter)`` for every public function's parameter or return typed as bare ``Any``."""
    found = []
    for path in _public_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and not n.name.startswith("_")):
            functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for fn in functions:
            if fn.name.startswith("_"):
                continue
            where = f"{path.relative_to(REPO).as_posix()}:{fn.name}"
            args = fn.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found += [f"{where}({a.arg})" for a in params if a is not None and _is_bare_any(a.annotation)]
            if _is_bare_any(fn.returns):
                found.append(f"{where}(return)")
    return found


def test_no_new_bare_any_in_public_signatures():
    found = bare_any_in_public_signatures()
    assert len(found) <= BARE_ANY_BUDGET, "new bare Any in a public signature; type it:\n" + "\n".join(found)
    assert len(found) == BARE_ANY_BUDGET, f"{len(found)} now: lower BARE_ANY_BUDGET to it"


def test_the_count_sees_a_bare_any(tmp_path):
    tree = ast.parse("def f(model: Any) -> Any: ...")
    fn = tree.body[0]
    assert _is_bare_any(fn.args.args[0].annotation) and _is_bare_any(fn.returns)
    assert not _is_bare_any(ast.parse("x: dict[str, Any]").body[0].annotation)
