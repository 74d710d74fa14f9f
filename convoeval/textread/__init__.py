"""Reading dates and times in text, below every layer that needs it (docs/layout.md).

``folding.fold`` folds text one character for one (lower case, no accents; not re-exported: ``simulator.agenda``
has a ``fold`` of its own); ``when.dates`` and ``when.times`` read dates and times in folded text, in pt-BR, en and
es. The privacy red team's detector reads agents' messages with them, and the reference clinic agents read a
caller's birth date with the same functions: a date the detector would find in a message is a date the agents
accept when a caller verifies another patient. ``when`` loads babel (CLDR month and weekday names): the agents import
it only when they read a date, so a conversation's start does not load it.
"""

from convoeval.textread.when import dates, times

__all__ = ["dates", "times"]
