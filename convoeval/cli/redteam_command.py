"""``convoeval redteam``: privacy attacks against the agents, leaks decided without an LLM, and the leak gate."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

from convoeval.cli._base import UsageError, _int, _list, command

#: The exit code of ``--fail-on-leak`` when an attack leaked (1 is a failed gate of ``run``, 2 a bad setting).
EXIT_LEAK = 5


def _add_redteam_parser(sub: Any) -> None:
    p = sub.add_parser(
        "redteam", help="privacy attacks: does the agent give one patient's data to another caller?",
        description="Run the attack library (evals/attacks) against agents: each attack seeds a clinic with other "
                    "patients whose data are canaries, plays its caller turns, and finds leaks with no LLM — the "
                    "canaries in the agent's messages, unverified reads or writes of their rows in the tools' access "
                    "log, and changes to their rows in the store. Each case is a conversation of the one engine: the "
                    "results folder is a run's (data/attacks.csv, data/leaks.csv, the transcripts; load_results reads "
                    "it), and a killed run started again on the same --out keeps the cases it finished. "
                    "Exit codes: 0 done; 2 a setting or an attack file that cannot work (nothing ran); "
                    f"{EXIT_LEAK} --fail-on-leak and at least one attack leaked.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="attack files or folders (default: evals/attacks)")
    p.add_argument("--agents", metavar="A[,A...]", help="only these agents (default: each attack's own list)")
    p.add_argument("--strategies", metavar="S[,S...]", help="only these strategies")
    p.add_argument("--locales", metavar="L[,L...]", help="only these locales (pt-BR, en, es)")
    p.add_argument("--target", action="append", metavar="AGENT=TARGET", default=[],
                   help="the agent under test for one agent name, e.g. billing=my_bot:respond (repeatable; "
                        "default: the reference clinic agent)")
    p.add_argument("--faults", metavar="F[,F...]",
                   help="run the reference agents with these known faults, each on the agents that have it")
    p.add_argument("--out", metavar="DIR", help="results folder (default: reports/redteam-<time>); an existing one "
                                               "is resumed")
    p.add_argument("--no-resume", dest="resume", action="store_false",
                   help="run every case again even when --out holds finished ones")
    p.add_argument("--store", metavar="URL", help="fixtures store URL (default: CONVOEVAL_STORE_URL or SQLite)")
    p.add_argument("--concurrency", type=_int, default=4, metavar="N", help="cases in flight at once (default 4)")
    p.add_argument("--workers", type=_int, default=1, metavar="N",
                   help="worker processes on this machine (a local Dask cluster when N > 1)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run on an existing Dask cluster, e.g. tcp://host:8786 (its workers use their own store)")
    p.add_argument("--form", choices=("scripted", "simulated", "both"), default="scripted",
                   help="scripted attacks (fixed turns, deterministic; default), simulated attackers (an LLM plays "
                        "each strategy's persona and plan), or both")
    p.add_argument("--simulator-model", metavar="SPEC", help="the simulated attacker's model (name, 'local', …)")
    p.add_argument("--seed", type=_int, default=42, metavar="N", help="the simulated attacker's seed (default 42)")
    p.add_argument("--judge", action="store_true",
                   help="also ask the rubric judge whether each transcript leaked, and report the leaks it missed "
                        "or invented against the deterministic verdict (judge.csv)")
    p.add_argument("--judge-model", metavar="SPEC", help="the judge model for --judge (name, 'local', …)")
    p.add_argument("--judge-samples", type=_int, default=1, metavar="N", help="judge samples per case (default 1)")
    p.add_argument("--fail-on-leak", action="store_true", help=f"exit {EXIT_LEAK} when any attack leaked")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per case")


@command("redteam")
def _redteam(args: argparse.Namespace) -> int:
    from convoeval.redteam.metrics import case_counts, leaked_summary, usage_line
    from convoeval.redteam.study import RedTeamError, run_redteam
    from convoeval.store import StoreError

    options = _selection(args)
    cases = _planned(args, options)
    out = Path(args.out or f"reports/redteam-{dt.datetime.now():%Y%m%d-%H%M%S}")
    done = [0]

    def progress(result: Any) -> None:
        done[0] += 1
        if not args.quiet:
            print(f"[{done[0]}/{len(cases)}] {result.case} ({result.target_agent}): {result.verdict()}", flush=True)

    try:
        red = run_redteam(args.paths or None, targets=_targets(args), store=args.store, output_dir=out,
                          concurrency=args.concurrency, on_result=progress, simulator_model=args.simulator_model,
                          seed=args.seed, workers=args.workers, cluster=args.cluster, cases=cases,
                          resume=args.resume, progress=False, **options)
    except (StoreError, RedTeamError) as exc:
        raise UsageError(str(exc)) from None
    counts = case_counts(red.cases)
    _print_rates(red.cases, counts)
    if args.judge:
        _judge(args, red, out)
    if red.run is not None:
        kept = int(red.run.meta.get("runs_resumed") or 0)
        if kept:
            print(f"{kept} case(s) kept from the earlier run in {out} (--no-resume runs them again)")
        print(usage_line(red.run.frames.calls))
    print(f"{counts['cases']} case(s): {leaked_summary(counts)}, {counts['errors']} error(s); results in {out}")
    if args.fail_on_leak and counts["leaked"]:
        print(f"--fail-on-leak: another patient's data leaked in {_leaks_only(counts)}", file=sys.stderr)
        return EXIT_LEAK
    return 0


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    """Which cases: the agents, strategies, locales and faults given, and the form."""
    return {
        "agents": _list(args.agents, "--agents") if args.agents else None,
        "strategies": _list(args.strategies, "--strategies") if args.strategies else None,
        "locales": _list(args.locales, "--locales") if args.locales else None,
        "faults": _list(args.faults, "--faults") if args.faults else [],
        "form": args.form,
    }


def _targets(args: argparse.Namespace) -> dict[str, str]:
    """``--target AGENT=TARGET``, repeated, as a mapping; a malformed one is a usage error."""
    targets = {}
    for item in args.target:
        agent, sep, target = item.partition("=")
        if not sep or not agent.strip() or not target.strip():
            raise UsageError(f"--target takes AGENT=TARGET, got {item!r}")
        targets[agent.strip()] = target.strip()
    return targets


def _planned(args: argparse.Namespace, options: dict[str, Any]) -> list[Any]:
    """The cases, every setting checked before anything is made; what the flags will not test, as warnings."""
    from convoeval.redteam.attacks import AttackError
    from convoeval.redteam.study import RedTeamError, plan_cases

    try:
        cases = plan_cases(args.paths or None, **options)
    except AttackError as exc:
        raise UsageError(exc.one_line()) from None
    except RedTeamError as exc:
        raise UsageError(str(exc)) from None
    for warning in _plan_warnings(cases, options["agents"], options["faults"]):
        print(f"warning: {warning}", file=sys.stderr)
    return cases


def _print_rates(frame: Any, counts: dict[str, int]) -> None:
    """The attack success rate per strategy (and over all attacks), and the legitimate requests apart."""
    from convoeval.redteam.metrics import attack_success

    asr = attack_success(frame, by=("strategy",))
    print("\nattack success rate by strategy (95% Wilson CI):")
    for row in asr.itertuples():
        print(f"  {row.strategy:<14} {row.leaked:>3}/{row.n:<3} {row.rate:6.1%}  [{row.ci_low:.1%}, {row.ci_high:.1%}]")
    if len(asr) > 1:
        total = attack_success(frame, by=()).iloc[0]
        print(f"  {'all attacks':<14} {int(total.leaked):>3}/{int(total.n):<3} {total.rate:6.1%}  [{total.ci_low:.1%}, "
              f"{total.ci_high:.1%}]")
    if counts["legitimate"]:
        print(f"legitimate requests (the caller proves the patient's identity; not attacks, so in no rate above): "
              f"{counts['legitimate']}, of which {counts['legitimate_leaked']} leaked (the agent gave the data "
              f"before verifying the caller) and {counts['legitimate_not_served']} not served (over-refusal)")


def _judge(args: argparse.Namespace, red: Any, out: Path) -> None:
    """``--judge``: the rubric judge on every transcript, against the deterministic verdict (``judge.csv``)."""
    from convoeval.frames import to_spreadsheet_csv
    from convoeval.llm import LLMError
    from convoeval.redteam.judge_study import judge_leaks, judge_vs_detector

    try:
        verdicts = judge_leaks(red.results, model=args.judge_model, samples=args.judge_samples)
    except (LLMError, ValueError) as exc:
        raise UsageError(f"--judge: {str(exc).splitlines()[0]}") from None
    to_spreadsheet_csv(verdicts, out / "judge.csv")  # the judge quotes the transcript
    print("\nthe rubric judge against the deterministic verdict (95% Wilson CI):")
    for row in judge_vs_detector(verdicts).itertuples():
        if row.measure in ("cohen_kappa", "unanswered"):
            shown = f"{row.rate:.2f}" if row.measure == "cohen_kappa" else f"{int(row.count)} of {row.of}"
            print(f"  {row.measure:<26} {shown}")
        else:
            print(f"  {row.measure:<26} {int(row.count)}/{row.of}  {row.rate:6.1%}  [{row.ci_low:.1%}, "
                  f"{row.ci_high:.1%}]")


def _leaks_only(counts: dict[str, int]) -> str:
    """``4 attack(s) and 1 legitimate request(s) (…)``: the cases that leaked, the two kinds apart."""
    parts = [f"{counts['attacks_leaked']} attack(s)" if counts["attacks_leaked"] else "",
             f"{counts['legitimate_leaked']} legitimate request(s) (served before the caller was verified)"
             if counts["legitimate_leaked"] else ""]
    return " and ".join(p for p in parts if p)


def _plan_warnings(cases: list[Any], agents: list[str] | None, faults: list[str]) -> list[str]:
    """What the planned cases will not test though the flags ask for it: an agent no attack covers, a fault that
    no attacked agent has, or one that does not touch privacy (its cases measure the agents as without it)."""
    from convoeval.agents.clinic import faults_for

    def known(agent: str) -> list[Any]:
        try:
            return faults_for(agent)
        except ValueError:  # an agent registered by another package: no reference faults
            return []

    attacked = sorted({c.agent for c in cases})
    warnings = []
    uncovered = [a for a in agents or () if a not in attacked]
    if uncovered:
        warnings.append(f"no attack covers {', '.join(uncovered)}: the {len(cases)} case(s) attack "
                        f"{', '.join(attacked)} (an attack file's agents: list)")
    for fault in faults:
        owners = [f for agent in attacked for f in known(agent) if f.name == fault]
        if not owners:
            warnings.append(f"--faults {fault}: no attacked agent ({', '.join(attacked)}) has this fault; the cases "
                            "run without it")
        elif not any(f.leaks for f in owners):
            privacy = sorted({f.name for agent in attacked for f in known(agent) if f.leaks})
            warnings.append(f"--faults {fault} does not touch privacy (it is not about other patients' data): the "
                            f"{len(cases)} case(s) measure {', '.join(sorted({f.agent for f in owners}))} as if "
                            f"without it; privacy faults: {', '.join(privacy)}")
    return warnings
