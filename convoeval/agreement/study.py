"""The agreement study behind ``notebooks/agreement.ipynb``: gather conversations, judge them again, measure.

``check_study_parameters(globals())`` checks the notebook's parameters (one line per problem, unknown names
refused); ``run_study(config)`` then

1. runs the known-fault study (each reference agent with and without its documented faults) and/or reads saved
   results folders (runs and sweeps);
2. judges every completed conversational run again with each judge configuration (``rejudge``);
3. runs the bias probes on the first judge, and the simulator-fidelity checks;
4. computes every agreement table with ``convoeval.agreement`` and saves the inputs (``data/*.parquet``) and the
   tables (``tables/*.csv``) to the output folder, so each number can be recomputed from the saved data.

Nothing here draws: ``convoeval.agreement.views`` shows a ``Study``.
"""

from __future__ import annotations

import contextlib
import json
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval import stats
from convoeval._util.paths import under
from convoeval.agreement.fault_labels import free_labels
from convoeval.agreement.rejudge import judged_transcripts, rejudge
from convoeval.agreement.study_params import StudyConfig, check_study_parameters  # the notebook's one namespace
from convoeval.fidelity import exclude_flagged, fidelity_flags, fidelity_summary, flagged_runs
from convoeval.frames import SIMULATOR_FAILURE, RunFrames, from_parquet, to_parquet
from convoeval.llm import CacheMissError
from convoeval.llm.accounting import CALL_COLUMNS
from convoeval.llm.models import get_model
from convoeval.pipeline.config import ParameterError
from convoeval.pipeline.notebook import ReplayMissError
from convoeval.pipeline.progress import Mode, StageProgress, as_mode
from convoeval.pipeline.results import read_frames
from convoeval.scenarios import load_scenarios
from convoeval.simulator.gate import exclude_simulator_failures, simulator_failures, stopped_run_ids
from convoeval.stats import probe_effects
from convoeval.stats.calibration.table import calibration_table

__all__ = [
    "Study",
    "StudyConfig",
    "check_study_parameters",
    "compute_tables",
    "load_frames",
    "load_study",
    "run_study",
]


@dataclass
class Study:
    """What the agreement notebook shows.

    Attributes:
        out_dir: The study's folder (``data/``, ``tables/``, ``fault-study/``, ``study.json``).
        frames: The conversations studied (runs, transcripts, rubric, holistic, assertions, ...), merged.
        judged: ``rubric`` and ``holistic`` verdicts of every judge configuration (a ``judge`` column), the probe
            ``pairs`` and the ``fidelity`` flags.
        tables: Every agreement table, by name (saved as ``tables/<name>.csv``).
        meta: Parameters, judges, counts, times.
    """

    out_dir: Path
    frames: RunFrames
    judged: dict[str, pd.DataFrame]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def judges(self) -> list[str]:
        return list(self.meta.get("judges", {}))


def load_frames(folders: list[Path]) -> RunFrames:
    """Every finished conversation under ``folders`` (searched for ``runs/`` folders: runs, sweeps, studies)."""

    parts: list[RunFrames] = []
    for folder in folders:
        run_dirs = sorted({p.parent for p in Path(folder).rglob("runs") if p.is_dir()})
        parts.extend(read_frames(d) for d in run_dirs)
    return _concat(parts)


def _concat(parts: list[RunFrames]) -> RunFrames:

    out = RunFrames.merge(parts, call_columns=CALL_COLUMNS)
    if len(out.runs):  # a run read twice (a folder inside another) counts once
        out = out.map(lambda name, f: f.drop_duplicates(subset=_identity(f)) if name != "calls" else f)
    return out


def _identity(frame: pd.DataFrame) -> list[str]:
    keys = [c for c in ("run_id", "turn", "role", "criterion_index", "sample", "assertion", "dimension")
            if c in frame.columns]
    return keys or list(frame.columns)


def run_study(config: StudyConfig, *, progress: Mode | bool = "lines") -> Study:
    """Gather the conversations, judge them with every configuration, run probes and fidelity checks, measure.

    Args:
        config: From ``check_study_parameters``.
        progress: ``"lines"`` (the default: a line per step and per conversation, and while a step runs a line every
            20 s with its LLM calls and an ETA; ``convoeval notebook`` shows them in the terminal),
            ``"bar"`` (a progress bar for the conversations) or ``"off"``.

    Returns:
        The ``Study``; its data and tables are already saved under ``config.out_dir``.

    Raises:
        ReplayMissError: a call missing from a replay-only cache.
        ValueError: no completed conversational run to judge (only scripted runs, or every conversation errored).
    """
    from convoeval.agreement.faults import run_fault_study  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    p = config.params
    mode = as_mode(progress, on="lines")
    started = time.time()
    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    scenarios = load_scenarios(config.scenarios_path())
    first_judge = next(iter(p["judges"].values()))
    stages = StageProgress(bool(p["fault_study"]) + len(p["judges"]) + bool(p["probes"]), mode=mode)
    parts = []
    if p["fault_study"]:
        chosen = [s for s in scenarios if s.agent in p["agents"] and (p["scenario"] in (None, s.id))]
        if not chosen:
            raise ParameterError(f"no scenario of {', '.join(p['agents'])} matches scenario={p['scenario']!r}")
        with stages.step("the fault study's conversations (each judged by the first judge)", count=False):
            parts.append(run_fault_study(
                chosen, out / "fault-study", faults=p["faults"], seeds=tuple(p["seeds"]), trials=p["trials"],
                simulator_model=p["simulator_model"], judge_model=first_judge, judge_samples=p["judge_samples"],
                concurrency=p["concurrency"], progress=mode, simulator_gate=p["simulator_gate"],
                simulator=p["simulator"]))
    if p["runs"]:
        parts.append(load_frames([under(config.project_root, f) for f in p["runs"]]))
    frames = _concat(parts)
    _raise_on_replay_miss(frames.calls)
    _require_conversations(frames.runs, fault_study=bool(p["fault_study"]))
    try:
        n = judged_transcripts(frames)["run_id"].nunique()  # the conversations each judge and probe reads
        judged = _judge_all(frames, n, scenarios, p, stages)
        judged["fidelity"] = _fidelity(frames, scenarios)
        probing = (stages.step(f"bias probes {', '.join(p['probes'])}", calls=_probe_calls(n, p))
                   if p["probes"] else contextlib.nullcontext())
        with probing:
            judged["pairs"] = _probe_pairs(frames, scenarios, p, first_judge)
    except CacheMissError as exc:
        raise ReplayMissError(f"{exc}; {_RERECORD}") from None
    meta = {"params": p, "judges": {k: v for k, v in p["judges"].items()}, "started": started,
            "duration_s": round(time.time() - started, 1), "conversations": int(frames.runs["run_id"].nunique()),
            "simulator_failures": len(simulator_failures(frames)), "local_demo": _local_demo(frames, judged)}
    study = Study(out_dir=out, frames=frames, judged=judged, meta=meta)
    study.tables = compute_tables(study, labels=under(config.project_root, p["labels"]) if p["labels"] else None,
                                  exclude_unfaithful=p["exclude_unfaithful"], n_boot=p["n_boot"])
    _save(study)
    stages.close()
    return study


def _judge_all(frames: RunFrames, n: int, scenarios: list[Any], p: Mapping[str, Any],
               stages: StageProgress) -> dict[str, pd.DataFrame]:
    """Every completed conversation (``n`` of them) judged again by each judge configuration, a step per judge."""

    parts = []
    for name, spec in p["judges"].items():
        # The first judge already judged the fault study's conversations: its calls come back from the cache.
        with stages.step(f"judging {n} conversation(s) with {name!r} (rubric and holistic)",
                         calls=2 * n * p["judge_samples"]):
            parts.append(rejudge(frames, {name: spec}, scenarios=scenarios, samples=p["judge_samples"]))
    return {kind: pd.concat([part[kind] for part in parts], ignore_index=True) for kind in ("rubric", "holistic")}


def _probe_calls(n: int, p: Mapping[str, Any]) -> int:
    """The most LLM calls the probes make on ``n`` conversations: the originals judged, each probe's judging, the
    language probe's translations (one call per conversation); fewer when a probe leaves a conversation unchanged."""
    samples = int(p["judge_samples"])
    per_probe = {"criteria_order": n * samples, "language": n + 2 * n * samples}
    return 2 * n * samples + sum(per_probe.get(probe, 2 * n * samples) for probe in p["probes"])


_RERECORD = ("re-record the calls: run once with CONVOEVAL_CACHE=rw (for the notebook CI cache: "
             "bash scripts/record-nbval-cache.sh agreement)")


def _raise_on_replay_miss(calls: pd.DataFrame) -> None:
    # A conversation whose call missed the replay-only cache ends as 'error' like any failed call; in CI that means
    # the recording is stale, and the study must stop and say how to re-record rather than measure error rows.
    if calls.empty or "error" not in calls:
        return
    misses = calls[calls["error"].fillna("").astype(str).str.startswith("CacheMissError")]
    if len(misses):
        first = misses.iloc[0]
        raise ReplayMissError(f"{len(misses)} LLM call(s) of the fault study are not in the replay-only cache (first: "
                              f"the {first['role']} call of {first['scenario']}); {_RERECORD}")


def _require_conversations(runs: pd.DataFrame, *, fault_study: bool = False) -> None:
    # Judges are re-run on completed conversations only (scripted runs have no rubric, errored ones no transcript to
    # trust, and one the simulator-failure gate stopped was never the agent's): with none, every table would be
    # empty, so stop with the reason instead of showing empty sections.
    if len(runs) and ((runs["type"] == "conversational") & (runs["status"] == "completed")).any():
        return
    scripted = int((runs["type"] != "conversational").sum()) if len(runs) else 0
    errored = runs[(runs["type"] == "conversational") & (runs["status"] != "completed")] if len(runs) else runs
    detail = f"{len(runs)} conversation(s) read: {scripted} scripted, {len(errored)} conversational not completed"
    broke = int((errored["status"] == SIMULATOR_FAILURE).sum()) if len(errored) else 0
    if broke:
        detail += (f", {broke} of them simulator_failure (the simulated patient broke: use a stronger simulator "
                   "model, or simulator_gate = False to judge them anyway)")
    if len(errored) and "error" in errored and errored["error"].notna().any():
        detail += f" (first error: {textwrap.shorten(str(errored['error'].dropna().iloc[0]), 200)})"
    hint = "give results folders that hold some" + ("" if fault_study else ", or set fault_study = True")
    raise ValueError(f"nothing to study: no completed conversational run ({detail}); the judges are compared on "
                     f"conversational runs, so {hint}")


def _fidelity(frames: RunFrames, scenarios: list[Any]) -> pd.DataFrame:

    return fidelity_flags(frames, scenarios=scenarios)


def _probe_pairs(frames: RunFrames, scenarios: list[Any], p: Mapping[str, Any], judge: Any
                 ) -> pd.DataFrame:
    from convoeval.agreement.probes import run_probes  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    if not p["probes"]:
        return pd.DataFrame(columns=["probe", "run_id", "scenario", "instrument", "item", "before", "after", "error"])
    model = get_model("judge", judge)
    transcripts = judged_transcripts(frames)
    return run_probes(transcripts, scenarios=scenarios, probes=p["probes"], model=model).pairs


def _local_demo(frames: RunFrames, judged: Mapping[str, pd.DataFrame]) -> bool:
    calls = frames.calls
    in_calls = "is_local_demo" in calls and bool(calls["is_local_demo"].fillna(False).any())
    providers = set(judged["rubric"].get("judge_provider", pd.Series(dtype=str)).dropna())
    return in_calls or "local" in providers


def compute_tables(study: Study, *, labels: Path | None = None, exclude_unfaithful: bool = False,
                   n_boot: int = 1000) -> dict[str, pd.DataFrame]:
    """Every agreement table of a study, from its saved inputs only (so a reader can recompute each number).

    Args:
        study: A ``Study`` (``frames`` and ``judged``).
        labels: Human labels to score the judges against (``evals/labels`` CSV format).
        exclude_unfaithful: Leave out conversations the fidelity checks flagged.
        n_boot: Bootstrap replicates.

    Returns:
        ``{name: table}``; names: ``database``, ``judges``, ``scores``, ``self_consistency``, ``score_consistency``,
        ``faults``, ``fault_confusion``, ``trial_flips``, ``probes``, ``fidelity``, ``simulator_failures`` (the
        conversations the simulator-failure gate stopped, left out of every other table; absent when none),
        ``labels`` (each judge against each human rater), ``calibrated_estimates`` (raw, labels-only and calibrated
        pass and goal rates on the free labels and the human ones: ``convoeval.stats.calibration.table``).
        A table that the data cannot support (one judge, one sample, no known faults, no labels, no probes) is
        empty or absent; ``convoeval.agreement.views`` says which and why.
    """
    from convoeval.agreement.faults import fault_confusion, fault_detection, fault_truth  # noqa: PLC0415 - pulls in a heavy dependency on first use (start-up budget, tests/test_startup.py)

    opts = {"estimation": stats.Estimation(n_boot=n_boot)}
    stopped, dropped = simulator_failures(study.frames), stopped_run_ids(study.frames)
    # The gate's stopped conversations were never judged and never the agent's: counted apart, in no table but the
    # fidelity summary (which checks every conversation).
    frames, judged = exclude_simulator_failures(study.frames), dict(study.judged)
    for name in ("rubric", "holistic", "pairs"):
        if dropped and len(judged[name]):
            judged[name] = judged[name][~judged[name]["run_id"].astype(str).isin(dropped)]
    flags = judged["fidelity"]
    if exclude_unfaithful and len(flags):
        frames = exclude_flagged(frames, flags)
        unfaithful = set(flagged_runs(flags))
        judged.update({k: judged[k][~judged[k]["run_id"].isin(unfaithful)].reset_index(drop=True)
                       for k in ("rubric", "holistic", "pairs") if "run_id" in judged[k].columns})
    rubric, holistic = judged["rubric"], judged["holistic"]
    n_judges = rubric["judge"].nunique() if len(rubric) else 0
    with_judges = frames.replace(rubric=rubric, holistic=holistic)
    # Saved runs and sweeps are not a fault study: no conversation has a known-fault truth to score the judges by.
    known = bool(len(rubric)) and not fault_truth(with_judges).empty
    tables: dict[str, pd.DataFrame] = {
        "database": stats.database_agreement(with_judges, rater="judge", **opts),
        "faults": fault_detection(with_judges, rater="judge") if known else pd.DataFrame(),
        "fault_confusion": fault_confusion(with_judges, rater="judge") if known else pd.DataFrame(),
        "probes": probe_effects(judged["pairs"]) if len(judged["pairs"]) else pd.DataFrame(),
        "fidelity": fidelity_summary(flags),
        "simulator_failures": stopped if len(stopped) else None,
    }
    if n_judges >= 2:
        tables["judges"] = stats.binary_agreement(stats.rubric_ratings(rubric, rater="judge"), **opts)
        tables["scores"] = stats.score_agreement(stats.holistic_ratings(holistic, rater="judge"), **opts)
    if len(rubric) and rubric["sample"].nunique() > 1:
        tables["self_consistency"] = stats.self_consistency(rubric, rater="judge", **opts)
        tables["score_consistency"] = stats.score_consistency(holistic, rater="judge", **opts)
    if len(rubric) and frames.runs[["scenario", "seed", "trial"]].drop_duplicates().groupby("scenario").size().max(
    ) > 1:
        tables["trial_flips"] = stats.trial_flip_rate(rubric.merge(frames.runs[["run_id", "target"]], on="run_id"),
                                                   rater=("judge", "target"), **opts)
    human = stats.load_labels(labels) if labels is not None else None
    if human is not None:
        tables["labels"] = stats.score_against_labels(rubric, human, rater="judge", **opts)
    tables["calibrated_estimates"] = calibration_table(with_judges, free=free_labels(with_judges), human=human,
                                                       rater="judge", **opts)
    return {name: table for name, table in tables.items() if table is not None}


def _save(study: Study) -> None:
    data, tables = study.out_dir / "data", study.out_dir / "tables"
    data.mkdir(parents=True, exist_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    for name, frame in {**study.frames.as_dict(), **{f"judged_{k}": v for k, v in study.judged.items()}}.items():
        if name != "calls":
            to_parquet(frame, data / f"{name}.parquet")
    for name, table in study.tables.items():
        table.to_csv(tables / f"{name}.csv", index=False)
    (study.out_dir / "study.json").write_text(json.dumps(study.meta, indent=2, default=str), encoding="utf-8")


def _read_table(path: Path) -> pd.DataFrame:
    # A table the data could not support (no known faults, no probes) is saved as an empty file: no columns to parse.
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def load_study(folder: Path | str) -> Study:
    """A saved study read back (frames, judged verdicts, tables, metadata), e.g. to check or extend its tables."""
    folder = Path(folder)
    frames: dict[str, pd.DataFrame] = {}
    judged: dict[str, pd.DataFrame] = {}
    for path in sorted((folder / "data").glob("*.parquet")):
        frame = from_parquet(path)
        if path.stem.startswith("judged_"):
            judged[path.stem.removeprefix("judged_")] = frame
        else:
            frames[path.stem] = frame
    tables = {p.stem: _read_table(p) for p in sorted((folder / "tables").glob("*.csv"))}
    meta = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    return Study(out_dir=folder, frames=RunFrames.from_frames(frames, call_columns=CALL_COLUMNS), judged=judged, tables=tables, meta=meta)
