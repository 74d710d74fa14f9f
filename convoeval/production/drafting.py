"""From a real conversation to a scenario a person reviews: what ``pin`` and ``fork`` run an imported one with.

An imported conversation has no scenario. ``draft_scenario`` writes one from what the conversation shows: the
persona (the name the agent greeted, the phone, CPF and other facts the patient gave, traits measured on how they
wrote), the agenda (the opening request as the intent, the options the patient chose as ``prefers``, the outcome the
agent stated last as ``done_when``), the fixtures the agent named (an invoice for every amount with its due date),
the rubric of the agent family's scenarios and the turns it lasted. Every field is a draft: the file says so at the
top, and ``convoeval validate`` checks it like any scenario. ``replayable`` joins a patient's burst of messages into
one turn's message, as the pinned and forked conversations send a turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from convoeval.fidelity.claims import agent_claims
from convoeval.pipeline.conversation import ConversationResult
from convoeval.production.rubric import JudgeFolderError, production_rubric
from convoeval.scenarios import ConversationalScenario
from convoeval.textread import find_pii

__all__ = ["DRAFT_NOTE", "draft_document", "draft_scenario", "is_imported", "replayable"]

#: The first lines of a drafted scenario file.
DRAFT_NOTE = ("Drafted by convoeval from a real conversation ({key}, {agent}): review every field before you rely on "
              "it: the persona, the agenda and the fixtures are read from what the conversation shows.")
_GENERIC_RUBRIC = ["Agent understood what the patient asked for",
                   "Agent resolved the request, or handed it to a person, without inventing facts",
                   "Agent answered in the patient's language"]
_GREETING = re.compile(r"\b(?:Ol[áa]|Oi|Hi|Hello|Hola|Obrigad[oa]|Thanks|Gracias|Certo|Perfeito|Claro),?\s+"
                       r"([A-ZÀ-Ý][\wÀ-ÿ'-]+(?:\s+[A-ZÀ-Ý][\wÀ-ÿ'-]+)?)\s*[!.,]")
_LOCALES = ("pt-BR", "en", "es")
_MEDIA = re.compile(r"\[(?:image|audio|document|media)(?::[^\]]*| omitted)\]")


def is_imported(result: ConversationResult) -> bool:
    """Whether a saved conversation came from ``convoeval import`` (``runs.source = production``)."""
    runs = result.rows.get("runs") or [{}]
    return runs[0].get("source") == "production"


def replayable(result: ConversationResult) -> ConversationResult:
    """The conversation with each turn's patient messages joined into one (a burst is one turn's message)."""
    rows = result.rows.get("transcripts") or []
    merged: list[dict[str, Any]] = []
    for row in rows:
        if (row.get("role") == "patient" and merged and merged[-1].get("role") == "patient"
                and merged[-1].get("turn") == row.get("turn")):
            last = merged[-1]
            merged[-1] = {**last, "text": f"{last['text']}\n{row['text']}",
                          "bubbles": [*(last.get("bubbles") or []), *(row.get("bubbles") or [])],
                          "parts": [*(last.get("parts") or []), *(row.get("parts") or [])]}
        elif int(row.get("turn") or 0) > 0:  # turn 0: what the agent sent before the patient wrote
            merged.append(dict(row))
    return ConversationResult(rows={**result.rows, "transcripts": merged,
                                    "scores": result.rows.get("scores") or [_unjudged(result)]},
                              calls=list(result.calls))


def _unjudged(result: ConversationResult) -> dict[str, Any]:
    run = (result.rows.get("runs") or [{}])[0]
    return {"run_id": run.get("run_id"), "scenario": run.get("scenario"), "agent": run.get("agent"),
            "seed": run.get("seed"), "trial": run.get("trial"), "status": "not judged"}


def _locale(result: ConversationResult, payload: Mapping[str, Any] | None) -> str:
    about = (payload or {}).get("production") or {}
    locale = str(about.get("locale") or "")
    return locale if locale in _LOCALES else "pt-BR"


def draft_document(result: ConversationResult, *, agent: str | None = None, locale: str | None = None,
                   scenario_id: str | None = None, scenarios_dir: Path | str | None = None) -> dict[str, Any]:
    """The drafted scenario as the YAML document ``draft_scenario`` validates (see the module docstring)."""
    run = result.rows["runs"][0]
    agent = agent or str(run.get("agent") or "billing")
    locale = locale or "pt-BR"
    rows = replayable(result).rows["transcripts"]
    patient = [r for r in rows if r.get("role") == "patient"]
    said_by_agent = [str(r.get("text") or "") for r in rows if r.get("role") == "agent"]
    # What the patient wrote, without the media markers ("[audio: PTT-20261103-WA0003.opus]": a file's name).
    patient_text = "\n".join(_MEDIA.sub("", str(r.get("text") or "")) for r in patient)
    found = find_pii(patient_text, locale)
    knows: dict[str, str] = {}
    for item in found:
        if item.kind in ("cpf", "email", "date", "address") and item.kind not in knows:
            knows["birth_date" if item.kind == "date" else item.kind] = item.text
    phone = next((re.sub(r"\D", "", f.text) for f in found if f.kind == "phone"), "5511900000000")
    cpf = next((f.value for f in found if f.kind == "cpf" and "*" not in f.value), None)
    greeted = next((m.group(1) for text in said_by_agent for m in [_GREETING.search(text)] if m), None)
    persona: dict[str, Any] = {"name": greeted or {"pt-BR": "Paciente", "en": "Patient", "es": "Paciente"}[locale],
                               "phone": phone[-15:] if len(phone) >= 8 else "5511900000000"}
    if cpf:
        persona["cpf"] = cpf
    traits = _traits(result)
    if traits:
        persona["traits"] = traits
    if knows:
        persona["knows"] = knows
    intent = str(patient[0]["text"]).replace("\n", " ") if patient else "Olá"
    prefers = _chosen(rows)
    claims = [c.kind for text in said_by_agent[-2:] for c in agent_claims(text)]
    done_when = [k for k in dict.fromkeys(claims) if k in {"payment_link", "url", "paid", "booked", "moved",
                                                           "cancelled", "confirmed", "handoff"}]
    agenda: dict[str, Any] = {"intent": intent}
    if prefers:
        agenda["prefers"] = prefers
    if done_when:
        agenda["done_when"] = done_when
    try:
        criteria = list(production_rubric(agent, scenarios_dir=scenarios_dir).criteria)
    except JudgeFolderError:
        criteria = list(_GENERIC_RUBRIC)
    key = str(run.get("scenario") or run.get("run_id"))
    document: dict[str, Any] = {
        "type": "conversational", "id": scenario_id or f"drafted-{key}", "agent": agent, "locale": locale,
        "description": f"Drafted from the real conversation {key}: {intent[:80]}",
        "persona": persona,
        "goal": f"The patient's request in the real conversation {key}: {intent[:120]}",
        "agenda": agenda,
        "max_turns": max(5, len(patient) + 5),
        "rubric": criteria,
    }
    invoices = _invoices("\n".join(said_by_agent), locale)
    if invoices:
        document["fixtures"] = {"invoices": invoices}
    return document


def draft_scenario(result: ConversationResult, *, payload: Mapping[str, Any] | None = None, agent: str | None = None,
                   scenario_id: str | None = None, scenarios_dir: Path | str | None = None) -> tuple[ConversationalScenario, str]:
    """The drafted scenario, validated, and its YAML text (with the note to review it at the top)."""
    locale = _locale(result, payload)
    document = draft_document(result, agent=agent, locale=locale, scenario_id=scenario_id,
                              scenarios_dir=scenarios_dir)
    scenario = ConversationalScenario.model_validate(document)
    run = result.rows["runs"][0]
    note = DRAFT_NOTE.format(key=run.get("scenario"), agent=document["agent"])
    header = "".join(f"# {line}\n" for line in _wrap(note))
    text = header + yaml.safe_dump(document, allow_unicode=True, sort_keys=False, width=110)
    return scenario, text


def _wrap(text: str, width: int = 110) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


def _traits(result: ConversationResult) -> list[str]:
    rows = result.rows.get("transcripts") or []
    patient = [r for r in rows if r.get("role") == "patient"]
    if not patient:
        return []
    traits = []
    lengths = [len(str(r.get("text") or "")) for r in patient]
    if sum(lengths) / len(lengths) < 25:
        traits.append("writes short messages")
    turns = {int(r.get("turn") or 0) for r in patient}
    messages = sum(max(1, len(r.get("bubbles") or [])) for r in patient)  # a joined burst keeps its bubbles
    if messages > 1.3 * len(turns):
        traits.append("sends several messages in a row")
    if any(p.get("type") == "media" and p.get("kind") == "audio" for r in patient for p in r.get("parts") or []):
        traits.append("sends voice notes")
    return traits


def _chosen(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the patient picked: a tapped button or row's title, or a short reply naming one of the agent's words."""
    chosen: list[str] = []
    said: list[str] = []
    for row in rows:
        text = str(row.get("text") or "")
        if row.get("role") == "agent":
            said.append(text.lower())
            continue
        previous = " ".join(said[-2:])  # the offer may be a message before the last (an answer to a voice note)
        for part in row.get("parts") or []:
            if part.get("type") == "reply" and part.get("title"):
                chosen.append(str(part["title"]))
        words = re.findall(r"\w+", text.lower())
        if 0 < len(words) <= 3 and previous:
            named = [w for w in words if len(w) > 2 and w in previous]
            if named:
                chosen.append(" ".join(named))
    return list(dict.fromkeys(chosen))[:3]


def _invoices(agent_text: str, locale: str) -> list[dict[str, Any]]:
    found = find_pii(agent_text, locale, kinds=("amount", "date"))
    amounts = [int(f.value) for f in found if f.kind == "amount" and int(f.value) > 0]
    dates = [f.value for f in found if f.kind == "date"]
    invoices = []
    for i, cents in enumerate(dict.fromkeys(amounts)):
        invoices.append({"id": f"inv-{i + 1}", "amount_cents": cents,
                         "due_date": dates[i] if i < len(dates) else "2026-12-31", "status": "pending"})
    return invoices[:5]
