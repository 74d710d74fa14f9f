""""What ran": agent, target, models (and whether they are the local demo model), seeds, versions, time, cost.

The first thing a reader needs is whether the numbers below can mean anything: a run made with the embedded local
model shows that the pipeline works, not how good an agent is, and the table says so in plain words.
"""

from __future__ import annotations

from shlex import quote
from typing import Any

import pandas as pd

from convoeval._util.html_blocks import HTML, MUTED, box, css, esc, shown_path, table, wrap
from convoeval.frames import SIMULATOR_FAILURE
from convoeval.pipeline.results import EvalResult
from convoeval.report.problems import errors_frame

__all__ = ["LOCAL_DEMO_WARNING", "next_step_for_broken_patients", "patient_voices", "usage_frame", "what_ran"]

LOCAL_DEMO_WARNING = (
    "Made with the embedded local demo model. These numbers show that the pipeline works, not how good the agent "
    "is. For a real evaluation point convoeval at a stronger model (OPENAI_API_KEY, OPENAI_BASE_URL or "
    "CONVOEVAL_LOCAL_MODEL)."
)


def usage_frame(run: EvalResult) -> pd.DataFrame:
    """LLM calls per role and model: calls, cache hits, errors, tokens, estimated cost (NaN = unknown price).

    Example:
        >>> from convoeval import load_results
        >>> run = load_results("reports/example")
        >>> usage_frame(run)[["role", "calls", "cache_hits", "cost_usd"]]
                role  calls  cache_hits  cost_usd
        0      judge     12           0       0.0
        1  simulator     11           0       0.0
    """
    calls = run.frames.calls
    columns = ["role", "provider", "model", "calls", "cache_hits", "errors", "prompt_tokens", "completion_tokens",
               "cost_usd"]
    if calls.empty:
        return pd.DataFrame(columns=columns)
    frame = calls.copy()
    frame["cache_hit"] = frame["cache_hit"].fillna(False).astype(bool)
    frame["failed"] = frame["error"].notna()
    for c in ("prompt_tokens", "completion_tokens", "cost_usd"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce")
    grouped = frame.groupby(["role", "provider", "model"], dropna=False, sort=True).agg(
        calls=("role", "size"),
        cache_hits=("cache_hit", "sum"),
        errors=("failed", "sum"),
        prompt_tokens=("prompt_tokens", "sum"),
        completion_tokens=("completion_tokens", "sum"),
        # min_count: a model without a price stays unknown (NaN) instead of costing 0.
        cost_usd=("cost_usd", lambda s: s.sum(min_count=len(s))),
    )
    return grouped.reset_index()[columns]


def what_ran(run: EvalResult) -> HTML:
    """The "what ran" table: agent, target, models, seeds, trials, versions, time, calls, tokens, cost, cache hits.

    A run made with the local demo model carries a plain warning; a run with errors points to the errors section.

    Example:
        >>> from convoeval import load_results
        >>> panel = what_ran(load_results("reports/example"))   # a notebook cell shows it
        >>> "Made with the embedded local demo model" in str(panel)
        True
    """
    meta, scores, runs = run.meta, run.scores, run.frames.runs
    config = meta.get("config") or {}
    models = meta.get("models") or {}
    usage = usage_frame(run)
    rows: list[tuple[str, str]] = [
        ("Agent", _values(scores["agent"]) or esc(config.get("agent") or "all")),
        ("Target (agent under test)", _values(runs["target"]) or esc(config.get("target") or "reference agent")),
        ("Simulator model", _model(models.get("simulator"))),
        ("Simulated patient", patient_voices(run)),
        ("Judge model", _model(models.get("judge"))),
        ("Scenarios", f"{scores['scenario'].nunique()} scenario(s), {len(scores)} conversation(s)"
                      + _simulator_failures(scores) + _selection(config)),
        ("Seed(s)", _values(scores["seed"]) or esc(_seeds(config))),
        ("Trials", esc(config.get("trials", "?"))),
        ("Judge samples", esc(config.get("judge_samples", "?"))),
        ("Versions", _versions(run)),
        ("Time", _time(meta)),
        ("LLM calls", _calls(usage)),
        ("Tokens", _tokens(usage)),
        ("Cost", _cost(usage)),
        ("Data", (f"<code>{esc(shown_path(run.data_dir))}</code> (Parquet + CSV: runs, scores, transcripts, rubric, "
                  "holistic, turns, assertions, calls, failures)")),
    ]
    body = table([[f"<b>{label}</b>", value] for label, value in rows], ["", ""])
    if _local_demo(run):
        body = box(esc(LOCAL_DEMO_WARNING), tone="warning", title="Local demo model") + body
    n_broken = int((scores["status"] == SIMULATOR_FAILURE).sum()) if len(scores) else 0
    if n_broken:
        body = box(f"{n_broken} conversation(s) ended <b>simulator_failure</b>: the simulated patient broke "
                   "(parroted the agent, looped, changed language or invented facts), so the gate stopped them. They "
                   "are not scored and count in no pass rate, mean or threshold: the agent is not blamed for them. "
                   "Each is listed with its reason under <b>Simulated patient's fidelity</b>. "
                   + next_step_for_broken_patients(run), tone="warning", title="Simulated patient broke") + body
    n_errors = _error_count(run)
    if n_errors:
        body = box(f"{n_errors} error(s): these conversations have no score and none counts as a pass. "
                   "Every one is listed under <b>Errors</b> below.", tone="danger", title="Errors") + body
    return HTML(wrap(body), text=f"what ran: {len(scores)} conversation(s)")


def patient_voices(run: EvalResult) -> str:
    """Which simulated patient wrote the conversations and how (HTML): the agenda patient's messages voiced by the
    model or said by its templates, or the LLM patient's (the transcript's ``voice`` column; docs/simulator.md).

    An agenda run reads e.g. ``'agenda patient: 41 of 52 messages (79%) voiced by the model, 11 by templates'``.

    Example:
        >>> from convoeval import load_results
        >>> patient_voices(load_results("reports/example"))   # a run of scripted scenarios
        'scripted or replayed messages only'
    """
    tx = run.frames.transcripts
    if not len(tx) or "voice" not in tx:
        return "–"
    voices = tx.loc[tx["role"] == "patient", "voice"].dropna().astype(str)
    if voices.empty:
        return "scripted or replayed messages only"
    model, template, llm = (int((voices == v).sum()) for v in ("model", "template", "llm"))
    parts = []
    if model or template:
        share = model / (model + template)
        parts.append(f"agenda patient: {model} of {model + template} messages ({share:.0%}) voiced by the model, "
                     f"{template} by templates")
    if llm:
        parts.append(f"LLM patient: {llm} messages")
    return esc("; ".join(parts))


def next_step_for_broken_patients(run: EvalResult) -> str:
    """What to run when the gate stopped conversations, as a command (HTML): a stronger simulator for the demo model
    (re-simulating does not help a patient that breaks every time: README, docs/fidelity.md), else ``--resimulate``.
    """
    config = run.meta.get("config") or {}
    simulator = (run.meta.get("models") or {}).get("simulator") or {}
    selection = _selection_flags(config)
    if simulator.get("local_demo"):
        out = quote(f"{shown_path(run.out_dir)}-stronger-simulator")
        command = f"convoeval run {selection} --simulator-model gpt-5-mini --out {out}"
        return ("Re-simulating does not help here: the embedded demo patient breaks in nearly every conversation "
                "(docs/fidelity.md). Run again with a stronger simulator model, e.g. "
                f"<code>{esc(command)}</code> (with OPENAI_API_KEY set; OPENAI_BASE_URL for another "
                "OpenAI-compatible server, or CONVOEVAL_LOCAL_MODEL=/path/to/model.gguf for a larger local model).")
    command = f"convoeval run {selection} --out {quote(shown_path(run.out_dir))} --resimulate 3"
    return (f"To simulate only them again (up to 3 more times, the same settings): <code>{esc(command)}</code>; "
            "if they keep breaking, use a stronger simulator model (<code>--simulator-model</code>).")


def _selection_flags(config: dict[str, Any]) -> str:
    """The ``convoeval run`` flags that select this run's conversations (agent, seeds, scenario, type, trials,
    target), so a suggested command runs the same ones."""
    seeds = config.get("seed", config.get("seeds"))
    seeds = "own" if seeds is None else ",".join(map(str, seeds)) if isinstance(seeds, (list, tuple)) else seeds
    flags = [f"--agent {quote(str(config.get('agent') or 'all'))}", f"--seed {quote(str(seeds))}"]
    flags += [f"--{k} {quote(str(config[k]))}" for k in ("scenario", "type", "target") if config.get(k)]
    if (config.get("trials") or 1) > 1:
        flags.append(f"--trials {config['trials']}")
    return " ".join(flags)


def _simulator_failures(scores: pd.DataFrame) -> str:
    n = int((scores["status"] == SIMULATOR_FAILURE).sum()) if len(scores) else 0
    return f", {n} of them simulator_failure (not scored)" if n else ""


def _local_demo(run: EvalResult) -> bool:
    if run.meta.get("local_demo"):
        return True
    calls = run.frames.calls
    return bool(len(calls) and "is_local_demo" in calls and calls["is_local_demo"].fillna(False).astype(bool).any())


def _error_count(run: EvalResult) -> int:

    return len(errors_frame(run))


def _values(series: pd.Series) -> str:
    values = [v for v in pd.unique(series.dropna())]
    return ", ".join(esc(v) for v in sorted(values, key=str))


def _model(info: dict[str, Any] | None) -> str:
    if not info:
        return f"<span{css(color=MUTED)}>unknown</span>"
    # The local server's port changes at every start; it says nothing a reader needs.
    remote = info.get("base_url") and info.get("provider") != "local"
    where = f" at <code>{esc(info['base_url'])}</code>" if remote else ""
    demo = (f" <b{css(color='#7d4e00')}>(local demo model)</b>" if info.get("local_demo")
            else f" <span{css(color=MUTED)}>(not the local demo model)</span>")
    return f"{esc(info.get('provider'))} / <code>{esc(info.get('model'))}</code>{where}{demo}"


def _selection(config: dict[str, Any]) -> str:
    parts = [f"{k}={config[k]}" for k in ("scenario", "type") if config.get(k)]
    return f" <span{css(color=MUTED)}>({esc(', '.join(parts))})</span>" if parts else ""


def _seeds(config: dict[str, Any]) -> str:
    seeds = config.get("seeds") or [None]
    return ", ".join("scenario's own" if s is None else str(s) for s in seeds)


def _versions(run: EvalResult) -> str:
    meta = run.meta
    prompts: set[str] = set()
    for frame in (run.frames.rubric, run.frames.holistic, run.frames.turns, run.frames.transcripts):
        if "prompt_version" in frame:
            prompts.update(str(v) for v in frame["prompt_version"].dropna().unique())
    parts = [f"convoeval {esc(meta.get('convoeval_version', '?'))}"]
    if prompts:
        parts.append("prompts " + ", ".join(f"<code>{esc(p)}</code>" for p in sorted(prompts)))
    if meta.get("machine"):
        parts.append(esc(meta["machine"]))
    return "; ".join(parts)


def _time(meta: dict[str, Any]) -> str:
    if not meta.get("started_at"):
        return f"<span{css(color=MUTED)}>unknown</span>"
    text = f"started {esc(meta['started_at'])}, took {esc(meta.get('duration_s', '?'))} s"
    if meta.get("runs_resumed"):
        text += f" ({esc(meta['runs_resumed'])} conversation(s) resumed from an earlier, interrupted run)"
    return text


def _calls(usage: pd.DataFrame) -> str:
    if usage.empty:
        return "none"
    total, hits, errors = int(usage["calls"].sum()), int(usage["cache_hits"].sum()), int(usage["errors"].sum())
    per_role = ", ".join(f"{esc(r.role)} {int(r.calls)}" for r in usage.groupby("role", as_index=False)["calls"]
                         .sum().itertuples())
    text = f"{total} ({per_role}); cache hits {hits} of {total} ({hits / total:.0%})"
    if errors:
        text += f"; <b{css(color='#a40e26')}>{errors} failed</b>"
    return text


def _tokens(usage: pd.DataFrame) -> str:
    if usage.empty:
        return "none"
    prompt, completion = usage["prompt_tokens"].sum(), usage["completion_tokens"].sum()
    return f"{int(prompt):,} prompt + {int(completion):,} completion (as the servers reported; cache hits included)"


def _cost(usage: pd.DataFrame) -> str:
    if usage.empty:
        return "none"
    unknown = usage[usage["cost_usd"].isna()]
    known = usage["cost_usd"].sum()
    if len(unknown):
        names = ", ".join(sorted({str(m) for m in unknown["model"]}))
        return (f"at least ${known:.4f}; unknown for {esc(names)} (no price: set CONVOEVAL_PRICES)")
    if known == 0:
        return "$0 (local or fake models, or every call replayed from the cache)"
    return f"${known:.4f} (estimate from the price table; cache hits are free)"
