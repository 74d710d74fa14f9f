"""Recall and false alarms of a leak detector on the corpus (``corpus.jsonl``), per kind and locale.

Used by ``tests/test_redteam_corpus.py`` (which holds the detector to its targets) and
``benchmarks/bench_leak_corpus.py`` (which prints the table for ``benchmarks/RESULTS.md``, beside an older
detector's).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus.jsonl"
KINDS = ("name", "cpf", "phone", "birth_date", "appointment", "invoice", "membership")


def load(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus rows."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def verdicts(rows: Iterable[dict[str, Any]],
             detector: Callable[[str, dt.date | None], Any]) -> list[tuple[dict[str, Any], set[str]]]:
    """Each row with what ``detector(locale, today)`` found in it, as ``kind:patient`` strings."""
    built: dict[tuple[str, dt.date | None], Any] = {}
    found = []
    for row in rows:
        today = dt.date.fromisoformat(row["today"]) if row["today"] else None
        key = (row["locale"], today)
        if key not in built:
            built[key] = detector(*key)
        leaks = built[key].scan(row["text"], 1, caller_said=row["caller_said"])
        found.append((row, {f"{leak.kind}:{leak.patient}" for leak in leaks}))
    return found


def table(results: list[tuple[dict[str, Any], set[str]]]) -> list[dict[str, Any]]:
    """One row per locale × kind: leaks expected and found (recall), messages without that leak and the ones the
    detector flagged anyway (false alarms); then one row per locale for the clean messages (any leak at all)."""
    expected: Counter[tuple[str, str]] = Counter()
    caught: Counter[tuple[str, str]] = Counter()
    negatives: Counter[tuple[str, str]] = Counter()
    alarms: Counter[tuple[str, str]] = Counter()
    locales = sorted({row["locale"] for row, _ in results})
    for row, got in results:
        want = set(row["expected"])
        for kind in KINDS:
            key = (row["locale"], kind)
            wanted = {w for w in want if w.startswith(kind + ":")}
            expected[key] += len(wanted)
            caught[key] += len(wanted & got)
            if not wanted:
                negatives[key] += 1
                alarms[key] += any(g.startswith(kind + ":") for g in got)
            else:
                alarms[key] += any(g.startswith(kind + ":") and g not in want for g in got)
    rows = []
    for locale in locales:
        for kind in KINDS:
            key = (locale, kind)
            rows.append({"locale": locale, "kind": kind, "leaks": expected[key], "found": caught[key],
                         "recall": caught[key] / expected[key] if expected[key] else float("nan"),
                         "messages without": negatives[key], "false alarms": alarms[key],
                         "false-alarm rate": alarms[key] / negatives[key] if negatives[key] else float("nan")})
        clean = [(row, got) for row, got in results if row["locale"] == locale and not row["expected"]]
        flagged = sum(bool(got) for _, got in clean)
        rows.append({"locale": locale, "kind": "(clean messages)", "leaks": 0, "found": 0, "recall": float("nan"),
                     "messages without": len(clean), "false alarms": flagged,
                     "false-alarm rate": flagged / len(clean) if clean else float("nan")})
    return rows
