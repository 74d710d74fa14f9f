"""One conversation from start to score: ``arun_any`` (either scenario type) and ``run_conversation``.

A conversation seeds the scenario's fixtures under a fresh ``run_id``, talks to the agent, checks the database
assertions, cleans up its rows in a ``finally`` and then judges the transcript (the judges need no database).
Whatever fails — the agent, an LLM call after its retries, a judge's parse — ends that conversation with status
``error`` and the reason; it never raises out of ``arun_any`` and never turns into a pass or a default score.

While it runs, a conversation keeps plain rows (dicts), and it is judged and scored from them: building typed
DataFrames per conversation cost more CPU than everything else convoeval does for it, so frames are built once
per batch (``convoeval.pipeline.results``), or when an analyst reads one from a ``ConversationResult``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from typing import Any

from convoeval._util.aio import blocking
from convoeval.agents.base import AgentLike
from convoeval.domains import open_session as open_domain_session
from convoeval.frames import SIMULATOR_FAILURE
from convoeval.judges.holistic import aholistic_rows
from convoeval.judges.rubric import arubric_rows
from convoeval.judges.scoring import score_conversation, score_scripted_conversation, simulator_failure_score
from convoeval.judges.turn import ajudge_turn
from convoeval.llm.accounting import record_calls
from convoeval.llm.models import ModelLike
from convoeval.pipeline.checkpoint_judge import acheckpoint_rubric_rows
from convoeval.pipeline.conversation_result import (  # noqa: F401 - re-exported: callers import them from here
    ConversationResult,
    _assertion_rows,
    _with_failed_attempts,
    failed_result,
)
from convoeval.pipeline.conversation_state import Conversation
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.observe import Observation, ObservedRun
from convoeval.pipeline.options import Log, RunOptions, default_target  # noqa: F401 - re-exported
from convoeval.pipeline.progress import JUDGING
from convoeval.pipeline.talk import describe, talk_conversational, talk_scripted
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario, load_scenarios
from convoeval.simulator.gate import GateSettings
from convoeval.store import Store, open_store
from convoeval.store.fixtures import cleanup_run, seed_run
from convoeval.store.sql_assertions import require_sql


async def arun_any(job: Job, options: RunOptions | None = None) -> ConversationResult:
    """Run one job (a scenario of either type); never raises for a failure of the agent, an LLM or a judge.

    Each attempt is one ``Conversation`` built from the job and the options (``convoeval.pipeline.conversation_state``).
    A conversational run whose simulated patient breaks is stopped by the gate (``options.gate``) and ends
    ``simulator_failure``, unjudged; with ``options.resimulate`` it is simulated again with the next seed, sampled,
    up to that many times, and the last attempt is the one kept (``rows[...][0]``), the failed ones following it
    in ``runs``, ``transcripts`` and ``assertions`` with ``superseded`` set (``convoeval.simulator.gate``).

    Args:
        job: what to run (``convoeval.pipeline.jobs.Job``): the scenario, the seed (``None``: the scenario's), the
            trial (part of every LLM call's sample identity: trial 2 is a fresh sample), and optionally recorded
            patient messages to send before the simulator takes over (``replay``), a target of its own, an observer
            factory whose observer watches every agent reply (``observe``: the red team's leak checks; its rows join
            the result's frames), and whether the LLM judges judge it (``judged`` False: the observer's verdict is
            the score status).
        options: target agent, models, judge samples, store, verbose log, gate and re-simulations, shared by every
            conversation of a batch (``RunOptions.from_config``, ``RunOptions.from_shared``).

    Returns:
        A ``ConversationResult`` whose ``score`` row has status pass / warn / fail / error / simulator_failure.

    Example (a scripted scenario against its reference agent, judged by the environment's model)::

        result = await arun_any(Job(load_scenarios(scenario="billing-scripted-pix-en")[0]))
    """
    opts = options or RunOptions()
    result = await _arun_attempt(Conversation(job, opts))
    failed: list[ConversationResult] = []
    while result.status == SIMULATOR_FAILURE and len(failed) < opts.resimulate:
        failed.append(result)
        if opts.verbose:
            opts.verbose(f"[{job.label}] simulator failure: re-simulating (attempt {len(failed) + 1} of "
                         f"{opts.resimulate + 1})")
        result = await _arun_attempt(Conversation(job, opts, attempt=len(failed) + 1))
    return _with_failed_attempts(result, failed)


async def _arun_attempt(conv: Conversation) -> ConversationResult:
    """One attempt at a conversation: seed the store, talk, assert, clean up, then judge unless the gate stopped it."""
    started = time.perf_counter()
    await _talk(conv)
    error = conv.error
    broke = conv.simulator_failure if error is None else None
    status = "error" if error else SIMULATOR_FAILURE if broke else "completed"
    run_row = {**conv.keys, "type": conv.scenario.type, "status": status,
               "stop_reason": conv.stop_reason, "goal_completed": conv.goal_completed if not error else None,
               "n_messages": len(conv.rows), "duration_s": time.perf_counter() - started, "error": error,
               "replayed_turns": conv.replayed_turns, "divergence_turn": conv.divergence_turn,
               **(broke.run_fields() if broke else {}), "attempt": conv.attempt, "superseded": False}
    rows: dict[str, list[dict[str, Any]]] = {"runs": [run_row], "transcripts": conv.rows,
                                             "assertions": conv.assertion_rows}
    observation = conv.observer.finish(error) if conv.observer is not None else None
    if observation is not None:
        for name, observed in observation.rows.items():
            # An observer that never started (seeding failed) knows no run id.
            rows[name] = [{**row, "run_id": row.get("run_id") or conv.run_id} for row in observed]
    if observation is not None and not conv.judged:
        score = _observed_score(run_row, observation, broke is not None)
    else:
        score = await _judged_score(conv, run_row, rows, judge=broke is None)
    if conv.options.verbose:
        shown = score["score"] if conv.judged else score.get("error") or ""
        conv.options.verbose(f"[{conv.label}] {score['status']} {shown}".rstrip())
    return ConversationResult(rows={**rows, "scores": [score]})


async def _talk(conv: Conversation) -> None:
    """Seed the store, talk, check the assertions and clean up; any failure is the conversation's ``error``."""
    opts, scenario = conv.options, conv.scenario
    store = opts.store or open_store()
    try:
        agent = opts.agent_for(conv.job)
        require_sql(store, scenario.assertions)  # e.g. sql: on the Supabase REST store: refused before talking
        seeded = await asyncio.to_thread(seed_run, store, scenario, conv.run_id)
        conv.start(seeded, store, agent)
        cleaning = False
        domain_tools = None
        try:
            # A domain other than the clinic gives the conversation its own tools and data (convoeval.domains).
            domain_tools = conv.session.tools = await asyncio.to_thread(open_domain_session, scenario, conv.run_id)
            if conv.observer is not None:
                await asyncio.to_thread(conv.observer.start,
                                        ObservedRun(conv.keys, scenario, seeded, conv.session, store))
            if isinstance(scenario, ConversationalScenario):
                conv.stop_reason, conv.goal_completed = await talk_conversational(conv)
            else:
                conv.stop_reason, conv.goal_completed = await talk_scripted(conv)
            cleaning = True  # from here the worker thread cleans up, whatever happens (even if this task is cancelled)
            results = await asyncio.to_thread(_finish_and_clean_up, conv)
            conv.assertion_rows = _assertion_rows(conv.keys, results)
        finally:
            conv.forget()
            if not cleaning:
                await asyncio.to_thread(cleanup_run, store, seeded.run_id)
            if domain_tools is not None:
                await asyncio.to_thread(domain_tools.close)
    except Exception as exc:  # noqa: BLE001 - every failure becomes this run's error, never a crash of the sweep
        conv.error, conv.stop_reason = describe(exc), "error"
        return
    if conv.gate is not None and conv.simulated_claim is not None:
        # A claimed goal is checked against the database only now, after the assertions.
        conv.simulator_failure = conv.gate.goal_claim(conv.simulated_claim, conv.assertion_rows)
        conv.stop_reason = SIMULATOR_FAILURE if conv.simulator_failure else conv.stop_reason


async def _judged_score(conv: Conversation, run_row: dict[str, Any], rows: dict[str, list[dict[str, Any]]], *,
                        judge: bool) -> dict[str, Any]:
    """Judge the conversation into ``rows`` (unless ``judge`` is False or it failed: nothing to judge, its patient
    broke or it never finished), and return its score row."""
    error = run_row["error"]
    rubric: list[dict[str, Any]] = []
    holistic: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    if error is None and judge:
        if conv.options.on_turn:
            conv.options.on_turn(conv.label, JUDGING)  # the progress shows it judging, not stuck at its last turn
        try:
            rubric, holistic, turns = await _judge(conv)
        except Exception as exc:  # noqa: BLE001 - a judge that cannot even start is this run's error
            error = describe(exc)
    rows.update(rubric=rubric, holistic=holistic, turns=turns)
    if run_row["type"] == "scripted":
        return score_scripted_conversation(run_row, turns, rows["assertions"], error=error)
    score = score_conversation(run_row, rubric, holistic, rows["assertions"], rows["transcripts"])
    if error is not None and run_row["error"] is None:
        score.update(status="error", score=float("nan"), error=error)
    return score


def _observed_score(run_row: dict[str, Any], observation: Observation, broke: bool) -> dict[str, Any]:
    """The score row of a conversation its observer decides (no judge ran): the observer's pass, fail or error.

    There is no 0–10 score to give (nothing graded it), so ``score`` and its components are missing, never a
    default; a run that failed, or whose simulated caller broke, keeps that status.
    """
    if broke:
        return simulator_failure_score(run_row)
    error = run_row["error"] or observation.error
    status = "error" if error else observation.status
    return {"run_id": run_row["run_id"], **{c: run_row.get(c) for c in ("scenario", "agent", "seed", "trial")},
            "status": status, "score": math.nan, "rubric_score": math.nan, "rubric_passed": None,
            "rubric_total": None, "holistic_overall": math.nan, "assertion_failures": None,
            "goal_completed": run_row.get("goal_completed"), "error": error}


def _finish_and_clean_up(conv: Conversation) -> Any:
    """The assertions' results, then the run's rows removed: one trip to a worker thread instead of two.

    Every hop to the thread pool waits for a core when the machine is busy; the cleanup runs even when the
    assertions raise, as the caller's ``finally`` did before.
    """
    try:
        return conv.finish()
    finally:
        cleanup_run(conv.store, conv.run_id)


async def _judge(conv: Conversation) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Judge a finished conversation from its rows. Judge failures come back as error rows, not exceptions."""

    scenario, opts = conv.scenario, conv.options
    if isinstance(scenario, ConversationalScenario):
        conversation = [(conv.keys, conv.rows)]
        rubric, holistic, at_checkpoints = await asyncio.gather(
            arubric_rows(conversation, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
            aholistic_rows(conversation, scenarios=[scenario], model=opts.judge_model, samples=opts.judge_samples),
            acheckpoint_rubric_rows(conv.keys, conv.rows, scenario, model=opts.judge_model,
                                    samples=opts.judge_samples),
        )
        return rubric + at_checkpoints, holistic, []
    return [], [], await _judge_turns(conv)


async def _judge_turns(conv: Conversation) -> list[dict[str, Any]]:
    """Scripted runs: each turn's check failures, plus the per-turn judge where the scenario asks for it."""

    scenario, opts = conv.scenario, conv.options
    assert isinstance(scenario, ScriptedScenario)
    keys = {k: conv.keys[k] for k in ("run_id", "scenario", "agent", "seed", "trial")}

    async def one(turn: int, judged: bool) -> list[dict[str, Any]]:
        checks = {"check_failures": conv.check_failures.get(turn, [])}
        upto = _through_turn(conv.entries, turn)
        if not judged or upto is None:  # a channel turn in which the agent sent nothing has no reply to judge
            return [{**keys, "turn": turn, **checks}]
        rows = await ajudge_turn(upto, agent_type=scenario.agent, model=opts.judge_model,
                                 samples=opts.judge_samples, run_id=conv.keys["run_id"], scenario=scenario.id,
                                 seed=conv.keys["seed"], trial=conv.keys["trial"])
        return [{**row, **checks} for row in rows]

    per_turn = await asyncio.gather(*(one(i + 1, step.judge) for i, step in enumerate(scenario.turns)))
    return [row for turn_rows in per_turn for row in turn_rows]


def _through_turn(entries: list[dict[str, Any]], turn: int) -> list[dict[str, Any]] | None:
    """The transcript up to the agent's last message of ``turn`` (``None`` when the agent sent nothing in it).

    Without the WhatsApp channel a turn is one patient and one agent row; with it, a turn may hold a burst, its
    redeliveries and several or no agent messages.
    """
    last = max((i for i, e in enumerate(entries) if e.get("turn") == turn and e.get("role") == "agent"), default=None)
    return None if last is None else entries[: last + 1]


#: ``arun_any``, blocking (for scripts; in a notebook either works).
run_any = blocking(arun_any)


def _scenario(scenario: str | Scenario) -> Scenario:
    """A scenario object, or the project's scenario with this id (``load_scenarios``' default folder)."""
    if not isinstance(scenario, str):
        return scenario

    found = load_scenarios(scenario=scenario)
    if not found:
        raise ValueError(f"no scenario with id {scenario!r} in the project's scenarios (convoeval validate lists them)")
    return found[0]


async def arun_conversation(
    scenario: str | Scenario,
    *,
    agent: AgentLike | None = None,
    seed: int | None = None,
    trial: int = 1,
    simulator_model: ModelLike = None,
    judge_model: ModelLike = None,
    judge_samples: int = 1,
    store: Store | None = None,
    verbose: Log | None = None,
    simulator_gate: bool | Mapping[str, Any] | GateSettings = True,
    simulator: str | None = None,
) -> ConversationResult:
    """Run one scenario: simulate the patient against the agent (or play a scripted one), check, clean up, judge.

    ``run_conversation`` is the blocking form of ``arun_conversation`` (scripts, notebooks).

    Args:
        scenario: a scenario object, or the id of one of the project's scenarios.
        agent: the agent under test: a target string (``clinic:billing``, ``module:function``, a URL), an ``Agent``,
            or a callable ``fn(message, session)``, sync or async (default ``clinic:<scenario.agent>``).
        seed: the simulator seed (default: the scenario's).
        trial: the trial number (part of every call's sample identity: trial 2 is a new sample).
        simulator_model: a model name, ``"local"``, a mapping of settings or a chat model (default: the
            environment's simulator model).
        judge_model: the same, for the judges.
        judge_samples: independent samples per judge.
        store: the fixtures store (default ``open_store()``).
        verbose: a function receiving every turn as a line (e.g. ``print``).
        simulator_gate: stop the conversation when the simulated patient breaks (``simulator_failure``, not
            judged; ``convoeval.simulator.gate``): ``True``, ``False`` or a mapping of ``GateSettings`` thresholds.
        simulator: the simulated patient: ``"agenda"`` (rules decide, the model voices), ``"llm"`` (the model plays
            the patient) or ``None`` (agenda on the embedded local model, llm on any other; docs/simulator.md).

    Returns:
        A ``ConversationResult``: ``.transcript``, ``.rubric``, ``.holistic``, ``.assertions``, ``.score`` (DataFrames
        built when read) and ``.calls`` (one record per LLM call).

    Example (a conversation with the simulator's and the judges' model)::

        result = run_conversation("billing-conv-happy-payment", seed=42)
        result.score[["status", "score", "rubric_score", "holistic_overall"]]
    """

    resolved = _scenario(scenario)
    options = RunOptions.from_shared({"simulator_model": simulator_model, "judge_model": judge_model,
                                      "judge_samples": judge_samples, "simulator_gate": simulator_gate,
                                      "simulator": simulator}, store=store, target=agent, verbose=verbose)
    with record_calls() as records:
        result = await arun_any(Job(resolved, seed, trial), options)
    result.calls = [r.to_dict() for r in records]
    return result


run_conversation = blocking(arun_conversation)
