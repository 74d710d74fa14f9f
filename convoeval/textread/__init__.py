"""Reading people's data in text, below every layer that needs it (docs/layout.md).

``folding.fold`` folds text one character for one (lower case, no accents; not re-exported: ``simulator.agenda``
has a ``fold`` of its own); ``reading.read`` also writes numbers said in words as digits (text2num); ``when.dates``
and ``when.times`` read dates and times, ``numbers`` digit groups (CPFs, phones, masked or not) and money,
``names`` known people's names in their forms, ``addresses`` street addresses and postal codes, in pt-BR, en and es.
``pii.find_pii`` is the public reading API over them: every span of a text that holds personal data, with no list of
values to look for (a scrubber's; issue #44).

The privacy red team's detector reads agents' messages with these readers, and the reference clinic agents read a
caller's birth date with the same functions: a date the detector would find in a message is a date the agents
accept when a caller verifies another patient. ``when`` loads babel (CLDR month and weekday names) and ``reading``
text2num: the package exports them lazily, so importing ``folding`` loads neither, and the agents import ``when``
only when they read a date, so a conversation's start does not load it.
"""

from convoeval._util.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.textread.when": ("dates", "times"),
    "convoeval.textread.pii": ("PII_KINDS", "Found", "find_pii"),
})
