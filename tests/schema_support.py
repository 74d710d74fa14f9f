"""The JSON Schema a fresh ``convoeval schema`` process writes, for the tests that check the shipped ones.

A schema lists the agent names registered when it is written, and tests register names of their own (a toy clinic
agent, τ²'s ``tau2-airline``): compared in the suite's own process, the shipped file would depend on which tests ran
before. A fresh process is what a user's ``convoeval schema --out`` writes, so that is what the shipped file must equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def shipped_schema(kind: str) -> dict[str, Any]:
    """The schema committed in ``convoeval/schemas/``."""
    return json.loads((REPO / "convoeval" / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def fresh_schema(kind: str) -> dict[str, Any]:
    """What ``convoeval schema --kind KIND`` prints in a new process."""
    out = subprocess.run([sys.executable, "-m", "convoeval.cli", "schema", "--kind", kind], cwd=REPO,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return json.loads(out)
