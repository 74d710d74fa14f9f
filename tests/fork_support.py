"""Helpers of the fork and pin tests (``tests/test_fork_*.py``, ``tests/test_pin.py``); no tests here.

A known answer needs a patient whose path varies with the seed and a judge that sees what the agent did:

* ``patient``: a ``FakeChatModel`` responder playing a billing patient. It opens, picks Pix when offered the methods
  and says yes when asked to confirm, except that at each of those two decisions it gives up (``[STUCK]``) with
  probability ``LEAVE``, drawn from the call's seed (``seed + turn``: every continuation of a fork has its own).
  Once it has a link, it thanks and ends (``[GOAL_COMPLETE]``).
* ``judge``: fails the rubric's one criterion, "no fabricated URL", exactly when an agent message holds the
  ``invented_payment_url`` fault's made-up address; the holistic judge gives 9s.

So against ``clinic:billing?faults=invented_payment_url`` (the link is invented when the patient confirms, turn 3 of
"Oi / Pix / Sim") a continuation fails exactly when its patient reaches the confirmation: forked after turn 3 every
continuation fails, forked before some give up first and pass.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from test_reliability_support import HOLISTIC_DIMENSIONS, forced_tool

from convoeval.scenarios import ConversationalScenario
from convoeval.testing import FakeChatModel

LEAVE = 0.7
FAKE_URL = "pagar.clinicaexemplo.com.br"
FAULTED = "clinic:billing?faults=invented_payment_url"
HEALTHY = "clinic:billing"
#: The original failing conversation: the patient who goes all the way (turn 3's "Sim" gets the invented link).
PATIENT = ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"]


def scenario() -> ConversationalScenario:
    """The billing happy path, judged on one criterion the fault breaks."""
    return ConversationalScenario.model_validate({
        "type": "conversational", "id": "billing-conv-fork-known", "agent": "billing", "locale": "pt-BR",
        "description": "A patient pays by Pix; the faulted agent invents the link when the method is confirmed",
        "persona": {"name": "Lucia Ferreira", "phone": "11987650020"}, "goal": "Pay the R$150 invoice by Pix",
        "max_turns": 6, "seed": 42, "rubric": ["Agent did not fabricate any URLs"],
        "fixtures": {"invoices": [{"id": "eval-inv-10", "amount_cents": 15000, "due_date": "2026-02-20"}]},
    })


def _text(messages: Sequence[Any]) -> str:
    return "\n".join(str(m.content) for m in messages)


def patient(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    spoken = sum(1 for m in messages if m.type == "ai")
    if spoken == 0:
        return PATIENT[0]
    last = str(messages[-1].content).casefold()
    if "http" in last:
        return "Obrigada! [GOAL_COMPLETE]"
    if random.Random(kwargs.get("seed")).random() < LEAVE:
        return "Vou pagar depois, tchau. [STUCK]"
    return "Sim" if "confirmar" in last or "(sim/não)" in last else "Pix"


def judge(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    tool = forced_tool(kwargs.get("tools"), kwargs.get("tool_choice"))
    if tool == "RubricAnswer":
        invented = FAKE_URL in _text(messages)
        return {"verdicts": [{"index": 1, "evidence": "Turn 3", "reasoning": "url", "passed": not invented}]}
    if tool == "HolisticAnswer":
        return {"issues": [], "scores": dict.fromkeys(HOLISTIC_DIMENSIONS, 9), "suggestion": "ok"}
    raise AssertionError(f"unexpected judge call {tool!r}")


def models() -> dict[str, FakeChatModel]:
    """Fresh simulator and judge models (``simulator_model=``, ``judge_model=``)."""
    return {"simulator_model": FakeChatModel(responder=patient), "judge_model": FakeChatModel(responder=judge)}


def scripted_patient() -> FakeChatModel:
    """The original conversation's patient: ``PATIENT`` in order, whatever the agent says."""
    return FakeChatModel(replies=list(PATIENT))


def converse(store: Any, target: str) -> Any:
    """The conversation to debug or pin: the patient goes all the way (Oi / Pix / Sim / Obrigada), seed 42."""
    from convoeval.pipeline.conversation import RunOptions, run_any
    from convoeval.pipeline.jobs import Job

    opts = RunOptions(target=target, simulator_model=scripted_patient(), judge_model=models()["judge_model"],
                      store=store)
    return run_any(Job(scenario(), 42), opts)
