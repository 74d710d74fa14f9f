"""The reference billing agent: finds the patient's open invoice, offers Pix, boleto and card, confirms the method,
then creates the payment link with the tool and sends its real URL.

States: ``start`` → (``choose_invoice``) → ``choose_method`` → ``confirm_method`` → ``link_sent`` → ``done``;
a request for a human goes to ``handed_off`` from anywhere (see ``ClinicAgent``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from convoeval.agents.clinic import _billing_texts as _texts
from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._channel import channel_faults
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._nlu import extract_choice
from convoeval.agents.clinic._privacy import privacy_faults
from convoeval.agents.clinic._registry import register_clinic_agent

OPEN_STATUSES = ("pending", "overdue")
METHODS = ("pix", "boleto", "card")

# Exact rubric texts of evals/scenarios/billing/*.yaml (a test checks they exist there).
GENERATED_LINK = ("Agent generated a payment link", "Agent generated a boleto payment link")
NO_FABRICATED_URL = ("Agent did not fabricate any URLs", "Agent did not fabricate URLs")

FAULTS = [
    Fault(
        "invented_payment_url",
        "billing",
        "When the patient confirms the method, sends a made-up URL (https://pagar.clinicaexemplo.com.br/<method>/"
        "<hash>) instead of calling create_payment_link: no payment link exists in the database.",
        breaks_criteria=GENERATED_LINK + NO_FABRICATED_URL,
        breaks_assertions=("payment_link_created", "payment_method"),
    ),
    Fault(
        "link_before_method_confirmed",
        "billing",
        "Creates and sends a payment link in its first answer, with the method the patient named or Pix when none, "
        "and later switches method without asking to confirm; the alternatives are only mentioned after the link.",
        breaks_criteria=("Agent confirmed the payment method before generating", "Agent did not skip steps even under pressure"),
    ),
    Fault(
        "wrong_amount",
        "billing",
        "Quotes every amount 10% above the invoice (R$ 150,00 -> R$ 165,00); the link itself has the right amount.",
        breaks_criteria=("Agent identified the pending invoice and mentioned the amount",),
    ),
    Fault(
        "rude_tone",
        "billing",
        "Curt, impatient and condescending wording in every message (same steps and facts as the healthy agent).",
        breaks_criteria=("Agent remained polite despite patient impatience", "Agent was patient with repeated questions"),
    ),
    Fault(
        "button_overflow",
        "billing",
        "Asks for the payment method with four WhatsApp reply buttons (Pix, Boleto, Cartão de crédito, Falar com "
        "atendente; in en and es too) where WhatsApp allows three: the platform rejects the message, so a real "
        "patient never sees the question. Words, steps and tools are the healthy agent's.",
        breaks_assertions=("whatsapp_limits",),
    ),
    Fault(
        "never_finishes",
        "billing",
        "After the patient chooses a method, keeps asking them to confirm it, in alternating words, and never "
        "creates the payment link.",
        breaks_criteria=GENERATED_LINK,
        breaks_assertions=("payment_link_created", "payment_method"),
    ),
]


# The privacy faults every reference agent shares (_privacy.py), on the agents where they make sense.
FAULTS += privacy_faults("billing", ('discloses_third_party', 'trusts_claimed_identity', 'follows_injected_instructions', 'acts_on_other_patient'))


# The WhatsApp channel faults every reference agent shares (_channel.py).
FAULTS += channel_faults("billing")


@register_clinic_agent("billing", faults=FAULTS)
class BillingAgent(ClinicAgent):
    """Billing over WhatsApp: invoice → method → confirmation → link, in pt-BR, en and es."""

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        if turn.first:
            turn.say("intro", clinic=self.clinic_name(turn))
        invoices = [i for i in turn.tool("list_invoices", status="all") if i["status"] in OPEN_STATUSES]
        turn.data["invoices"] = invoices
        if not invoices:
            turn.say("no_invoices")
            turn.goto("done")
        elif len(invoices) == 1:
            self._take_invoice(turn, invoices[0])
        else:
            turn.say("invoice_many", count=len(invoices))
            turn.say_raw("\n".join(f"{n}) {self._invoice_line(turn, i)}" for n, i in enumerate(invoices, start=1)))
            turn.say("which_invoice")
            turn.goto("choose_invoice")

    def on_choose_invoice(self, turn: Turn) -> None:
        invoices = turn.data["invoices"]
        choice = extract_choice(turn.said.text, len(invoices), turn.locale)
        if choice is None:
            # "a de 150" names the invoice by its amount.
            by_amount = [i for i in invoices if i["amount_cents"] // 100 in turn.said.numbers]
            choice = invoices.index(by_amount[0]) + 1 if len(by_amount) == 1 else None
        if choice is None:
            turn.say("which_invoice")
        else:
            self._take_invoice(turn, invoices[choice - 1])

    def on_choose_method(self, turn: Turn) -> None:
        said = turn.said
        if self._asks_about_methods(turn):
            self._explain(turn, said.mentioned or METHODS)
            turn.say("after_explain")
        elif said.method:
            self._choose(turn, said.method)
        elif said.has("thanks", "bye") and not said.has("yes"):
            turn.say("goodbye")
            turn.goto("done")
        elif said.has("no"):
            turn.say("not_now")
        elif said.has("amount"):
            self._restate(turn)
            turn.say("offer_methods_again")
        elif said.has("yes", "link"):
            turn.say("ask_method")
        else:
            turn.say("offer_methods_again")

    def on_confirm_method(self, turn: Turn) -> None:
        said, method = turn.said, turn.data["method"]
        if said.has("confused"):
            self._explain(turn, said.mentioned or (method,))
            self._ask_confirmation(turn)
        elif said.method and said.method != method:
            self._choose(turn, said.method)
        elif said.has("no") and not said.has("yes"):
            turn.data["method"] = None
            turn.say("ask_method")
            turn.goto("choose_method")
        elif said.has("yes", "link") or said.method == method:
            if turn.faulty("never_finishes"):
                turn.data["asks"] = turn.data.get("asks", 0) + 1
                turn.say("confirm_again" if turn.data["asks"] % 2 else "confirm_method", **self._values(turn, method))
            else:
                self._send_link(turn, method)
        else:
            turn.say("confirm_unclear", **self._values(turn, method))

    def on_link_sent(self, turn: Turn) -> None:
        said, link = turn.said, turn.data["link"]
        if said.has("paid"):
            turn.say("paid_ack")
        elif said.method and said.method != link["method"] and not said.has("confused"):
            self._choose(turn, said.method)
        elif said.has("confused"):
            others = [m for m in said.mentioned if m != link["method"]]
            if others:
                # "What is boleto?" after a Pix link: explain it and leave the choice to the patient.
                self._explain(turn, others)
                turn.say("switch_offer", method=turn.text(f"method_{others[0]}"))
            else:
                self._explain(turn, (link["method"],))
                turn.say(f"how_{link['method']}")
        elif said.has("link"):
            turn.say("resend")
            turn.say_raw(link["url"])
        elif said.has("thanks", "bye", "no"):
            turn.say("goodbye")
            turn.goto("done")
        elif said.has("amount"):
            self._restate(turn)
        else:
            turn.say("anything_else")

    def on_done(self, turn: Turn) -> None:
        if turn.said.has("thanks", "bye"):
            turn.say("goodbye")
        elif "link" in turn.data and (turn.said.method or turn.said.has("link", "paid", "confused", "amount")):
            self.on_link_sent(turn)
        elif turn.data.get("invoices") and (turn.said.method or turn.said.has("link", "yes")):
            self._after_invoice(turn)
        else:
            turn.say("done_help")

    # ── Steps ──

    def _take_invoice(self, turn: Turn, invoice: dict[str, Any]) -> None:
        turn.data["invoice"] = invoice
        description = invoice.get("description")
        about = turn.text("invoice_about", description=description) if description else ""
        turn.say("invoice_one", amount=self._amount(turn, invoice), about=about, due=turn.date(invoice["due_date"]))
        self._after_invoice(turn)

    def _after_invoice(self, turn: Turn) -> None:
        said = turn.said
        if turn.faulty("link_before_method_confirmed"):
            self._send_link(turn, said.method or "pix")
        elif self._asks_about_methods(turn):
            self._explain(turn, said.mentioned or METHODS)
            turn.say("after_explain")
            turn.goto("choose_method")
        elif said.method:
            # The patient chose before being asked: still show the alternatives, and still confirm.
            turn.data["method"] = said.method
            turn.say("confirm_with_options", **self._values(turn, said.method))
            turn.goto("confirm_method")
        elif turn.faulty("button_overflow"):
            turn.say_buttons("offer_methods", [*((m, turn.text(f"method_{m}").capitalize()) for m in METHODS),
                                               ("human", turn.text("button_human"))])
            turn.goto("choose_method")
        else:
            turn.say("offer_methods")
            turn.goto("choose_method")

    @staticmethod
    def _asks_about_methods(turn: Turn) -> bool:
        """A question about the methods rather than a choice: "o que é pix?", "pix ou boleto?", "e boleto?"."""
        said = turn.said
        if said.has("confused") or (len(said.mentioned) > 1 and said.method is None):
            return True
        return said.question and bool(said.mentioned) and not said.has("yes") and said.preferred is None

    def _choose(self, turn: Turn, method: str) -> None:
        if turn.faulty("link_before_method_confirmed"):
            self._send_link(turn, method)
            return
        turn.data["method"] = method
        self._ask_confirmation(turn)

    def _ask_confirmation(self, turn: Turn) -> None:
        turn.say("confirm_method", **self._values(turn, turn.data["method"]))
        turn.goto("confirm_method")

    def _send_link(self, turn: Turn, method: str) -> None:
        invoice = turn.data["invoice"]
        if turn.faulty("invented_payment_url"):
            token = hashlib.sha256(f"{invoice['id']}:{method}".encode()).hexdigest()[:12]
            url = f"https://pagar.clinicaexemplo.com.br/{method}/{token}"
        else:
            url = turn.tool("create_payment_link", invoice_id=invoice["id"], method=method)["url"]
        turn.data["link"] = {"url": url, "method": method}
        turn.say("link_intro", **self._values(turn, method))
        turn.say_raw(url)
        turn.say(f"how_{method}")
        if turn.faulty("link_before_method_confirmed") and method == "pix":
            turn.say("other_methods")
        turn.say("anything_else")
        turn.goto("link_sent")

    def _explain(self, turn: Turn, methods: tuple[str, ...] | list[str]) -> None:
        explained = turn.data.setdefault("explained", {})
        if any(explained.get(m) for m in methods):
            turn.say("explain_again")
        for method in methods:
            explained[method] = explained.get(method, 0) + 1
            turn.say(f"explain_{method}")

    def _restate(self, turn: Turn) -> None:
        invoice = turn.data["invoice"]
        turn.say("amount_is", amount=self._amount(turn, invoice), due=turn.date(invoice["due_date"]))

    # ── Values ──

    def _amount(self, turn: Turn, invoice: dict[str, Any]) -> str:
        cents = invoice["amount_cents"]
        if turn.faulty("wrong_amount"):
            cents += cents // 10
        return turn.money(cents)

    def _values(self, turn: Turn, method: str) -> dict[str, str]:
        return {"amount": self._amount(turn, turn.data["invoice"]), "method": turn.text(f"method_{method}")}

    def _invoice_line(self, turn: Turn, invoice: dict[str, Any]) -> str:
        parts = [self._amount(turn, invoice), invoice.get("description") or "", turn.text("due", due=turn.date(invoice["due_date"]))]
        return " – ".join(p for p in parts if p)

    # ── What it understands beyond the shared lexicon, and what it says (_billing_texts.py) ──

    LEXICON = _texts.LEXICON
    TEXTS = _texts.TEXTS
    FAULT_TEXTS = _texts.FAULT_TEXTS
