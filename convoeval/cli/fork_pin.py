"""``convoeval fork`` and ``convoeval pin``: from a failing conversation to where it went wrong, and to a regression test."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoeval.cli._base import UsageError, _int, _list, command
from convoeval.cli.config_flags import add_shared_flags, given_options
from convoeval.pipeline.options import SHARED_DEFAULTS

if TYPE_CHECKING:
    from convoeval.forking import ForkOptions


def _add_fork_parser(sub: Any) -> None:
    p = sub.add_parser(
        "fork", help="fork a saved conversation at a turn (or at every turn: its failure profile)",
        description="Replay a saved conversation's first K patient messages against the agent, let the simulator "
                    "continue N times with new seeds, judge and assert each continuation. Without --at-turn, fork "
                    "at every turn and print the failure rate per fork point and the turn where it went wrong. The "
                    "cost is printed first; a job above --max-calls LLM calls needs --yes.")
    p.add_argument("conversation", metavar="CONVERSATION",
                   help="a saved conversation (RESULTS/runs/<key>.json) or a results folder")
    p.add_argument("conversation_id", nargs="?", metavar="ID",
                   help="with a results folder: the conversation's file name (without .json) or run_id")
    p.add_argument("--at-turn", "--turn", type=_int, metavar="K", help="fork after turn K only (0: a fresh start)")
    p.add_argument("--turns", metavar="K[,K...]", help="the profile's fork points (default: every turn)")
    p.add_argument("-n", type=_int, default=5, metavar="N", help="continuations per fork point (default 5)")
    p.add_argument("--target", metavar="TARGET", help="agent under test (default: the conversation's)")
    p.add_argument("--scenarios-dir", metavar="DIR", help="scenario files (default: the project's evals/scenarios)")
    p.add_argument("--max-calls", type=_int, metavar="N", help="LLM calls allowed without --yes (default 200)")
    p.add_argument("--yes", action="store_true", help="run even above --max-calls")
    p.add_argument("--out", metavar="DIR", help="also save every continuation under DIR/runs/")
    p.add_argument("--draft-out", metavar="FILE", help="an imported conversation: where to write the scenario drafted "
                                                        "from it (default evals/scenarios/<agent>/drafted-<key>.yaml)")
    add_shared_flags(p, title="options shared with the fault study and compare's candidate run")


@command("fork")
def _cmd_fork(args: argparse.Namespace) -> int:
    from convoeval import forking
    from convoeval.llm import LLMError
    from convoeval.scenarios import ScenarioError
    from convoeval.store import StoreError

    options: ForkOptions = {**given_options(args), "conversation": args.conversation_id, "target": args.target,
                            "scenarios_dir": args.scenarios_dir, "confirm": args.yes,
                            "max_calls": args.max_calls or forking.DEFAULT_MAX_CALLS, "out": args.out}
    judge_samples = options.get("judge_samples", SHARED_DEFAULTS["judge_samples"])
    try:
        original = forking.load_conversation(args.conversation, args.conversation_id)
        original, scenario = _imported_or_saved(original, args)
        if args.target is None and original.rows["runs"][0].get("source") == "production":
            options["target"] = f"clinic:{scenario.agent}"  # the bot that spoke is not here: the agent under test
        turns = forking.patient_turns(original)
        if args.at_turn is not None:
            points = [args.at_turn]
        else:
            points = _list(args.turns, "--turns", int) if args.turns else list(range(turns + 1))
        status = original.rows["scores"][0].get("status") if original.rows.get("scores") else "not judged"
        print(f"conversation {original.run_id} ({scenario.id}, {turns} patient turns, {status}): "
              f"{forking.fork_cost(scenario, turns, points, n=args.n, judge_samples=judge_samples).line()}")
        options["scenario"] = scenario
        if args.at_turn is not None:
            forked = forking.fork(original, at_turn=args.at_turn, n=args.n, **options)
            table = forking.failure_table(forked.frames.scores)
        else:
            profile = forking.fork_profile(original, n=args.n, turns=points, **options)
            table = profile.table
    except (ValueError, LLMError, StoreError, ScenarioError) as exc:  # ForkCostError is a ValueError
        raise UsageError(str(exc)) from None
    print(table.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    if args.at_turn is None:
        print(profile.summary())
    if args.out:
        print(f"continuations saved in {args.out}/runs/")
    return 0


def _add_pin_parser(sub: Any) -> None:
    p = sub.add_parser(
        "pin", help="write a scripted regression test from a saved conversation",
        description="Write a scripted scenario that sends the conversation's patient messages verbatim and expects, "
                    "turn by turn, the tools the agent called (or, with --expected-from, the tools a passing "
                    "conversation of the same scenario called), with the original's persona, fixtures and "
                    "assertions. The file validates with `convoeval validate` and runs with `convoeval run "
                    "--scenario <id>`.")
    p.add_argument("conversation", metavar="CONVERSATION", help="a saved conversation: RESULTS/runs/<key>.json")
    p.add_argument("--out", metavar="FILE",
                   help="the YAML to write (default: evals/scenarios/<agent>/pinned-<scenario>-<run id>.yaml; "
                        "'-' prints it)")
    p.add_argument("--expected-from", metavar="JSON", help="a passing conversation whose tools are the expectations")
    p.add_argument("--scenarios-dir", metavar="DIR", help="where the original scenario is (default: the project's)")
    p.add_argument("--judge", action="store_true", help="ask the per-turn judge too (LLM calls; default off)")
    p.add_argument("--id", dest="scenario_id", metavar="ID", help="the new scenario's id")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--draft-out", metavar="FILE", help="an imported conversation: where to write the scenario drafted "
                                                        "from it (default evals/scenarios/<agent>/drafted-<key>.yaml)")


@command("pin")
def _cmd_pin(args: argparse.Namespace) -> int:
    from convoeval.forking import load_conversation
    from convoeval.forking.pinning import default_pin_path, pin
    from convoeval.scenarios import ScenarioError

    try:
        result, scenario = _imported_or_saved(load_conversation(args.conversation), args)
        out = None if args.out == "-" else Path(args.out) if args.out else default_pin_path(scenario, result.run_id)
        pinned = pin(result, out=out, expected_from=args.expected_from, scenario=scenario, judge=args.judge,
                     scenario_id=args.scenario_id, overwrite=args.force)
    except (ValueError, ScenarioError) as exc:  # PinError is a ValueError
        raise UsageError(str(exc)) from None
    if pinned.path is None:
        sys.stdout.write(pinned.text)
        return 0
    for note in pinned.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"pinned {len(pinned.scenario.turns)} turn(s) as {pinned.scenario.id}: {pinned.path}")
    return 0


def _imported_or_saved(original: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """A saved conversation and its scenario; an imported one (``convoeval import``) with its turns' bursts joined
    and a scenario drafted from it, written for review (``--draft-out``, default beside the pinned scenarios)."""
    from convoeval import forking
    from convoeval.production.drafting import draft_scenario, is_imported, replayable

    if not is_imported(original):
        return original, forking.scenario_of(original, scenarios_dir=args.scenarios_dir)
    source = Path(args.conversation)
    payload = json.loads(source.read_text(encoding="utf-8")) if source.is_file() else None
    merged = replayable(original)
    scenario, text = draft_scenario(merged, payload=payload, scenarios_dir=args.scenarios_dir)
    from convoeval._util.paths import project_root

    draft = Path(args.draft_out) if getattr(args, "draft_out", None) else (
        project_root() / "evals" / "scenarios" / scenario.agent / f"{scenario.id}.yaml")
    draft.parent.mkdir(parents=True, exist_ok=True)
    draft.write_text(text, encoding="utf-8")
    print(f"drafted scenario (review it): {draft}", file=sys.stderr)
    return merged, scenario
