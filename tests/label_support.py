"""Synthetic results folders for the labelling tests: conversations with a 10-criterion rubric, several judge samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.report_support import conversation, merge, write_run_folder

XSS = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"


def labelled_run(folder: Path, *, n: int = 6, criteria: int = 10, scenarios: tuple[str, ...] = ("billing-a", "billing-b"),
                 agent_text: str = "Olá! Sua fatura é R$ 150,00.") -> Path:
    """``n`` conversations over ``scenarios`` (round robin), each with ``criteria`` criteria judged by two samples.

    Conversation ``i``'s samples disagree on ``i`` criteria (so conversation n-1 is the least certain), and its
    holistic score is 9.5 (far from every threshold). The criteria are texts with a comma, quotes and markup, so the
    CSV's quoting and the page's escaping are exercised.
    """
    parts: list[dict[str, list[dict[str, Any]]]] = []
    for i in range(n):
        run_id = f"run-{i:02d}"
        part = conversation(run_id, scenarios[i % len(scenarios)], seed=40 + i, trial=0,
                            rubric=[True] * criteria, agent_text=agent_text, holistic=9.5)
        rows = part["rubric"]
        for k, row in enumerate(rows):
            row["criterion"] = f"Criterion {k}: the agent said \"R$ 150,00\" <b>{k}</b>"
        second = [{**row, "sample": 1, "passed": not (k < i)} for k, row in enumerate(rows)]
        part["rubric"] = rows + second
        parts.append(part)
    return write_run_folder(folder, merge(*parts))
