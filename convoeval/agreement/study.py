"""The agreement study behind ``notebooks/agreement.ipynb``: gather conversations, judge them again, measure.

``check_study_parameters(globals())`` checks the notebook's parameters (one line per problem, unknown names
refused); ``run_study(config)`` then

1. runs the known-fault study (each reference agent with and without its documented faults) and/or reads saved
   results folders (runs and sweeps);
2. judges every completed conversational run again with each judge configuration (``rejudge``);
3. runs the bias probes on the first judge, and the simulator-fidelity checks;
4. computes every agreement table with ``convoeval.agreement`` and saves the inputs (``data/*.parquet``) and the
   tables (``tables/*.csv``) to the output folder, so each number can be recomputed from the saved data.

Nothing here draws: ``convoeval.report.agreement_views`` shows a ``Study``.
"""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from convoeval.agreement.probes.run import PROBES as _PROBES
from convoeval.frames import SIMULATOR_FAILURE
from convoeval.gate import exclude_simulator_failures, simulator_failures, stopped_run_ids
from convoeval.llm import CacheMissError
from convoeval.report.execute import ReplayMissError
from convoeval.report.params import (
    ParameterError,
    _is_parameter_like,
    _resolve,
    project_root,
)

__all__ = [
    "STUDY_PARAMETERS",
    "Study",
    "StudyConfig",
    "check_study_parameters",
    "compute_tables",
    "load_frames",
    "load_study",
    "run_study",
]



def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and x.strip() for x in v)


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _judges(v: Any) -> bool:
    return isinstance(v, dict) and bool(v) and all(
        isinstance(k, str) and k.strip() and (s is None or isinstance(s, (str, dict))) for k, s in v.items())


def _pos_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _opt_str(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() != "")


def _gate(v: Any) -> bool:
    from pydantic import ValidationError

    from convoeval.gate import gate_settings

    if not isinstance(v, (bool, dict)):
        return False
    try:
        gate_settings(v)
    except (ValidationError, TypeError):
        return False
    return True


#: name -> (check, what a valid value is, meaning). The notebook's parameters cell declares exactly these names.
STUDY_PARAMETERS: dict[str, tuple[Any, str, str]] = {
    "runs": (_str_list, "a list of folder paths", "saved results folders to study (a run's or a sweep's folder)"),
    "fault_study": (lambda v: isinstance(v, bool), "True or False",
                    "run each reference agent with and without its known faults"),
    "agents": (_str_list, "a list of agent names", "the fault study's agents"),
    "scenario": (_opt_str, "a scenario id or None", "the fault study runs only this scenario"),
    "faults": (lambda v: v is None or _str_list(v), "a list of 'agent:fault' keys or None",
               "only these known faults (None: every fault relevant to a scenario)"),
    "seeds": (_int_list, "a non-empty list of integers", "simulator seeds of the fault study"),
    "trials": (_pos_int, "a positive integer", "repetitions of each fault-study conversation"),
    "judges": (_judges, "a mapping of names to model specs",
               "judge configurations to compare (the first also judges the fault study's runs and the probes)"),
    "judge_samples": (_pos_int, "a positive integer", "independent samples per judge and conversation"),
    "probes": (lambda v: isinstance(v, list) and all(p in _PROBES for p in v), f"a list of {', '.join(_PROBES)}",
               "bias probes to run on the first judge"),
    "labels": (_opt_str, "a CSV path or None", "human labels to score the judges against"),
    "exclude_unfaithful": (lambda v: isinstance(v, bool), "True or False",
                           "leave out conversations whose simulated patient broke the scenario"),
    "simulator_gate": (_gate, "True, False or a mapping of gate settings",
                       "stop a fault-study conversation whose simulated patient breaks (simulator_failure: not judged)"),
    "simulator_model": (lambda v: v is None or isinstance(v, (str, dict)), "a model spec or None",
                        "the fault study's simulated patient"),
    "output_dir": (_opt_str, "a folder path or None", "where the study's data and tables go"),
    "concurrency": (_pos_int, "a positive integer", "conversations in flight at once"),
    "n_boot": (lambda v: _pos_int(v) and v >= 100, "an integer of at least 100", "bootstrap replicates"),
    "scenarios_dir": (_opt_str, "a folder path or None", "scenario files (None: evals/scenarios)"),
}


@dataclass
class StudyConfig:
    """Checked study parameters and the folders they resolve to."""

    params: dict[str, Any]
    output_dir: Path
    project_root: Path

    @property
    def scenarios_dir(self) -> Path:
        return _resolve(self.project_root, self.params["scenarios_dir"] or "evals/scenarios")

    def _repr_html_(self) -> str:
        from convoeval.html_blocks import esc, shown_path, table, wrap

        rows = [[f"<code>{esc(k)}</code>", f"<code>{esc(repr(v))}</code>", esc(STUDY_PARAMETERS[k][2])]
                for k, v in self.params.items()]
        return wrap(f"<div>Parameters checked. The study goes to <code>{esc(shown_path(self.output_dir))}</code>"
                    "</div>" + table(rows, ["parameter", "value", "meaning"]))


def check_study_parameters(namespace: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
                           ) -> StudyConfig:
    """Validate the agreement notebook's parameters (pass ``globals()``).

    Args:
        namespace: The notebook's globals, or any mapping of parameter values.
        defaults: Values for parameters missing from ``namespace`` (default: the notebook's own defaults).

    Returns:
        A ``StudyConfig``.

    Raises:
        ParameterError: an unknown name, a bad value, a folder that does not exist, or nothing to study.
    """
    values = {k: v for k, v in namespace.items()
              if _is_parameter_like(k, v) and k not in ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")}
    unknown = sorted(set(values) - set(STUDY_PARAMETERS))
    if unknown:
        raise ParameterError(f"unknown agreement-notebook parameter(s) {', '.join(unknown)}; "
                             f"known: {', '.join(STUDY_PARAMETERS)}")
    missing = [n for n in STUDY_PARAMETERS if n not in values]
    fallback = dict(defaults) if defaults is not None else (study_defaults() if missing else {})
    params = {n: values[n] if n in values else fallback.get(n) for n in STUDY_PARAMETERS}
    for name, (check, what, _) in STUDY_PARAMETERS.items():
        if not check(params[name]):
            raise ParameterError(f"{name} must be {what}, got {params[name]!r}")
    root = project_root()
    for folder in params["runs"]:
        if not _resolve(root, folder).is_dir():
            raise ParameterError(f"runs: no such folder {folder!r}")
    if not params["runs"] and not params["fault_study"]:
        raise ParameterError("nothing to study: give results folders in runs, or set fault_study = True")
    if params["labels"] and not _resolve(root, params["labels"]).exists():
        raise ParameterError(f"labels: no such file {params['labels']!r}")
    from convoeval.scenarios import agent_names

    bad = [a for a in params["agents"] if a not in agent_names()]
    if bad:
        raise ParameterError(f"agents: unknown agent(s) {', '.join(bad)}; expected some of {', '.join(agent_names())}")
    out = (_resolve(root, params["output_dir"]) if params["output_dir"]
           else root / "reports" / f"agreement-{time.strftime('%Y%m%d-%H%M%S')}")
    return StudyConfig(params=params, output_dir=out, project_root=root)


def study_defaults() -> dict[str, Any]:
    """The defaults ``notebooks/agreement.ipynb`` declares (``papermill.inspect_notebook``)."""
    import ast

    import papermill

    path = project_root() / "notebooks" / "agreement.ipynb"
    found = papermill.inspect_notebook(str(path))
    return {name: ast.literal_eval(p["default"]) for name, p in found.items()}


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
    frames: dict[str, pd.DataFrame]
    judged: dict[str, pd.DataFrame]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def judges(self) -> list[str]:
        return list(self.meta.get("judges", {}))


def load_frames(folders: list[Path]) -> dict[str, pd.DataFrame]:
    """Every finished conversation under ``folders`` (searched for ``runs/`` folders: runs, sweeps, studies)."""
    from convoeval.batch import load_results

    parts: list[dict[str, pd.DataFrame]] = []
    for folder in folders:
        run_dirs = sorted({p.parent for p in Path(folder).rglob("runs") if p.is_dir()})
        parts.extend(load_results(d) for d in run_dirs)
    return _concat(parts)


def _concat(parts: list[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    from convoeval.batch import merge_frames

    out = merge_frames(parts)
    if len(out["runs"]):  # a run read twice (a folder inside another) counts once
        out = {name: (f.drop_duplicates(subset=_identity(f)) if name != "calls" else f) for name, f in out.items()}
    return out


def _identity(frame: pd.DataFrame) -> list[str]:
    keys = [c for c in ("run_id", "turn", "role", "criterion_index", "sample", "assertion", "dimension")
            if c in frame.columns]
    return keys or list(frame.columns)


def run_study(config: StudyConfig, *, progress: bool = False) -> Study:
    """Gather the conversations, judge them with every configuration, run probes and fidelity checks, measure.

    Args:
        config: From ``check_study_parameters``.
        progress: Progress bars (off in notebooks, whose saved output would keep every update).

    Returns:
        The ``Study``; its data and tables are already saved under ``config.output_dir``.

    Raises:
        ReplayMissError: a call missing from a replay-only cache.
        ValueError: no completed conversational run to judge (only scripted runs, or every conversation errored).
    """
    from convoeval.agreement.faults import run_fault_study
    from convoeval.agreement.rejudge import rejudge
    from convoeval.llm.models import get_model
    from convoeval.scenarios import load_scenarios

    p = config.params
    started = time.time()
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    scenarios = load_scenarios(config.scenarios_dir)
    first_judge = next(iter(p["judges"].values()))
    parts = []
    if p["fault_study"]:
        chosen = [s for s in scenarios if s.agent in p["agents"] and (p["scenario"] in (None, s.id))]
        if not chosen:
            raise ParameterError(f"no scenario of {', '.join(p['agents'])} matches scenario={p['scenario']!r}")
        # The parameters are model specs; the runs need chat models (a spec handed on as is fails every call).
        parts.append(run_fault_study(chosen, out / "fault-study", faults=p["faults"], seeds=tuple(p["seeds"]),
                                     trials=p["trials"], simulator_model=get_model("simulator", p["simulator_model"]),
                                     judge_model=get_model("judge", first_judge), judge_samples=p["judge_samples"],
                                     concurrency=p["concurrency"], progress=progress,
                                     simulator_gate=p["simulator_gate"]))
    if p["runs"]:
        parts.append(load_frames([_resolve(config.project_root, f) for f in p["runs"]]))
    frames = _concat(parts)
    _raise_on_replay_miss(frames["calls"])
    _require_conversations(frames["runs"])
    try:
        judged = rejudge(frames, p["judges"], scenarios=scenarios, samples=p["judge_samples"])
        judged["fidelity"] = _fidelity(frames, scenarios)
        judged["pairs"] = _probe_pairs(frames, scenarios, p, first_judge)
    except CacheMissError as exc:
        raise ReplayMissError(f"{exc}; {_RERECORD}") from None
    meta = {"params": p, "judges": {k: v for k, v in p["judges"].items()}, "started": started,
            "duration_s": round(time.time() - started, 1), "conversations": int(frames["runs"]["run_id"].nunique()),
            "simulator_failures": len(simulator_failures(frames)), "local_demo": _local_demo(frames, judged)}
    study = Study(out_dir=out, frames=frames, judged=judged, meta=meta)
    study.tables = compute_tables(study, labels=_resolve(config.project_root, p["labels"]) if p["labels"] else None,
                                  exclude_unfaithful=p["exclude_unfaithful"], n_boot=p["n_boot"])
    _save(study)
    return study


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


def _require_conversations(runs: pd.DataFrame) -> None:
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
    raise ValueError(f"nothing to study: no completed conversational run ({detail}); the judges are compared on "
                     "conversational runs, so give results folders that hold some, or set fault_study = True")


def _fidelity(frames: dict[str, pd.DataFrame], scenarios: list[Any]) -> pd.DataFrame:
    from convoeval.fidelity import fidelity_flags

    return fidelity_flags(frames, scenarios=scenarios)


def _probe_pairs(frames: dict[str, pd.DataFrame], scenarios: list[Any], p: Mapping[str, Any], judge: Any
                 ) -> pd.DataFrame:
    from convoeval.agreement.probes import run_probes
    from convoeval.agreement.rejudge import judged_transcripts
    from convoeval.llm.models import get_model

    if not p["probes"]:
        return pd.DataFrame(columns=["probe", "run_id", "scenario", "instrument", "item", "before", "after", "error"])
    model = get_model("judge", judge)
    transcripts = judged_transcripts(frames)
    return run_probes(transcripts, scenarios=scenarios, probes=p["probes"], model=model).pairs


def _local_demo(frames: Mapping[str, pd.DataFrame], judged: Mapping[str, pd.DataFrame]) -> bool:
    calls = frames.get("calls")
    in_calls = calls is not None and "is_local_demo" in calls and bool(calls["is_local_demo"].fillna(False).any())
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
        ``labels``, ``calibrated``.
        A table that the data cannot support (one judge, one sample, no known faults, no labels, no probes) is
        empty or absent; ``convoeval.report.agreement_views`` says which and why.
    """
    from convoeval import agreement as ag
    from convoeval.agreement.faults import fault_confusion, fault_detection, fault_truth
    from convoeval.agreement.probes import probe_effects
    from convoeval.fidelity import exclude_flagged, fidelity_summary

    opts = {"n_boot": n_boot}
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
        judged.update(exclude_flagged({k: judged[k] for k in ("rubric", "holistic", "pairs")}, flags))
    rubric, holistic = judged["rubric"], judged["holistic"]
    n_judges = rubric["judge"].nunique() if len(rubric) else 0
    with_judges = {**frames, "rubric": rubric, "holistic": holistic}
    # Saved runs and sweeps are not a fault study: no conversation has a known-fault truth to score the judges by.
    known = bool(len(rubric)) and not fault_truth(with_judges).empty
    tables: dict[str, pd.DataFrame] = {
        "database": ag.database_agreement(with_judges, rater="judge", **opts),
        "faults": fault_detection(with_judges, rater="judge") if known else pd.DataFrame(),
        "fault_confusion": fault_confusion(with_judges, rater="judge") if known else pd.DataFrame(),
        "probes": probe_effects(judged["pairs"]) if len(judged["pairs"]) else pd.DataFrame(),
        "fidelity": fidelity_summary(flags),
        "simulator_failures": stopped if len(stopped) else None,
    }
    if n_judges >= 2:
        tables["judges"] = ag.binary_agreement(ag.rubric_ratings(rubric, rater="judge"), **opts)
        tables["scores"] = ag.score_agreement(ag.holistic_ratings(holistic, rater="judge"), **opts)
    if len(rubric) and rubric["sample"].nunique() > 1:
        tables["self_consistency"] = ag.self_consistency(rubric, rater="judge", **opts)
        tables["score_consistency"] = ag.score_consistency(holistic, rater="judge", **opts)
    if len(rubric) and frames["runs"][["scenario", "seed", "trial"]].drop_duplicates().groupby("scenario").size().max(
    ) > 1:
        tables["trial_flips"] = ag.trial_flip_rate(rubric.merge(frames["runs"][["run_id", "target"]], on="run_id"),
                                                   rater=("judge", "target"), **opts)
    if labels is not None:
        human = ag.load_labels(labels)
        tables["labels"] = ag.score_against_labels(rubric, human, rater="judge", **opts)
        tables["calibrated"] = ag.calibrated_pass_rates(rubric, human, rater="judge", **opts)
    return {name: table for name, table in tables.items() if table is not None}


def _save(study: Study) -> None:
    from convoeval.runs import _to_parquet

    data, tables = study.out_dir / "data", study.out_dir / "tables"
    data.mkdir(parents=True, exist_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    for name, frame in {**study.frames, **{f"judged_{k}": v for k, v in study.judged.items()}}.items():
        if name != "calls":
            _to_parquet(frame, data / f"{name}.parquet")
    for name, table in study.tables.items():
        table.to_csv(tables / f"{name}.csv", index=False)
    (study.out_dir / "study.json").write_text(json.dumps(study.meta, indent=2, default=str), encoding="utf-8")


def _from_parquet(path: Path) -> pd.DataFrame:
    # _to_parquet stores list/dict cells as JSON text; give them back their Python values. A missing cell comes back
    # as None, NA or (pandas' string dtype) NaN: all are "no value", none is JSON.
    frame = pd.read_parquet(path)
    for column in frame.columns:
        if column in _JSON_COLUMNS:
            frame[column] = frame[column].map(_json_cell).astype(object)
    return frame


def _json_cell(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else None


_JSON_COLUMNS = frozenset({"bubbles", "tools", "tool_calls", "issues", "check_failures", "expected", "actual"})


def _read_table(path: Path) -> pd.DataFrame:
    # A table the data could not support (no known faults, no probes) is saved as an empty file: no columns to parse.
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def load_study(folder: Path | str) -> Study:
    """A saved study read back (frames, judged verdicts, tables, metadata), e.g. to check or extend its tables."""
    folder = Path(folder)
    frames, judged = {}, {}
    for path in sorted((folder / "data").glob("*.parquet")):
        frame = _from_parquet(path)
        if path.stem.startswith("judged_"):
            judged[path.stem.removeprefix("judged_")] = frame
        else:
            frames[path.stem] = frame
    tables = {p.stem: _read_table(p) for p in sorted((folder / "tables").glob("*.csv"))}
    meta = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    return Study(out_dir=folder, frames=frames, judged=judged, tables=tables, meta=meta)
