"""What conversations run with: ``RunOptions`` (one batch's target, models, store, judges' settings, gate), the default
target of a scenario, and ``SharedOptions``: the options every verb that runs a batch of conversations takes, declared
once with their defaults.

``fork``, ``fork_profile``, the fault study (``run_fault_study``) and a comparison's candidate run (``run_candidate``)
take the same options under the same names: the models, the judges' samples, how many conversations run at once, the
store, the progress display and the simulator-failure gate. Each verb declares them as ``**options:
Unpack[SharedOptions]`` (or a ``SharedOptions`` subclass with its own, like ``ForkOptions``), so mypy and editors see
every option's type; ``settle`` refuses an unknown option with a ``TypeError`` naming it and fills in the defaults of
``SHARED_DEFAULTS``. ``tests/test_shared_options.py`` holds the verbs, ``EvalConfig`` and ``run_conversation`` to these
defaults, so they cannot drift apart.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast, get_args

from convoeval.agents import as_agent, get_agent
from convoeval.agents.base import Agent, AgentLike
from convoeval.llm.models import ModelLike, as_chat_model
from convoeval.pipeline.progress import Mode
from convoeval.scenarios import Scenario
from convoeval.simulator.gate import GateSettings, gate_settings
from convoeval.store import Store, open_store

if TYPE_CHECKING:
    from convoeval.pipeline.config import EvalConfig
    from convoeval.pipeline.jobs import Job

__all__ = ["OPTION_HELP", "SHARED_DEFAULTS", "Log", "RunOptions", "SharedOptions", "default_target", "opened_store",
           "settle", "shared_options_table"]

#: Called with one line per event when a run is verbose (``--verbose``).
Log = Callable[[str], None]


def default_target(scenario: Scenario) -> str:
    """The reference clinic agent for the scenario's agent type, e.g. ``clinic:billing``; for a scenario of another
    domain, that domain's ``default_target`` (``openai-chat`` for τ²'s)."""
    if scenario.domain and scenario.domain != "clinic":
        from convoeval.domains import get_domain  # noqa: PLC0415 - only another domain's scenarios need it (start-up budget, tests/test_startup.py)

        return str(getattr(get_domain(scenario.domain), "default_target", None) or f"clinic:{scenario.agent}")
    return f"clinic:{scenario.agent}"


class SharedOptions(TypedDict, total=False):
    """The options of every verb that runs a batch of conversations (``fork``, ``fork_profile``, ``run_fault_study``,
    ``run_candidate``); each is optional. Their defaults are ``SHARED_DEFAULTS``, their meanings ``OPTION_HELP``:
    ``shared_options_table()`` shows both (``docs/verbs.md`` prints it).
    """

    simulator_model: ModelLike
    judge_model: ModelLike
    judge_samples: int
    concurrency: int
    store: Store | str | None
    progress: bool | Mode
    simulator_gate: bool | Mapping[str, Any] | GateSettings
    simulator: str | None


#: The shared options' defaults, declared once (``EvalConfig`` and ``run_conversation`` use the same; a test holds it).
SHARED_DEFAULTS: SharedOptions = {
    "simulator_model": None,
    "judge_model": None,
    "judge_samples": 1,
    "concurrency": 4,
    "store": None,
    "progress": True,
    "simulator_gate": True,
    "simulator": None,
}

#: What each shared option means; the words before a colon are the help of its command-line flag.
OPTION_HELP: dict[str, str] = {
    "simulator_model": "the simulated patient's model: a name, 'local', a mapping of settings, a ModelSpec or a chat "
                       "model (None: the environment's)",
    "judge_model": "the judges' model, as simulator_model",
    "judge_samples": "independent samples per judge and conversation",
    "concurrency": "conversations in flight at once",
    "store": "the fixtures store: an open Store (left open), a URL (opened, closed after) or None "
             "(CONVOEVAL_STORE_URL, else the local SQLite file)",
    "progress": "how progress shows: True or 'bar' (a bar), 'lines' (plain lines: notebooks, logs), False or 'off'",
    "simulator_gate": "stop a conversation whose simulated patient breaks (simulator_failure, never judged): True, "
                      "False or a mapping of gate settings such as {'parrot_turns': 3}",
    "simulator": "the simulated patient: 'agenda' (rules decide, the model voices), 'llm' (the model plays it) or "
                 "None (agenda on the embedded local model, llm on any other; docs/simulator.md)",
}


def shared_options_table() -> str:
    """The shared options as a Markdown table: option, default, meaning.

    Example:
        >>> print(shared_options_table().splitlines()[3])
        | `judge_model` | `None` | the judges' model, as simulator_model |
    """
    rows = ["| option | default | meaning |", "|---|---|---|"]
    rows += [f"| `{name}` | `{default!r}` | {OPTION_HELP[name]} |" for name, default in SHARED_DEFAULTS.items()]
    return "\n".join(rows)


_Options = TypeVar("_Options", bound=Mapping[str, object])


def settle(verb: str, given: Mapping[str, object], defaults: _Options) -> _Options:
    """A verb's options with the defaults filled in; ``defaults`` names every option the verb takes.

    Args:
        verb: the verb's name, for the error (``"fork"``).
        given: the options the caller passed (a verb's ``**options``).
        defaults: every option of the verb with its default (``SHARED_DEFAULTS``, or a superset such as
            ``FORK_DEFAULTS``).

    Raises:
        TypeError: an option the verb does not take, named, with the closest known one (``mypy`` says the same
            before the code runs).
        ValueError: a ``progress`` that is not a mode, or a ``concurrency`` / ``judge_samples`` below 1, named.

    Example:
        >>> settle("fork", {"concurrency": 2}, SHARED_DEFAULTS)["concurrency"], SHARED_DEFAULTS["concurrency"]
        (2, 4)
        >>> settle("fork", {"concurency": 2}, SHARED_DEFAULTS)
        Traceback (most recent call last):
        TypeError: fork() got an unexpected keyword argument 'concurency' (did you mean 'concurrency'?)
    """
    unknown = [name for name in given if name not in defaults]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, list(defaults), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f"; its options are {', '.join(sorted(defaults))}"
        raise TypeError(f"{verb}() got an unexpected keyword argument {name!r}{hint}")
    # A shared option given as None is not given: its default applies (run_candidate documents None so; before, a
    # progress=None reached the progress reporter as a mode).
    given = {name: value for name, value in given.items() if value is not None or name not in SHARED_DEFAULTS}
    _check_values(verb, given)
    return cast(_Options, {**defaults, **given})


def _check_values(verb: str, given: Mapping[str, object]) -> None:
    # The names are checked above and by mypy; these values would otherwise fail far from the call, or not at all
    # (an unknown progress mode showed no bar and no error).
    progress = given.get("progress", True)
    if not isinstance(progress, bool) and progress not in get_args(Mode):
        raise ValueError(f"{verb}(): progress must be True, False, 'bar', 'lines' or 'off', got {progress!r}")
    for name in ("concurrency", "judge_samples"):
        value = given.get(name, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{verb}(): {name} must be a whole number of at least 1, got {value!r}")


@contextlib.contextmanager
def opened_store(store: Store | str | None) -> Iterator[Store]:
    """The ``store`` option as an open store: an open ``Store`` as is (its owner closes it), else ``open_store(url)``,
    closed on the way out."""
    if isinstance(store, Store):
        yield store
        return
    with open_store(store) as opened:
        yield opened


@dataclass
class RunOptions:
    """How to run: which agent, which models, how many judge samples. Shared by every run of a batch."""

    #: The agent under test (``AgentLike``); ``None``: each scenario's reference clinic agent.
    target: AgentLike | None = None
    simulator_model: ModelLike = None
    judge_model: ModelLike = None
    judge_samples: int = 1
    verbose: Log | None = None
    store: Store | None = None
    agents: dict[str, Agent] = field(default_factory=dict)
    #: Called with (conversation label, turn) as each turn starts: the run's progress display.
    on_turn: Callable[[str, int], None] | None = None
    #: The simulator-failure gate's checks and thresholds (``convoeval.simulator.gate``); ``None`` switches it off.
    gate: GateSettings | None = field(default_factory=lambda: gate_settings(True))
    #: A conversation the gate stopped is simulated again with the next seed, sampled, up to this many times.
    resimulate: int = 0
    #: The simulated patient: ``"agenda"``, ``"llm"`` or ``None`` (agenda on the embedded local model, else llm;
    #: ``convoeval.simulator.choice.resolve_simulator``).
    simulator: str | None = None

    def __post_init__(self) -> None:
        if self.target is not None and not isinstance(self.target, str):  # an Agent or a callable: built once
            agent = as_agent(self.target)
            self.agents[agent.name] = agent
            self.target = agent.name

    @classmethod
    def from_config(cls, config: EvalConfig, *, store: Store | None = None, verbose: Log | None = None,
                    agents: dict[str, Agent] | None = None,
                    on_turn: Callable[[str, int], None] | None = None) -> RunOptions:
        """The run options of a whole run's ``EvalConfig``: ``run_eval`` in this process, and each Dask worker from
        the configuration it is sent (``convoeval.pipeline.distributed``). The models are built (``as_chat_model``),
        the gate's settings read; ``agents`` are those ``run_eval`` built up front (``build_agents``), shared."""
        return cls(target=config.target, simulator_model=as_chat_model("simulator", config.simulator_model),
                   judge_model=as_chat_model("judge", config.judge_model), judge_samples=config.judge_samples,
                   store=store, verbose=verbose, agents=agents if agents is not None else {}, on_turn=on_turn,
                   gate=config.gate_settings(), resimulate=config.resimulate, simulator=config.simulator)

    @classmethod
    def from_shared(cls, options: SharedOptions, *, store: Store | None, target: AgentLike | None = None,
                    verbose: Log | None = None, roles: tuple[str, ...] = ("simulator", "judge")) -> RunOptions:
        """The run options of a verb's settled ``SharedOptions``: the models built (``as_chat_model``: a name or
        ``"local"`` handed on as is would fail every call), the gate's settings, the store already opened (``None``:
        ``open_store()`` per conversation). Only the models of ``roles`` are built (``jobs.model_roles``: a scripted
        red team calls neither); the others are left as given, built on first use if ever."""
        settled: SharedOptions = {**SHARED_DEFAULTS, **options}
        simulator, judge = settled["simulator_model"], settled["judge_model"]
        return cls(target=target, simulator_model=as_chat_model("simulator", simulator) if "simulator" in roles
                   else simulator, judge_model=as_chat_model("judge", judge) if "judge" in roles else judge,
                   judge_samples=settled["judge_samples"], store=store, verbose=verbose,
                   gate=gate_settings(settled["simulator_gate"]), simulator=settled["simulator"])

    def target_for(self, job: Job) -> str:
        """The target string ``job`` runs against: its own, else this batch's, else its scenario's reference agent."""
        if job.target:
            return job.target
        return self.target if isinstance(self.target, str) and self.target else default_target(job.scenario)

    def agent_for(self, job: Job) -> Agent:
        """The agent ``job`` talks to, built once per target and shared by every conversation of the batch."""
        target = self.target_for(job)
        if target not in self.agents:
            self.agents[target] = get_agent(target)
        return self.agents[target]
