"""Where convoeval keeps local state: the SQLite store, the response cache, the local model and its server."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """The local state folder: ``$CONVOEVAL_HOME``, else ``$XDG_STATE_HOME/convoeval``, else ``~/.local/state/convoeval``.

    Created on first use.
    """
    root = os.environ.get("CONVOEVAL_HOME")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
        path = Path(base) / "convoeval"
    path.mkdir(parents=True, exist_ok=True)
    return path
