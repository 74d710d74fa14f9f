"""Simulator fidelity: flag conversations whose simulated patient broke the scenario.

A judge's verdict on a conversation means little when the *patient* did not play its part: it revealed facts the
persona does not hold, wrote in another language than the scenario's locale, claimed ``[GOAL_COMPLETE]`` while the
database shows the goal not done, or parroted the agent. ``fidelity_flags`` runs four deterministic checks over
every conversational run (no LLM call) and returns one row per conversation × check; ``exclude_flagged`` drops the
flagged runs from every frame so that any aggregate can be recomputed without them. See docs/fidelity.md.

``flagged`` is NA when a check cannot be decided (no database verdict, no scenario, no message long enough), with
the reason in ``detail``; NA never counts as flagged.

The simulator-failure gate (``convoeval.simulator.gate``) reads the same text evidence while a conversation runs, and two more:
``agent_claims`` (what an agent's message says it did: a link sent, a booking, a hand-off) and ``role_reversal`` (a
patient speaking as the assistant).
"""

from convoeval.fidelity.claims import (  # noqa: F401 - the package is the name callers use
    CLAIM_KINDS,
    Claim,
    agent_claims,
)
from convoeval.fidelity.flags import (  # noqa: F401 - the package is the name callers use
    FIDELITY_SCHEMA,
    FIDELITY_SUMMARY_SCHEMA,
    exclude_flagged,
    fidelity_flags,
    fidelity_summary,
    flagged_runs,
)
from convoeval.fidelity.inputs import (  # noqa: F401 - the package is the name callers use
    CHECKS,
    THRESHOLDS,
)
from convoeval.fidelity.roles import (  # noqa: F401 - the package is the name callers use
    name_words,
    role_reversal,
    self_named,
)
from convoeval.fidelity.text import (  # noqa: F401 - the package is the name callers use
    LANGUAGE_OF_LOCALE,
    KnownFacts,
    copied_share,
    detect_language,
    message_words,
    unknown_facts,
)
