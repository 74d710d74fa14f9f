"""What a path check reads: the conversation's path, its locale, and (during a run) the store and the seeded ids."""

from __future__ import annotations

from dataclasses import dataclass

from convoeval.pathcheck.log import PathLog
from convoeval.scenarios.path_models import ArgValue, FixtureRef
from convoeval.store.assertions import AssertionResult
from convoeval.store.base import Store
from convoeval.store.fixtures import SeededRun

__all__ = ["PathContext", "result"]


@dataclass(frozen=True)
class PathContext:
    """The path, the scenario's locale, and the run's store and ids when the check runs inside a run.

    Without a store, the checks read the path alone: a saved transcript can be checked again offline (a
    ``{fixture: …}`` argument then needs ``refs``).
    """

    log: PathLog
    locale: str | None = None
    store: Store | None = None
    seeded: SeededRun | None = None

    def resolve(self, value: ArgValue, where: str) -> bool | int | float | str | None:
        """An expected argument value, with a ``{fixture: table.id}`` reference turned into the run's row id."""
        if not isinstance(value, FixtureRef):
            return value
        if self.seeded is None:
            raise ValueError(f"{where}: {{fixture: {value.fixture}}} needs the run's seeded ids (check inside a run)")
        ids = self.seeded.refs.get(value.table, {})
        if value.ref not in ids:
            raise ValueError(f"{where}: fixture {value.fixture!r} was not seeded in this run")
        return ids[value.ref]

    def at(self, turn: int) -> PathContext:
        """The same context on the path up to ``turn``."""
        return PathContext(self.log.up_to(turn), self.locale, self.store, self.seeded)


def result(key: str, expected: object, actual: object, passed: bool, detail: str) -> AssertionResult:
    """An ``AssertionResult`` whose detail starts with its key, like the database assertions' details."""
    return AssertionResult(key=key, expected=expected, actual=actual, passed=passed, detail=f"{key}: {detail}")
