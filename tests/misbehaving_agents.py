"""Agents and a driver for ``tests/test_reliability_misbehaviour.py``; this module holds no tests itself.

The agents are ``module:function`` targets (``misbehaving_agents:<name>``) that misbehave the way user code
does: ``sys.exit()``, a ``BaseException`` of their own, ``KeyboardInterrupt``, or a sleep past the deadline. Each
misbehaves only on the first call it gets in a process (one conversation) and answers politely otherwise, so a
test can tell "only that conversation ended" from "the whole run ended".

``python misbehaving_agents.py <target> <jobs>`` runs a small batch through the synchronous ``run_batch``
(convoeval's one background event loop, as the CLI and scripts use it) and prints one JSON line: each run's
status and error, and the rows left in the store.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

REPLY = "Claro, posso ajudar com a sua fatura."
_lock = threading.Lock()
_calls = {"n": 0}


def _first_call() -> bool:
    with _lock:
        _calls["n"] += 1
        return _calls["n"] == 1


class AgentBaseError(BaseException):
    """A ``BaseException`` that is not an ``Exception`` (as some libraries define theirs)."""


def exit_sync(message, session):
    if _first_call():
        sys.exit(3)
    return REPLY


async def exit_async(message, session):
    await asyncio.sleep(0)
    if _first_call():
        sys.exit(3)
    return REPLY


def exit_bare_sync(message, session):
    if _first_call():
        sys.exit()  # exit code None: must not look like success either
    return REPLY


def base_error_sync(message, session):
    if _first_call():
        raise AgentBaseError("the agent's own BaseException")
    return REPLY


async def base_error_async(message, session):
    if _first_call():
        raise AgentBaseError("the agent's own BaseException")
    return REPLY


def interrupt_sync(message, session):
    if _first_call():
        raise KeyboardInterrupt
    return REPLY


async def interrupt_async(message, session):
    if _first_call():
        raise KeyboardInterrupt
    return REPLY


def sleep_sync(message, session):
    """Blocks its thread for a minute on the first call (a sync agent stuck in I/O)."""
    if _first_call():
        time.sleep(60)
    return REPLY


def polite(message, session):
    return REPLY


def scenario():
    from convoeval.scenarios import parse_scenario

    return parse_scenario({
        "type": "conversational", "id": "reliability-python-agent", "agent": "billing", "locale": "pt-BR",
        "description": "a patient pays; the agent is a Python callable that may misbehave",
        "persona": {"name": "Lucia Ferreira", "phone": "11987650021"},
        "goal": "pay the pending invoice", "max_turns": 4,
        "rubric": ["The agent answered every message", "The agent was polite"],
    })


def main(target: str, jobs: int, store_url: str) -> None:
    from test_reliability_support import fake_responder

    from convoeval.pipeline import RunOptions, plan
    from convoeval.pipeline.batch import run_batch
    from convoeval.store import TABLES, open_store
    from convoeval.testing import FakeChatModel

    started = time.perf_counter()
    with open_store(store_url) as store:
        options = RunOptions(target=target, simulator_model=FakeChatModel(responder=fake_responder),
                             judge_model=FakeChatModel(responder=fake_responder), store=store)
        try:
            batch = run_batch(plan([scenario()], seeds=list(range(jobs))), options=options, concurrency=jobs,
                              progress=False)
        except KeyboardInterrupt:
            print(json.dumps({"interrupted": True, "seconds": time.perf_counter() - started}), flush=True)
            return
        leftover = sum(len(store.select(t)) for t in TABLES)
    runs = [{"status": r.status, "error": r.error, "stop_reason": str(r.run["stop_reason"].iloc[0])}
            for r in batch.results]
    print(json.dumps({"runs": runs, "leftover_rows": leftover, "seconds": time.perf_counter() - started}),
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
