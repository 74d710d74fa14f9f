"""Reading dates and times in text, below every layer that needs it (docs/layout.md).

``folding.fold`` folds text one character for one (lower case, no accents; not re-exported: ``simulator.agenda``
has a ``fold`` of its own); ``when.dates`` and ``when.times`` read dates and times in folded text, in pt-BR, en and
es. The privacy red team's detector reads agents' messages with them, and the reference clinic agents read a
caller's birth date with the same functions: a date the detector would find in a message is a date the agents
accept when a caller verifies another patient. ``when`` loads babel (CLDR month and weekday names): the package
exports it lazily, so importing ``folding`` loads no babel, and the agents import ``when`` only when they read a
date, so a conversation's start does not load it.
"""

from convoeval._util.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {"convoeval.textread.when": ("dates", "times")})
