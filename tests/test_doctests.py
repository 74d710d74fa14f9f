"""Every ``>>>`` example in convoeval's docstrings runs, as part of the suite: an example that goes stale fails here.

An example that would call a real model, run notebooks or a whole evaluation is not a ``>>>`` example (nor a
skipped one, ``# doctest: +SKIP``): it is a plain code block (``Example (...)::``), or it runs with the fake model
(``convoeval.testing.FakeChatModel``). Examples run from the repository's root (they may read ``reports/example`` and
``evals/``), with convoeval's state in a temporary folder, the response cache off and no OpenAI settings from the
environment.
"""

from __future__ import annotations

import doctest
import importlib
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "convoeval"
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: Modules whose examples are not run yet. Each is being rewritten by someone else in issue #36; the one who owns
#: the file makes its examples run and removes it from this list (a name here that is not a module with examples
#: fails below). Empty it.
NOT_RUN_YET: set[str] = set()


#: Modules that still mark examples ``# doctest: +SKIP`` (a ``>>>`` that does not run). Their files are being edited
#: by others; the example becomes a plain code block or runs, and the module leaves this list. Empty it.
SKIPS_LEFT = {
    "convoeval.agents.openai_chat",  # the openai-chat adapter (#35)
    "convoeval.pytest_plugin",  # the pytest plugin, being written
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: Every module whose source holds an example (``__main__`` modules run a command when imported: they hold none).
MODULES = sorted(_module_name(p) for p in PACKAGE.rglob("*.py")
                 if p.name != "__main__.py" and ">>>" in p.read_text(encoding="utf-8"))


def run_examples(module: types.ModuleType) -> tuple[doctest.TestResults, str]:
    """Run every example in ``module``'s docstrings (its own objects only); the results and the failure report."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=report.append)
    return runner.summarize(verbose=False), "".join(report)


@pytest.fixture
def example_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "CONVOEVAL_LOCAL_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", [m for m in MODULES if m not in NOT_RUN_YET])
@pytest.mark.usefixtures("example_environment")
def test_the_examples_run(name: str) -> None:
    results, report = run_examples(importlib.import_module(name))
    assert results.failed == 0, report


def test_no_example_is_skipped() -> None:
    """A ``>>>`` line is an example that runs: one that cannot is a plain code block (``Example (...)::``)."""
    skipping = {_module_name(p) for p in PACKAGE.rglob("*.py") if "doctest: +SKIP" in p.read_text(encoding="utf-8")}
    assert skipping - NOT_RUN_YET - SKIPS_LEFT == set()
    assert SKIPS_LEFT - skipping == set(), "no SKIP left there: remove from SKIPS_LEFT"


def test_the_list_of_modules_not_run_yet_names_modules_with_examples() -> None:
    """A module that lost its examples, or was moved, leaves the list (so the list can only shrink)."""
    assert NOT_RUN_YET - set(MODULES) == set()


def test_a_stale_example_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner is not a no-op: a module whose example no longer matches what the code does is reported."""
    (tmp_path / "stale_example.py").write_text('def double(x):\n    """Twice ``x``.\n\n    >>> double(2)\n    5\n'
                                               '    >>> double(3)\n    6\n    """\n    return 2 * x\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "stale_example", raising=False)
    results, report = run_examples(importlib.import_module("stale_example"))
    assert (results.attempted, results.failed) == (2, 1)
    assert "Expected:\n    5\nGot:\n    4" in report
