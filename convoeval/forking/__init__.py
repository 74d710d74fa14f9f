"""From a failing conversation to where it went wrong: fork it at a turn, or at every turn (its failure profile).

``fork(run, at_turn=k, n=5)`` replays the conversation's first k patient messages verbatim against the agent on a
freshly seeded store, then lets the simulator continue n times with new seeds; every continuation is judged and
asserted as any run. ``fork_profile(run, n=5)`` does it at every turn and gives the failure rate of the continuations
per fork point; ``locate_failure`` names the turn after which failure becomes likely. See ``docs/fork.md``.

Example (runs the forks, so not run as a doctest)::

    from convoeval.forking import fork_profile
    profile = fork_profile("reports/run", conversation="billing-conv-happy-payment__s42__t1")
    profile.summary()
    # 'it went wrong at turn 3: forked after it, 100% of the continuations fail; forked before it, 40%'
"""

from convoeval.forking._profile import (
    FAILING,
    PROFILE_COLUMNS,
    FailureProfile,
    afork_profile,
    failure_table,
    fork_profile,
    locate_failure,
)
from convoeval.forking._run import (
    DEFAULT_MAX_CALLS,
    FORK_DEFAULTS,
    Fork,
    ForkCost,
    ForkCostError,
    ForkOptions,
    afork,
    afork_turns,
    fork,
    fork_cost,
    fork_seeds,
)
from convoeval.forking._source import ConversationSource, load_conversation, patient_turns, scenario_of

__all__ = [
    "ConversationSource",
    "DEFAULT_MAX_CALLS",
    "FAILING",
    "FORK_DEFAULTS",
    "PROFILE_COLUMNS",
    "FailureProfile",
    "Fork",
    "ForkCost",
    "ForkCostError",
    "ForkOptions",
    "afork",
    "afork_profile",
    "afork_turns",
    "failure_table",
    "fork",
    "fork_cost",
    "fork_profile",
    "fork_seeds",
    "load_conversation",
    "locate_failure",
    "patient_turns",
    "scenario_of",
]
