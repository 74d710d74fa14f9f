"""τ² parity: convoeval's action and state verdicts against τ²'s own evaluator on the same trajectories.

Runs every airline and retail task that has gold actions with three agents (the gold-following agent, the same
without the last gold action, the same with one argument of the last changed: convoeval.tau2.gold) on the fake
simulator and judges, evaluates every trajectory with τ²'s evaluator in its own venv, and writes the rows to
benchmarks/results/tau2-parity.json. Usage: python benchmarks/tau2_parity.py [--tasks N] [--domains airline,retail]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_reliability_support import fake_responder  # noqa: E402

from convoeval.domains import get_domain  # noqa: E402
from convoeval.pipeline.options import RunOptions  # noqa: E402
from convoeval.store import open_store  # noqa: E402
from convoeval.tau2.parity import aparity, parity_row  # noqa: E402
from convoeval.testing import FakeChatModel  # noqa: E402

TARGETS = {"gold": "convoeval.tau2.gold:gold", "drop_last": "convoeval.tau2.gold:gold_drop_last",
           "change": "convoeval.tau2.gold:gold_change"}


def _silent(messages, kwargs):
    return {"act": "other"} if kwargs.get("tools") or kwargs.get("response_format") else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=0, help="the first N tasks with gold actions per domain (0: all)")
    parser.add_argument("--domains", default="airline,retail")
    parser.add_argument("--out", default="benchmarks/results/tau2-parity.json")
    parser.add_argument("--results", nargs="*", default=[],
                        help="instead: the conversations saved in these results folders (an LLM agent's runs)")
    args = parser.parse_args()
    if args.results:
        saved(args.results, args.out)
        return
    store = open_store("sqlite:///:memory:")
    store.migrate()
    options = RunOptions(simulator_model=FakeChatModel(responder=_silent),
                         judge_model=FakeChatModel(responder=fake_responder), store=store, simulator="agenda")
    rows = []
    started = time.perf_counter()
    for name in args.domains.split(","):
        domain = get_domain(f"tau2:{name}")
        ids = [str(t["id"]) for t in domain.tasks if (t.get("evaluation_criteria") or {}).get("actions")]
        ids = ids[: args.tasks] if args.tasks else ids
        rows += asyncio.run(aparity(domain, ids, TARGETS, options))
    elapsed = time.perf_counter() - started
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"rows": rows, "elapsed_s": elapsed, "load": os.getloadavg()}, indent=1))
    agree = sum(r["agree"] for r in rows)
    print(f"{len(rows)} trajectories, {agree} agree ({100 * agree / max(len(rows), 1):.1f} %), {elapsed:.0f} s")
    for r in rows:
        if not r["agree"]:
            print("DISAGREE", json.dumps(r))


def saved(folders: list[str], out: str) -> None:
    """Parity rows of conversations a run saved (runs/*.json), e.g. an LLM agent's, kind ``llm``."""
    from convoeval.pipeline.conversation import ConversationResult

    rows = []
    for folder in folders:
        for path in sorted(Path(folder).glob("runs/*.json")):
            payload = json.loads(path.read_text())
            run = payload["runs"][0]
            domain = get_domain(f"tau2:{run['scenario'].split('-')[1]}")
            rows.append(parity_row(domain, ConversationResult(rows=payload), kind="llm"))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps({"rows": rows, "load": os.getloadavg()}, indent=1))
    agree = sum(r["agree"] for r in rows)
    print(f"{len(rows)} saved trajectories, {agree} agree")
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
