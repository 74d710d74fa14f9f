"""Settings flags built from their declarations so the two cannot drift: ``convoeval run``'s from ``EvalConfig``'s
fields, and those of ``convoeval fork`` and ``compare`` from ``SharedOptions`` (``add_shared_flags``, last).

Every field gets a flag named after it (``judge_samples`` -> ``--judge-samples``) whose type, choices, default and
help come from the field: a bool is ``--x`` / ``--no-x``, an int a whole number, a ``Literal`` a choice, a
``bool | dict`` setting takes ``--x [YAML mapping]`` and ``--no-x``, a ``str | dict`` model spec a name or a YAML
mapping, a list of ints a comma-separated list. A field whose type is none of these makes building the parser fail,
and ``tests/test_cli_config_flags.py`` fails when a field has neither a flag nor a reason in ``NO_FLAG``.

Flags the user did not give are absent from the parsed namespace (``argparse.SUPPRESS``), so ``given_settings``
returns only what was typed and every default stays ``EvalConfig``'s, the same as the notebook's.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, cast

from convoeval.cli._base import UsageError, _int, _seeds
from convoeval.pipeline.config import EvalConfig
from convoeval.pipeline.options import OPTION_HELP, SHARED_DEFAULTS, SharedOptions
from convoeval.scenarios import did_you_mean

__all__ = ["FLAG_NAMES", "NO_FLAG", "add_config_flags", "add_shared_flags", "flag_for", "given_options",
           "given_settings"]

#: Flags named otherwise than their field. Kept because scripts, tests and the README use them.
FLAG_NAMES = {"output_dir": "--out"}

#: Fields that deliberately have no flag, with the reason. Empty today: secrets (keys, the store URL) are not
#: settings at all (see ``convoeval.pipeline.config``), and every setting is a plain value a shell can type. A new
#: field that cannot be a flag belongs here, with its reason; ``tests/test_cli_config_flags.py`` reads this list.
NO_FLAG: dict[str, str] = {}

#: Flag-only words for a field's ``None``: ``--agent all`` runs every agent, ``--seed own`` each scenario's seed.
_NONE_WORDS = {"agent": "all", "seed": "own"}

#: Paths typed in a shell are relative to where the user stands, not to the project (the field's own rule).
_SHELL_PATHS = frozenset({"output_dir", "scenarios_dir"})

_METAVARS = {"agent": "AGENT", "seed": "N[,N...]", "target": "TARGET", "cluster": "ADDRESS", "scenario": "ID",
             "output_dir": "DIR", "scenarios_dir": "DIR", "fail_threshold": "SCORE", "resimulate": "K"}


def flag_for(name: str) -> str:
    """The command-line flag of the ``EvalConfig`` field ``name``."""
    return FLAG_NAMES.get(name, "--" + name.replace("_", "-"))


def add_config_flags(parser: argparse.ArgumentParser, model: type[EvalConfig] = EvalConfig, *,
                     exclude: Collection[str] = ()) -> None:
    """Add one flag per field of ``model`` (but those in ``NO_FLAG`` and ``exclude``) to ``parser``.

    Args:
        parser: the ``run`` (or ``sweep``) subcommand's parser.
        model: the configuration model (``EvalConfig``; a test passes a subclass).
        exclude: fields the command sets otherwise (``sweep``: its axes, agent and seed, and its folder).

    Raises:
        TypeError: a field whose type has no command-line form; give it one here, or a reason in ``NO_FLAG``.
    """
    group = parser.add_argument_group("settings (EvalConfig; the notebook's parameters, same names and defaults)")
    for name, field in model.model_fields.items():
        if name in NO_FLAG or name in exclude:
            continue
        _add_flag(group, name, field.annotation, field.default, field.description or "")


def given_settings(args: argparse.Namespace, model: type[EvalConfig] = EvalConfig) -> dict[str, Any]:
    """The settings the user typed, by field name (flags not given are left out: their defaults are the model's)."""
    given = {name: getattr(args, name) for name in model.model_fields if hasattr(args, name)}
    for name in _SHELL_PATHS & given.keys():
        if given[name] is not None:
            given[name] = str(Path(given[name]).expanduser().absolute())
    return given


def _add_flag(group: Any, name: str, annotation: Any, default: Any, description: str) -> None:
    flag = flag_for(name)
    kinds = _kinds(annotation)
    shown = _shown_default(name, default)
    # The field says what None means; on the command line None is what a flag not given (or --agent all) gives.
    if default is None and "(None: " in description:
        description, shown = description.replace("(None: ", "(default: "), ""
    else:
        description = description.replace("(None: ", f"({_NONE_WORDS.get(name, 'None')}: ")
    common = {"dest": name, "default": argparse.SUPPRESS}
    if kinds == {bool}:
        group.add_argument(flag, action=argparse.BooleanOptionalAction,
                           help=f"{description} (default: {'--' if default else '--no-'}{flag[2:]})", **common)
    elif kinds == {bool, dict}:
        group.add_argument(flag, nargs="?", const=True, type=_yaml_mapping, metavar="YAML",
                           help=f"{description}; with a value, a YAML mapping (default: on)", **common)
        group.add_argument(f"--no-{flag[2:]}", action="store_const", const=False, help=f"switch {flag} off",
                           **common)
    elif kinds <= {str, dict, type(None)} and dict in kinds:
        group.add_argument(flag, type=_name_or_mapping, metavar="SPEC",
                           help=_help(f"{description}; a name or a YAML mapping", shown), **common)
    elif kinds == {int, list, type(None)}:
        group.add_argument(flag, type=_int_list(name), metavar=_METAVARS.get(name, "N[,N...]"),
                           help=_help(f"{description}; several separated by commas", shown), **common)
    elif len(kinds - {type(None)}) == 1 and (kind := next(iter(kinds - {type(None)}))) in (int, float, str):
        convert = {int: _int, float: float, str: str}[kind]
        choices = _choices(name)
        if choices:
            convert = _choice_or_none(name, choices)
        group.add_argument(flag, type=convert, metavar=_METAVARS.get(name, "N" if kind is int else "VALUE"),
                           help=_help(description, shown) + (f"; one of {', '.join(choices)}" if choices else ""), **common)
    elif _literal(annotation):
        choices = _literal(annotation)
        group.add_argument(flag, choices=choices, help=_help(description, shown), **common)
    else:
        raise TypeError(f"EvalConfig.{name} ({annotation}) has no command-line form: teach "
                        "convoeval/cli/config_flags.py one, or list the field in NO_FLAG with the reason")


def _help(description: str, shown: str) -> str:
    return f"{description} (default: {shown})" if shown else description


def _kinds(annotation: Any) -> set[type]:
    """The plain types a field accepts (``list[int]`` -> ``list``); a ``Literal`` gives an empty set."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in typing.get_args(annotation)))
    if typing.get_origin(annotation) is typing.Literal:
        return set()
    if annotation is type(None):
        return {type(None)}
    origin = typing.get_origin(annotation)
    if origin is list and typing.get_args(annotation) != (int,):
        return {annotation}  # only a list of whole numbers has a form (comma-separated); others fail the build
    return {origin or annotation}


def _literal(annotation: Any) -> list[str]:
    args = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else (
        annotation,)
    return [v for a in args if typing.get_origin(a) is typing.Literal for v in typing.get_args(a)]


def _choices(name: str) -> list[str]:
    if name == "agent":  # the agents a project ships: a mistyped name fails at once, listing them
        from convoeval.scenarios import agent_names

        return [*agent_names(), _NONE_WORDS["agent"]]
    return []


def _choice_or_none(name: str, choices: list[str]) -> Callable[[str], str | None]:
    def convert(text: str) -> str | None:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"invalid choice: {text!r}{did_you_mean(text, choices)}; "
                                             f"choose from {', '.join(choices)}")
        return None if text == _NONE_WORDS.get(name) else text

    return convert


def _int_list(name: str) -> Callable[[str], int | list[int] | None]:
    """``"1,2,3"`` -> ``[1, 2, 3]`` (one number stays a number; the field's none-word is None); a mistake is
    argparse's one-line error."""
    def convert(text: str) -> int | list[int] | None:
        if text.strip() == _NONE_WORDS.get(name):
            return None
        try:
            return _seeds(text)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _shown_default(name: str, default: Any) -> str:
    if default is None:
        return _NONE_WORDS.get(name, "none")
    return str(default)


def _yaml_mapping(text: str) -> dict[str, Any]:
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = None
    if not isinstance(value, Mapping):
        raise argparse.ArgumentTypeError(f"expected a YAML mapping such as '{{key: value}}', got {text!r}")
    return dict(value)


def _name_or_mapping(text: str) -> str | dict[str, Any]:
    # A model name never starts with "{": that is a mapping of settings, e.g. {provider: local, temperature: 0.7}.
    return _yaml_mapping(text) if text.lstrip().startswith("{") else text


def add_shared_flags(parser: argparse.ArgumentParser, *, title: str, shown: Mapping[str, str] | None = None) -> None:
    """One flag per ``SharedOptions`` option (``judge_samples`` -> ``--judge-samples``), its help from
    ``OPTION_HELP`` (the words before a colon) and its default shown from ``SHARED_DEFAULTS``; a flag not given is
    absent from the namespace, so the verb's own default applies (``given_options``).

    Args:
        parser: the subcommand's parser.
        title: the flags' group title.
        shown: option -> the default to show instead (``compare``'s candidate run takes the baseline's models).
    """
    group = parser.add_argument_group(title)
    for name, default in SHARED_DEFAULTS.items():
        flag, meaning = flag_for(name), OPTION_HELP[name].split(":")[0]
        default_text = (shown or {}).get(name, "none" if default is None else str(default))
        common: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS}
        if name in ("simulator_model", "judge_model"):
            default_text = (shown or {}).get(name, "the environment's")
            group.add_argument(flag, type=_name_or_mapping, metavar="SPEC",
                               help=f"{meaning}; a name or a YAML mapping (default: {default_text})", **common)
        elif name in ("judge_samples", "concurrency"):
            group.add_argument(flag, type=_int, metavar="N", help=f"{meaning} (default: {default_text})", **common)
        elif name == "store":
            group.add_argument(flag, metavar="URL",
                               help=f"{meaning}'s URL (default: CONVOEVAL_STORE_URL, else the local SQLite file)",
                               **common)
        elif name == "progress":
            group.add_argument(flag, choices=("bar", "lines", "off"), help=f"{meaning} (default: bar)", **common)
            group.add_argument("--no-progress", action="store_const", const=False, help="no progress display",
                               **common)
        elif name == "simulator_gate":
            group.add_argument(flag, nargs="?", const=True, type=_yaml_mapping, metavar="YAML",
                               help=f"{meaning}; with a value, a YAML mapping (default: on)", **common)
            group.add_argument(f"--no-{flag[2:]}", action="store_const", const=False, help=f"switch {flag} off",
                               **common)
        elif name == "simulator":
            group.add_argument(flag, choices=("agenda", "llm"),
                               help=f"{meaning} (default: agenda on the embedded model, llm on any other)", **common)
        else:  # a new shared option needs its command-line form here (tests/test_shared_options.py)
            raise TypeError(f"SharedOptions.{name} has no command-line form: teach convoeval/cli/config_flags.py one")


def given_options(args: argparse.Namespace) -> SharedOptions:
    """The shared options the user typed (a flag not given is left out: the verb's default applies)."""
    return cast(SharedOptions, {name: getattr(args, name) for name in SHARED_DEFAULTS if hasattr(args, name)})
