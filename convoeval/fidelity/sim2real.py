"""Sim2Real: how a simulated run's patients differ from real ones of the same agent family, measured on both.

Each conversation is measured from its patient's messages (no LLM): how long they write, how many messages a turn
holds (bursts), the share of media and of voice notes, of informal writing (abbreviations such as "pfv", "vc",
"thx", "porfa", repeated punctuation), of messages in another language than the conversation's own, how many turns
it lasts and how it ended (the goal reached, handed to a person, or abandoned: read from what the agent claimed in
its last messages, ``fidelity.claims``, and a simulated patient's signal). ``sim2real_table`` sets a simulated
run beside an imported one, each measure with the scenario setting that moves it, so a gap says what to change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from convoeval.fidelity.claims import agent_claims
from convoeval.fidelity.text import detect_language

__all__ = ["SIM2REAL_MEASURES", "conversation_measures", "sim2real_table"]

#: Each measure: (what it is, the setting that moves it in a simulated run).
SIM2REAL_MEASURES: dict[str, tuple[str, str]] = {
    "message_chars": ("characters per patient message", "persona.traits ('objetiva', 'prolixa'); the agenda "
                                                         "patient's voice (docs/simulator.md)"),
    "messages_per_turn": ("patient messages per turn (bursts)", "channel.bursts (docs/whatsapp.md)"),
    "media_share": ("patient messages with media", "channel.media (docs/whatsapp.md)"),
    "voice_share": ("patient messages that are voice notes", "channel.media with kind: audio"),
    "informal_share": ("patient messages with abbreviations or typos", "persona.traits ('escreve abreviado', "
                                                                        "'digita rápido')"),
    "other_language_share": ("patient messages in another language", "locale; persona.traits ('mistura inglês')"),
    "turns": ("patient turns to the end", "agenda.patience, max_turns"),
    "ended_goal": ("conversations that reached a goal", "agenda.done_when"),
    "ended_handover": ("conversations handed to a person", "agenda.refuses / asks (a request the agent cannot serve)"),
    "ended_abandoned": ("conversations the patient abandoned", "agenda.patience; persona.traits ('impaciente')"),
}
_INFORMAL = re.compile(
    r"\b(?:pfv|pf|vc|vcs|obg|obgd|obgda|tb|tbm|blz|td|q|pq|msg|hj|dps|vlw|kk+|rs+|thx|pls|plz|u|ur|idk|omg|"
    r"porfa|xfa|xq|tmb|dnd|grax|bn|mñn)\b|[!?]{2,}", re.IGNORECASE)
_GOALS = {"payment_link", "url", "paid", "booked", "moved", "cancelled", "confirmed", "recorded"}


def _media(row: Mapping[str, Any], kind: str | None = None) -> bool:
    parts = row.get("parts")
    if not isinstance(parts, (list, tuple)):
        return False
    return any(isinstance(p, Mapping) and p.get("type") == "media" and (kind is None or p.get("kind") == kind)
               for p in parts)


def _ending(patient: Sequence[Mapping[str, Any]], agent: Sequence[Mapping[str, Any]]) -> str:
    signals = {str(r.get("signal")) for r in patient if r.get("signal") is not None}
    claims = {c.kind for r in agent[-2:] for c in agent_claims(str(r.get("text") or ""))}
    if "handoff" in claims:
        return "handover"
    if "GOAL_COMPLETE" in signals or claims & _GOALS:
        return "goal"
    return "abandoned"


def conversation_measures(transcripts: pd.DataFrame) -> pd.DataFrame:
    """One row per conversation (``run_id``) with every measure of ``SIM2REAL_MEASURES``."""
    rows = []
    for run_id, messages in transcripts.groupby("run_id", sort=True):
        records = messages.sort_values(["turn"], kind="stable").to_dict("records")
        patient = [r for r in records if r.get("role") == "patient"]
        agent = [r for r in records if r.get("role") == "agent"]
        if not patient:
            continue
        texts = [str(r.get("text") or "") for r in patient]
        spoken = [t for t in texts if not t.startswith("[")]
        languages = [detect_language(t)[0] for t in spoken]
        known = [lang for lang in languages if lang]
        main = max(set(known), key=known.count) if known else None
        turns = {int(r.get("turn") or 0) for r in patient}
        ending = _ending(patient, agent)
        rows.append({
            "run_id": run_id,
            "message_chars": sum(len(t) for t in spoken) / len(spoken) if spoken else float("nan"),
            "messages_per_turn": len(patient) / max(1, len(turns)),
            "media_share": sum(_media(r) for r in patient) / len(patient),
            "voice_share": sum(_media(r, "audio") for r in patient) / len(patient),
            "informal_share": sum(bool(_INFORMAL.search(t)) for t in spoken) / len(spoken) if spoken else 0.0,
            "other_language_share": sum(lang != main for lang in known) / len(known) if known else 0.0,
            "turns": float(len(turns)),
            "ended_goal": float(ending == "goal"), "ended_handover": float(ending == "handover"),
            "ended_abandoned": float(ending == "abandoned"),
        })
    return pd.DataFrame(rows, columns=["run_id", *SIM2REAL_MEASURES])


def sim2real_table(simulated: pd.DataFrame, production: pd.DataFrame) -> pd.DataFrame:
    """The fidelity table: every measure's mean over a simulated run's conversations and an imported folder's.

    Args:
        simulated: the simulated run's ``transcripts`` frame.
        production: the imported folder's ``transcripts`` frame.

    Returns:
        One row per measure: ``measure`` (what it is), ``simulated``, ``production``, ``difference`` (production
        minus simulated), ``ratio`` (production over simulated; NaN when the simulated value is 0) and
        ``setting`` (what moves it in a scenario), with ``n_simulated`` and ``n_production`` conversations.

    Example:
        >>> sim = pd.DataFrame({"run_id": ["s", "s"], "turn": [1, 1], "role": ["patient", "agent"],
        ...                     "text": ["Quero pagar a minha fatura em aberto.", "Claro!"], "parts": [[], []]})
        >>> real = pd.DataFrame({"run_id": ["r"] * 3, "turn": [1, 1, 1], "role": ["patient", "patient", "agent"],
        ...                      "text": ["oi", "fatura pfv", "Claro!"], "parts": [[], [], []]})
        >>> table = sim2real_table(sim, real).set_index("key")
        >>> table.loc["messages_per_turn", ["simulated", "production"]].tolist()
        [1.0, 2.0]
    """
    sim, real = conversation_measures(simulated), conversation_measures(production)
    rows = []
    for key, (what, setting) in SIM2REAL_MEASURES.items():
        a, b = float(sim[key].mean()) if len(sim) else float("nan"), float(real[key].mean()) if len(real) else float("nan")
        rows.append({"key": key, "measure": what, "simulated": a, "production": b, "difference": b - a,
                     "ratio": b / a if a else float("nan"), "setting": setting,
                     "n_simulated": len(sim), "n_production": len(real)})
    return pd.DataFrame(rows)
