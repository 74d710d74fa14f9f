"""The simulated patients side by side: the LLM patient (chat and transcript framing) and the agenda patient
(templates only, and voiced by the model), on the same scenarios and seeds against the same agents (issue #34).

For each variant and conversation it records how the conversation ended (``simulator_failure`` or not, the patient's
stop signal), the turns, the seconds, how each patient message was made (model or template), whether every database
and path assertion passed, and the patient messages (to measure how varied the patients are across seeds). The judges
are a cooperative stub: this measures the patients, not the judges. ``--faults`` runs every documented fault of an
agent that has conversational scenarios instead, and counts a fault as caught in a conversation where an assertion
fails.

    python benchmarks/bench_simulators.py --variants agenda-templates,agenda-voice --seeds 1-5 --out /tmp/sims.json
    python benchmarks/bench_simulators.py --variants agenda-templates --faults --seeds 1-5 --out /tmp/faults.json
    python benchmarks/bench_simulators.py --report /tmp/sims.json /tmp/faults.json     # the tables for RESULTS.md

The model is the embedded local one unless ``--model`` names another (any ``simulator_model`` setting).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the cooperative stub judges of the reliability tests

VARIANTS = ("llm-chat", "llm-transcript", "agenda-templates", "agenda-voice")


def _silent(messages: Any, kwargs: Any) -> Any:
    return {"act": "other"} if kwargs.get("tools") or kwargs.get("response_format") else ""


def _options(variant: str, model: Any, store: Any, target: str | None) -> Any:
    from test_reliability_support import fake_responder

    from convoeval.pipeline.options import RunOptions
    from convoeval.testing import FakeChatModel

    judge = FakeChatModel(responder=fake_responder)
    if variant == "agenda-templates":
        return RunOptions(target=target, simulator_model=FakeChatModel(responder=_silent), judge_model=judge,
                          store=store, simulator="agenda")
    return RunOptions(target=target, simulator_model=model, judge_model=judge, store=store,
                      simulator="agenda" if variant.startswith("agenda") else "llm")


def _framing(variant: str) -> None:
    import convoeval.simulator.patient as patient

    original = getattr(patient, "_original_apatient_turn", patient.apatient_turn)
    patient._original_apatient_turn = original  # type: ignore[attr-defined]
    framing: Literal["chat", "transcript"] = "transcript" if variant == "llm-transcript" else "chat"
    patient.apatient_turn = functools.partial(original, framing=framing)


_REJECTED: list[str] = []


def _count_rejections() -> None:
    """Record why the voice's rewrites were not kept (the agenda patient's checks), for the report."""
    import convoeval.simulator.agenda.patient as agenda_patient

    check = getattr(agenda_patient, "_original_voice_problem", agenda_patient.voice_problem)
    agenda_patient._original_voice_problem = check  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> str | None:
        problem = check(*args, **kwargs)
        if problem is not None:
            _REJECTED.append(problem.split(" (")[0])
        elif args[0].strip() == args[1].strip():
            _REJECTED.append("kept, identical to the template")
        return problem

    agenda_patient.voice_problem = counted


async def _one(scenario: Any, seed: int, variant: str, model: Any, store: Any, target: str | None) -> dict[str, Any]:
    from convoeval.pipeline.conversation import arun_any
    from convoeval.pipeline.jobs import Job

    _framing(variant)
    _count_rejections()
    _REJECTED.clear()
    started = time.perf_counter()
    result = await arun_any(Job(scenario, seed), _options(variant, model, store, target))
    seconds = time.perf_counter() - started
    tx = result.transcript
    patient = tx[tx["role"] == "patient"] if len(tx) else tx
    score = result.score.iloc[0].to_dict() if len(result.score) else {}
    signals = [s for s in patient.get("signal", []) if isinstance(s, str)]
    assertions = result.assertions
    failed = sorted(assertions.loc[~assertions["passed"].astype("boolean").fillna(False), "assertion"].astype(str)) \
        if len(assertions) else []
    return {"variant": variant, "scenario": scenario.id, "agent": scenario.agent, "seed": seed, "target": target,
            "status": score.get("status"), "signal": signals[-1] if signals else None, "turns": int(tx["turn"].max())
            if len(tx) else 0, "seconds": round(seconds, 2), "voices": [v for v in patient.get("voice", [])
                                                                          if isinstance(v, str)],
            "patient": [str(t) for t in patient.get("text", [])], "failed": failed,
            "rejected": list(_REJECTED),
            "agent_said": [str(t) for t in tx.loc[tx["role"] == "agent", "text"]] if len(tx) else [],
            "failure": _failure(result)}


def _failure(result: Any) -> str | None:
    """The gate's check and turn when it stopped the conversation (``None`` otherwise)."""
    run = result.run
    if not len(run) or "simulator_failure" not in run or run["simulator_failure"].isna().iloc[0]:
        return None
    return f"{run['simulator_failure'].iloc[0]} at turn {run['simulator_failure_turn'].iloc[0]}"


def _faults(scenarios: list[Any]) -> list[tuple[str, str]]:
    from convoeval.agents.clinic._registry import FAULTS

    agents = {s.agent for s in scenarios}
    return sorted((f.agent, f.name) for f in FAULTS.values() if f.agent in agents and not f.leaks)


async def _run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from convoeval.llm.models import get_model
    from convoeval.scenarios import load_scenarios
    from convoeval.scenarios.models import ConversationalScenario
    from convoeval.store import open_store

    scenarios = [s for s in load_scenarios(None) if isinstance(s, ConversationalScenario)
                 and (not args.scenarios or s.id in args.scenarios)]
    model = get_model("simulator", args.model) if any(v != "agenda-templates" for v in args.variants) else None
    jobs: list[tuple[Any, int, str, str | None]] = []
    for variant in args.variants:
        if args.faults:
            for agent, fault in _faults(scenarios):
                jobs += [(s, seed, variant, f"clinic:{agent}?faults={fault}") for s in scenarios if s.agent == agent
                         for seed in args.seeds]
        else:
            jobs += [(s, seed, variant, args.target) for s in scenarios for seed in args.seeds]
    rows: list[dict[str, Any]] = []
    with open_store(None) as store:
        for i, (scenario, seed, variant, target) in enumerate(jobs, 1):
            row = await _one(scenario, seed, variant, model, store, target)
            rows.append(row)
            print(f"[{i}/{len(jobs)}] {variant} {scenario.id} s{seed} {target or ''}: {row['status']} "
                  f"{row['signal'] or ''} {row['turns']} turns {row['seconds']} s "
                  f"{row['voices'].count('model')}/{len(row['voices'])} voiced", flush=True)
            Path(args.out).write_text(json.dumps({"rows": rows, "load": os.getloadavg()}, indent=1))
    return rows


def _distinct(rows: list[dict[str, Any]]) -> float:
    """Share of distinct patient messages among all of a scenario's messages across seeds, averaged."""
    by_scenario: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_scenario[r["scenario"]] += r["patient"]
    shares = [len(set(m)) / len(m) for m in by_scenario.values() if m]
    return sum(shares) / len(shares) if shares else 0.0


def report(paths: list[str]) -> str:
    """The Markdown tables of saved runs: one line per variant (healthy agents) and per fault (faults runs)."""
    lines = ["| simulator | conversations | no simulator_failure | goal reached (GOAL_COMPLETE, not stopped) | assertions all pass | "
             "turns (mean) | s / conversation | voiced by the model | distinct patient messages |",
             "|---|---|---|---|---|---|---|---|---|"]
    fault_lines: list[str] = []
    failures: list[str] = []
    for path in paths:
        rows = json.loads(Path(path).read_text())["rows"]
        healthy = [r for r in rows if not (r["target"] or "").count("faults=")]
        for variant in dict.fromkeys(r["variant"] for r in healthy):
            v = [r for r in healthy if r["variant"] == variant]
            n = len(v)
            ok = sum(r["status"] != "simulator_failure" for r in v)
            goal = sum(r["signal"] == "GOAL_COMPLETE" and r["status"] != "simulator_failure" for r in v)
            passed = sum(not r["failed"] for r in v if r["status"] != "simulator_failure")
            voices = [x for r in v for x in r["voices"]]
            voiced = sum(x == "model" for x in voices) / len(voices) if voices else 0
            broke: dict[str, int] = defaultdict(int)
            for r in v:
                if r.get("failure"):
                    broke[r["failure"].split(" at ")[0]] += 1
            failures.append(f"{variant}: " + ", ".join(f"{k} {c}" for k, c in sorted(broke.items())))
            lines.append(f"| {variant} | {n} | {ok / n:.0%} ({ok}) | {goal / n:.0%} ({goal}) | {passed}/{ok} | "
                         f"{sum(r['turns'] for r in v) / n:.1f} | {sum(r['seconds'] for r in v) / n:.1f} | "
                         f"{voiced:.0%} | {_distinct(v):.0%} |")
        faulty = [r for r in rows if (r["target"] or "").count("faults=")]
        by_fault: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        for r in faulty:
            by_fault[(r["variant"], r["target"])][r["scenario"]].append(r)
        for (variant, target), scenarios in sorted(by_fault.items()):
            caught = [f"{s} {sum(bool(r['failed']) for r in v)}/{len(v)}" for s, v in scenarios.items()
                      if any(r["failed"] for r in v)]
            missed = [s for s, v in scenarios.items() if not any(r["failed"] for r in v)]
            broke = sum(r["status"] == "simulator_failure" for v in scenarios.values() for r in v)
            fault_lines.append(f"| {target.split('clinic:')[-1]} | {variant} | {'; '.join(caught) or '–'} | "
                               f"{', '.join(missed) or '–'} | {broke} |")
    for path in paths:
        rows = json.loads(Path(path).read_text())["rows"]
        reasons: dict[str, int] = defaultdict(int)
        for r in rows:
            if r["variant"] == "agenda-templates":
                continue  # its stand-in model never rewrites: every "rejection" is by design
            for reason in r.get("rejected", []):
                reasons[reason] += 1
        if reasons:
            lines += ["", "The model's rewrites not kept, and why (and those kept word for word): " + ", ".join(
                f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))]
    broken = [f for f in failures if not f.endswith(": ")]
    if broken:
        lines += ["", "simulator_failure by check: " + "; ".join(broken)]
    if fault_lines:
        lines += ["", "| fault | simulator | an assertion fails (seeds) | no assertion fails in any seed | "
                  "simulator_failure |", "|---|---|---|---|---|", *fault_lines]
    return "\n".join(lines)


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    """Run the variants (or print the report of saved runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="agenda-templates,agenda-voice",
                        type=lambda s: [v for v in s.split(",") if v])
    parser.add_argument("--seeds", default="1-5", type=_seeds)
    parser.add_argument("--scenarios", default="", type=lambda s: [v for v in s.split(",") if v])
    parser.add_argument("--target", default=None, help="the agent under test (default: each scenario's reference)")
    parser.add_argument("--model", default="local", help="the simulator model of the LLM and voiced variants")
    parser.add_argument("--faults", action="store_true", help="every documented non-privacy fault instead")
    parser.add_argument("--out", default="/tmp/bench-simulators.json")
    parser.add_argument("--report", nargs="*", help="print the tables of saved runs and exit")
    args = parser.parse_args()
    if args.report is not None:
        print(report(args.report))
        return
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; expected some of {', '.join(VARIANTS)}")
    print(f"load before: {os.getloadavg()}", flush=True)
    asyncio.run(_run(args))
    print(f"load after: {os.getloadavg()}")
    print(report([args.out]))


if __name__ == "__main__":
    main()
