"""convoeval's pytest plugin: scenario files as test items, one per scenario × seed × trial.

Registered through the ``pytest11`` entry point, so installing convoeval is enough::

    pytest --convoeval evals/scenarios
    pytest --convoeval evals/scenarios/billing --convoeval-target 'clinic:billing?faults=invented_payment_url'

It does nothing unless ``--convoeval`` is given: no YAML file is collected and convoeval's pipeline is not imported
(this module imports only pytest and the standard library, so a project's own test suite starts as fast as before).
With it, each scenario YAML under the given paths (``evals/scenarios`` when none is given) becomes items that run
the conversation through the library's one engine (``convoeval.pipeline.conversation.arun_any``): a ``fail`` (or a
score under ``--convoeval-threshold``) fails the item with the failed assertions, criteria and turn checks, the
judge's evidence, the score and the last turns; ``simulator_failure`` skips it (the simulated patient broke: not
the agent's fault); ``error`` is reported as an error. ``-k``, ``-x``, ``--lf``, ``--junitxml`` and ``-n`` (with
pytest-xdist) work on them as on any test. The ``convoeval_run`` fixture runs a scenario from a test of your own.
docs/integrations.md has the options and examples.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from convoeval.pytest_plugin.items import ScenarioFile, looks_like_scenario
from convoeval.pytest_plugin.settings import SETTINGS_KEY, PluginSettings, add_options, settings_from

if TYPE_CHECKING:
    from convoeval.pipeline.conversation_result import ConversationResult

__all__ = ["ScenarioFile", "convoeval_run", "pytest_addoption", "pytest_collect_file", "pytest_configure",
           "pytest_report_header", "pytest_unconfigure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--convoeval`` options (pytest's ``--help`` lists them under "convoeval")."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """With ``--convoeval``: check the options (one line for a bad one) and, when no path was given, collect
    the project's scenarios instead of ``testpaths``."""
    if not config.getoption("convoeval", False):
        return
    settings = settings_from(config)  # raises pytest.UsageError: one line, nothing runs
    config.stash[SETTINGS_KEY] = settings
    config.addinivalue_line("markers", "convoeval: a conversation run from a scenario file by convoeval's plugin")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(settings.default_paths())]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close what the session opened (the fixtures store)."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is not None:
        settings.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """One line under pytest's header saying what the conversations run against and with."""
    settings = config.stash.get(SETTINGS_KEY, None)
    return None if settings is None else [settings.header()]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    """A scenario YAML file becomes a ``ScenarioFile`` (only with ``--convoeval``; other YAML files are left alone)."""
    if SETTINGS_KEY not in parent.config.stash or file_path.suffix.lower() not in (".yaml", ".yml"):
        return None
    if not looks_like_scenario(file_path):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


RunScenario = Callable[..., "ConversationResult"]


@pytest.fixture
def convoeval_run(request: pytest.FixtureRequest) -> RunScenario:
    """Run one scenario from a test of your own and get its ``ConversationResult`` (``.status``, ``.score``,
    ``.transcript``, ``.rubric``, ``.assertions``, ``.rows``).

    The returned function takes the scenario (a path to its YAML file, a project scenario id, or a loaded
    ``Scenario``) and, keyword-only, ``target``, ``seed`` and ``trial``; the models, threshold and default target
    are the ``--convoeval-*`` options' (or their defaults when ``--convoeval`` is not given).

    Example:
        >>> def test_billing_pays(convoeval_run):  # doctest: +SKIP
        ...     result = convoeval_run("evals/scenarios/billing/scripted-pix-en.yaml")
        ...     assert result.status == "pass", result.rows["assertions"]
    """
    settings = request.config.stash.get(SETTINGS_KEY, None)
    if settings is None:  # no --convoeval: the defaults, closed with this test
        settings = PluginSettings()
        settings.check()
        request.addfinalizer(settings.close)
    return settings.run_scenario
