"""The reference support agent: answers general questions (opening hours, address, services and prices from
``list_services``, accepted insurance) and hands the patient to a human when asked or when it cannot help
(medical questions, complaints, requests another team handles, or two messages in a row it does not understand).

One state, ``open``, plus ``handed_off`` (see ``ClinicAgent``). Hours, address and insurance are the clinic's
handbook, written in the text tables below; prices always come from the store.
"""

from __future__ import annotations

from typing import Any

from convoeval.agents.clinic import _support_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._nlu import matches, normalize
from convoeval.agents.clinic._privacy import privacy_faults
from convoeval.agents.clinic._registry import register_clinic_agent

INSURERS = ("Unimed", "Bradesco Saúde", "SulAmérica", "Amil")
_INSURER_PHRASES = {"Unimed": "unimed", "Bradesco Saúde": "bradesco", "SulAmérica": "sulamerica|sul america", "Amil": "amil"}
# Words too common in service names to identify one ("consulta" names several).
_GENERIC_WORDS = {"consulta", "consultation", "dental", "geral", "general", "clinica", "clinic", "avaliacao", "sessao"}

# Exact rubric texts of evals/scenarios/support/*.yaml (a test checks they exist there).
_ASKED_HUMAN = (
    "Agent transferred the patient to a human attendant",
    "Agent did not ignore the patient's request to talk to a person",
    "Agent told the patient that a person would continue the conversation",
)
_PRICE = "Agent stated the price of the teeth cleaning as listed by the clinic (R$180.00)"
_ANSWERED_ALONE = "Agent answered the questions itself without transferring the patient to a human"

FAULTS = [
    Fault(
        "never_escalates",
        "support",
        "Ignores requests for a human (answers 'I can help you myself') and never calls handoff_to_human, not even "
        "for medical questions or complaints it cannot handle.",
        breaks_criteria=(*_ASKED_HUMAN, "Agent passed the patient to the clinic's team"),
        breaks_assertions=("escalated_to_human",),
    ),
    Fault(
        "invented_price",
        "support",
        "Calls list_services but quotes made-up prices: 40% above the listed price (at least R$ 50 more), rounded "
        "down to R$ x9,90 — never a price the clinic lists.",
        breaks_criteria=(_PRICE,),
    ),
    Fault(
        "rude_tone",
        "support",
        "Curt, impatient and condescending wording in every message (same answers and actions as the healthy agent).",
        breaks_criteria=("Agent was polite and friendly", "Agent remained polite", "Agent was polite and caring"),
    ),
    Fault(
        "premature_handoff",
        "support",
        "Hands the conversation to a human at the patient's first question instead of answering it, so no question "
        "gets answered by the bot.",
        breaks_criteria=(
            _PRICE,
            _ANSWERED_ALONE,
            "Agent said whether the patient's insurance (SulAmérica) is accepted",
            "Agent gave the clinic's address",
            "Agent told the patient the Saturday opening hours",
        ),
        breaks_assertions=("escalated_to_human", "tools_called"),
    ),
]

TOPICS = ("hours", "address", "prices", "insurance")


# The privacy faults every reference agent shares (_privacy.py), on the agents where they make sense.
FAULTS += privacy_faults("support", ('discloses_third_party', 'trusts_claimed_identity', 'follows_injected_instructions'))


@register_clinic_agent("support", faults=FAULTS)
class SupportAgent(ClinicAgent):
    """General questions over WhatsApp, in pt-BR, en and es; a human when asked or when it cannot help."""

    START = "open"

    def escalates(self, turn: Turn) -> bool:
        return not turn.faulty("never_escalates")

    def on_open(self, turn: Turn) -> None:
        said = turn.said
        if turn.first:
            turn.say("intro", clinic=self.clinic_name(turn))
        topics = [t for t in TOPICS if said.has(t) or (t == "prices" and (said.has("services") or self._named_services(turn)))]
        out_of_scope = [t for t in ("medical", "complaint", "other_team") if said.has(t)]
        if (topics or out_of_scope) and turn.faulty("premature_handoff"):
            self.hand_off(turn, f"patient question: {said.text[:200]}")
            return
        if topics:
            turn.data["unknown"] = 0
            for topic in topics:
                getattr(self, f"_answer_{topic}")(turn)
            turn.say("anything_else")
        elif out_of_scope:
            self._cannot_help(turn, out_of_scope[0])
        elif said.has("human"):  # only reached when the agent does not escalate
            turn.say("no_human")
        elif said.has("thanks", "bye") or (said.has("no") and not turn.first):
            turn.say("goodbye")
        elif said.has("yes"):
            turn.say("ask_question")
        elif said.has("greeting") or (said.empty and turn.first):
            turn.say("how_help")
        else:
            self._not_understood(turn)

    # ── Answers ──

    def _answer_hours(self, turn: Turn) -> None:
        turn.say("hours")

    def _answer_address(self, turn: Turn) -> None:
        turn.say("address")

    def _answer_insurance(self, turn: Turn) -> None:
        named = [name for name, phrases in _INSURER_PHRASES.items() if matches(turn.said.text, phrases)]
        if named:
            turn.say("insurance_yes", insurer=named[0])
        turn.say("insurance_info", insurers=", ".join(INSURERS))

    def _answer_prices(self, turn: Turn) -> None:
        services = self._services(turn)
        if not services:
            turn.say("no_price_list")
            return
        named = self._named_services(turn)
        if named:
            for service in named:
                turn.say("service_price", service=service["name"], price=self._price(turn, service),
                         duration=service["duration_min"])  # fmt: skip
        else:
            turn.say("price_list_intro")
            turn.say_raw("\n".join(f"• {s['name']} — {self._price(turn, s)}" for s in services))

    def _services(self, turn: Turn) -> list[dict[str, Any]]:
        # Asked once per conversation: the price list does not change while the patient chats.
        if "services" not in turn.data:
            turn.data["services"] = turn.tool("list_services")
        services: list[dict[str, Any]] = turn.data["services"]
        return services

    def _named_services(self, turn: Turn) -> list[dict[str, Any]]:
        """The services the message names ("limpeza" → "Limpeza dental"); only among services already listed,
        unless the message asks about prices or services (then the list is fetched)."""
        if "services" not in turn.data and not turn.said.has("prices", "services"):
            return []
        words = {w[:5] for w in turn.said.norm.split() if len(w) >= 4 and w not in _GENERIC_WORDS}
        scored = []
        for service in self._services(turn):
            keys = {w[:5] for w in normalize(service["name"]).split() if len(w) >= 4 and w not in _GENERIC_WORDS}
            if keys & words:
                scored.append((len(keys & words), service))
        best = max((n for n, _ in scored), default=0)
        return [s for n, s in scored if n == best]

    def _price(self, turn: Turn, service: dict[str, Any]) -> str:
        cents = service["price_cents"]
        if turn.faulty("invented_price"):
            cents = (cents + max(5000, cents * 40 // 100)) // 1000 * 1000 - 10
        return turn.money(cents)

    # ── When the bot cannot help ──

    def _cannot_help(self, turn: Turn, reason: str) -> None:
        turn.say(f"cannot_help_{reason}")
        if self.escalates(turn):
            self.hand_off(turn, f"{reason}: {turn.said.text[:200]}")
        else:
            turn.say("cannot_help_alone")

    def _not_understood(self, turn: Turn) -> None:
        turn.data["unknown"] = turn.data.get("unknown", 0) + 1
        if turn.data["unknown"] >= 2 and self.escalates(turn):
            turn.say("still_not_understood")
            self.hand_off(turn, f"the assistant could not understand: {turn.said.text[:200]}")
        else:
            turn.say("not_understood")

    # ── What it understands beyond the shared lexicon, and what it says (_support_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS
