"""What a comparison too small to test should say, and the commands that make it large enough.

A judge's score is a sample: with one pair per scenario there is neither an interval nor a test, and a difference
of six points is not evidence either way. The comparison then says so in words and gives the next step as commands
the user can paste: the baseline run again with more seeds (rebuilt from the settings its ``report.json``
recorded), then the same comparison with that folder as the baseline. ``few_seeds_warning`` says it before a
candidate runs at all.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval.compare.pairing import Side
from convoeval.compare.shape import ComparisonView
from convoeval.compare.verdict import min_pairs_for_significance
from convoeval.pipeline.config import EvalConfig

__all__ = ["few_seeds_warning", "next_seeds", "rerun_command", "too_few_pairs", "untested_lines"]

#: The recorded settings a rerun keeps (the others — where it runs, how many at once, gates — are the user's choice).
_KEPT = ("agent", "scenario", "type", "trials", "target", "simulator_model", "judge_model", "simulator",
         "judge_samples", "scenarios_dir", "simulator_gate", "resimulate")


def next_seeds(side: Side, *, alpha: float = 0.05) -> list[int]:
    """Seeds for a rerun that gives every scenario as many pairs as a paired test needs to reach ``alpha`` at all
    (six at 0.05), counting the side's trials; one more seed than it has when it already had that many.

    Example:
        >>> from convoeval.compare.pairing import load_side
        >>> next_seeds(load_side("reports/example"))   # a side of one seed, one trial
        [1, 2, 3, 4, 5, 6]
    """
    trials = max(1, int(_config(side).get("trials") or 1))
    have = int(side.runs["seed"].dropna().nunique())
    wanted = math.ceil(min_pairs_for_significance(alpha) / trials)
    return list(range(1, max(wanted, have + 1) + 1))


def _config(side: Side) -> Mapping[str, Any]:
    config = side.meta.get("config")
    return config if isinstance(config, Mapping) else {}


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def rerun_command(side: Side, seeds: Sequence[int], *, scope: Mapping[str, str | None] | None = None
                  ) -> tuple[str, str] | None:
    """``(command, folder)``: ``convoeval run`` with the side's recorded settings, ``seeds`` and a new folder beside
    its own; None when the side was not read from one results folder that recorded its settings.

    Args:
        side: a side read from a results folder.
        seeds: the seeds of the rerun.
        scope: ``agent``, ``scenario`` and ``type`` to run instead of the recorded ones (the comparison's scope: a
            rerun need not run what the comparison leaves out).
    """
    config = _config(side)
    if len(side.folders) != 1 or not config:
        return None
    config = {**config, **(scope or {})}
    fields = EvalConfig.model_fields
    words = ["convoeval", "run"]
    for name in _KEPT:
        value = config.get(name)
        default = fields[name].default if name in fields else None
        if name == "agent" and value is None:
            words += ["--agent", "all"]
        elif name == "simulator_gate" and value is False:
            words.append("--no-simulator-gate")
        elif value is not None and value != default and not isinstance(value, bool):
            shown = json.dumps(value) if isinstance(value, Mapping) else str(value)  # JSON is YAML the flag reads
            words += ["--" + name.replace("_", "-"), shown]
    folder = side.folders[0]
    new = folder.with_name(f"{folder.name}-s{seeds[0]}-{seeds[-1]}")
    words += ["--seed", ",".join(map(str, seeds)), "--out", _shown(new)]
    return shlex.join(words), _shown(new)


def _scope(baseline: Side, given: Mapping[str, str | None] | None) -> dict[str, str | None]:
    """What a rerun of either side runs: the baseline's recorded agent, scenario and type, narrowed by the
    comparison's own (a candidate run now records no scope of its own: it ran the baseline's conversations)."""
    recorded = _config(baseline)
    narrowed = {k: v for k, v in (given or {}).items() if v is not None}
    return {**{k: recorded.get(k) for k in ("agent", "scenario", "type")}, **narrowed}


def too_few_pairs(row: Mapping[str, Any] | pd.Series, alpha: float) -> bool:
    """Whether a score row (``Comparison.scores``) has no interval or fewer pairs than a paired test needs to reach
    ``alpha`` at all: its difference is then untested, whatever its p-value.

    Example:
        >>> too_few_pairs({"ci_low": float("nan"), "n_pairs": 3}, 0.05), too_few_pairs({"ci_low": -1.0, "n_pairs": 8}, 0.05)
        (True, False)
    """
    return bool(pd.isna(row["ci_low"])) or int(row["n_pairs"]) < min_pairs_for_significance(alpha)


def _per_scenario(side: Side) -> int:
    counts = side.runs.groupby("scenario").size()
    return int(counts.min()) if len(counts) else 0


def few_seeds_warning(baseline: Side, *, alpha: float = 0.05, compare_args: Sequence[str] | None = None,
                      candidate_runs_now: bool = True, scope: Mapping[str, str | None] | None = None) -> str | None:
    """A warning for a baseline of one seed with too few conversations per scenario for a paired test; else None.

    Args:
        baseline: the baseline side (scoped as the comparison will be).
        alpha: the comparison's significance level.
        compare_args: the comparison's options (the CLI's own, without its folders), to repeat them in the advice.
        candidate_runs_now: the candidate will run now on the baseline's conversations; else its folder must be
            made again on the same seeds too, and the advice says so.
        scope: the comparison's ``agent``, ``scenario`` and ``type`` (what a rerun need run).
    """
    seeds = baseline.runs["seed"].dropna().unique()
    per = _per_scenario(baseline)
    need = min_pairs_for_significance(alpha)
    if baseline.runs.empty or len(seeds) > 1 or per >= need:
        return None
    named = f"one seed ({int(seeds[0])})" if len(seeds) else "no seed"
    text = (f"the baseline ran {named}: {per} conversation(s) per scenario, too few for an interval or a test of the "
            f"judges' scores (a paired test needs {need} per scenario at alpha {alpha:g}); only deterministic checks "
            "(database and path assertions, scripted turn checks) can show a change")
    seeds_text = ",".join(map(str, next_seeds(baseline, alpha=alpha)))
    made = rerun_command(baseline, next_seeds(baseline, alpha=alpha), scope=_scope(baseline, scope))
    if made is None:
        return text + f". To measure the scores too, run the baseline again with --seed {seeds_text} first"
    if not candidate_runs_now:
        return (text + f". To measure the scores too, first: {made[0]}, the candidate's folder again with "
                f"--seed {seeds_text}, and compare those two folders")
    again = [shlex.join(["convoeval", "compare", made[1], *compare_args])] if compare_args is not None else []
    return text + f". To measure the scores too, first: {' && '.join([made[0], *again])}"


def untested_lines(cmp: ComparisonView, *, compare_args: Sequence[str] | None = None, candidate_runs_now: bool = True
                   ) -> list[str]:
    """Lines for a score difference too few pairs can test: what it means, and the commands that would test it.

    Empty when the overall score has an interval and enough pairs for its test.

    Args:
        cmp: the ``Comparison``.
        compare_args: the comparison's options (the CLI's own, without its folders), to repeat them.
        candidate_runs_now: the candidate was run now on the baseline's conversations (``--candidate-target``,
            ``--aa``), so comparing against a larger baseline runs it again; else it must be rerun too.
    """
    o, alpha = cmp.overall, float(cmp.settings.get("alpha", 0.05))
    need = min_pairs_for_significance(alpha)
    n = int(o["n_pairs"])
    if not too_few_pairs(o, alpha):
        return []
    per = _per_scenario_pairs(cmp)
    facts = bool(len(cmp.flips) and cmp.flips["fact"].astype(bool).any())
    head = (f"the score's difference ({o['difference']:+.2f} points) is untested: {n} pair(s), {per} per scenario, "
            f"are too few for an interval or a test (a paired test needs {need} pairs that differ, at alpha "
            f"{alpha:g})" if n and not pd.isna(o["difference"]) else
            "no pair has a score on both sides, so the score is not compared")
    head += ("; the headline rests on the deterministic checks above" if facts else
             "; it is not evidence either way: judges' scores vary from run to run")
    out = [head]
    seeds = next_seeds(cmp.baseline, alpha=alpha)
    scope = _scope(cmp.baseline, cmp.settings.get("scope"))
    base = rerun_command(cmp.baseline, seeds, scope=scope)
    cand = None if candidate_runs_now else rerun_command(cmp.candidate, seeds, scope=scope)
    if base is None or (not candidate_runs_now and cand is None):
        out.append(f"next: run both sides again with --seed {','.join(map(str, seeds))} and compare those folders")
        return out
    out.append(f"next, to test it: run the baseline on {len(seeds)} seeds and compare again:")
    out.append(f"  {base[0]}")
    if cand is not None:
        out.append(f"  {cand[0]}")
    if compare_args is not None:
        rest = [*([cand[1]] if cand is not None else []), *compare_args]
        out.append(f"  {shlex.join(['convoeval', 'compare', base[1], *rest])}")
    else:
        out.append(f"  then compare with {base[1]} as the baseline")
    return out


def _per_scenario_pairs(cmp: ComparisonView) -> int:
    valid = cmp.pairs[cmp.pairs["excluded"].isna()]
    counts = valid.groupby("scenario").size()
    return int(counts.min()) if len(counts) else 0
