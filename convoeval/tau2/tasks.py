"""A τ² task as a convoeval scenario: who the user is and what they want, and what decides the verdict.

``user_scenario.instructions`` becomes the persona and the goal: the name from ``known_info`` ("You are Mei
Brown", or the user id ``mei_kovacs_8020``), the facts the user may reveal when asked (user id, zip code, email,
reservation and order ids, and the whole ``known_info``) in ``persona.knows``, the goal as τ²'s user simulator reads
it (reason for the call, what the user knows and does not know, the task's instructions, τ²'s own simulation
guidelines), and an agenda for the agenda patient (the reason for the call as its opening, done when the agent
closes). ``evaluation_criteria`` becomes three assertions, checked on that conversation's own database
(``convoeval.tau2.checks``): ``tau2_actions`` (every gold action called, compared as τ² compares them),
``tau2_state`` (the database equals the one after the gold actions) and ``tau2_communicate`` (each
``communicate_info`` said by the agent); ``nl_assertions`` are the rubric's criteria.

Example:
    >>> task = {"id": "5", "user_scenario": {"instructions": {"reason_for_call": "You want to cancel.",
    ...         "known_info": "You are Mei Brown.\\nYour user id is mei_brown_7075.", "unknown_info": None,
    ...         "task_instructions": "Be polite."}}, "evaluation_criteria": {"actions": [], "nl_assertions": None}}
    >>> scenario = task_scenario("airline", task)
    >>> scenario.id, scenario.domain, scenario.persona.name, scenario.persona.knows["user id"]
    ('tau2-airline-5', 'tau2:airline', 'Mei Brown', 'mei_brown_7075')
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from convoeval.scenarios import ConversationalScenario, register_agent_name

__all__ = ["MAX_TURNS", "agent_name", "scenario_id", "task_scenario"]

#: Turns before a conversation stops at ``max_turns`` (τ² stops at 100 messages, tool messages included).
MAX_TURNS = 30

_FACTS = {
    "user id": r"user id is\s+([a-z]+_[a-z]+_\d+)|\byou are\s+([a-z]+_[a-z]+_\d+)",
    "zip code": r"zip ?code(?: is)?\s+(\d{5})|\b(\d{5})\.?\s*$",
    "email": r"([\w.+-]+@[\w-]+\.[\w.]+)",
    "reservation id": r"reservation id is\s+([A-Z0-9]{6})",
    "order id": r"(#W\d{7})",
}


def agent_name(domain: str) -> str:
    """The agent name of a τ² domain's scenarios (``tau2-airline``), registered so scenarios may name it."""
    return register_agent_name(f"tau2-{domain}")


def scenario_id(domain: str, task_id: str) -> str:
    """The scenario id of task ``task_id`` of ``domain``: ``tau2-<domain>-<task id>``."""
    return f"tau2-{domain}-{re.sub(r'[^a-z0-9._-]+', '-', str(task_id).lower())}"


def _name(known: str) -> str:
    found = re.search(r"(?:you are|your name is)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)+)", known, re.IGNORECASE)
    if found and "_" not in found.group(1):
        return found.group(1)
    user = re.search(r"\b([a-z]+)_([a-z]+)_\d+\b", known)
    return f"{user.group(1).title()} {user.group(2).title()}" if user else "τ² user"


def _facts(known: str) -> dict[str, str]:
    facts: dict[str, str] = {}
    for label, pattern in _FACTS.items():
        found = re.search(pattern, known, re.IGNORECASE | re.MULTILINE)
        if found:
            facts[label] = next(g for g in found.groups() if g)
    facts["name"] = _name(known)
    if known.strip():
        facts["what I know"] = " ".join(known.split())
    return facts


def _phone(domain: str, task_id: str) -> str:
    # τ²'s users have no phone; the persona needs one (the clinic's store keys a patient by it): a fixed, fake one.
    digits = int(hashlib.sha256(f"{domain}/{task_id}".encode()).hexdigest(), 16) % 10_000_000
    return f"+1555{digits:07d}"


#: τ²'s user-simulator stop tokens, as convoeval's simulated patients say them.
_TOKENS = {"###STOP###": "[GOAL_COMPLETE]", "###TRANSFER###": "[STUCK]", "###OUT-OF-SCOPE###": "[STUCK]"}


def _guidelines(text: str) -> str:
    for token, signal in _TOKENS.items():
        text = text.replace(f"'{token}'", signal).replace(token, signal)
    return text.strip()


def _goal(instructions: Mapping[str, Any], guidelines: str) -> str:
    parts = [("Reason for the call", instructions.get("reason_for_call")),
             ("What you know", instructions.get("known_info")),
             ("What you do not know", instructions.get("unknown_info")),
             ("How to behave", instructions.get("task_instructions"))]
    text = "\n\n".join(f"{title}:\n{value.strip()}" for title, value in parts if isinstance(value, str) and value.strip())
    return f"{text}\n\n{_guidelines(guidelines)}" if guidelines.strip() else text


def task_scenario(domain: str, task: Mapping[str, Any], *, guidelines: str = "") -> ConversationalScenario:
    """The scenario of one τ² task (``tasks.json``'s object) of ``domain`` (``airline``, ``retail``).

    Args:
        domain: the τ² domain.
        task: the task as τ² ships it.
        guidelines: τ²'s user-simulator guidelines, appended to the goal the LLM patient reads.
    """
    scenario_user = task.get("user_scenario") or {}
    raw = scenario_user.get("instructions") or {}
    instructions: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {"reason_for_call": str(raw)}
    known = str(instructions.get("known_info") or "")
    criteria = task.get("evaluation_criteria") or {}
    reason = " ".join(str(instructions.get("reason_for_call") or "I need help with my account.").split())
    purpose = ((task.get("description") or {}).get("purpose") or reason).strip()
    rubric = [a for a in (criteria.get("nl_assertions") or []) if isinstance(a, str) and a.strip()] or [
        "The agent follows the domain policy while serving the user."]
    task_id = str(task["id"])
    basis = criteria.get("reward_basis") or ["DB", "COMMUNICATE"]  # τ²'s default (EvaluationCriteria.reward_basis)
    return ConversationalScenario.model_validate({
        "id": scenario_id(domain, task_id),
        "agent": agent_name(domain),
        "domain": f"tau2:{domain}",
        "locale": "en",
        "type": "conversational",
        "description": f"τ² {domain} task {task_id}: {' '.join(purpose.split())}",
        "persona": {"name": _name(known), "phone": _phone(domain, task_id), "knows": _facts(known)},
        "goal": _goal(instructions, guidelines),
        "agenda": {"intent": reason, "done_when": ["closed"], "patience": 3},
        "max_turns": MAX_TURNS,
        "seed": 0,
        "rubric": rubric,
        "assertions": {"tau2_actions": True, **({"tau2_state": True} if "DB" in basis else {}),
                       **({"tau2_communicate": True} if "COMMUNICATE" in basis and criteria.get("communicate_info")
                          else {})},
    })
