"""Path assertions and checkpoints: did the agent follow the procedure, and is what it says backed by what it did?

The database assertions (``convoeval.store.assertions``) see the end state; these read the conversation's recorded
path (its turns, messages and tool calls with their arguments and results), with no LLM:

* ``check_path(rows, scenario.assertions.path, locale=…, store=…, seeded=…)``: order, counts, arguments, a write
  only after the patient's yes, and claims backed by evidence;
* ``check_checkpoints(rows, scenario.checkpoints, …)``: the same checks on the conversation up to the turn a
  checkpoint fires at (a tool's first call, or a turn).

``check_whatsapp_limits(rows, scenario.assertions.whatsapp_limits)`` reads the agent's recorded messages against
WhatsApp's limits (``convoeval.channel.limits``; ``limits.py``).

All return ``AssertionResult`` rows (``path:…``, ``checkpoint:…`` and ``whatsapp_limits`` keys), which the run
records beside the database assertions. The YAML is described in ``convoeval.scenarios.path_models`` and ``docs/path-assertions.md``.
"""

from convoeval.pathcheck.checks import says_yes
from convoeval.pathcheck.limits import check_whatsapp_limits
from convoeval.pathcheck.log import Call, PathLog, PathTurn
from convoeval.pathcheck.run import PATH_CHECKERS, check_checkpoints, check_path

__all__ = ["PATH_CHECKERS", "Call", "PathLog", "PathTurn", "check_checkpoints", "check_path", "check_whatsapp_limits",
           "says_yes"]
