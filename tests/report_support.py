"""Synthetic runs for the report and sweep tests: the frames a real run writes, built by hand (no LLM, no store)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from convoeval import frames as F
from convoeval._util.html_blocks import _ICONS
from convoeval.frames import FRAME_SCHEMAS, RunFrames
from convoeval.pipeline.results import EvalResult

SCRIPT = "<script>alert('x')</script>"


def conversation(run_id: str, scenario: str = "billing-conv-happy-payment", *, agent: str = "billing",
                 seed: int = 42, trial: int = 1, status: str = "pass", score: float | None = 8.5,
                 rubric: list[bool | None] | None = None, agent_text: str = "Olá! Sua fatura é R$ 150,00.",
                 error: str | None = None, holistic: float | None = 8.0, assertion_ok: bool | None = True,
                 scripted: bool = False) -> dict[str, list[dict[str, Any]]]:
    """One conversation's rows in every frame: two turns, a tool call, a stop signal, rubric, holistic, assertion."""
    keys = {"run_id": run_id, "scenario": scenario, "agent": agent, "seed": seed, "trial": trial}
    rubric = [True, False] if rubric is None else rubric
    transcript = [
        {**keys, "target": f"clinic:{agent}", "turn": 1, "role": "patient", "text": "Oi, quero pagar",
         "bubbles": ["Oi, quero pagar"]},
        {**keys, "target": f"clinic:{agent}", "turn": 1, "role": "agent", "text": agent_text,
         "bubbles": [agent_text, "Prefere Pix ou boleto?"], "tools": ["list_invoices"],
         "tool_calls": [{"name": "list_invoices", "arguments": {"status": "all"},
                         "result": [{"amount": "150.00", "note": "<b>bold</b>"}]}], "latency_s": 0.4},
        {**keys, "target": f"clinic:{agent}", "turn": 2, "role": "patient", "text": "Pix, obrigado",
         "bubbles": ["Pix, obrigado"], "signal": "GOAL_COMPLETE"},
    ]
    rubric_rows = [
        {**keys, "criterion_index": i, "criterion": f"criterion {i} <i>", "passed": ok,
         "evidence": f"evidence {i} {SCRIPT}", "sample": 0, "prompt_version": "rubric-v1",
         "error": "criterion missing from the judge's answer" if ok is None else None}
        for i, ok in enumerate(rubric)
    ]
    holistic_rows = [] if scripted else [{
        **keys, **dict.fromkeys(F.HOLISTIC_DIMENSIONS, holistic), "overall": holistic, "issues": ["slow"],
        "suggestion": "be brief", "sample": 0, "prompt_version": "holistic-v1",
        "error": "holistic judge: bad JSON" if holistic is None else None}]
    turns = [{**keys, "turn": 1, "check_failures": ["response_contains: missing 'Pix'"], "correctness": 6.0,
              "helpfulness": 6.0, "tone": 6.0, "safety": 6.0, "conciseness": 6.0, "overall": 6.0, "sample": 0}
             ] if scripted else []
    n_ok = sum(1 for x in rubric if x)
    return {
        "runs": [{**keys, "type": "scripted" if scripted else "conversational", "target": f"clinic:{agent}",
                  "status": "error" if error else "completed", "stop_reason": "error" if error else "GOAL_COMPLETE",
                  "goal_completed": status == "pass", "n_messages": 3, "duration_s": 1.0, "error": error}],
        "scores": [{**keys, "status": status, "score": score, "rubric_score": 10 * n_ok / max(len(rubric), 1),
                    "rubric_passed": n_ok, "rubric_total": len(rubric), "holistic_overall": holistic,
                    "assertion_failures": 0 if assertion_ok else 1, "goal_completed": status == "pass",
                    "error": error}],
        "transcripts": transcript,
        "rubric": [] if scripted else rubric_rows,
        "holistic": holistic_rows,
        "turns": turns,
        "assertions": [{"run_id": run_id, "scenario": scenario, "assertion": "payment_link_created",
                        "expected": True, "actual": bool(assertion_ok), "passed": assertion_ok,
                        "message": "payment_link_created: true as expected" if assertion_ok
                        else "payment_link_created: expected true, got false"}],
        "calls": [{"role": "simulator", "provider": "local", "model": "qwen", "scenario": scenario, "seed": seed,
                   "trial": trial, "turn": 1, "prompt_tokens": 100, "completion_tokens": 10, "cache_hit": True,
                   "cost_usd": 0.0, "is_local_demo": True, "error": None}],
    }


def merge(*parts: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in [*FRAME_SCHEMAS, "calls"]}
    for part in parts:
        for name, rows in part.items():
            out[name].extend(rows)
    return out


def run_data(rows: dict[str, list[dict[str, Any]]], out_dir: Path | str = "/tmp/convoeval-report-test",
             meta: dict[str, Any] | None = None) -> EvalResult:
    """An ``EvalResult`` from row lists (typed like ``load_results`` types them)."""
    return EvalResult(out_dir=Path(out_dir), frames=RunFrames.from_rows(rows), meta=meta or {})


def write_run_folder(folder: Path, rows: dict[str, list[dict[str, Any]]], meta: dict[str, Any] | None = None) -> Path:
    """Write rows as a results folder (``runs/<run_id>.json`` + ``report.json``), as ``convoeval run`` does."""
    runs = folder / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    by_run: dict[str, dict[str, list]] = {}
    owner = {(r["scenario"], r["seed"], r["trial"]): r["run_id"] for r in rows.get("runs", [])}
    for name, items in rows.items():
        for item in items:
            run_id = item.get("run_id") or owner[(item["scenario"], item["seed"], item["trial"])]
            by_run.setdefault(run_id, {}).setdefault(name, []).append(item)
    for run_id, payload in by_run.items():
        (runs / f"{run_id}.json").write_text(json.dumps(payload, default=str), encoding="utf-8")
    (folder / "report.json").write_text(json.dumps({"meta": meta or {}}), encoding="utf-8")
    return folder


def text_icons(html: str) -> str:
    """``html`` with each inline SVG icon (``html_blocks.icon``) replaced by its name in brackets (``[tool]``), so a
    test reads ``[tool] list_invoices`` where the page draws a wrench."""
    names = {path: name for name, (path, _) in _ICONS.items()}
    return re.sub(r'<svg [^>]*>(?:<title>[^<]*</title>)?<path d="([^"]+)"[^>]*/></svg>',
                  lambda m: f"[{names.get(m.group(1), '?')}]", html)
