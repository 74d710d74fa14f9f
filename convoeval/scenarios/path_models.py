"""Path assertions and checkpoints as they are written in a scenario file (the checks live in ``convoeval.pathcheck``).

A path assertion is about *how* the conversation went, read from its recorded tool calls and messages: the order of
tool calls, how many calls of a tool, the arguments of a call, a write only in answer to the patient's yes, and every
action the agent says it did backed by a tool call. Each item of ``assertions.path`` names its kind by one key:

.. code-block:: yaml

    assertions:
      path:
        - order: [list_invoices, create_payment_link]       # every create_payment_link after a list_invoices
        - calls: create_payment_link                        # at most one link
          at_most: 1
        - call: create_payment_link                         # every link by Pix, for the seeded invoice
          args: {method: pix, invoice_id: {fixture: invoices.eval-inv-30}}
        - confirmed_before: [create_payment_link]           # only in answer to the patient's yes
        - claims_backed: [payment_link, amount]             # what the agent says it did, the tool log shows

A checkpoint (conversational scenarios) fires when a tool is first called or after a given turn and checks its own
path assertions on the conversation up to that point.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = ["BACKED_KINDS", "PATH_PREFIXES", "ArgsCheck", "Checkpoint", "CheckpointWhen", "ClaimsCheck", "checkpoint_key",
           "PathRefsChecked", "path_refs_problem",
           "ConfirmedCheck", "CountCheck", "FixtureRef", "OrderCheck", "PathAssertion", "path_key"]

#: The prefixes of the keys of path assertion rows (``path:…``) and checkpoint rows (``checkpoint:<id>…``): rows about
#: the agent's process, which the goal verdict and the simulator gate leave out like ``tools_called``.
PATH_PREFIXES = ("path:", "checkpoint:")

#: The claim kinds ``claims_backed`` can check against the tool log (``time``: the time a "booked"/"moved" message
#: states is the time of the slot written).
BACKED_KINDS = ("payment_link", "amount", "booked", "moved", "cancelled", "confirmed", "recorded", "handoff", "time")
BackedKind = Literal["payment_link", "amount", "booked", "moved", "cancelled", "confirmed", "recorded", "handoff",
                     "time"]

_ID = r"^[a-z0-9][a-z0-9._-]*$"
Tool = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Path(_Strict):
    id: Annotated[str, Field(pattern=_ID)] | None = Field(
        default=None, description="Names the result row (path:<id>) so a rubric criterion can link to it.")


class OrderCheck(_Path):
    """``order: [A, B, C]``: every call of B comes after a call of A, every call of C after a call of B.

    A tool never called breaks nothing by itself (``tools_called`` or ``calls`` require a call)."""

    order: Annotated[list[Tool], Field(min_length=2)]


class CountCheck(_Path):
    """``calls: X`` with ``at_most``, ``at_least`` and/or ``exactly``: how many times X was called."""

    calls: Tool
    at_most: Annotated[StrictInt, Field(ge=0)] | None = None
    at_least: Annotated[StrictInt, Field(ge=0)] | None = None
    exactly: Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> CountCheck:
        if self.at_most is None and self.at_least is None and self.exactly is None:
            raise ValueError("calls needs at_most, at_least or exactly")
        if self.exactly is not None and (self.at_most is not None or self.at_least is not None):
            raise ValueError("exactly cannot be combined with at_most or at_least")
        return self


class FixtureRef(_Strict):
    """``{fixture: invoices.eval-inv-30}``: the per-run id of a row the scenario's fixtures seed."""

    fixture: Annotated[str, Field(pattern=r"^[a-z_]+\.[^.\s]+$", description="<table>.<fixture id>")]

    @property
    def table(self) -> str:
        return self.fixture.split(".", 1)[0]

    @property
    def ref(self) -> str:
        return self.fixture.split(".", 1)[1]


ArgValue: TypeAlias = StrictBool | StrictInt | StrictFloat | str | None | FixtureRef


class ArgsCheck(_Path):
    """``call: X`` with ``args: {name: value}``: the calls of X carry these argument values.

    ``which`` picks the calls: ``every`` (default), ``any`` (at least one) or ``last``. A tool never called fails:
    there is no argument to check."""

    call: Tool
    args: Annotated[dict[str, ArgValue], Field(min_length=1)]
    which: Literal["every", "any", "last"] = "every"


class ConfirmedCheck(_Path):
    """``confirmed_before: [X, …]``: each call of these tools is made in answer to the patient's confirmation.

    A call is confirmed when the agent's previous message asked a question and the patient's message of the same turn
    says yes (a yes word of any locale, and no no word). ``yes_words`` replaces the yes words (regular expressions,
    matched as whole words on accent-folded lower-case text)."""

    confirmed_before: Annotated[list[Tool], Field(min_length=1)]
    yes_words: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] | None = None


class ClaimsCheck(_Path):
    """``claims_backed: [kind, …]`` (or ``true`` for every kind in ``BACKED_KINDS``): every such claim in the agent's
    messages is backed by the tool log (and, for payment URLs, the store) at or before the message. ``backed_by``
    replaces the clinic tools that back a kind (``convoeval.pathcheck.evidence.BACKED_BY``)."""

    claims_backed: Literal[True] | Annotated[list[BackedKind], Field(min_length=1)]
    backed_by: dict[Literal["payment_link", "booked", "moved", "cancelled", "confirmed", "recorded", "handoff"],
                    Annotated[list[Tool], Field(min_length=1)]] | None = Field(
        default=None, description="The tools whose successful call backs a kind of claim, replacing the clinic's "
                                  "(e.g. booked: [create_reservation]).")

    @property
    def kinds(self) -> tuple[str, ...]:
        return BACKED_KINDS if self.claims_backed is True else tuple(self.claims_backed)


_KINDS: dict[str, type[BaseModel]] = {"order": OrderCheck, "calls": CountCheck, "call": ArgsCheck,
                                       "confirmed_before": ConfirmedCheck, "claims_backed": ClaimsCheck}
_ONE_KIND = "a path assertion needs exactly one of order, calls, call, confirmed_before, claims_backed"


def _one_kind(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate a path item as the model its kind key names, so a bad item gets that model's error alone."""
    try:
        return handler(value)
    except ValidationError:
        found = [model for key, model in _KINDS.items() if isinstance(value, dict) and key in value]
        if len(found) != 1:
            raise PydanticCustomError("path_kind", _ONE_KIND) from None
        try:
            found[0].model_validate(value)
        except ValidationError as exc:
            # The deepest error says most ("claims_backed.0: Input should be 'payment_link', …"); the union
            # members' type tags ("list[…]", "literal[True]") are no field names.
            first = max(exc.errors(), key=lambda e: len(e["loc"]))
            where = ".".join(str(part) for part in first["loc"] if "[" not in str(part))
            message = str(first["msg"]).removeprefix("Value error, ")
            raise PydanticCustomError("path_item", "{message}",
                                      {"message": f"{where}: {message}" if where else message}) from None
        raise  # pragma: no cover - the union refused what its member accepts


# A plain union (each kind has its own required key and forbids the others), not a tagged one: a callable
# discriminator makes pydantic emit the scenario's JSON Schema through a $ref wrapper.
PathAssertion: TypeAlias = Annotated[OrderCheck | CountCheck | ArgsCheck | ConfirmedCheck | ClaimsCheck,
                                     WrapValidator(_one_kind)]


def path_key(check: _Path) -> str:
    """The key of a path assertion's result row: ``path:<id>``, or one built from what it checks."""
    if check.id:
        return f"path:{check.id}"
    if isinstance(check, OrderCheck):
        return f"path:order({' < '.join(check.order)})"
    if isinstance(check, CountCheck):
        bounds = [f"{op}{n}" for op, n in (("<=", check.at_most), (">=", check.at_least), ("==", check.exactly))
                  if n is not None]
        return f"path:calls({check.calls}){','.join(bounds)}"
    if isinstance(check, ArgsCheck):
        return f"path:args({check.call}.{','.join(check.args)})"
    if isinstance(check, ConfirmedCheck):
        return f"path:confirmed_before({', '.join(check.confirmed_before)})"
    if isinstance(check, ClaimsCheck):
        return f"path:claims_backed({', '.join(check.kinds)})"
    raise TypeError(f"not a path assertion: {type(check).__name__}")


class CheckpointWhen(_Strict):
    """When a checkpoint fires: the first turn whose agent reply calls ``tool``, or after the agent's reply of
    ``turn`` (1-based). Exactly one of the two."""

    tool: Tool | None = None
    turn: Annotated[StrictInt, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> CheckpointWhen:
        if (self.tool is None) == (self.turn is None):
            raise ValueError("a checkpoint fires on exactly one of tool or turn")
        return self


class Checkpoint(_Strict):
    """A mid-conversation check: when ``when`` fires, ``path`` is checked on the conversation up to that turn, and
    the ``rubric`` criteria are judged on it (conversational runs; one more judge call per checkpoint that fired).

    ``required`` (default true): a checkpoint that never fires is a failed row, never a silent pass."""

    id: Annotated[str, Field(pattern=_ID)]
    when: CheckpointWhen
    path: list[PathAssertion] = Field(default_factory=list)
    rubric: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="Criteria judged on the conversation up to the turn the checkpoint fires at.")
    required: bool = True

    @model_validator(mode="after")
    def _checks_something(self) -> Checkpoint:
        if not self.path and not self.rubric:
            raise ValueError("a checkpoint needs path assertions, rubric criteria, or both")
        return self

    def criterion(self, text: str) -> str:
        """How a criterion of this checkpoint reads in the rubric rows: ``[checkpoint <id>] <text>``."""
        return f"[checkpoint {self.id}] {text}"


def checkpoint_key(checkpoint: Checkpoint, check: _Path) -> str:
    """The key of one checkpoint assertion's row: ``checkpoint:<id>:<what the path assertion checks>``."""
    return f"checkpoint:{checkpoint.id}:{path_key(check).removeprefix('path:')}"


def _fixture_ids(fixtures: Any, table: str) -> list[str] | None:
    rows = getattr(fixtures, table, None)
    return None if not isinstance(rows, list) else [r.id for r in rows]


def path_refs_problem(scenario: object) -> str | None:
    """The first problem of a scenario's path assertions and checkpoints that a single field cannot see, or None.

    A ``{fixture: <table>.<id>}`` argument must name a row the fixtures seed, two path assertions (or checkpoints)
    must not share a key, and a rubric criterion's ``assertion: path:…`` must name one of them.
    """
    assertions = getattr(scenario, "assertions", None)
    located: list[tuple[str, Any, str]] = [(f"assertions.path[{i}]", c, path_key(c))
                                           for i, c in enumerate(getattr(assertions, "path", None) or [])]
    checkpoints = getattr(scenario, "checkpoints", None) or []
    for i, cp in enumerate(checkpoints):
        located += [(f"checkpoints[{i}].path[{j}]", c, checkpoint_key(cp, c)) for j, c in enumerate(cp.path)]
    keys: dict[str, str] = {}
    for where, check, key in located:
        if key in keys:
            return f"{where}: {key} repeats {keys[key]}; give one of them an id"
        keys[key] = where
        for name, value in (check.args.items() if isinstance(check, ArgsCheck) else ()):
            if isinstance(value, FixtureRef):
                ids = _fixture_ids(getattr(scenario, "fixtures", None), value.table)
                if ids is None or value.ref not in ids:
                    known = ", ".join(ids) if ids else "none"
                    return (f"{where}.args.{name}: fixture {value.fixture!r} is not seeded by this scenario "
                            f"(fixtures.{value.table}: {known})")
    seen = {cp.id for cp in checkpoints}
    if len(seen) != len(checkpoints):
        return "checkpoints: two checkpoints share an id"
    known_keys = set(keys) | {f"checkpoint:{cid}" for cid in seen}
    for i, criterion in enumerate(getattr(scenario, "rubric", None) or []):
        link = getattr(criterion, "assertion", None)
        if link and link.startswith(PATH_PREFIXES) and link not in known_keys:
            shown = ", ".join(sorted(known_keys)) or "none (the scenario has no path assertions)"
            return f"rubric[{i}].assertion: {link!r} names no path assertion of this scenario; expected one of {shown}"
    return None


class PathRefsChecked(BaseModel):
    """Mixed into the scenario models: ``path_refs_problem`` runs once the whole scenario is read."""

    @model_validator(mode="after")
    def _path_refs(self) -> Any:
        problem = path_refs_problem(self)
        if problem:
            raise ValueError(problem)
        return self
