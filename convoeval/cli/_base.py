"""What every subcommand shares: the registry of handlers, the one-line usage error, argument types."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from convoeval.errors import ConvoevalError

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {}


class UsageError(ConvoevalError):
    """A mistake in what the user asked for; printed as one line."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line, as every other refusal of the command is.

    argparse prints the whole usage block before its error: for ``convoeval run`` that is 11 lines of flags above the
    one that says what was wrong. The usage stays one ``--help`` away, and the line says so. Sub-parsers are made of
    the same class (``add_subparsers`` uses the parent's), so every command's parser, its own module's included,
    refuses this way.
    """

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message> (see <prog> --help)`` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def command(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register the decorated function as the handler of the subcommand ``name``."""
    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = fn
        return fn

    return register


def _seeds(text: str | None) -> int | list[int] | None:
    if text is None:
        return None
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--seed takes integers separated by commas, got {text!r}") from None
    return seeds[0] if len(seeds) == 1 else seeds


#: A failed notebook's exit code by the error its cell raised: a setting is a usage error, a gate a failure. A leak
#: (the red-team notebook's ``fail_on_leak``) exits 5, as ``convoeval redteam --fail-on-leak`` (its ``EXIT_LEAK``).
EXIT_CODES = {"ConfigError": 2, "ParameterError": 2, "RunError": 2, "ThresholdError": 1, "ReplayMissError": 1,
              "ForkCostError": 2, "CompareError": 2, "RegressionError": 1, "LeakError": 5}

#: A notebook's errors raised before anything ran (its parameters refused, or the run refused to start): the executed
#: notebook would hold that one line and nothing else, so ``convoeval notebook`` leaves none behind. (A
#: ``CompareError`` can come after the candidate ran, and a gate's error after the whole run: those notebooks stay.)
REFUSED_BEFORE_RUNNING = frozenset({"ConfigError", "ParameterError", "RunError"})


def _list(text: str, flag: str, kind: type = str) -> list:
    try:
        return [kind(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{flag} takes values separated by commas, got {text!r}") from None


def _int(text: str) -> int:
    """A whole number for argparse; huge values are left to the configuration's range checks (one line each)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
