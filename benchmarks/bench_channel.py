"""Issue #37: the WhatsApp channel's detection table and its overhead on a run.

1. Detection: every shipped channel scenario (``evals/whatsapp/*.yaml``) against the healthy reference
   agent and each channel fault, seeds 1-5, through the real pipeline (per-turn judge off: the channel's checks are
   deterministic). A fault is detected in a conversation when its documented assertion fails; a false alarm is any
   channel assertion failing on a healthy agent.
2. Overhead, side by side in one process and interleaved: the scripted scenarios of billing and scheduling as they
   ship (no channel) against the same scenarios with an empty ``channel: {}`` block (every message through the
   channel: ids, times, the quiet after each turn, ``idle``), CPU seconds per conversation.

Run: ``.venv/bin/python -m benchmarks.bench_channel [--n 60] [--out benchmarks/results/channel_37.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path

from convoeval.agents.clinic import faults_for
from convoeval.agents.clinic._channel import CHANNEL_FAULT_NAMES
from convoeval.pipeline.conversation import arun_conversation
from convoeval.scenarios import ScriptedScenario
from convoeval.scenarios.loader import load_scenario_file, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "evals" / "scenarios"
CHANNEL_KEYS = ("one_reply_per_burst", "fragments_covered", "no_duplicate_effects", "whatsapp_window")


def unjudged(path: Path, *, channel: bool | None = None) -> ScriptedScenario:
    raw = load_scenario_file(path).model_dump(exclude_none=True)
    for turn in raw["turns"]:
        turn["judge"] = False
    if channel:
        raw["channel"] = {}
    parsed = parse_scenario(raw, path)
    assert isinstance(parsed, ScriptedScenario)
    return parsed


async def detection(seeds: range) -> list[dict[str, object]]:
    rows = []
    for path in sorted((ROOT / "evals" / "whatsapp").glob("*.yaml")):
        scenario = unjudged(path)
        faults = sorted(f.name for f in faults_for(scenario.agent) if f.name in CHANNEL_FAULT_NAMES)
        for fault in [None, *faults]:
            keys = set() if fault is None else set(next(
                f for f in faults_for(scenario.agent) if f.name == fault).breaks_assertions)
            caught = alarms = errors = 0
            for seed in seeds:
                target = f"clinic:{scenario.agent}" + (f"?faults={fault}" if fault else "")
                result = await arun_conversation(scenario, agent=target, seed=seed)
                if result.run.iloc[0]["status"] != "completed":
                    errors += 1
                    continue
                failed = {r["assertion"] for r in result.assertions.to_dict("records") if not r["passed"]}
                caught += bool(keys) and keys <= failed
                alarms += len(failed & (set(CHANNEL_KEYS) - keys))
            rows.append({"scenario": scenario.id, "locale": scenario.locale, "agent": scenario.agent,
                         "fault": fault or "healthy", "key": ", ".join(sorted(keys)) or None, "seeds": len(seeds), "detected": caught,
                         "false_alarms": alarms, "errors": errors})
    return rows


async def overhead(n: int) -> dict[str, object]:
    paths = [p for agent in ("billing", "scheduling") for p in sorted((SCENARIOS / agent).glob("scripted-*.yaml"))]
    plain = [unjudged(p) for p in paths]
    through = [unjudged(p, channel=True) for p in paths]
    cpu: dict[str, list[float]] = {"plain": [], "channel": []}
    for i in range(n):
        for label, scenarios in (("plain", plain), ("channel", through)) if i % 2 == 0 else (
                ("channel", through), ("plain", plain)):
            scenario = scenarios[i % len(scenarios)]
            started = time.process_time()
            result = await arun_conversation(scenario, agent=f"clinic:{scenario.agent}", seed=i)
            cpu[label].append(time.process_time() - started)
            assert result.run.iloc[0]["status"] == "completed", result.run.iloc[0]["error"]
    med = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
    return {"n_each": n, "scenarios": [p.relative_to(SCENARIOS).as_posix() for p in paths],
            "cpu_ms_median": med, "cpu_ms_mean": {k: statistics.mean(v) * 1000 for k, v in cpu.items()},
            "overhead_pct_median": 100 * (med["channel"] / med["plain"] - 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="conversations of each kind for the overhead")
    parser.add_argument("--out", default="benchmarks/results/channel_37.json")
    args = parser.parse_args()
    load_before = os.getloadavg()
    table = asyncio.run(detection(range(1, 6)))
    cost = asyncio.run(overhead(args.n))
    out = {"load_before": load_before, "load_after": os.getloadavg(), "detection": table, "overhead": cost}
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    for row in table:
        print(f"{row['scenario']:24} {row['fault']:28} {row['key'] or '-':22} detected {row['detected']}/{row['seeds']}"
              f"  false alarms {row['false_alarms']}  errors {row['errors']}")
    print(json.dumps(cost, indent=1))
    print("load", load_before, "->", out["load_after"])


if __name__ == "__main__":
    main()
