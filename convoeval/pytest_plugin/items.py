"""A scenario file as a pytest collector, and each scenario × seed × trial as an item.

The conversation runs in the item's *setup*, its verdict is the *call*: so pytest's own outcomes say what happened.
A conversation that ended ``error`` (the agent down, a model failing after its retries, an unusable judge answer)
could not be evaluated: it is reported as an ERROR, like a broken fixture. One whose simulated patient broke
(``simulator_failure``) is SKIPPED with the gate's reason: it is not the agent's fault, nor a pass. A ``fail`` (or a
score under the threshold) FAILS the item, with a message made of the run's own rows (``message.failure_message``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from convoeval.pytest_plugin.settings import SETTINGS_KEY, PluginSettings

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr, TracebackStyle

    from convoeval.pipeline.conversation_result import ConversationResult
    from convoeval.pipeline.jobs import Job

__all__ = ["ConversationFailed", "ScenarioFile", "ScenarioItem", "looks_like_scenario"]

#: Top-level keys only a scenario has (an attack file has ``strategy:``, a workflow ``jobs:``, none of these).
SCENARIO_KEYS = frozenset({"persona", "turns", "rubric", "goal", "agenda", "max_turns"})


def looks_like_scenario(path: Path) -> bool:
    """Whether a YAML file is meant as a scenario: a mapping with ``agent:`` and a key only scenarios have.

    A file that cannot be read as YAML counts as one, so that its error is reported rather than the file skipped;
    any other YAML (attacks, CI workflows, configuration) is left to other plugins.
    """
    from convoeval.scenarios import ScenarioError, read_yaml_file  # noqa: PLC0415 - only with --convoeval (start-up)

    try:
        content = read_yaml_file(path)
    except ScenarioError:
        return True
    return isinstance(content, dict) and "agent" in content and bool(SCENARIO_KEYS & set(content))


class ScenarioFile(pytest.File):
    """One scenario YAML file: its items are the scenario × each seed × each trial of the session's options."""

    def collect(self) -> Iterator[ScenarioItem]:
        """The items; a scenario that does not load is this file's collection error, in one line."""
        from convoeval.scenarios import ScenarioError, load_scenario_file  # noqa: PLC0415 - only with --convoeval

        try:
            scenario = load_scenario_file(self.path)
        except ScenarioError as exc:
            raise self.CollectError(exc.one_line()) from None
        for job in self.config.stash[SETTINGS_KEY].jobs(scenario):
            seed = "" if job.seed is None else f"s{job.seed}-"  # a scripted scenario, or the scenario's own seed
            name = f"{scenario.id}[{seed}t{job.trial}]"
            # The node id given whole: pytest 9 reads a "[...]" ending as parameters when it parses a stored id
            # (--lf's cache), and would not match an id built from the name with its brackets as a plain name.
            yield ScenarioItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", job=job)


class ConversationFailed(Exception):
    """An item's conversation failed its scenario; ``str()`` is the readable report (``repr_failure`` shows it)."""


class ScenarioItem(pytest.Item):
    """One conversation: a scenario, a seed and a trial, run against the session's target."""

    def __init__(self, *, job: Job, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = job
        self.result: ConversationResult | None = None
        # -k matches the agent and the type too: -k 'billing and scripted'.
        self.extra_keyword_matches.update({job.scenario.agent, job.scenario.type})
        self.add_marker("convoeval")

    @property
    def settings(self) -> PluginSettings:
        """The session's ``--convoeval-*`` settings."""
        return self.config.stash[SETTINGS_KEY]

    def setup(self) -> None:
        """Run the conversation; an ``error`` is this item's error and a ``simulator_failure`` its skip."""
        from convoeval.pytest_plugin.message import error_message, skip_reason, transcript_text  # noqa: PLC0415 - loads the pipeline's row helpers

        self.result = result = self.settings.run_job(self.job)
        score = result.rows["scores"][0]
        for name in ("status", "score", "run_id"):
            self.user_properties.append((name, score.get(name)))  # --junitxml writes them as <property>
        self.add_report_section("setup", "convoeval transcript", transcript_text(result.rows))
        if score["status"] == "error":
            pytest.fail(error_message(self.job, result.rows), pytrace=False)
        if score["status"] == "simulator_failure":
            # Reported at the scenario file (-rs), as a skip mark is, not at this line of the plugin.
            raise pytest.skip.Exception(skip_reason(result.rows), _use_item_location=True)

    def runtest(self) -> None:
        """The verdict: ``fail``, a score under ``--convoeval-threshold``, or ``warn`` with
        ``--convoeval-fail-on-warn`` fail the item."""
        from convoeval.pytest_plugin.message import failure_message, verdict  # noqa: PLC0415 - see setup

        assert self.result is not None, "setup ran the conversation"
        why = verdict(self.result.rows["scores"][0], self.settings.threshold, self.settings.fail_on_warn)
        if why is not None:
            raise ConversationFailed(failure_message(self.job, self.result.rows, why))

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str | TerminalRepr:
        """The conversation's report for a failed verdict (no traceback: the code that ran is convoeval's)."""
        if isinstance(excinfo.value, ConversationFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """What pytest's headers name: the file, and the scenario with its seed and trial."""
        seed = "" if self.job.seed is None else f" seed {self.job.seed}"
        # Line 0 (shown as 1): a skip reported at the item's location needs a line (pytest's reports assert one).
        return self.path, 0, f"{self.job.scenario.id}{seed} trial {self.job.trial}"
