"""The path assertions read from the tool log alone: order, counts, arguments, and a write only after a yes.

Each takes the assertion (``convoeval.scenarios.path_models``) and a ``PathContext`` and returns one
``AssertionResult``; ``convoeval.pathcheck.run`` picks the function by the assertion's type.
"""

from __future__ import annotations

import re
from typing import Any

from convoeval.fidelity.text import fold_keeping_offsets as fold
from convoeval.pathcheck.context import PathContext, result
from convoeval.pathcheck.log import Call
from convoeval.scenarios.path_models import ArgsCheck, ConfirmedCheck, CountCheck, FixtureRef, OrderCheck, path_key
from convoeval.store.assertions import AssertionResult

__all__ = ["NO_WORDS", "YES_WORDS", "check_args", "check_confirmed", "check_count", "check_order", "says_yes"]

#: Words that make a patient message a yes, in pt-BR, en and es (accent-folded, lower-case, whole words). Not "s":
#: "what's pix?" would read as a yes.
YES_WORDS = (r"sim", r"ss", r"yes", r"yep", r"yeah", r"yup", r"sure", r"ok", r"okay", r"si", r"claro", r"pode",
             r"podes", r"confirmo", r"confirmado", r"confirm", r"confirmed", r"isso", r"exato", r"certo", r"perfeito",
             r"vale", r"dale", r"bora", r"correct", r"right", r"go ahead", r"de acuerdo", r"adelante", r"of course",
             r"please do", r"pode ser", r"fechado", r"combinado", r"perfecto", r"perfect")
#: Words that undo a yes ("não", "not now", "I don't"); "no" only as the message's first word (pt "no" is "in the").
NO_WORDS = re.compile(r"\b(?:nao|nunca|never|not|nope|jamais|tampoco)\b|n't\b|^\W*no\b")


def _words(patterns: tuple[str, ...] | list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in patterns) + r")\b")


_YES = _words(YES_WORDS)


def says_yes(text: str, yes_words: list[str] | None = None) -> bool:
    """Whether a patient message says yes: a yes word and no word that undoes it (accent-folded, lower-case).

    Example:
        >>> says_yes("Sim, pode gerar"), says_yes("não, prefiro boleto"), says_yes("Sí, confirmo")
        (True, False, True)
    """
    folded = fold(text)
    pattern = _words(yes_words) if yes_words else _YES
    return bool(pattern.search(folded)) and not NO_WORDS.search(folded)


def _names(calls: list[Call]) -> list[str]:
    return [c.name for c in calls]


def check_order(check: OrderCheck, ctx: PathContext) -> AssertionResult:
    """Every call of each listed tool comes after a call of the tool listed before it."""
    key, calls = path_key(check), ctx.log.calls
    actual = [c.name for c in calls if c.name in check.order]
    for before, after in zip(check.order, check.order[1:], strict=False):
        first = next((c.index for c in calls if c.name == before), None)
        early = next((c for c in calls if c.name == after and (first is None or c.index < first)), None)
        if early is not None:
            said = "never called" if first is None else f"first called later (turn {calls[first].turn})"
            return result(key, check.order, actual, False,
                          f"{after} was called at turn {early.turn} before any {before} ({before} {said})")
    return result(key, check.order, actual, True, f"calls in the order {' < '.join(check.order)}")


def check_count(check: CountCheck, ctx: PathContext) -> AssertionResult:
    """How many times the tool was called (failed calls count: the agent tried)."""
    key = path_key(check)
    n = _names(ctx.log.calls).count(check.calls)
    bounds = {"at_most": check.at_most, "at_least": check.at_least, "exactly": check.exactly}
    expected = {k: v for k, v in bounds.items() if v is not None}
    passed = ((check.at_most is None or n <= check.at_most) and (check.at_least is None or n >= check.at_least)
              and (check.exactly is None or n == check.exactly))
    wanted = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in expected.items())
    detail = f"{check.calls} called {n} time(s), expected {wanted}"
    return result(key, expected, n, passed, detail if not passed else f"{check.calls} called {n} time(s) ({wanted})")


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return actual == expected
    return actual == expected or (actual is not None and expected is not None and str(actual) == str(expected))


def check_args(check: ArgsCheck, ctx: PathContext) -> AssertionResult:
    """The calls of the tool (``every``, ``any`` or the ``last``) carry the expected argument values."""
    key = path_key(check)
    wanted = {name: ctx.resolve(value, f"{key}.args.{name}") for name, value in check.args.items()}
    shown = {name: (v.fixture if isinstance(v, FixtureRef) else v) for name, v in check.args.items()}
    calls = [c for c in ctx.log.calls if c.name == check.call]
    if not calls:
        return result(key, shown, None, False, f"{check.call} was never called: no arguments to check")
    actual = [{name: c.arguments.get(name) for name in wanted} for c in calls]
    matching = [all(_same(c.arguments.get(n), v) for n, v in wanted.items()) for c in calls]
    chosen = {"every": matching, "any": matching, "last": matching[-1:]}[check.which]
    passed = any(chosen) if check.which == "any" else all(chosen)
    if passed:
        return result(key, shown, actual, True, f"{check.which} {check.call} call with {_show(shown)}")
    bad = next(c for c, ok in zip(calls, matching, strict=True) if not ok) if check.which == "every" else calls[-1]
    got = {n: bad.arguments.get(n) for n in wanted}
    return result(key, shown, actual, False, f"expected {check.which} {check.call} call with {_show(shown)}, got "
                                            f"{_show(got)} at turn {bad.turn}")


def _show(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def check_confirmed(check: ConfirmedCheck, ctx: PathContext) -> AssertionResult:
    """Each call of the listed tools is made in a turn where the agent had asked and the patient said yes."""
    key = path_key(check)
    turns = ctx.log.turns
    unconfirmed = []
    for i, turn in enumerate(turns):
        writes = [c for c in turn.calls if c.name in check.confirmed_before]
        if not writes:
            continue
        asked = i > 0 and "?" in (turns[i - 1].agent or "")
        if not (asked and says_yes(turn.patient, check.yes_words)):
            why = "the agent had asked nothing" if not asked else f"the patient said {turn.patient!r}"
            unconfirmed.append(f"turn {turn.turn}: {writes[0].name} ({why})")
    if unconfirmed:
        return result(key, "every call after the patient's yes", unconfirmed, False,
                      f"called without the patient's confirmation: {'; '.join(unconfirmed)}")
    return result(key, "every call after the patient's yes", [], True,
                  f"{', '.join(check.confirmed_before)} only after the patient's yes")
