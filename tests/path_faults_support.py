"""Plays every shipped billing, scheduling, confirmation and recall scenario against the healthy reference agent and each of
its faults, with rule-following patients (no LLM), and checks the scenario's path assertions on the recorded turns.

Used by ``tests/test_path_faults.py`` (the fault × scenario table) and by ``scripts/path_fault_table.py``, which
prints the table ``docs/agents.md`` quotes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoeval.agents.base import AgentReply, AgentSession
from convoeval.agents.clinic import make_clinic_agent
from convoeval.pathcheck import check_checkpoints, check_path
from convoeval.scenarios import ConversationalScenario, Scenario, ScriptedScenario, load_scenario_file
from convoeval.store import Store, cleanup_run, seed_run

SCENARIOS = Path(__file__).resolve().parents[1] / "evals" / "scenarios"

#: The faults issue #25 asks path assertions to catch, by agent.
PATH_FAULTS = {
    "billing": ("link_before_method_confirmed", "invented_payment_url"),
    "scheduling": ("books_without_confirmation", "books_unavailable_slot", "double_books", "wrong_time_reported"),
    "confirmation": ("confirms_without_asking",),
    "recall": ("books_without_consent",),  # not in the list: the same skipped step in another agent
}

# The patients of the conversational scenarios: an opening line, then (pattern in the agent's last reply, answer)
# rules, the first matching rule answering; fixed lines where the agent's replies need no reading. The same
# patients as the agents' own tests (tests/test_agents_clinic_*.py), so both tables read the same conversations.
Rules = tuple[str, list[tuple[str, str]]]
PATIENTS: dict[str, list[str] | Rules] = {
    "billing/conv-happy-payment.yaml": ["Olá, quero pagar minha fatura", "Pix", "Sim", "Obrigada!"],
    "billing/conv-impatient-patient.yaml": ["quero pagar logo", "manda o link", "pix", "sim", "ok"],
    "billing/conv-confused-patient.yaml": ["Oi, recebi uma mensagem sobre uma conta", "o que é pix?",
                                           "e o boleto, o que é?", "não entendi o boleto", "acho que boleto", "sim",
                                           "obrigada"],
    "scheduling/conv-book-cleaning-pt.yaml": ("Oi, quero marcar uma limpeza", [
        (r"\(sim/não\)|certo\?|sim ou não", "sim"),
        (r"(?m)^1\) ", "pode ser às 9"),
        (r"preferência de dia|que dia", "terça de manhã, às 10h se der"),
        (r"posso ajudar em algo mais|mais alguma coisa", "obrigada!"),
    ]),
    "scheduling/conv-reschedule-en.yaml": ("Hi, I need to reschedule my appointment", [
        (r"\(yes/no\)|right\?|yes or no", "yes"),
        (r"(?m)^1\) ", "3:30 PM works for me"),
        (r"which day and time|to when", "Monday the 16th at 2pm"),
        (r"help with anything else|anything else\? make it quick", "thanks, bye"),
    ]),
    "recall/conv-accepts-checkup-es.yaml": ("Hola, recibí su mensaje", [
        (r"\(sí/no\)|verdad\?|sí o no", "sí"),
        (r"(?m)^1\) ", "la primera"),
        (r"ya te reservé|agendé el", "Prefiero por la tarde"),
        (r"busque algunos horarios|responde \*sí\* o \*no\*|vas a agendar", "Sí, por la tarde si puede ser"),
        (r"te ayudo con algo más|algo más\? rápido", "gracias"),
    ]),
    "recall/conv-declines-pt.yaml": ("Oi, recebi a mensagem de vocês", [
        (r"já reservei|marquei", "Não, por favor cancele, vou viajar a trabalho"),
        (r"(?m)^1\) ", "Não, obrigado. Por favor, não quero receber mais lembretes por enquanto"),
        (r"veja alguns horários|responder \*sim\* ou \*não\*|vai marcar ou não",
         "Agora não, obrigado. Vou viajar a trabalho nos próximos meses"),
    ]),
    "confirmation/conv-confirms-pt.yaml": ["oi, recebi a mensagem", "sim, confirmo", "obrigada"],
    "confirmation/conv-reschedule-es.yaml": ["Hola, recibí el mensaje",
                                             "No voy a poder ir ese día, ¿podemos cambiar la cita?",
                                             "el viernes a las 10", "gracias"],
}


def shipped(agent: str) -> list[str]:
    """The agent's shipped scenario files that carry path assertions, relative to ``evals/scenarios``."""
    return sorted(f"{agent}/{p.name}" for p in (SCENARIOS / agent).glob("*.yaml")
                  if getattr(load_scenario_file(p).assertions, "path", None))


@dataclass
class Played:
    """One conversation: its transcript rows and the failed path and checkpoint keys, with their details."""

    rows: list[dict[str, Any]]
    failed: dict[str, str]
    seconds: list[float] | None = None  # per check of every path assertion and checkpoint (``repeat``)
    checked: int = 0  # how many path and checkpoint rows one check gives

    @property
    def said(self) -> list[tuple[str, tuple[str, ...]]]:
        """(agent text, tools) per reply: what tells a faulty run from the healthy one."""
        return [(r["text"], tuple(r["tools"])) for r in self.rows if r["role"] == "agent"]


def _lines(path: str, sc: Scenario) -> Callable[[list[AgentReply]], str | None]:
    if isinstance(sc, ScriptedScenario):
        turns = [t.user for t in sc.turns]
        return lambda replies: turns[len(replies)] if len(replies) < len(turns) else None
    patient = PATIENTS[path]
    if isinstance(patient, list):
        return lambda replies: patient[len(replies)] if len(replies) < len(patient) else None
    opener, rules = patient

    def rule(replies: list[AgentReply]) -> str | None:
        if not replies:
            return opener
        if len(replies) >= 10:
            return None
        return next((line for pattern, line in rules if re.search(pattern, replies[-1].text, re.I)), None)

    return rule


async def play(store: Store, path: str, faults: tuple[str, ...] = (), repeat: int = 1,
               before_check: Callable[[], None] | None = None) -> Played:
    """Play scenario ``path`` against its reference agent with ``faults`` and check its path assertions.

    ``repeat`` > 1 checks them that many times, timing each (CPU seconds, ``benchmarks/bench_path_assertions.py``),
    with ``before_check`` called before each (e.g. to empty a cache)."""
    sc = load_scenario_file(SCENARIOS / path)
    agent = make_clinic_agent(sc.agent, list(faults))
    seeded = seed_run(store, sc)
    session = AgentSession(run_id=seeded.run_id, clinic_id=seeded.clinic_id, patient_id=seeded.patient_id,
                           patient_phone=sc.persona.phone, patient_name=sc.persona.name, locale=sc.locale,
                           agent=sc.agent, store=store)
    next_line = _lines(path, sc)
    replies: list[AgentReply] = []
    rows: list[dict[str, Any]] = []
    try:
        while (line := next_line(replies)) is not None:
            reply = await agent.respond(line, session)
            session.conversation_id = reply.conversation_id
            replies.append(reply)
            turn = len(replies)
            rows += [{"turn": turn, "role": "patient", "text": line},
                     {"turn": turn, "role": "agent", "text": reply.text, "tools": reply.tool_names,
                      "tool_calls": [{"name": t.name, "arguments": t.arguments, "result": t.result}
                                     for t in reply.tool_calls]}]
        where = {"locale": sc.locale, "store": store, "seeded": seeded}
        seconds = []
        for _ in range(repeat):
            if before_check is not None:
                before_check()
            started = time.process_time()
            results = check_path(rows, sc.assertions.path, **where)
            if isinstance(sc, ConversationalScenario):
                results += check_checkpoints(rows, sc.checkpoints, **where)
            seconds.append(time.process_time() - started)
    finally:
        cleanup_run(store, seeded.run_id)
    return Played(rows, {r.key: r.detail for r in results if not r.passed}, seconds, len(results))
