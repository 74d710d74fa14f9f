"""Deprecated path of ``convoeval.stats._wide`` (the pure statistics moved to ``convoeval.stats``); this alias goes after one release.

The old module name is the same module object as the new one, so every name (and a test's monkeypatch) reaches it.
"""

import sys

from convoeval.stats import _wide as _moved

sys.modules[__name__] = _moved
