"""The peer side of ``bench_peers.py``: N simulated conversations with openevals, each judged by two LLM judges.

Runs in ``benchmarks/.venv-peers`` (``benchmarks/peers/setup.sh``), never in convoeval's environment. For each
conversation: ``run_multiturn_simulation`` with a ``create_llm_simulated_user`` patient (a LangChain
``ChatOpenAI`` pointed at the stub by ``--base-url``), the plain-Python app of ``benchmarks/peers/peer_app.py``, a
stopping condition that ends the conversation once the patient writes ``[GOAL_COMPLETE]``, and two
``create_llm_as_judge`` trajectory evaluators (a rubric judge with the scenario's criteria, a holistic judge) — the
same 5 + 2 LLM calls per conversation as convoeval's run of ``benchmarks/peers/scenarios``.

Configurations (``--mode``):

* ``threads``: the synchronous API (``run_multiturn_simulation``, ``create_llm_as_judge``) on a
  ``ThreadPoolExecutor`` of ``--threads`` workers (default: one per conversation);
* ``async``: ``run_multiturn_simulation_async`` with ``create_async_llm_simulated_user`` and
  ``create_async_llm_as_judge``, every conversation a task on one event loop.

``--judge-client openai`` gives the judges a bare ``openai`` client instead of a LangChain model (openevals then
calls ``chat.completions.create`` with a ``json_schema`` response format itself); ``--parallel-judges`` passes one
trajectory evaluator that runs both judges at once (openevals runs its evaluators one after the other). Prints one
JSON line: conversations, completed, evaluator errors, simulator turns and scores seen.

Usage:
    benchmarks/.venv-peers/bin/python benchmarks/peers/openevals_run.py --base-url http://127.0.0.1:PORT/v1 \\
        --conversations 60 --mode threads
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_app import openevals_app, openevals_app_async  # noqa: E402

STOP = "[GOAL_COMPLETE]"
#: The scenario's rubric (benchmarks/peers/scenarios/conv-peer-billing.yaml), for the rubric judge.
CRITERIA = (
    "Agent identified the pending invoice and mentioned the amount",
    "Agent offered Pix and boleto as payment options",
    "Agent generated a payment link",
    "Agent did not fabricate any URLs",
)
PATIENT = (
    "You are Lucia Ferreira, a polite and direct patient of a clinic, writing in Brazilian Portuguese to the "
    "clinic's billing assistant. Your goal: pay a pending R$150 invoice using Pix. Write one short message at a "
    f"time. When your goal is reached, end your message with {STOP}."
)
RUBRIC_PROMPT = (
    "You are grading a conversation between a clinic's billing assistant and a patient whose goal was to pay a "
    "pending R$150 invoice using Pix. Criteria:\n" + "\n".join(f"{i}. {c}" for i, c in enumerate(CRITERIA, 1))
    + "\n\nConversation:\n{outputs}\n\nScore the fraction of the criteria the assistant met."
)
HOLISTIC_PROMPT = (
    "You are grading a conversation between a clinic's billing assistant and a patient whose goal was to pay a "
    "pending R$150 invoice using Pix. Rate the assistant's overall quality (goal reached, accuracy, tone) "
    "from 1 to 10.\n\nConversation:\n{outputs}"
)


def stopped(trajectory: list[dict[str, Any]], **kwargs: Any) -> bool:
    """End the simulation once the patient has said the goal is reached."""
    last_user = next((m for m in reversed(trajectory) if m.get("role") == "user"), None)
    return bool(last_user) and STOP in str(last_user.get("content") or "")


async def astopped(trajectory: list[dict[str, Any]], **kwargs: Any) -> bool:
    return stopped(trajectory, **kwargs)


def build(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The simulated user and the two judges for ``args.mode`` / ``args.judge_client``."""
    from langchain_openai import ChatOpenAI
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
    from openevals.simulators import create_async_llm_simulated_user, create_llm_simulated_user

    def chat(temperature: float | None) -> Any:
        return ChatOpenAI(base_url=args.base_url, api_key="sk-benchmark-stub", model="fake-model",
                          temperature=temperature, max_retries=2, timeout=120)

    if args.judge_client == "openai":
        import openai

        judge: Any = (openai.AsyncOpenAI if args.mode == "async" else openai.OpenAI)(
            base_url=args.base_url, api_key="sk-benchmark-stub", max_retries=2, timeout=120)
        judge_kwargs: dict[str, Any] = {"judge": judge, "model": "fake-model"}
    else:
        judge_kwargs = {"judge": chat(0.0)}
    if args.mode == "async":
        user = create_async_llm_simulated_user(system=PATIENT, client=chat(None))
        make = create_async_llm_as_judge
    else:
        user = create_llm_simulated_user(system=PATIENT, client=chat(None))
        make = create_llm_as_judge
    judges = [
        make(prompt=RUBRIC_PROMPT, feedback_key="rubric", continuous=True, **judge_kwargs),
        make(prompt=HOLISTIC_PROMPT, feedback_key="holistic", choices=[float(x) for x in range(1, 11)],
             **judge_kwargs),
    ]
    return user, judges


def run_threads(args: argparse.Namespace, user: Any, judges: list[Any]) -> list[Any]:
    from openevals.simulators import run_multiturn_simulation

    evaluators = judges
    if args.parallel_judges:
        pool = ThreadPoolExecutor(max_workers=2 * args.conversations)

        def both(**kwargs: Any) -> list[Any]:
            return [f.result() for f in [pool.submit(j, **kwargs) for j in judges]]

        evaluators = [both]

    def one(i: int) -> Any:
        return run_multiturn_simulation(app=openevals_app, user=user, trajectory_evaluators=evaluators,
                                        stopping_condition=stopped, max_turns=args.max_turns, thread_id=f"c{i}")

    with ThreadPoolExecutor(max_workers=args.threads or args.conversations) as executor:
        return list(executor.map(one, range(args.conversations)))


async def run_async(args: argparse.Namespace, user: Any, judges: list[Any]) -> list[Any]:
    from openevals.simulators import run_multiturn_simulation_async

    evaluators = judges
    if args.parallel_judges:
        async def both(**kwargs: Any) -> list[Any]:
            return list(await asyncio.gather(*(j(**kwargs) for j in judges)))

        evaluators = [both]
    return await asyncio.gather(*(
        run_multiturn_simulation_async(app=openevals_app_async, user=user, trajectory_evaluators=evaluators,
                                       stopping_condition=astopped, max_turns=args.max_turns, thread_id=f"c{i}")
        for i in range(args.conversations)
    ))


def summarise(results: list[Any], wall_s: float) -> dict[str, Any]:
    """What the run produced: conversations completed, patient turns, each judge's scores."""
    turns: Counter[int] = Counter()
    scores: dict[str, Counter[str]] = {}
    complete = 0
    for result in results:
        trajectory = result["trajectory"]
        turns[sum(1 for m in trajectory if m.get("role") == "user")] += 1
        evaluations = result["evaluator_results"]
        complete += len(evaluations) == 2
        for evaluation in evaluations:
            scores.setdefault(evaluation["key"], Counter())[str(evaluation["score"])] += 1
    return {"conversations": len(results), "judged_by_both": complete,
            "evaluator_errors": 2 * len(results) - sum(len(r["evaluator_results"]) for r in results),
            "patient_messages": {str(k): v for k, v in sorted(turns.items())},
            "scores": {k: dict(v) for k, v in scores.items()}, "inner_wall_s": round(wall_s, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the stub's OpenAI-compatible base URL (127.0.0.1)")
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--mode", choices=("threads", "async"), default="threads")
    parser.add_argument("--threads", type=int, default=0, help="thread-pool size (default: one per conversation)")
    parser.add_argument("--judge-client", choices=("langchain", "openai"), default="langchain")
    parser.add_argument("--parallel-judges", action="store_true", help="run the two judges at once")
    parser.add_argument("--max-turns", type=int, default=10, help="a bound; the patient ends the conversation first")
    args = parser.parse_args(argv)
    for name in list(os.environ):  # no tracing to LangSmith, no real endpoint: everything goes to the stub
        if name.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_")):
            del os.environ[name]

    user, judges = build(args)
    started = time.perf_counter()
    if args.mode == "async":
        results = asyncio.run(run_async(args, user, judges))
    else:
        results = run_threads(args, user, judges)
    print(json.dumps(summarise(results, time.perf_counter() - started)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
